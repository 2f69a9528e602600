/** Small pytree and scalar helpers shared by the optimizers (internal). */
import { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { tree, type TreeDef } from "../core/tree.js";

/** A leaf as an Array, or a clear error naming where it was found. */
export function requireArray(x: unknown, what: string): Array {
  if (x instanceof Array) return x;
  throw new Error(
    `${what}: expected every pytree leaf to be an Array, got ${x === null ? "null" : typeof x}. ` +
      `Wrap numbers with np.array(v) (use { dtype: "float64" } for tight comparisons).`,
  );
}

/**
 * The JS number `v` as a strongly typed scalar of `like`'s dtype.
 * NOTE: a bare JS number is a weak float32 literal in core, rounded to float32 before it
 * is promoted, so `np.mul(x64, 0.9)` multiplies by 0.8999999762. Every coefficient an
 * optimizer applies goes through here so float64 optimisations stay exact.
 */
export const constLike = (v: number, like: Array): Array => np.full([], v, { dtype: like.dtype });

/** A tree shaped like `params` filled with `value` (each leaf keeps its dtype). */
export const fullLikeTree = <P>(params: P, value: number, what: string): P =>
  tree.map((p: unknown) => {
    const a = requireArray(p, what);
    return np.full(a.shape, value, { dtype: a.dtype });
  }, params) as P;
export const zerosLikeTree = <P>(params: P, what: string): P => fullLikeTree(params, 0, what);

/** A fresh step counter: an int32 scalar, so it can be a jit input and a scan carry. */
export const newCount = (): Array => np.zeros([], { dtype: "int32" });

const INT32_MAX = 2 ** 31 - 1;
/** count + 1, saturating at INT32_MAX instead of wrapping to a negative step. */
export const incrementCount = (count: Array): Array => np.where(np.less(count, INT32_MAX), np.add(count, 1), count);

/** Exponential moving average: decay·avg + (1 − decay)·x, in x's dtype. */
export const ema = (avg: Array, x: Array, decay: number): Array =>
  np.add(np.mul(constLike(decay, x), avg), np.mul(constLike(1 - decay, x), x));

/** sqrt(Σ_leaves Σ x²): the norm of the whole tree seen as one vector. */
export function globalNorm(t: unknown): Array {
  const [leaves] = tree.flatten(t);
  if (leaves.length === 0) return np.zeros([]);
  const sq = leaves.map((l) => np.sum(np.square(requireArray(l, "globalNorm"))));
  return np.sqrt(sq.reduce((a, b) => np.add(a, b)));
}

/** The pytree as one flat vector (leaves raveled and concatenated), and the inverse map. */
export function ravelTree<P>(t: P, what: string): { flat: Array; unravel: (flat: Array) => P } {
  const [leaves, def] = tree.flatten(t);
  const arrs = leaves.map((l) => requireArray(l, what));
  if (arrs.length === 0) throw new Error(`${what}: the parameter tree has no leaves.`);
  const flat = arrs.length === 1 ? np.reshape(arrs[0]!, [-1]) : np.concatenate(arrs.map((a) => np.reshape(a, [-1])));
  const ends: number[] = [];
  for (const a of arrs) ends.push((ends.at(-1) ?? 0) + a.size);
  const unravel = (v: Array): P => {
    const parts = arrs.length === 1 ? [v] : np.split(v, ends.slice(0, -1));
    return tree.unflatten(
      def,
      parts.map((p, i) => {
        const a = arrs[i]!;
        const shaped = np.reshape(p, a.shape);
        return shaped.dtype === a.dtype ? shaped : shaped.astype(a.dtype);
      }),
    ) as P;
  };
  return { flat, unravel };
}

/** Readable paths of a tree's leaves in `tree.flatten` order: `mass`, `layers[0].w`. */
export function leafPaths(t: unknown): string[] {
  const out: string[] = [];
  const walk = (d: TreeDef, path: string): void => {
    switch (d.kind) {
      case "leaf":
        out.push(path || "(root)");
        return;
      case "none":
        return;
      case "list":
        d.children.forEach((c, i) => walk(c, `${path}[${i}]`));
        return;
      case "dict":
        d.keys.forEach((k, i) => walk(d.children[i]!, path ? `${path}.${k}` : k));
        return;
    }
  };
  walk(tree.flatten(t)[1], "");
  return out;
}

/** One int32 per leaf: how many of its elements are NaN or ±Inf. */
export function nonFiniteCounts(t: unknown): Array {
  const [leaves] = tree.flatten(t);
  if (leaves.length === 0) return np.zeros([0], { dtype: "int32" });
  return np.stack(leaves.map((l) => np.sum(np.logicalNot(np.isfinite(requireArray(l, "nonFiniteCounts"))))));
}
