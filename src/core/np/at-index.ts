/**
 * Functional indexed updates, JAX's `x.at[i].set(v)`, spelled `x.atIndex(i).set(v)` here because
 * `x.at(i)` already means a gather (API.md). Every update returns a new array; all are built from
 * take, scatterAdd, where and reductions, so grad, jvp, vmap and jit come from their rules.
 *
 * Repeated indices: `add` accumulates, `mul`/`min`/`max` combine every update (product, least,
 * greatest), `set` keeps the last one (numpy's `x[idx] = v`). Distinct indices known on the host
 * (CPU, outside a transform), or promised with `{ uniqueIndices: true }`, take a scatter path;
 * traced indices otherwise compare every index with every row (K·N work for K indices, N rows).
 */
import { Array, type ArrayLike } from "../array.js";
import { ConcreteArray } from "../concrete.js";
import { isFloat } from "../dtype.js";
import * as lax from "../prims/index.js";
import { broadcastShapes, fmtShape, sizeOf } from "../shape.js";
import { array, asArray } from "./convert.js";
import { arange, full, zeros } from "./create.js";
import { add, astype, equal, greaterEqual, less, maximum, minimum, mul, where } from "./math.js";
import { max as reduceMax, min as reduceMin, prod } from "./reduce.js";
import { reshape } from "./shape.js";
import { scatterAdd, take } from "./indexing.js";

/**
 * What `atIndex` accepts: an integer (one position on axis 0), an int32 Array (positions on
 * axis 0, any shape, like `x.at(idx)`), or a JS list with one entry per leading axis — JAX's
 * tuple `x.at[i, j]` — whose entries are integers, int32 Arrays or nested number lists
 * (broadcast together, numpy's advanced indexing). Negative indices count from the end.
 */
export type IndexSpec = number | Array | readonly (number | Array | readonly ArrayLike[])[];

export interface UpdateOptions {
  /** Promise that the indices are distinct (JAX's unique_indices): traced indices then take the scatter path. */
  readonly uniqueIndices?: boolean;
}

/** The indexed view `x.atIndex(i)`: read it with get, or make an updated copy of x. */
export interface IndexUpdate {
  /** x[i] (the gather). */
  get(): Array;
  /** A copy of x with x[i] = v (v broadcasts to x[i]'s shape; repeated indices: the last update). */
  set(v: ArrayLike, opts?: UpdateOptions): Array;
  /** A copy of x with x[i] += v (repeated indices accumulate). */
  add(v: ArrayLike, opts?: UpdateOptions): Array;
  /** A copy of x with x[i] *= v (repeated indices: every factor). */
  mul(v: ArrayLike, opts?: UpdateOptions): Array;
  /** A copy of x with x[i] = min(x[i], v). */
  min(v: ArrayLike, opts?: UpdateOptions): Array;
  /** A copy of x with x[i] = max(x[i], v). */
  max(v: ArrayLike, opts?: UpdateOptions): Array;
}

/** x's leading indexed axes flattened into one: rows [N, ...rest] and flat row indices of shape I. */
interface Flat {
  readonly rows: Array;
  readonly idx: Array;
  readonly known: Int32Array | null;
}

const hostInts = (a: Array): Int32Array | null => {
  if (!(a instanceof ConcreteArray)) return null;
  try {
    return Int32Array.from(a.dataSync());
  } catch {
    return null;
  }
};

function toIndexArray(v: number | Array | readonly ArrayLike[], axis: number, dim: number, what: string): Array {
  if (typeof v === "number") {
    if (!Number.isInteger(v) || v < -dim || v >= dim)
      throw new Error(
        `${what}: index ${v} is out of bounds for axis ${axis} with size ${dim} (integers in [${-dim}, ${dim})).`,
      );
    return array(v < 0 ? v + dim : v, { dtype: "int32" });
  }
  const a = v instanceof Array ? v : array(v, { dtype: "int32" });
  if (a.dtype !== "int32")
    throw new Error(`${what}: an index array must be int32, got ${a.aval}; convert it with .astype("int32").`);
  const known = hostInts(a);
  if (known) {
    const bad = known.find((k) => k < -dim || k >= dim);
    if (bad !== undefined) throw new Error(`${what}: index ${bad} is out of bounds for axis ${axis} with size ${dim}.`);
  }
  // Negative indices count from the end (traced out-of-range ones are clamped, like take).
  return where(less(a, 0), add(a, dim), a);
}

function flatten(x: Array, index: IndexSpec, what: string): Flat {
  const parts = typeof index === "number" || index instanceof Array ? [index] : [...index];
  if (!parts.length) throw new Error(`${what}: give at least one index.`);
  if (parts.length > x.ndim)
    throw new Error(`${what}: ${parts.length} indices for ${x.aval}, which has ${x.ndim} axes.`);
  const idxs = parts.map((p, d) => toIndexArray(p, d, x.shape[d]!, what));
  const shape = broadcastShapes(`${what} (index shapes)`, ...idxs.map((i) => i.shape));
  const lead = x.shape.slice(0, parts.length);
  let flat = lax.broadcastTo(idxs[0]!, shape);
  for (let d = 1; d < idxs.length; d++) flat = add(mul(flat, lead[d]!), lax.broadcastTo(idxs[d]!, shape));
  const rows = reshape(x, [sizeOf(lead), ...x.shape.slice(parts.length)]);
  return { rows, idx: flat, known: idxs.every((i) => i instanceof ConcreteArray) ? hostInts(flat) : null };
}

const distinct = (k: Int32Array): boolean => new Set(k).size === k.length;

/** v cast to x's dtype and broadcast to the indexed region [...I, ...rest]. */
function updatesFor(f: Flat, v: ArrayLike, what: string): Array {
  const want = [...f.idx.shape, ...f.rows.shape.slice(1)];
  let u = asArray(v, what);
  if (u.dtype !== f.rows.dtype) u = astype(u, f.rows.dtype);
  try {
    return lax.broadcastTo(u, want);
  } catch {
    throw new Error(
      `${what}: the update ${u.aval} does not broadcast to the indexed region ${fmtShape(want)} ` +
        `(x's rows ${f.rows.aval}, indices ${f.idx.aval}).`,
    );
  }
}

/** [K, N] bool: index k names row n. */
function oneHot(f: Flat): Array {
  const K = f.idx.size,
    N = f.rows.shape[0]!;
  return equal(reshape(f.idx, [K, 1]), reshape(arange(N, undefined, 1, { dtype: "int32" }), [1, N]));
}

/** Rows with every distinct index set to its update (exact: 0 + v is v). */
function scatterSet(f: Flat, u: Array): Array {
  const N = f.rows.shape[0]!;
  const hit = greaterEqual(scatterAdd(zeros([N], { dtype: "int32" }), f.idx, 1), 1);
  const placed = scatterAdd(zeros(f.rows.shape, { dtype: f.rows.dtype }), f.idx, u);
  return where(reshape(hit, [N, ...f.rows.shape.slice(1).map(() => 1)]), placed, f.rows);
}

/** Rows with each indexed row set to the last update naming it (any indices, traced ones included). */
function lastWriteSet(f: Flat, u: Array): Array {
  const K = f.idx.size,
    N = f.rows.shape[0]!;
  const ks = reshape(arange(K, undefined, 1, { dtype: "int32" }), [K, 1]);
  const last = reduceMax(where(oneHot(f), ks, -1), 0); // [N]: the last k naming row n, or −1
  const rest = f.rows.shape.slice(1);
  const vals = take(reshape(u, [K, ...rest]), maximum(last, 0), 0);
  return where(reshape(greaterEqual(last, 0), [N, ...rest.map(() => 1)]), vals, f.rows);
}

type Combine = "mul" | "min" | "max";
const combineFns: Record<Combine, (a: Array, b: Array) => Array> = { mul, min: minimum, max: maximum };

/** Every update folded into its row (any indices): a [K, N, ...rest] select and one reduction over K. */
function foldAll(f: Flat, u: Array, op: Combine): Array {
  const K = f.idx.size,
    N = f.rows.shape[0]!;
  const rest = f.rows.shape.slice(1);
  const d = f.rows.dtype;
  const identity =
    op === "mul" ? 1 : isFloat(d) ? (op === "min" ? Infinity : -Infinity) : op === "min" ? 2 ** 31 - 1 : -(2 ** 31);
  const sel = reshape(oneHot(f), [K, N, ...rest.map(() => 1)]);
  const spread = where(sel, reshape(u, [K, 1, ...rest]), full([], identity, { dtype: d }));
  const folded = op === "mul" ? prod(spread, 0) : op === "min" ? reduceMin(spread, 0) : reduceMax(spread, 0);
  return combineFns[op](f.rows, folded);
}

/** `x.atIndex(i)`: the indexed view of x for JAX-style functional updates. */
export function atIndex(x: ArrayLike, index: IndexSpec): IndexUpdate {
  const a = asArray(x, "atIndex");
  const what = "atIndex";
  const f = flatten(a, index, what);
  const unique = (o?: UpdateOptions) => o?.uniqueIndices === true || (f.known !== null && distinct(f.known));
  const back = (rows: Array) => reshape(rows, a.shape);
  const combine = (op: Combine) => (v: ArrayLike, o?: UpdateOptions) => {
    const u = updatesFor(f, v, `atIndex(…).${op}`);
    return back(unique(o) ? scatterSet(f, combineFns[op](take(f.rows, f.idx, 0), u)) : foldAll(f, u, op));
  };
  return {
    get: () => take(f.rows, f.idx, 0),
    set: (v, o) => {
      const u = updatesFor(f, v, "atIndex(…).set");
      return back(unique(o) ? scatterSet(f, u) : lastWriteSet(f, u));
    },
    add: (v) => back(scatterAdd(f.rows, f.idx, updatesFor(f, v, "atIndex(…).add"))),
    mul: combine("mul"),
    min: combine("min"),
    max: combine("max"),
  };
}
