/**
 * gradsim.sysid: system identification from video as a library — estimate physical parameters
 * from pixels (or 3-D states, or with the black-box baseline) with the strategies that made the
 * paper's tables work, and run the tables' dataset protocol. See src/sysid/README.md.
 * Node-only parts (files, videos, worker processes) are in ./node.ts.
 */
export {
  estimate,
  paramsOf,
  type EstimateResult,
  type EstimateSettings,
  type EstimateSpec,
  type EstimateStep,
  type Method,
} from "./estimate.js";
export {
  Layout,
  formatValues,
  type Params,
  type Transform,
  type Unknown,
  type Value,
  type Values,
} from "./unknowns.js";
export {
  buildObjective,
  compileRender,
  gradientMode,
  type GradientMode,
  type LossKind,
  type Objective,
  type ObjectiveOptions,
  type Observed,
  type Problem,
} from "./objective.js";
export {
  blurredCorrelationLoss,
  frameIndices,
  gaussianBlur,
  meanSquare,
  mse,
  poolFrames,
  pyramidMse,
  statesMse,
  takeFrames,
  type FrameSelection,
} from "./losses.js";
export {
  descend,
  descentDirection,
  polish,
  smoothingPreconditioner,
  type AdamSettings,
  type Box,
  type Descent,
  type DescentSettings,
  type DescentStep,
  type Preconditioner,
  type RmspropSettings,
} from "./descend.js";
export {
  distinctBest,
  horizonCurriculum,
  stageFrames,
  type CurriculumSettings,
  type CurriculumStage,
  type StageRecord,
} from "./curriculum.js";
export { priorGrid, scanAndDescend, scanCandidates, type ScanRound, type ScanSettings } from "./scan.js";
export { signSteps, type SignStepResult, type SignStepSettings } from "./sign-steps.js";
export { REINFORCE_DEFAULTS, scoreFunctionDescent, type ScoreFunctionSettings } from "./reinforce.js";
export {
  columnIndices,
  fitInstance,
  observe,
  fmtErrors,
  IncompleteMergeError,
  meanAbsError,
  refuseIncompleteMerge,
  relMae,
  runDataset,
  summarise,
  table3Rows,
  validateRecord,
  type ColumnErrors,
  type DatasetOptions,
  type DatasetResult,
  type DatasetTask,
  type Draw,
  type InstanceRecord,
  type MethodRun,
  type RecordStore,
  type RowSummary,
} from "./dataset.js";
export { comparisonTable, fmtNumber, markdownTable, relMaeOf, type PaperRow } from "./tables.js";
export {
  octantColors,
  overBackground,
  premultiply,
  SCENE_LIGHTS,
  sigmaFor,
  softFrame,
  softVideo,
  type DeformingMesh,
  type SoftFrameOptions,
} from "./video.js";
export {
  calibratedCamera,
  eyeOfAngles,
  hostCamera,
  pixelRay,
  renderCamera,
  type AngleCamera,
  type CalibratedCamera,
  type CameraSpec,
  type HostCamera,
  type LookAtCamera,
  type Vec3,
} from "./scenes/camera.js";
export {
  buildRigidScene,
  RIGID_CONTACT_DEFAULTS,
  groundImage,
  measureTiling,
  rigidFrame,
  rigidProblem,
  rigidVertices,
  rigidVideo,
  systemFor,
  POSITIVE_RIGID_UNKNOWNS,
  RIGID_UNKNOWNS,
  RIGID_UNITS,
  sceneValues,
  type Background,
  type ContactParams,
  type Impulse,
  type Quat,
  type RigidScene,
  type RigidSceneSpec,
  type RigidUnknown,
  type Tiling,
} from "./scenes/rigid.js";
export {
  clusterVertices,
  RIGID_SHAPES,
  SCENE_SHAPES,
  shapeMeshes,
  type RigidShape,
  type SceneShape,
  type ShapeMeshes,
} from "./scenes/shapes.js";
export {
  contactPriorRanges,
  defaultMassScene,
  RIGID_CONTACT_RANGES,
  RIGID_DENSITY_RANGE,
  RIGID_FPS,
  RIGID_FRAMES,
  RIGID_FREE_CAMERA,
  RIGID_GROUND_CAMERA,
  RIGID_IMPULSE_SECONDS,
  rigidMassRange,
  sampleContactScene,
  sampleMassScene,
  shapeVolume,
  type SampledContactScene,
  type SampledRigidScene,
} from "./scenes/rigid-dataset.js";
export {
  formatRigidValues,
  rigidDatasetTask,
  PAPER_RIGID_PROCEDURE,
  rigidGradsimSettings,
  rigidSceneProblem,
  rigidTrueValues,
  rigidUnknowns,
  type RigidFitConfig,
  type RigidTaskConfig,
  type RigidValues,
} from "./scenes/rigid-task.js";
export { buildBeam, beamVertices, defaultBeam, renderBeam, type BeamScene, type BeamSpec } from "./scenes/beam.js";
export {
  buildCloth,
  clothPositions,
  clothProblem,
  defaultCloth,
  velocityField,
  type ClothScene,
  type ClothSpec,
} from "./scenes/cloth.js";
export {
  beamPositions,
  beamProblem,
  beamVideo,
  buildTwistBeam,
  defaultTwistBeam,
  type BeamParams,
  type TwistBeamScene,
  type TwistBeamSpec,
} from "./scenes/twist-beam.js";
export {
  bobPositions,
  buildPendulum,
  defaultDoublePendulum,
  defaultPendulum,
  pendulumAngles,
  pendulumProblem,
  pendulumVideo,
  type PendulumParams,
  type PendulumScene,
  type PendulumSpec,
  type PendulumStates,
} from "./scenes/pendulum.js";
export {
  describePendulum,
  pendulumDatasetTask,
  samplePendulum,
  type PendulumPrior,
} from "./scenes/pendulum-task.js";
export {
  centroidFan,
  IMPERFECT_CAMERA,
  OBJECT_KINDS,
  OBJECT_MASS_RANGE,
  objectGeometry,
  objectModel,
  sampleObject,
  TRUE_MODEL,
  type ModelChoice,
  type ObjectGeometry,
  type ObjectKind,
  type ObjectModel,
  type ObjectSceneSettings,
  type ObjectSpec,
} from "./scenes/imperfect.js";
export {
  OBJECT_LOOKS,
  objectColors,
  objectLook,
  objectSceneCamera,
  objectVideo,
  TRACED_LIGHT,
  TRACED_SHADING,
  tracedAlbedo,
  tracedLook,
  type ObjectLook,
  type ObjectLookName,
} from "./scenes/imperfect-looks.js";

export { parseVideoScene, sceneFileMotion, type SceneBackground, type VideoSceneFile } from "./scene-file.js";
export {
  laplaceUncertainty,
  tQuantile975,
  type Alternative,
  type Nuisance,
  type Uncertainty,
  type UnknownUncertainty,
  widenedByProfile,
} from "./uncertainty.js";
export { principalAxis, PROFILE_STEPS, profileAlongAxis, type Profile, type ProfilePoint } from "./profile.js";
export {
  colourNoise,
  judge,
  missedFrames,
  silhouetteFloor,
  VERDICT_LIMITS,
  verdictExitCode,
  type Verdict,
  type VerdictStatus,
} from "./verdict.js";
