/** Random vmap axes and the loop reference that slices and stacks by hand. */
import type { Array } from "../../src/index.js";
import type { Rng } from "../../src/core/host-rng.js";
import { normAxis, sliceAt, stackAt } from "./check.js";

/** An axis for an array of rank `rank` (possibly negative), or null with probability pNull. */
export function randomAxis(rng: Rng, rank: number, pNull = 0): number | null {
  if (rng.chance(pNull)) return null;
  const a = rng.int(rank);
  return rng.chance(0.35) ? a - rank : a;
}

/** Shape with a batch dimension of size n inserted at `axis` (axis may be negative, relative to the result's rank). */
export function insertAxis(shape: readonly number[], axis: number, n: number): number[] {
  const out = [...shape];
  out.splice(normAxis(axis, shape.length + 1), 0, n);
  return out;
}

/** Example i of a mapped argument (null axis = broadcast, returned unchanged). */
export const exampleOf = (x: Array, axis: number | null, i: number): Array =>
  axis === null ? x : sliceAt(x, normAxis(axis, x.ndim), i);

/**
 * The results of a loop, stacked along `axis` (null: every example must give the same value; the first is returned).
 */
export function stackResults(items: readonly Array[], axis: number | null): Array {
  if (axis === null) return items[0]!;
  return stackAt(items, normAxis(axis, items[0]!.ndim + 1));
}
