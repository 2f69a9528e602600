/** Comparison helpers for property tests: closeness with a readable failure message, and loop references. */
import { np, type Array } from "../../src/index.js";

export interface Tol {
  readonly rtol?: number;
  readonly atol?: number;
}

const values = (x: Array | number): number[] =>
  typeof x === "number" ? [x] : globalThis.Array.from(x.dataSync(), Number);
const shapeOf = (x: Array | number): readonly number[] => (typeof x === "number" ? [] : x.shape);

/**
 * Throws unless |a - e| <= atol + rtol * max(|e|, scale) elementwise, where scale is the largest
 * |e| (so tiny entries of a large vector are judged on the vector's scale, as FD errors are).
 */
export function expectClose(actual: Array | number, expected: Array | number, tol: Tol = {}, what = "value"): void {
  const rtol = tol.rtol ?? 1e-9,
    atol = tol.atol ?? 1e-12;
  const sa = shapeOf(actual),
    se = shapeOf(expected);
  if (sa.join() !== se.join()) throw new Error(`${what}: shape [${sa}] differs from the reference's [${se}]`);
  const a = values(actual),
    e = values(expected);
  const scale = e.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  for (let i = 0; i < e.length; i++) {
    const ai = a[i]!,
      ei = e[i]!;
    if (Number.isNaN(ai) !== Number.isNaN(ei)) throw new Error(`${what}[${i}]: got ${ai}, reference ${ei}`);
    if (Number.isNaN(ei)) continue;
    const err = Math.abs(ai - ei);
    if (!(err <= atol + rtol * Math.max(Math.abs(ei), scale))) {
      throw new Error(
        `${what}[${i}] (flat): got ${ai}, reference ${ei} ` +
          `(|diff| ${err.toExponential(2)}, scale ${scale.toExponential(2)}, rtol ${rtol})\n` +
          `  got       ${fmtVals(a)}\n  reference ${fmtVals(e)}`,
      );
    }
  }
}
const fmtVals = (v: readonly number[]): string =>
  `[${v
    .slice(0, 12)
    .map((x) => x.toPrecision(6))
    .join(", ")}${v.length > 12 ? ", …" : ""}]`;

/** The i-th slice of x along `axis` (eager gather with a scalar index: not a batching rule). */
export const sliceAt = (x: Array, axis: number, i: number): Array => np.take(x, i, axis);

/** Stack results along `axis` (the loop reference of vmap). */
export const stackAt = (items: readonly Array[], axis: number): Array => np.stack([...items], axis);

/** Normalises a possibly negative axis for a rank. */
export const normAxis = (axis: number, rank: number): number => (axis < 0 ? axis + rank : axis);
