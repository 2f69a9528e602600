/**
 * sort / argsort along one axis as array programs: each element's rank is the number of elements
 * that come before it (smaller, or equal and earlier: a stable sort), and argsort places every
 * index at its rank. That is O(n²) work and memory along the axis — fine for the small axes of
 * simulation and rendering code (hundreds of elements), not for sorting millions — and it keeps
 * sort differentiable (the gradient is the cotangent permuted back, through takeAlongAxis) and
 * batchable with no primitive of its own. NaNs sort last, as in numpy.
 */
import type { Array, ArrayLike } from "../array.js";
import { asArray } from "./convert.js";
import { astype, equal, isnan, less, logicalAnd, logicalNot, logicalOr, mul } from "./math.js";
import { expandDims, moveaxis } from "./shape.js";
import { sum } from "./reduce.js";
import { takeAlongAxis } from "./indexing.js";
import { arange } from "./create.js";
import { normAxis } from "../shape.js";

/** Indices that sort x along `axis` (default the last), stable: equal elements keep their order. int32. */
export function argsort(x: ArrayLike, axis = -1): Array {
  const a = asArray(x, "argsort");
  if (a.ndim === 0) throw new Error("argsort: x is a scalar; give an array with the axis to sort.");
  const ax = normAxis("argsort", axis, a.ndim);
  const v = moveaxis(a, ax, -1); // [..., n]
  const n = v.shape[v.ndim - 1]!;
  const vi = expandDims(v, -1),
    vj = expandDims(v, -2); // [..., n, 1], [..., 1, n]
  const nanI = isnan(vi),
    nanJ = isnan(vj);
  // j comes before i: x_j < x_i (a NaN is after every number), or equal (NaNs equal each other) and j < i.
  const smaller = logicalOr(less(vj, vi), logicalAnd(logicalNot(nanJ), nanI));
  const same = logicalOr(equal(vj, vi), logicalAnd(nanJ, nanI));
  const idx = arange(n, undefined, 1, { dtype: "int32" });
  const earlier = less(expandDims(idx, 0), expandDims(idx, 1)); // [n, n]: j < i
  const rank = sum(astype(logicalOr(smaller, logicalAnd(same, earlier)), "int32"), -1); // [..., n]
  // order[k] = the i whose rank is k.
  const atRank = equal(expandDims(rank, -2), expandDims(idx, -1)); // [..., k, i]
  const order = sum(mul(astype(atRank, "int32"), idx), -1);
  return moveaxis(astype(order, "int32"), -1, ax);
}

/** x sorted along `axis` (default the last), NaNs last; differentiable. */
export function sort(x: ArrayLike, axis = -1): Array {
  const a = asArray(x, "sort");
  return takeAlongAxis(a, argsort(a, axis), axis < 0 ? axis + a.ndim : axis);
}
