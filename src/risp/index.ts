/**
 * gradsim.risp: RISP (Ma et al., ICLR 2022) as a library — rendering-invariant state predictors
 * for a system you describe (`RispEnv`), trained on SoftRas images under domain-randomised
 * rendering parameters ψ with their exact ∂I/∂ψ, and the downstream tasks (system
 * identification, imitation, control) as sysid objectives; the paper's four environments
 * (quadrotor, cube, rod, hand: `RISP_ENVS`) and their tasks (`paperProblem`). See src/risp/README.md.
 * Node-only parts (predictors on disk) are in gradsim/node's `risp`.
 */
export { checkPosed, framesOfRollouts, rolloutFrames, vertexCount, type PosedStates, type RispEnv } from "./env.js";
export {
  checkPsi,
  DEFAULT_PSI,
  hostLightDirection,
  lightDirection,
  PSI_NAMES,
  psiMiddle,
  psiOfUnit,
  samplePsi,
  type PsiDistribution,
  type PsiName,
  type PsiRange,
  type Vec3,
} from "./psi.js";
export {
  backgroundLayers,
  plainBackground,
  randomGroundTexture,
  softImage,
  type GroundTexture,
  type SoftLook,
} from "./looks.js";
export {
  sampleTrainingConfiguration,
  sampleTrainingLook,
  trainingSet,
  type TrainingConfiguration,
  type TrainingLook,
  type TrainingSet,
  type TrainingSetOptions,
} from "./training-set.js";
export {
  configGround,
  configOfPsi,
  configPsi,
  faceAlbedo,
  HELD_OUT_TRAINING_PSI,
  psiExcess,
  reverseContrast,
  sampleHeldOutConfig,
  sampleTargetConfig,
  softConfigImages,
  targetImages,
  type TargetConfig,
} from "./target.js";
export {
  predictorConfig,
  predictorLoss,
  predictorTraining,
  standardisation,
  stateReader,
  trainPredictor,
  TRAINED_ROWS,
  type PredictorSpec,
  type PredictorTraining,
  type Standardisation,
  type TrainedPredictor,
  type TrainedRow,
} from "./predictor.js";
export {
  compileTaskLoss,
  fitsLook,
  fitTask,
  fitTaskAsPaper,
  PAPER_TASK_PROCEDURE,
  RISP_TASK_NAMES,
  rispProblem,
  stagePrefixes,
  taskDescent,
  taskLayout,
  taskLoss,
  taskObjective,
  type CompiledTaskLoss,
  type PaperTaskFit,
  type RispProblem,
  type RispScenario,
  type RispTask,
  type Rollout,
  type ScannedFit,
  type TaskFit,
  type TaskFitSettings,
  type TaskLoss,
  type TaskLossFn,
  type TaskRendering,
} from "./tasks.js";
export {
  CUBE,
  cubeEnv,
  cubeMotion,
  eulerMatrix,
  HAND,
  handEnv,
  handMotion,
  poseStates,
  QUADROTOR,
  QUADROTOR_STEP,
  quadrotorEnv,
  quadrotorMotion,
  quadrotorOfMass,
  quadrotorThrusts,
  quadrotorStart,
  rigidBodyVertices,
  rigidPoseState,
  RISP_ENVS,
  ROD,
  rodEnv,
  rodModel,
  yawQuaternion,
  type HandMotion,
  type RispEnvName,
  type RispPaperEnv,
  type RodModel,
} from "./scenes/envs.js";
export { paperProblem, RISP_TASKS, type RispPaperProblem } from "./scenes/tasks.js";
export { TRACKING_GAINS, trackingActions, type TrackingGains } from "./scenes/quadrotor-tracking.js";
