/** Neural-network helpers built from np: activations, logSumExp/softmax, conv2d and pooling. */
import type { Array, ArrayLike, Axis } from "./array.js";
import { scalar } from "./constants.js";
import * as lax from "./prims/index.js";
import { normAxes } from "./shape.js";
import { asFloat, promote } from "./np/convert.js";

/** 1/(1+e^-x) as ½tanh(x/2)+½: no overflow in the value or its gradient. */
export function sigmoid(x: ArrayLike): Array {
  const a = asFloat(x, "sigmoid");
  const h = scalar(0.5, a.dtype);
  return lax.add(lax.mul(h, lax.tanh(lax.mul(h, a))), h);
}
/** max(x, 0) with derivative 0 at 0. */
export function relu(x: ArrayLike): Array {
  const a = asFloat(x, "relu");
  const z = lax.zerosLikeA(a);
  return lax.select(lax.gt(a, z), a, z);
}
export const swish = (x: ArrayLike): Array => {
  const a = asFloat(x, "swish");
  return lax.mul(a, sigmoid(a));
};
export const silu = swish;
/** log(1+e^x) = max(x,0) + log1p(e^-|x|): stable for large |x|. */
export function softplus(x: ArrayLike): Array {
  const a = asFloat(x, "softplus");
  // max (not relu): its derivative at the tie x = 0 is ½, so softplus'(0) = sigmoid(0) = ½.
  return lax.add(lax.maximum(a, lax.zerosLikeA(a)), lax.log1p(lax.exp(lax.neg(lax.abs(a)))));
}
export function logSumExp(x: ArrayLike, axis?: Axis, opts: { keepdims?: boolean } = {}): Array {
  const a = asFloat(x, "logSumExp");
  const axes = normAxes("logSumExp", axis, a.ndim);
  const keptShape = a.shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const m0 = lax.stopGradient(lax.reshape(lax.reduceMax(a, axes), keptShape));
  const m = lax.select(lax.isfinite(m0), m0, lax.zerosLikeA(m0));
  const s = lax.add(
    lax.log(lax.reduceSum(lax.exp(lax.sub(a, m)), axes)),
    lax.reshape(
      m,
      a.shape.filter((_, i) => !axes.includes(i)),
    ),
  );
  return opts.keepdims ? lax.reshape(s, keptShape) : s;
}
export function softmax(x: ArrayLike, axis: Axis = -1): Array {
  const a = asFloat(x, "softmax");
  const axes = normAxes("softmax", axis, a.ndim);
  const keptShape = a.shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const e = lax.exp(lax.sub(a, lax.stopGradient(lax.reshape(lax.reduceMax(a, axes), keptShape))));
  return lax.div(e, lax.reshape(lax.reduceSum(e, axes), keptShape));
}
export const logSoftmax = (x: ArrayLike, axis: Axis = -1): Array => {
  const a = asFloat(x, "logSoftmax");
  return lax.sub(a, logSumExp(a, axis, { keepdims: true }));
};

export type Padding2d =
  | number
  | readonly [number, number]
  | readonly [readonly [number, number], readonly [number, number]]
  | "SAME"
  | "VALID";
export interface Conv2dOptions {
  readonly stride?: number | readonly [number, number];
  readonly padding?: Padding2d;
  readonly dilation?: number | readonly [number, number];
}
const pair = (v: number | readonly [number, number] | undefined, def: number, what: string): [number, number] => {
  const p: [number, number] = v === undefined ? [def, def] : typeof v === "number" ? [v, v] : [v[0], v[1]];
  if (!p.every((k) => Number.isInteger(k) && k >= 1))
    throw new Error(`conv2d: ${what} must be positive integers, got ${JSON.stringify(v)}.`);
  return p;
};
function resolvePadding(
  p: Padding2d | undefined,
  inHW: readonly number[],
  kHW: readonly number[],
  stride: [number, number],
  dil: [number, number],
): [[number, number], [number, number]] {
  if (p === undefined || p === "VALID")
    return [
      [0, 0],
      [0, 0],
    ];
  if (p === "SAME") {
    return [0, 1].map((i) => {
      const out = Math.ceil(inHW[i]! / stride[i]!);
      const k = (kHW[i]! - 1) * dil[i]! + 1;
      const total = Math.max((out - 1) * stride[i]! + k - inHW[i]!, 0);
      return [Math.floor(total / 2), total - Math.floor(total / 2)];
    }) as [[number, number], [number, number]];
  }
  if (typeof p === "number")
    return [
      [p, p],
      [p, p],
    ];
  if (typeof p[0] === "number")
    return [
      [p[0] as number, p[0] as number],
      [p[1] as number, p[1] as number],
    ];
  const q = p as readonly [readonly [number, number], readonly [number, number]];
  return [
    [q[0][0], q[0][1]],
    [q[1][0], q[1][1]],
  ];
}

/** 2-D convolution (cross-correlation), x [N,C,H,W], w [O,C,kh,kw]. */
export function conv2d(x: ArrayLike, w: ArrayLike, opts: Conv2dOptions = {}): Array {
  const [a, k] = promote("conv2d", [x, w]) as [Array, Array];
  if (a.ndim !== 4 || k.ndim !== 4)
    throw new Error(`conv2d: expected x [N,C,H,W] and w [O,C,kh,kw], got ${a.aval} and ${k.aval}.`);
  const stride = pair(opts.stride, 1, "stride");
  const dil = pair(opts.dilation, 1, "dilation");
  const padding = resolvePadding(opts.padding, a.shape.slice(2), k.shape.slice(2), stride, dil);
  return lax.conv2dGeneral(a, k, { stride, padding, lhsDilation: [1, 1], rhsDilation: dil });
}

export interface PoolOptions {
  readonly stride?: number | readonly [number, number];
  readonly padding?: Padding2d;
}
/** Average pooling over windows (padding counts as zeros), x [N,C,H,W]. */
export function avgPool2d(x: ArrayLike, window: number | readonly [number, number], opts: PoolOptions = {}): Array {
  const a = asFloat(x, "avgPool2d");
  const [kh, kw] = pair(window, 1, "window");
  const [N, C, H, W] = a.shape as [number, number, number, number];
  const ones = lax.broadcastTo(scalar(1 / (kh * kw), a.dtype), [1, 1, kh, kw]);
  const y = conv2d(lax.reshape(a, [N * C, 1, H, W]), ones, { stride: opts.stride ?? [kh, kw], padding: opts.padding });
  return lax.reshape(y, [N, C, y.shape[2]!, y.shape[3]!]);
}
/** Max pooling over windows (padding never wins), x [N,C,H,W]. */
export function maxPool2d(x: ArrayLike, window: number | readonly [number, number], opts: PoolOptions = {}): Array {
  const a = asFloat(x, "maxPool2d");
  const [kh, kw] = pair(window, 1, "window");
  const stride = pair(opts.stride ?? [kh, kw], 1, "stride");
  const pad = resolvePadding(opts.padding, a.shape.slice(2), [kh, kw], stride, [1, 1]);
  const p = lax.pad(a, scalar(-Infinity, a.dtype), [0, 0, pad[0][0], pad[1][0]], [0, 0, pad[0][1], pad[1][1]]);
  const [N, C, H, W] = p.shape as [number, number, number, number];
  const oh = Math.floor((H - kh) / stride[0]) + 1,
    ow = Math.floor((W - kw) / stride[1]) + 1;
  // A window larger than the padded input used to fail inside an internal slice with a confusing message.
  if (oh < 1 || ow < 1)
    throw new Error(`maxPool2d: window ${kh}x${kw} does not fit input ${a.aval} with padding ${JSON.stringify(pad)}.`);
  let m: Array | null = null;
  for (let i = 0; i < kh; i++)
    for (let j = 0; j < kw; j++) {
      const s = lax.slice(
        p,
        [0, 0, i, j],
        [N, C, i + (oh - 1) * stride[0] + 1, j + (ow - 1) * stride[1] + 1],
        [1, 1, stride[0], stride[1]],
      );
      m = m ? lax.maximum(m, s) : s;
    }
  return m!;
}
export const oneHot = (idx: ArrayLike, n: number, opts: { dtype?: "float32" | "float64" } = {}): Array => {
  const i = promote("oneHot", [idx])[0]!;
  const r = lax.eq(
    lax.broadcastInDim(
      i,
      [...i.shape, n],
      i.shape.map((_, k) => k),
    ),
    lax.iota(i.dtype, [...i.shape, n], i.ndim),
  );
  return lax.convert(r, opts.dtype ?? "float32");
};

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
/**
 * GELU, x·Φ(x), in its tanh form ½x(1 + tanh(√(2/π)(x + 0.044715x³))) — what `jax.nn.gelu`
 * computes by default (approximate=True). The exact form needs erf, which gradsim lacks.
 */
export function gelu(x: ArrayLike, opts: { approximate?: boolean } = {}): Array {
  if (opts.approximate === false)
    throw new Error(
      "gelu: the exact form x·Φ(x) needs erf, which gradsim does not have yet; " +
        "use the tanh approximation (approximate: true, the default, as in JAX).",
    );
  const a = asFloat(x, "gelu");
  const inner = lax.mul(
    scalar(SQRT_2_OVER_PI, a.dtype),
    lax.add(a, lax.mul(scalar(0.044715, a.dtype), lax.mul(a, lax.mul(a, a)))),
  );
  return lax.mul(lax.mul(scalar(0.5, a.dtype), a), lax.add(scalar(1, a.dtype), lax.tanh(inner)));
}
/** x for x > 0, slope·x otherwise (JAX's default slope 0.01); derivative `slope` at 0. */
export function leakyRelu(x: ArrayLike, slope = 0.01): Array {
  if (!Number.isFinite(slope)) throw new Error(`leakyRelu: the negative slope must be a finite number, got ${slope}.`);
  const a = asFloat(x, "leakyRelu");
  return lax.select(lax.gt(a, lax.zerosLikeA(a)), a, lax.mul(scalar(slope, a.dtype), a));
}
