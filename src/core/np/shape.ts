/**
 * Shape manipulation: reshape transpose swapaxes expandDims squeeze concatenate stack split tile repeat broadcastTo
 * flip pad.
 */
import type { Array, ArrayLike, Axis } from "../array.js";
import { scalar } from "../constants.js";
import * as lax from "../prims/index.js";
import { broadcastShapes, fmtShape, normAxes, normAxis, sizeOf, range } from "../shape.js";
import { asArray, promote } from "./convert.js";

export function reshape(x: ArrayLike, shape: readonly number[] | number): Array {
  const a = asArray(x, "reshape");
  const s = typeof shape === "number" ? [shape] : [...shape];
  const neg = s.filter((d) => d === -1).length;
  if (neg > 1 || s.some((d) => !Number.isInteger(d) || d < -1))
    throw new Error(`reshape: invalid shape ${fmtShape(s)} (at most one -1, others non-negative integers).`);
  if (neg === 1) {
    const known = sizeOf(s.filter((d) => d !== -1));
    if (known === 0 || a.size % known !== 0)
      throw new Error(`reshape: cannot reshape ${a.aval} (size ${a.size}) to ${fmtShape(s)}.`);
    s[s.indexOf(-1)] = a.size / known;
  }
  return lax.reshape(a, s);
}
export const ravel = (x: ArrayLike): Array => reshape(x, [-1]);

export function transpose(x: ArrayLike, perm?: readonly number[]): Array {
  const a = asArray(x, "transpose");
  const p = perm ? perm.map((d) => normAxis("transpose", d, a.ndim)) : range(a.ndim).reverse();
  // A too-short perm like [0] used to pass through lax.transpose's identity shortcut unchecked.
  if (p.length !== a.ndim || new Set(p).size !== p.length)
    throw new Error(`transpose: perm [${perm}] is not a permutation of the ${a.ndim} axes of ${a.aval}.`);
  return lax.transpose(a, p);
}
export function swapaxes(x: ArrayLike, a1: number, a2: number): Array {
  const a = asArray(x, "swapaxes");
  const i = normAxis("swapaxes", a1, a.ndim),
    j = normAxis("swapaxes", a2, a.ndim);
  const p = range(a.ndim);
  [p[i], p[j]] = [p[j]!, p[i]!];
  return lax.transpose(a, p);
}
export function moveaxis(x: ArrayLike, source: number, destination: number): Array {
  const a = asArray(x, "moveaxis");
  return lax.moveAxis(a, normAxis("moveaxis", source, a.ndim), normAxis("moveaxis", destination, a.ndim));
}
export function expandDims(x: ArrayLike, axis: number | readonly number[]): Array {
  const a = asArray(x, "expandDims");
  const axes = typeof axis === "number" ? [axis] : [...axis];
  const nd = a.ndim + axes.length;
  const norm = axes.map((d) => normAxis("expandDims", d, nd)).sort((p, q) => p - q);
  const shape = [...a.shape];
  for (const d of norm) shape.splice(d, 0, 1);
  return lax.reshape(a, shape);
}
export function squeeze(x: ArrayLike, axis?: Axis): Array {
  const a = asArray(x, "squeeze");
  const axes =
    axis === undefined || axis === null
      ? a.shape.flatMap((d, i) => (d === 1 ? [i] : []))
      : normAxes("squeeze", axis, a.ndim);
  for (const d of axes)
    if (a.shape[d] !== 1) throw new Error(`squeeze: axis ${d} of ${a.aval} has size ${a.shape[d]}, not 1.`);
  return lax.reshape(
    a,
    a.shape.filter((_, i) => !axes.includes(i)),
  );
}
export function broadcastTo(x: ArrayLike, shape: readonly number[]): Array {
  return lax.broadcastTo(asArray(x, "broadcastTo"), shape);
}
export function broadcastArrays(...xs: ArrayLike[]): Array[] {
  const arrs = xs.map((x) => asArray(x, "broadcastArrays"));
  const shape = arrs.reduce<number[]>((s, a) => [...broadcastShapesOf(s, a.shape)], []);
  return arrs.map((a) => lax.broadcastTo(a, shape));
}
const broadcastShapesOf = (a: readonly number[], b: readonly number[]) => broadcastShapes("broadcastArrays", a, b);

export function concatenate(xs: readonly ArrayLike[], axis = 0): Array {
  if (!xs.length) throw new Error("concatenate: needs at least one array.");
  const arrs = promote("concatenate", xs);
  if (arrs[0]!.ndim === 0)
    throw new Error("concatenate: zero-dimensional arrays cannot be concatenated; use np.stack.");
  return lax.concatenate(arrs, normAxis("concatenate", axis, arrs[0]!.ndim));
}
export function stack(xs: readonly ArrayLike[], axis = 0): Array {
  if (!xs.length) throw new Error("stack: needs at least one array.");
  const arrs = promote("stack", xs);
  const s = arrs[0]!.shape;
  for (const a of arrs)
    if (a.shape.join() !== s.join())
      throw new Error(
        `stack: all arrays must have the same shape; got ${arrs.map((b) => fmtShape(b.shape)).join(", ")}.`,
      );
  const ax = normAxis("stack", axis, s.length + 1);
  return lax.concatenate(
    arrs.map((a) => expandDims(a, ax)),
    ax,
  );
}
/** split(x, sections | indices, axis): equal sections (must divide) or split points. */
export function split(x: ArrayLike, sections: number | readonly number[], axis = 0): Array[] {
  const a = asArray(x, "split");
  const ax = normAxis("split", axis, a.ndim);
  const n = a.shape[ax]!;
  let points: number[];
  if (typeof sections === "number") {
    if (!Number.isInteger(sections) || sections <= 0 || n % sections !== 0)
      throw new Error(`split: ${sections} sections do not divide axis ${ax} of size ${n} equally.`);
    points = range(sections - 1).map((i) => ((i + 1) * n) / sections);
  } else points = [...sections];
  const bounds = [0, ...points.map((p) => Math.min(Math.max(p, 0), n)), n];
  return bounds.slice(0, -1).map((s, i) => lax.sliceAxis(a, ax, s, Math.max(s, bounds[i + 1]!)));
}
export function tile(x: ArrayLike, reps: number | readonly number[]): Array {
  let a = asArray(x, "tile");
  const r = typeof reps === "number" ? [reps] : [...reps];
  // Negative or fractional reps used to fail deep inside with "Invalid typed array length".
  if (r.some((k) => !Number.isInteger(k) || k < 0))
    throw new Error(`tile: reps must be non-negative integers, got ${JSON.stringify(reps)}.`);
  const nd = Math.max(a.ndim, r.length);
  const rr = [...new globalThis.Array<number>(nd - r.length).fill(1), ...r];
  a = lax.reshape(a, [...new globalThis.Array<number>(nd - a.ndim).fill(1), ...a.shape]);
  // [r0, d0, r1, d1, ...] broadcast, then merge pairs.
  const bshape = a.shape.flatMap((d, i) => [rr[i]!, d]);
  const b = lax.broadcastInDim(
    a,
    bshape,
    a.shape.map((_, i) => 2 * i + 1),
  );
  return lax.reshape(
    b,
    a.shape.map((d, i) => d * rr[i]!),
  );
}
/** repeat each element `repeats` times along axis (flattened when axis is omitted). */
export function repeat(x: ArrayLike, repeats: number, axis?: number): Array {
  let a = asArray(x, "repeat");
  if (!Number.isInteger(repeats) || repeats < 0)
    throw new Error(`repeat: repeats must be a non-negative integer, got ${repeats}.`);
  if (axis === undefined) {
    a = lax.reshape(a, [a.size]);
    axis = 0;
  }
  const ax = normAxis("repeat", axis, a.ndim);
  const shape = [...a.shape];
  shape.splice(ax + 1, 0, repeats);
  const b = lax.broadcastInDim(
    a,
    shape,
    a.shape.map((_, i) => (i <= ax ? i : i + 1)),
  );
  const out = [...a.shape];
  out[ax] = a.shape[ax]! * repeats;
  return lax.reshape(b, out);
}
export function flip(x: ArrayLike, axis?: Axis): Array {
  const a = asArray(x, "flip");
  return lax.rev(a, normAxes("flip", axis, a.ndim));
}

export type PadWidth = number | readonly [number, number] | readonly (readonly [number, number])[];
/** pad(x, width, { value }) with constant padding; width per numpy (n, [before, after], or per axis). */
export function pad(x: ArrayLike, width: PadWidth, opts: { value?: number } = {}): Array {
  const a = asArray(x, "pad");
  let w: [number, number][];
  if (typeof width === "number") w = a.shape.map(() => [width, width]);
  else if (typeof width[0] === "number") w = a.shape.map(() => [width[0] as number, width[1] as number]);
  else w = (width as readonly (readonly [number, number])[]).map((p) => [p[0], p[1]]);
  if (w.length !== a.ndim || w.some(([b, c]) => !Number.isInteger(b) || !Number.isInteger(c) || b < 0 || c < 0)) {
    throw new Error(
      `pad: widths ${JSON.stringify(width)} do not match ${a.aval} (one non-negative [before, after] per axis).`,
    );
  }
  return lax.pad(
    a,
    scalar(opts.value ?? 0, a.dtype),
    w.map((p) => p[0]),
    w.map((p) => p[1]),
  );
}
