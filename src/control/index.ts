/**
 * gradsim.control: visuomotor control from a single target image (gradSim §4.2, Figs. 5–6) —
 * a scene's control parameters (a policy's weights, an initial velocity) optimised so that its
 * last frame matches the target image (gradsim), against 3-D supervision (diffphysics) and the
 * untrained parameters (random); the paper's three scenes (walker, soft gear, thrown cloth).
 * Node-only parts (a target PNG, the report files) are in gradsim/node's `control`.
 */
export {
  centreOfMassDistance,
  centreOfMassGoal,
  centreOfMassTrackingLoss,
  linearPolicyInit,
  phaseInputs,
  sinusoidPolicy,
  targetImage,
  type ControlScene,
  type TargetBackground,
} from "./scene.js";
export {
  CONTROL_METHODS,
  controlObjective,
  optimiseControl,
  runControl,
  type ControlMethod,
  type ControlRuns,
  type ControlSettings,
  type MethodRun,
  type Summary,
} from "./run.js";
export { WALKER_CAMERA, walkerBody, walkerScene, type WalkerOptions } from "./scenes/walker.js";
export { GEAR_CAMERA, gearScene, type GearOptions } from "./scenes/gear.js";
export { CLOTH_CAMERA, clothControlScene, type ClothControlOptions, type ClothControlScene } from "./scenes/cloth.js";
