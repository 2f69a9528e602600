/** Reductions with numpy signatures: sum mean max min prod argmax argmin cumsum norm var std. */
import type { Array, ArrayLike, Axis } from "../array.js";
import { scalar } from "../constants.js";
import * as lax from "../prims/index.js";
import { normAxes, normAxis, sizeOf } from "../shape.js";
import { asArray, asFloat } from "./convert.js";

export interface ReduceOptions {
  readonly keepdims?: boolean;
}

const keep = (r: Array, x: Array, axes: readonly number[], keepdims?: boolean): Array =>
  keepdims
    ? lax.reshape(
        r,
        x.shape.map((d, i) => (axes.includes(i) ? 1 : d)),
      )
    : r;

function reducer(name: string, f: (x: Array, axes: number[]) => Array, prep: (x: Array) => Array = (x) => x) {
  return (x: ArrayLike, axis?: Axis, opts: ReduceOptions = {}): Array => {
    const a = prep(asArray(x, name));
    const axes = normAxes(name, axis, a.ndim);
    return keep(f(a, axes), a, axes, opts.keepdims);
  };
}
const boolToInt = (x: Array): Array => (x.dtype === "bool" ? lax.convert(x, "int32") : x);
function checkNonEmpty(name: string) {
  return (x: Array, axes: number[]): Array => {
    if (axes.some((a) => x.shape[a] === 0))
      throw new Error(`${name}: zero-size reduction over axis of ${x.aval}; ${name} of an empty array is undefined.`);
    return name === "max" ? lax.reduceMax(x, axes) : name === "min" ? lax.reduceMin(x, axes) : x;
  };
}

export const sum = reducer("sum", lax.reduceSum, boolToInt);
export const prod = reducer("prod", lax.reduceProd, boolToInt);
export const max = reducer("max", checkNonEmpty("max"), boolToInt);
export const min = reducer("min", checkNonEmpty("min"), boolToInt);
export const mean = (x: ArrayLike, axis?: Axis, opts: ReduceOptions = {}): Array => {
  const a = asFloat(x, "mean");
  const axes = normAxes("mean", axis, a.ndim);
  const n = sizeOf(axes.map((d) => a.shape[d]!));
  return keep(lax.div(lax.reduceSum(a, axes), scalar(n, a.dtype)), a, axes, opts.keepdims);
};
/** Variance (ddof 0 by default). */
export const variance = (x: ArrayLike, axis?: Axis, opts: ReduceOptions & { ddof?: number } = {}): Array => {
  const a = asFloat(x, "var");
  const axes = normAxes("var", axis, a.ndim);
  const n = sizeOf(axes.map((d) => a.shape[d]!));
  const m = mean(a, axes, { keepdims: true });
  const d = lax.sub(a, m);
  return keep(
    lax.div(lax.reduceSum(lax.mul(d, d), axes), scalar(n - (opts.ddof ?? 0), a.dtype)),
    a,
    axes,
    opts.keepdims,
  );
};
export const std = (x: ArrayLike, axis?: Axis, opts: ReduceOptions & { ddof?: number } = {}): Array =>
  lax.sqrt(variance(x, axis, opts));

function argReduce(name: "argmax" | "argmin") {
  return (x: ArrayLike, axis?: number, opts: ReduceOptions = {}): Array => {
    let a = boolToInt(asArray(x, name));
    let ax: number;
    if (axis === undefined || axis === null) {
      a = lax.reshape(a, [a.size]);
      ax = 0;
    } else ax = normAxis(name, axis, a.ndim);
    const r = name === "argmax" ? lax.argmax(a, ax) : lax.argmin(a, ax);
    return opts.keepdims && axis !== undefined
      ? lax.reshape(
          r,
          a.shape.map((d, i) => (i === ax ? 1 : d)),
        )
      : r;
  };
}
export const argmax = argReduce("argmax");
export const argmin = argReduce("argmin");

export function cumsum(x: ArrayLike, axis?: number, opts: { reverse?: boolean } = {}): Array {
  let a = boolToInt(asArray(x, "cumsum"));
  if (axis === undefined || axis === null) {
    a = lax.reshape(a, [a.size]);
    axis = 0;
  }
  return lax.cumsum(a, normAxis("cumsum", axis, a.ndim), opts.reverse ?? false);
}

export interface NormOptions extends ReduceOptions {
  readonly axis?: Axis;
  readonly ord?: number | "fro";
}
/** Vector 2-norm (default), or ord 1 / Infinity / p, over `axis` (default all). */
export function norm(x: ArrayLike, axisOrOpts?: Axis | NormOptions, maybeOpts: NormOptions = {}): Array {
  const opts: NormOptions =
    typeof axisOrOpts === "object" && axisOrOpts !== null && !globalThis.Array.isArray(axisOrOpts)
      ? (axisOrOpts as NormOptions)
      : { ...maybeOpts, axis: axisOrOpts as Axis };
  const a = asFloat(x, "norm");
  const axes = normAxes("norm", opts.axis, a.ndim);
  const ord = opts.ord ?? 2;
  let r: Array;
  if (ord === 2 || ord === "fro") r = lax.sqrt(lax.reduceSum(lax.mul(a, a), axes));
  else if (ord === 1) r = lax.reduceSum(lax.abs(a), axes);
  else if (ord === Infinity) r = lax.reduceMax(lax.abs(a), axes);
  else if (typeof ord === "number" && ord > 0) {
    const p = scalar(ord, a.dtype);
    r = lax.pow(lax.reduceSum(lax.pow(lax.abs(a), p), axes), scalar(1 / ord, a.dtype));
  } else throw new Error(`norm: unsupported ord ${String(ord)}; use 1, 2, Infinity, "fro" or a positive number.`);
  return keep(r, a, axes, opts.keepdims);
}
