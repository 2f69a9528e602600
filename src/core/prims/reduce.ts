/** Reductions over any set of axes, arg-reductions and cumulative sums. */
import type { Array } from "../array.js";
import { ShapedArray } from "../aval.js";
import { scalar } from "../constants.js";
import { typedArrayFor } from "../dtype.js";
import { definePrimitive, type BDim, type Primitive } from "../primitive.js";
import { normAxis, shapeEq, sizeOf, type Shape, range } from "../shape.js";
import { isZero, Zero, type Tangent } from "../tangent.js";
import { bind1 } from "../trace.js";
import { host, requireNumeric, transposeHost } from "./_helpers.js";
import { convert, div, eq, mul, select } from "./elementwise.js";
import { iota } from "./indexing.js";
import { broadcastInDim, moveAxis, reshape, transpose } from "./movement.js";
import type { HostArray } from "../backends/backend.js";
import type { KGraph, KNode, ReduceOp } from "../kernel/expr.js";
import { reduceOver, UNROLL_REDUCE_MAX, viewOf, type View } from "../kernel/view.js";

export interface AxesParams {
  readonly axes: readonly number[];
}

function checkAxes(op: string, x: ShapedArray, axes: readonly number[]): void {
  for (const a of axes) {
    if (!Number.isInteger(a) || a < 0 || a >= x.ndim) throw new Error(`${op}: axis ${a} out of range for ${x}.`);
  }
}
const keptAxes = (ndim: number, axes: readonly number[]): number[] => range(ndim).filter((d) => !axes.includes(d));

/**
 * Moves the reduced axes last and reduces each contiguous block (reference loop), accumulating in float64. A sum or
 * product of at most UNROLL_REDUCE_MAX terms is what the jit unrolls into straight-line code (kernel/view.ts), term by
 * term in the operands' type: so it is here, from the first term, each partial result rounded to float32 for float32
 * (a jitted program gives the eager bits; short sums lose nothing to speak of).
 */
function reduceHost(
  x: HostArray,
  axes: readonly number[],
  out: ShapedArray,
  init: number,
  fn: (acc: number, v: number) => number,
  unrolled: boolean,
): HostArray {
  const kept = keptAxes(x.shape.length, axes);
  const t = transposeHost(x, [...kept, ...axes]);
  const k = sizeOf(axes.map((a) => x.shape[a]!));
  const n = out.size;
  const o = typedArrayFor(out.dtype, n);
  const d = t.data;
  const short = unrolled && k > 0 && k <= UNROLL_REDUCE_MAX,
    f32 = out.dtype === "float32";
  for (let i = 0; i < n; i++) {
    const e = (i + 1) * k;
    let j = i * k,
      acc = short ? d[j++]! : init;
    if (short && f32) for (; j < e; j++) acc = Math.fround(fn(acc, d[j]!));
    else for (; j < e; j++) acc = fn(acc, d[j]!);
    o[i] = acc;
  }
  return host(o, out.shape, out.dtype);
}

/** Batching rule for reductions: batch dim to the front, axes shifted by one. */
const reduceVmap =
  (prim: Primitive<AxesParams>) =>
  ([x]: readonly Array[], [d]: readonly BDim[], { axes }: AxesParams): [Array[], BDim[]] => [
    [bind1(prim, [moveAxis(x!, d!, 0)], { axes: axes.map((a) => a + 1) })],
    [0],
  ];

/** Lowering of a reduction: the kept axes index the output, the reduced axes become inner loop variables. */
const lowerReduce =
  (op: ReduceOp) =>
  ([x]: readonly View[], { axes }: AxesParams, [out]: readonly ShapedArray[], g: KGraph): View[] => [
    viewOf(out!, (idx) =>
      reduceOver(
        g,
        op,
        axes.map((a) => x!.shape[a]!),
        (r) => {
          const full: KNode[] = [];
          let k = 0,
            j = 0;
          for (let d = 0; d < x!.shape.length; d++) full.push(axes.includes(d) ? r[j++]! : idx[k++]!);
          return x!.at(full);
        },
      ),
    ),
  ];
const KERNEL_OP: Record<string, ReduceOp> = {
  reduce_sum: "add",
  reduce_max: "max",
  reduce_min: "min",
  reduce_prod: "mul",
  argmax: "argmax",
  argmin: "argmin",
};

function reduction(
  name: string,
  init: (dtype: string) => number,
  fn: (a: number, b: number) => number,
  jvp: (x: Array, out: Array, t: Array, axes: readonly number[]) => Tangent,
  transpose?: (ct: Array, x: ShapedArray, axes: readonly number[]) => Array,
): Primitive<AxesParams> {
  const unrolled = name === "reduce_sum" || name === "reduce_prod";
  const prim: Primitive<AxesParams> = definePrimitive<AxesParams>({
    name,
    shape: ([x], { axes }) => {
      requireNumeric(name, x!);
      checkAxes(name, x!, axes);
      return [
        new ShapedArray(
          x!.shape.filter((_, i) => !axes.includes(i)),
          x!.dtype,
          x!.weak,
        ),
      ];
    },
    impl: ([x], { axes }, [out]) => [reduceHost(x!, axes, out!, init(x!.dtype), fn, unrolled)],
    jvp: ([x], [t], p) => {
      const out = bind1(prim, [x!], p);
      if (isZero(t)) return [[out], [new Zero(out.aval.strong())]];
      return [[out], [jvp(x!, out, t, p.axes)]];
    },
    ...(transpose
      ? {
          transpose: ([ct]: readonly Tangent[], [x]: readonly unknown[], { axes }: AxesParams) => [
            isZero(ct)
              ? new Zero((x as { aval: ShapedArray }).aval)
              : transpose(ct as Array, (x as { aval: ShapedArray }).aval, axes),
          ],
        }
      : {}),
    vmap: (args, dims, p) => reduceVmap(prim)(args, dims, p),
    lower: lowerReduce(KERNEL_OP[name]!),
    printParams: (p) => `axes=[${p.axes}]`,
  });
  return prim;
}

/** Broadcast a reduced value back over the reduced axes. */
const expandReduced = (r: Array, shape: Shape, axes: readonly number[]): Array =>
  broadcastInDim(r, shape, keptAxes(shape.length, axes));

export const reduceSumP = reduction(
  "reduce_sum",
  () => 0,
  (a, b) => a + b,
  (_x, _o, t, axes) => reduceSum(t, axes),
  (ct, x, axes) => expandReduced(ct, x.shape, axes),
);
export const reduceSum = (x: Array, axes: readonly number[]): Array =>
  axes.length ? bind1(reduceSumP, [x], { axes }) : x;

/** d max = mean of the tangent over the positions attaining the max (ties share the derivative, as in JAX). */
const extremumJvp = (x: Array, out: Array, t: Array, axes: readonly number[]): Tangent => {
  const mask = convert(eq(x, expandReduced(out, x.shape, axes)), t.dtype);
  return div(reduceSum(mul(t, mask), axes), reduceSum(mask, axes));
};
// Math.max and Math.min propagate NaN, as numpy's max and min do.
export const reduceMaxP = reduction("reduce_max", () => -Infinity, Math.max, extremumJvp);
export const reduceMax = (x: Array, axes: readonly number[]): Array =>
  axes.length ? bind1(reduceMaxP, [x], { axes }) : x;
export const reduceMinP = reduction("reduce_min", () => Infinity, Math.min, extremumJvp);
export const reduceMin = (x: Array, axes: readonly number[]): Array =>
  axes.length ? bind1(reduceMinP, [x], { axes }) : x;

/** d prod = Σ_i t_i Π_{j≠i} x_j, with the exclusive products computed directly (correct at zeros). */
export const reduceProdP = reduction(
  "reduce_prod",
  () => 1,
  (a, b) => a * b,
  (x, _o, t, axes) => {
    const kept = keptAxes(x.ndim, axes);
    const perm = [...kept, ...axes];
    const m = sizeOf(kept.map((a) => x.shape[a]!));
    const k = sizeOf(axes.map((a) => x.shape[a]!));
    const xs = reshape(transpose(x, perm), [m, 1, k]);
    const ts = reshape(transpose(t, perm), [m, k]);
    const diag = eq(iota("int32", [k, k], 0), iota("int32", [k, k], 1));
    const others = reduceProd(select(diag, broadcastInDim(scalar(1, x.dtype), [k, k], []), xs), [2]); // [m, k]
    return reshape(
      reduceSum(mul(ts, others), [1]),
      kept.map((a) => x.shape[a]!),
    );
  },
);
export const reduceProd = (x: Array, axes: readonly number[]): Array =>
  axes.length ? bind1(reduceProdP, [x], { axes }) : x;

// ---------------------------------------------------------------- argmax / argmin

export interface AxisParams {
  readonly axis: number;
}
function argReduction(name: string, better: (a: number, b: number) => boolean): Primitive<AxisParams> {
  const prim: Primitive<AxisParams> = definePrimitive<AxisParams>({
    name,
    shape: ([x], { axis }) => {
      requireNumeric(name, x!);
      checkAxes(name, x!, [axis]);
      if (x!.shape[axis] === 0) throw new Error(`${name}: cannot take ${name} of an empty axis (${x}, axis ${axis}).`);
      return [
        new ShapedArray(
          x!.shape.filter((_, i) => i !== axis),
          "int32",
        ),
      ];
    },
    impl: ([x], { axis }, [out]) => {
      const t = transposeHost(x!, [...keptAxes(x!.shape.length, [axis]), axis]);
      const k = x!.shape[axis]!;
      const o = new Int32Array(out!.size);
      for (let i = 0; i < o.length; i++) {
        let best = 0,
          bv = t.data[i * k]!;
        for (let j = 1; j < k; j++) {
          const v = t.data[i * k + j]!;
          if (Number.isNaN(bv)) break; // first NaN wins, as in numpy
          if (Number.isNaN(v) || better(v, bv)) {
            best = j;
            bv = v;
          }
        }
        o[i] = best;
      }
      return [host(o, out!.shape, "int32")];
    },
    jvp: ([x], _t, p) => {
      const out = bind1(prim, [x!], p);
      return [[out], [new Zero(out.aval)]];
    },
    vmap: ([x], [d], { axis }) => [[bind1(prim, [moveAxis(x!, d!, 0)], { axis: axis + 1 })], [0]],
    lower: (ins, { axis }, outs, g) => lowerReduce(KERNEL_OP[name]!)(ins, { axes: [axis] }, outs, g),
    printParams: (p) => `axis=${p.axis}`,
  });
  return prim;
}
export const argmaxP = argReduction("argmax", (a, b) => a > b);
export const argmax = (x: Array, axis: number): Array => bind1(argmaxP, [x], { axis });
export const argminP = argReduction("argmin", (a, b) => a < b);
export const argmin = (x: Array, axis: number): Array => bind1(argminP, [x], { axis });

// ---------------------------------------------------------------- cumsum

export interface CumsumParams {
  readonly axis: number;
  readonly reverse: boolean;
}
export const cumsumP: Primitive<CumsumParams> = definePrimitive<CumsumParams>({
  name: "cumsum",
  shape: ([x], { axis }) => {
    requireNumeric("cumsum", x!);
    checkAxes("cumsum", x!, [axis]);
    return [x!];
  },
  impl: ([x], { axis, reverse }, [out]) => {
    const nd = x!.shape.length;
    const perm = [...keptAxes(nd, [axis]), axis];
    const t = transposeHost(x!, perm);
    const k = x!.shape[axis]!;
    const o = typedArrayFor(x!.dtype, t.data.length);
    for (let i = 0; i * k < o.length; i++) {
      let acc = 0;
      if (!reverse)
        for (let j = 0; j < k; j++) {
          acc += t.data[i * k + j]!;
          o[i * k + j] = acc;
        }
      else
        for (let j = k - 1; j >= 0; j--) {
          acc += t.data[i * k + j]!;
          o[i * k + j] = acc;
        }
    }
    const inv = perm.map((_, i) => perm.indexOf(i));
    return [transposeHost(host(o, t.shape, x!.dtype), inv)].map((h) => host(h.data, out!.shape, out!.dtype));
  },
  jvp: ([x], [t], p) => [[bind1(cumsumP, [x!], p)], [isZero(t) ? new Zero(x!.aval.strong()) : bind1(cumsumP, [t], p)]],
  transpose: ([ct], [x], p) => [
    isZero(ct)
      ? new Zero((x as { aval: ShapedArray }).aval)
      : bind1(cumsumP, [ct as Array], { ...p, reverse: !p.reverse }),
  ],
  vmap: ([x], [d], p) => [[bind1(cumsumP, [moveAxis(x!, d!, 0)], { ...p, axis: p.axis + 1 })], [0]],
  printParams: (p) => `axis=${p.axis}${p.reverse ? " reverse" : ""}`,
});
export const cumsum = (x: Array, axis: number, reverse = false): Array =>
  bind1(cumsumP, [x], { axis: normAxis("cumsum", axis, x.ndim), reverse });

// ---------------------------------------------------------------- helpers

/** Sum a broadcast result back to `shape` (the transpose of numpy broadcasting). */
export function unbroadcast(x: Array, shape: Shape): Array {
  if (shapeEq(x.shape, shape)) return x;
  const lead = x.ndim - shape.length;
  const axes: number[] = [];
  for (let i = 0; i < x.ndim; i++) {
    if (i < lead || (shape[i - lead] === 1 && x.shape[i] !== 1)) axes.push(i);
  }
  const r = reduceSum(x, axes);
  return shapeEq(r.shape, shape) ? r : reshape(r, shape);
}
