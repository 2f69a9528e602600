/**
 * dynamicSlice / dynamicUpdateSlice: a block of fixed size at a start that may be a traced int32
 * Array (JAX's lax.dynamic_slice), as gathers and a scatter-add of iota + start, so grad, jvp and
 * vmap (over starts too) come from take's and scatterAdd's rules. Starts are clamped so the block
 * fits, as in JAX.
 */
import type { Array, ArrayLike } from "../array.js";
import { arange, zeros } from "./create.js";
import { asArray } from "./convert.js";
import { add, clip, sub } from "./math.js";
import { scatterAdd, take } from "./indexing.js";

function blockIndices(op: string, x: Array, starts: readonly (number | Array)[], sizes: readonly number[]): Array[] {
  if (starts.length !== x.ndim || sizes.length !== x.ndim) {
    throw new Error(
      `${op}: give one start and one size per axis of x ${x.aval}; ` +
        `got ${starts.length} starts and ${sizes.length} sizes.`,
    );
  }
  return x.shape.map((dim, d) => {
    const size = sizes[d]!;
    if (!Number.isInteger(size) || size < 0 || size > dim)
      throw new Error(`${op}: size ${size} of axis ${d} must be an integer in [0, ${dim}] (x is ${x.aval}).`);
    const s = starts[d]!;
    if (typeof s === "number" && !Number.isInteger(s))
      throw new Error(`${op}: start ${s} of axis ${d} must be an integer.`);
    if (typeof s !== "number" && (s.dtype !== "int32" || s.ndim !== 0))
      throw new Error(
        `${op}: start of axis ${d} must be an int32 scalar, got ${s.aval}; convert it with .astype("int32").`,
      );
    const start = clip(typeof s === "number" ? asArray(s, op).astype("int32") : s, 0, dim - size);
    return add(arange(size, undefined, 1, { dtype: "int32" }), start);
  });
}

/** The block x[start₀ : start₀ + size₀, …] with each start clamped to [0, dim − size]. */
export function dynamicSlice(x: ArrayLike, starts: readonly (number | Array)[], sizes: readonly number[]): Array {
  const a = asArray(x, "dynamicSlice");
  return blockIndices("dynamicSlice", a, starts, sizes).reduce((acc, idx, d) => take(acc, idx, d), a);
}

/** x with the block at `starts` (clamped so it fits) replaced by `update`. */
export function dynamicUpdateSlice(x: ArrayLike, update: ArrayLike, starts: readonly (number | Array)[]): Array {
  const a = asArray(x, "dynamicUpdateSlice"),
    u = asArray(update, "dynamicUpdateSlice");
  if (u.ndim !== a.ndim) throw new Error(`dynamicUpdateSlice: update ${u.aval} must have the rank of x ${a.aval}.`);
  const current = dynamicSlice(a, starts, u.shape);
  // x + scatter(update − current) into the block: the block's indices are distinct, so this sets it.
  let delta: Array = sub(u, current);
  const idx = blockIndices("dynamicUpdateSlice", a, starts, u.shape);
  for (let d = a.ndim - 1; d >= 0; d--) {
    const shape = [...delta.shape];
    shape[d] = a.shape[d]!;
    delta = scatterAdd(zeros(shape, { dtype: delta.dtype }), idx[d]!, delta, d);
  }
  return add(a, delta);
}
