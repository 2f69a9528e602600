/** gradsim.networks: neural-network layers as pure functions on parameter pytrees, checkpoints, and RISP's losses. */
export {
  type LinearParams,
  type ConvParams,
  type GroupNormParams,
  type ResBlockParams,
  type PredictorConfig,
  type PredictorParams,
  initLinear,
  linear,
  initConv,
  conv,
  initGroupNorm,
  groupNorm,
  initResBlock,
  resBlock,
  initPredictor,
  predictor,
  predictorFeatures,
  spatialSoftArgmax,
} from "./layers.js";
export { type ConvLstmConfig, type ConvLstmParams, initConvLstm, convLstm } from "./convlstm.js";
export { serializeParams, parseParams, checkParamsLike } from "./checkpoint.js";
export { stateError, renderingGradientPenalty, errorGradientPenalty } from "./losses.js";
export { train, type TrainOptions, type TrainResult } from "./train.js";
