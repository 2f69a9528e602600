/** Products: matmul dot einsum outer cross tensordot. */
import type { Array, ArrayLike } from "../array.js";
import * as lax from "../prims/index.js";
import { broadcastShapes, fmtShape, range } from "../shape.js";
import { promote } from "./convert.js";
import { mul, sub } from "./math.js";
import { ravel } from "./shape.js";

/** numpy matmul: batched over leading dims (broadcast), 1-D operands promoted and squeezed. */
export function matmul(a: ArrayLike, b: ArrayLike): Array {
  let [x, y] = promote("matmul", [a, b]) as [Array, Array];
  if (x.ndim === 0 || y.ndim === 0)
    throw new Error(`matmul: operands must be at least 1-D, got ${x.aval} and ${y.aval}; use np.mul for scalars.`);
  const xv = x.ndim === 1,
    yv = y.ndim === 1;
  if (xv) x = lax.reshape(x, [1, x.shape[0]!]);
  if (yv) y = lax.reshape(y, [y.shape[0]!, 1]);
  const K = x.shape[x.ndim - 1]!,
    K2 = y.shape[y.ndim - 2]!;
  if (K !== K2) throw new Error(`matmul: inner dimensions differ: ${x.aval} @ ${y.aval} (${K} vs ${K2}).`);
  const batch = broadcastShapes("matmul (batch dims)", x.shape.slice(0, -2), y.shape.slice(0, -2));
  const nb = batch.length;
  x = lax.broadcastTo(x, [...batch, ...x.shape.slice(-2)]);
  y = lax.broadcastTo(y, [...batch, ...y.shape.slice(-2)]);
  const bd = range(nb);
  let out = lax.dotGeneral(x, y, { contract: [[nb + 1], [nb]], batch: [bd, bd] });
  if (xv || yv)
    out = lax.reshape(out, [...batch, ...(xv ? [] : [out.shape[nb]!]), ...(yv ? [] : [out.shape[nb + 1]!])]);
  return out;
}

/** numpy dot: inner product of vectors, matmul of matrices, sum over last of a and second-to-last of b otherwise. */
export function dot(a: ArrayLike, b: ArrayLike): Array {
  const [x, y] = promote("dot", [a, b]) as [Array, Array];
  if (x.ndim === 0 || y.ndim === 0) return mul(x, y);
  const ca = x.ndim - 1,
    cb = y.ndim === 1 ? 0 : y.ndim - 2;
  if (x.shape[ca] !== y.shape[cb])
    throw new Error(
      `dot: shapes ${fmtShape(x.shape)} and ${fmtShape(y.shape)} are not aligned (${x.shape[ca]} vs ${y.shape[cb]}).`,
    );
  return lax.dotGeneral(x, y, { contract: [[ca], [cb]], batch: [[], []] });
}

/** tensordot(a, b, axes): contract the given axis lists (or the last n of a with the first n of b). */
export function tensordot(
  a: ArrayLike,
  b: ArrayLike,
  axes: number | readonly [readonly number[], readonly number[]] = 2,
): Array {
  const [x, y] = promote("tensordot", [a, b]) as [Array, Array];
  const [ax, bx] =
    typeof axes === "number"
      ? [range(axes).map((i) => x.ndim - axes + i), range(axes)]
      : [axes[0].map((d) => (d < 0 ? d + x.ndim : d)), axes[1].map((d) => (d < 0 ? d + y.ndim : d))];
  return lax.dotGeneral(x, y, { contract: [ax, bx], batch: [[], []] });
}

export function outer(a: ArrayLike, b: ArrayLike): Array {
  const x = ravel(a),
    y = ravel(b);
  return mul(lax.reshape(x, [x.size, 1]), lax.reshape(y, [1, y.size]));
}

/** Cross product over the last axis (size 3), broadcasting the rest. */
export function cross(a: ArrayLike, b: ArrayLike): Array {
  const [x, y] = promote("cross", [a, b]) as [Array, Array];
  if (x.shape[x.ndim - 1] !== 3 || y.shape[y.ndim - 1] !== 3)
    throw new Error(`cross: the last axis must have size 3, got ${x.aval} and ${y.aval}.`);
  const c = (v: Array, i: number) => lax.sliceAxis(v, v.ndim - 1, i, i + 1);
  const [x0, x1, x2] = [c(x, 0), c(x, 1), c(x, 2)];
  const [y0, y1, y2] = [c(y, 0), c(y, 1), c(y, 2)];
  const parts = [sub(mul(x1, y2), mul(x2, y1)), sub(mul(x2, y0), mul(x0, y2)), sub(mul(x0, y1), mul(x1, y0))];
  const shape = broadcastShapes("cross", parts[0]!.shape, parts[1]!.shape, parts[2]!.shape);
  return lax.concatenate(
    parts.map((p) => lax.broadcastTo(p, shape)),
    shape.length - 1,
  );
}

// ---------------------------------------------------------------- einsum

interface Term {
  readonly labels: string[];
  readonly x: Array;
}

/** einsum("bij,bjk->bik", a, b): any number of operands, contracted pairwise with dot_general. */
export function einsum(spec: string, ...operands: ArrayLike[]): Array {
  const clean = spec.replace(/\s+/g, "");
  const [lhs, rhsRaw] = clean.includes("->") ? (clean.split("->") as [string, string]) : [clean, undefined];
  const inputs = lhs.split(",");
  if (inputs.length !== operands.length)
    throw new Error(`einsum: "${spec}" names ${inputs.length} operands, got ${operands.length}.`);
  if (clean.includes("."))
    throw new Error(`einsum: ellipsis ("...") is not supported in "${spec}"; write the labels out.`);
  const arrs = promote("einsum", operands);
  const counts = new Map<string, number>();
  inputs.forEach((s) => [...s].forEach((c) => counts.set(c, (counts.get(c) ?? 0) + 1)));
  const out =
    rhsRaw ??
    [...counts.keys()]
      .filter((c) => counts.get(c) === 1)
      .sort()
      .join("");
  const sizes = new Map<string, number>();
  let terms: Term[] = inputs.map((s, i) => {
    const x = arrs[i]!;
    if (s.length !== x.ndim)
      throw new Error(`einsum: operand ${i} has rank ${x.ndim} but "${s}" has ${s.length} labels.`);
    if (new Set(s).size !== s.length)
      throw new Error(`einsum: repeated label within one operand ("${s}": diagonals) is not supported.`);
    [...s].forEach((c, k) => {
      const d = x.shape[k]!;
      const prev = sizes.get(c);
      if (prev !== undefined && prev !== d && prev !== 1 && d !== 1)
        throw new Error(`einsum: label "${c}" has sizes ${prev} and ${d}.`);
      sizes.set(c, Math.max(prev ?? 1, d));
    });
    return { labels: [...s], x };
  });
  for (const c of out)
    if (!sizes.has(c)) throw new Error(`einsum: output label "${c}" does not appear in the inputs of "${spec}".`);
  // Sum out labels that appear in one term only and not in the output (or other terms).
  const needed = (c: string, except: number) =>
    out.includes(c) || terms.some((t, j) => j !== except && t.labels.includes(c));
  terms = terms.map((t, i) => sumUnneeded(t, (c) => needed(c, i)));
  while (terms.length > 1) {
    const [a, b] = [terms[0]!, terms[1]!];
    const rest = terms.slice(2);
    const keepLabel = (c: string) => out.includes(c) || rest.some((t) => t.labels.includes(c));
    const shared = a.labels.filter((c) => b.labels.includes(c));
    const batch = shared.filter(keepLabel);
    const contract = shared.filter((c) => !keepLabel(c));
    const x = expandTo(a, sizes, shared),
      y = expandTo(b, sizes, shared);
    const res = lax.dotGeneral(x, y, {
      contract: [contract.map((c) => a.labels.indexOf(c)), contract.map((c) => b.labels.indexOf(c))],
      batch: [batch.map((c) => a.labels.indexOf(c)), batch.map((c) => b.labels.indexOf(c))],
    });
    const labels = [
      ...batch,
      ...a.labels.filter((c) => !shared.includes(c)),
      ...b.labels.filter((c) => !shared.includes(c)),
    ];
    terms = [sumUnneeded({ labels, x: res }, (c) => keepLabel(c)), ...rest];
  }
  const t = terms[0]!;
  return lax.transpose(
    t.x,
    [...out].map((c) => t.labels.indexOf(c)),
  );
}
function sumUnneeded(t: Term, needed: (c: string) => boolean): Term {
  const drop = t.labels.flatMap((c, i) => (needed(c) ? [] : [i]));
  if (!drop.length) return t;
  return { labels: t.labels.filter((_, i) => !drop.includes(i)), x: lax.reduceSum(t.x, drop) };
}
/** Broadcast size-1 dims of shared labels to the common size (einsum broadcasting). */
function expandTo(t: Term, sizes: Map<string, number>, shared: readonly string[]): Array {
  const shape = t.labels.map((c, i) => (shared.includes(c) ? sizes.get(c)! : t.x.shape[i]!));
  return lax.broadcastTo(t.x, shape);
}
