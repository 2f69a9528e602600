/**
 * gradsim.optim: optimizers as pure gradient transformations (optax style), learning-rate
 * schedules, bounded-parameter maps and the `fit` loop.
 */
export {
  applyUpdates,
  emptyState,
  type EmptyState,
  type FloatDType,
  type GradientTransformation,
  type PyTree,
  type ScalarOrSchedule,
  type Schedule,
  type UpdateExtras,
} from "./base.js";
export {
  adam,
  adamw,
  momentum,
  rmsprop,
  sgd,
  type AdamState,
  type AdamWOptions,
  type AdamWState,
  type RmspropOptions,
  type RmspropState,
  type SgdOptions,
  type SgdState,
} from "./alias.js";
export {
  addDecayedWeights,
  scale,
  scaleByAdam,
  scaleByLearningRate,
  scaleByRms,
  scaleBySchedule,
  scaleByStddev,
  trace,
  type AdamOptions,
  type LearningRateState,
  type RmsOptions,
  type ScaleByAdamState,
  type ScaleByRmsState,
  type ScaleByScheduleState,
  type ScaleByStddevState,
  type TraceOptions,
  type TraceState,
} from "./transform.js";
export {
  lbfgs,
  scaleByLbfgs,
  type LbfgsOptions,
  type LbfgsState,
  type ScaleByLbfgsOptions,
  type ScaleByLbfgsState,
} from "./lbfgs.js";
export {
  scaleByBacktrackingLinesearch,
  type BacktrackingLinesearchOptions,
  type BacktrackingLinesearchState,
} from "./linesearch.js";
export { clipByGlobalNorm, clipElementwise } from "./clip.js";
export { chain, freeze, masked, setToZero, type ChainState, type Mask, type MaskedState } from "./combine.js";
export { identity } from "./identity.js";
export {
  constantSchedule,
  cosineDecay,
  exponentialDecay,
  joinSchedules,
  linearSchedule,
  linearWarmup,
  warmupCosineDecay,
  type CosineDecayOptions,
  type ExponentialDecayOptions,
  type LinearScheduleOptions,
  type WarmupCosineDecayOptions,
} from "./schedule.js";
export { Bijector, constrain, logSpace, sigmoidBox, unconstrain } from "./bounded.js";
export { globalNorm } from "./tree-math.js";
export { fit, type FitOptions, type FitResult, type StepInfo, type StopReason } from "./fit.js";
export { createProgress, type Progress, type ProgressMode, type ProgressStream } from "./progress.js";
export { prefersLogScale, type LossCurvePngOptions } from "./loss-curve.js";
export {
  levenbergMarquardt,
  type LevenbergMarquardtOptions,
  type LevenbergMarquardtResult,
  type LevenbergMarquardtStop,
} from "./least-squares.js";
