/**
 * gradsim: differentiable physics and rendering in TypeScript.
 * The public API (see the README and the guides in docs/): arrays (`np`, `nn`, `random`, `tree`),
 * transforms (`grad`, `vmap`, `jit`, `lax.scan`, ...) and backends (`init`).
 * This entry imports no Node built-ins (browsers and bundlers use it); the Node entry (gradsim/node) adds files.
 */
// `NDArray` is the same class under a name that does not shadow the global `Array` in a user's module.
export { Array, Array as NDArray, type ArrayLike } from "./core/array.js";
export type { DType } from "./core/dtype.js";
export { ShapedArray } from "./core/aval.js";
export { np } from "./core/np/index.js";
export * as nn from "./core/nn.js";
export * as random from "./core/random.js";
export { tree } from "./core/tree.js";
export { init, devices, defaultBackend } from "./core/init.js";
export { setDebugNans, debugNansEnabled, DebugNanError } from "./core/debug-nans.js";
export { assertFinite, NonFiniteError } from "./core/check-finite.js";
// Registers the WebGPU loader with init() (the GPU package itself is imported only by init).
import "./core/backends/webgpu/index.js";
export { stopGradient } from "./core/np/math.js";
export * from "./transforms/index.js";
export * as optim from "./optim/index.js";
export { linePlot, type LinePlotOptions, type PlotSeries } from "./io/plot.js";
export { encodeGif, labelledGrid, sideBySide, stackRows, toRaster, type Raster } from "./io/raster.js";
export { decodeGif, decodeGifFrames, gifFrameRate, gifInfo, type DecodedGif, type GifInfo } from "./io/gif-decode.js";
export { DEFAULT_MAX_DECODED_BYTES, type DecodeLimits } from "./io/decode-limits.js";
export { resizeInto, type Frame } from "./io/resample.js";
export * as render from "./render/index.js";
export * as models from "./models/index.js";
export * as sysid from "./sysid/index.js";
export * as networks from "./networks/index.js";
