/**
 * Neural-network layers as pure functions on parameter pytrees (RISP's state predictor, the
 * ConvLSTM-style baselines): `initX(key, …)` returns plain records of Arrays, `x(params, input)`
 * applies them, so grad, jvp, vmap and jit treat a network like any other function. Swish rather
 * than ReLU throughout: RISP's regulariser differentiates the network twice.
 *
 * Images are [H, W, C] (as the renderers produce them); conv layers work on [C, H, W] internally.
 */
import type { Array } from "../core/array.js";
import type { DType } from "../core/dtype.js";
import * as nn from "../core/nn.js";
import { np } from "../core/np/index.js";
import * as random from "../core/random.js";

export interface LinearParams {
  readonly w: Array;
  readonly b: Array;
}
export interface ConvParams {
  readonly w: Array;
  readonly b: Array;
}
export interface GroupNormParams {
  readonly scale: Array;
  readonly shift: Array;
}

/** He-normal weights [out, in] (fan-in scaling), zero bias. */
export function initLinear(key: Array, inputs: number, outputs: number, dtype: DType = "float32"): LinearParams {
  return {
    w: np.mul(random.normal(key, [outputs, inputs], { dtype }), Math.sqrt(2 / inputs)),
    b: np.zeros([outputs], { dtype }),
  };
}

/** x [..., in] → [..., out]. */
export const linear = (p: LinearParams, x: Array): Array => np.add(np.matmul(x, np.transpose(p.w)), p.b);

/** He-normal 3×3 (or k×k) kernels [out, in, k, k], zero bias. */
export function initConv(key: Array, inputs: number, outputs: number, k = 3, dtype: DType = "float32"): ConvParams {
  return {
    w: np.mul(random.normal(key, [outputs, inputs, k, k], { dtype }), Math.sqrt(2 / (inputs * k * k))),
    b: np.zeros([outputs], { dtype }),
  };
}

/** Same-padded convolution of x [C, H, W] (stride 1 or 2) → [out, H', W']. */
export function conv(p: ConvParams, x: Array, stride = 1): Array {
  const y = nn.conv2d(np.expandDims(x, 0), p.w, { stride, padding: "SAME" });
  return np.add(np.squeeze(y, 0), np.reshape(p.b, [-1, 1, 1]));
}

export const initGroupNorm = (channels: number, dtype: DType = "float32"): GroupNormParams => ({
  scale: np.ones([channels], { dtype }),
  shift: np.zeros([channels], { dtype }),
});

/** Group normalisation of x [C, H, W] over `groups` channel groups (groups = C: instance norm). */
export function groupNorm(p: GroupNormParams, x: Array, groups: number, eps = 1e-5): Array {
  const [C, H, W] = x.shape as [number, number, number];
  if (C % groups) throw new Error(`groupNorm: ${C} channels do not split into ${groups} groups.`);
  const g = np.reshape(x, [groups, (C / groups) * H * W]);
  const mean = np.mean(g, 1, { keepdims: true });
  const centred = np.sub(g, mean);
  const normed = np.div(centred, np.sqrt(np.add(np.mean(np.square(centred), 1, { keepdims: true }), eps)));
  return np.add(np.mul(np.reshape(normed, [C, H, W]), np.reshape(p.scale, [C, 1, 1])), np.reshape(p.shift, [C, 1, 1]));
}

/** A residual block: x + conv(swish(norm(conv(swish(norm(x)))))). */
export interface ResBlockParams {
  readonly norm1: GroupNormParams;
  readonly conv1: ConvParams;
  readonly norm2: GroupNormParams;
  readonly conv2: ConvParams;
}

export function initResBlock(key: Array, channels: number, dtype: DType = "float32"): ResBlockParams {
  const keys = random.split(key, 2);
  return {
    norm1: initGroupNorm(channels, dtype),
    conv1: initConv(np.index(keys, 0), channels, channels, 3, dtype),
    norm2: initGroupNorm(channels, dtype),
    conv2: initConv(np.index(keys, 1), channels, channels, 3, dtype),
  };
}

export function resBlock(p: ResBlockParams, x: Array, groups: number): Array {
  const h = conv(p.conv1, nn.swish(groupNorm(p.norm1, x, groups)));
  return np.add(x, conv(p.conv2, nn.swish(groupNorm(p.norm2, h, groups))));
}

/**
 * A small ResNet-style state predictor N(image) → state: a strided stem convolution, residual
 * blocks at halving resolutions, global average pooling and a linear head.
 */
export interface PredictorConfig {
  /** Input image [height, width, channels]. */
  readonly image: readonly [number, number, number];
  readonly outputs: number;
  /** Channels of every stage (default [16, 32]): one stride-2 convolution and one residual block per stage. */
  readonly widths?: readonly number[];
  /** Group-norm groups (default 4; must divide every width). */
  readonly groups?: number;
  /**
   * Append the pixel's x and y in [−1, 1] as two more input channels (CoordConv, Liu et al. 2018;
   * default false): with global average pooling, this is what lets the network read positions.
   */
  readonly coordinates?: boolean;
  /**
   * How the last feature map [C, h, w] reaches the linear head: "mean" (global average pooling,
   * the default, as ResNet) or "flatten" (every position its own weights: more parameters, but
   * where things are in the image is kept) or "keypoints" (`spatialSoftArgmax`: 2 numbers per
   * channel, where in the map it responds, smooth and finer than a cell).
   */
  readonly head?: "mean" | "flatten" | "keypoints";
  readonly dtype?: DType;
}

export interface PredictorParams {
  readonly stages: readonly { readonly down: ConvParams; readonly block: ResBlockParams }[];
  readonly head: LinearParams;
}

export function initPredictor(key: Array, c: PredictorConfig): PredictorParams {
  const widths = c.widths ?? [16, 32],
    dtype = c.dtype ?? "float32";
  const keys = random.split(key, 2 * widths.length + 1);
  let inC = c.image[2] + (c.coordinates ? 2 : 0);
  const stages = widths.map((w, i) => {
    const stage = {
      down: initConv(np.index(keys, 2 * i), inC, w, 3, dtype),
      block: initResBlock(np.index(keys, 2 * i + 1), w, dtype),
    };
    inC = w;
    return stage;
  });
  // Each stride-2 stage halves the size (rounding up, as SAME padding does).
  const cells =
    c.head === "flatten"
      ? widths.reduce(([h, w]) => [Math.ceil(h / 2), Math.ceil(w / 2)], [c.image[0], c.image[1]])
      : [1, 1];
  const features = c.head === "keypoints" ? 2 * inC : inC * cells[0]! * cells[1]!;
  return { stages, head: initLinear(np.index(keys, 2 * widths.length), features, c.outputs, dtype) };
}

/** [2, H, W]: x (columns) and y (rows, downwards) in [−1, 1]. */
function coordinateChannels(H: number, W: number, dtype: DType): Array {
  const xs = np.broadcastTo(np.reshape(np.linspace(-1, 1, W, { dtype }), [1, W]), [H, W]);
  const ys = np.broadcastTo(np.reshape(np.linspace(-1, 1, H, { dtype }), [H, 1]), [H, W]);
  return np.stack([xs, ys], 0);
}

/** The feature map [C, h, w] after each stage of N for one image [H, W, C] (what perceptual losses compare). */
export function predictorFeatures(p: PredictorParams, c: PredictorConfig, image: Array): Array[] {
  if (image.shape.join() !== c.image.join()) {
    throw new Error(
      `predictor: the image is [${image.shape}], but this network was built for ` +
        `[${c.image}] (height, width, channels); render or resample the images to that size.`,
    );
  }
  const groups = c.groups ?? 4;
  let x = np.transpose(image, [2, 0, 1]);
  if (c.coordinates) x = np.concatenate([x, coordinateChannels(c.image[0], c.image[1], image.dtype)], 0);
  return p.stages.map((s) => (x = resBlock(s.block, nn.swish(conv(s.down, x, 2)), groups)));
}

/** N(image [H, W, C]) → [outputs]; the image must have the configured shape. */
export function predictor(p: PredictorParams, c: PredictorConfig, image: Array): Array {
  const x = predictorFeatures(p, c, image).at(-1)!;
  return linear(
    p.head,
    c.head === "flatten" ? np.reshape(x, [-1]) : c.head === "keypoints" ? spatialSoftArgmax(x) : np.mean(x, [1, 2]),
  );
}

/**
 * Feature map [C, h, w] → [2C] keypoints (Levine et al. 2016): each channel's softmax over its
 * cells weights the cells' x and y in [−1, 1] (as `coordinateChannels`), giving x₀, y₀, x₁, y₁, …
 * A keypoint moves smoothly, by fractions of a cell, as what its channel responds to moves.
 */
export function spatialSoftArgmax(x: Array): Array {
  if (x.ndim !== 3)
    throw new Error(`spatialSoftArgmax: expected a feature map [channels, height, width], got [${x.shape}].`);
  const [C, h, w] = x.shape as [number, number, number];
  const weights = nn.softmax(np.reshape(x, [C, h * w]), 1);
  const xy = np.reshape(coordinateChannels(h, w, x.dtype), [2, h * w]);
  return np.reshape(np.matmul(weights, np.transpose(xy)), [-1]);
}
