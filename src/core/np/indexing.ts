/** Gathers and scatters: take, takeAlongAxis, scatterAdd, row indexing. */
import type { Array, ArrayLike } from "../array.js";
import { scalar } from "../constants.js";
import * as lax from "../prims/index.js";
import { broadcastShapes, fmtShape, normAxis, stridesOf } from "../shape.js";
import { array, asArray, promote } from "./convert.js";

function indexArray(idx: ArrayLike, op: string): Array {
  // JS lists like [1.5] used to be truncated silently; they get the same check as float Arrays.
  const jsNonInteger = (v: unknown): boolean =>
    globalThis.Array.isArray(v) ? v.some(jsNonInteger) : typeof v === "number" && !Number.isInteger(v);
  if (jsNonInteger(idx))
    throw new Error(`${op}: indices must be integers, got ${JSON.stringify(idx)} (floats are not rounded implicitly).`);
  const i =
    typeof idx === "number" || globalThis.Array.isArray(idx) ? array(idx, { dtype: "int32" }) : asArray(idx, op);
  if (i.dtype !== "int32") {
    throw new Error(
      `${op}: indices must be int32, got ${i.aval}. Convert with .astype("int32") (floats are not rounded implicitly).`,
    );
  }
  return i;
}

/** take(x, indices, axis): gather along one axis (flattened x when axis is omitted); indices of any shape. */
export function take(x: ArrayLike, indices: ArrayLike, axis?: number): Array {
  let a = asArray(x, "take");
  const i = indexArray(indices, "take");
  if (axis === undefined || axis === null) {
    a = lax.reshape(a, [a.size]);
    axis = 0;
  }
  return lax.gather(a, i, normAxis("take", axis, a.ndim));
}

/**
 * takeAlongAxis(x, idx, axis): out[..., j, ...] = x[..., idx[..., j, ...], ...] (idx broadcasts against x's other
 * axes).
 */
export function takeAlongAxis(x: ArrayLike, indices: ArrayLike, axis: number): Array {
  const a = asArray(x, "takeAlongAxis");
  const idx = indexArray(indices, "takeAlongAxis");
  if (idx.ndim !== a.ndim)
    throw new Error(`takeAlongAxis: indices ${idx.aval} must have the same rank as x ${a.aval}.`);
  const ax = normAxis("takeAlongAxis", axis, a.ndim);
  const shapeA = a.shape.map((d, i) => (i === ax ? 1 : d));
  const shapeI = idx.shape.map((d, i) => (i === ax ? 1 : d));
  const common = broadcastShapes("takeAlongAxis", shapeA, shapeI);
  const outShape = common.map((d, i) => (i === ax ? idx.shape[ax]! : d));
  // Flat index into x: Σ_{d≠axis} i_d·stride_d + idx·stride_axis.
  const strides = stridesOf(a.shape);
  const n = a.shape[ax]!;
  const nidx = lax.select(lax.lt(idx, scalar(0, "int32")), lax.add(idx, scalar(n, "int32")), idx);
  let flat = lax.mul(lax.broadcastTo(nidx, outShape), scalar(strides[ax]!, "int32"));
  for (let d = 0; d < a.ndim; d++) {
    if (d === ax || outShape[d] === 1 || a.shape[d] === 1) continue; // size-1 axes of x broadcast (stride 0)
    flat = lax.add(flat, lax.mul(lax.iota("int32", outShape, d), scalar(strides[d]!, "int32")));
  }
  return lax.gather(lax.reshape(a, [a.size]), flat, 0);
}

/** scatterAdd(target, indices, updates, axis): target.at[indices].add(updates); repeated indices accumulate. */
export function scatterAdd(target: ArrayLike, indices: ArrayLike, updates: ArrayLike, axis = 0): Array {
  const [t, u] = promote("scatterAdd", [target, updates]) as [Array, Array];
  const i = indexArray(indices, "scatterAdd");
  const ax = normAxis("scatterAdd", axis, t.ndim);
  const want = [...t.shape.slice(0, ax), ...i.shape, ...t.shape.slice(ax + 1)];
  let uu = u;
  if (u.shape.join() !== want.join()) {
    try {
      uu = lax.broadcastTo(u, want);
    } catch {
      throw new Error(
        `scatterAdd: updates ${u.aval} cannot be broadcast to ${fmtShape(want)} ` +
          `(target ${t.aval}, indices ${i.aval}, axis ${ax}).`,
      );
    }
  }
  return lax.scatterAdd(t, i, uu, ax);
}

/** x[i] for an integer i (negative counts from the end): the i-th slice along axis 0. */
export function index(x: ArrayLike, i: number): Array {
  const a = asArray(x, "index");
  if (a.ndim === 0) throw new Error("index: cannot index a scalar array.");
  const n = a.shape[0]!;
  const j = i < 0 ? i + n : i;
  if (!Number.isInteger(i) || j < 0 || j >= n)
    throw new Error(`index: index ${i} is out of bounds for axis 0 with size ${n}.`);
  return lax.reshape(lax.sliceAxis(a, 0, j, j + 1), a.shape.slice(1));
}
