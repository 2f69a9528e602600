/**
 * The losses of system identification: pixelwise mean squared error between videos, an image
 * pyramid of it, the mean squared error of 3-D states, and which frames a video loss compares.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { tree } from "../core/tree.js";

export const meanSquare = (r: Array): Array => np.mean(np.square(r));

/** Pixelwise (or elementwise) mean squared error. */
export const mse = (a: Array, b: Array): Array => meanSquare(np.sub(a, b));

/** Average-pool frames [T, H, W, C] by `f` in both image axes (H, W divisible by f). */
export function poolFrames(x: Array, f: number): Array {
  if (f === 1) return x;
  const [T, H, W, C] = x.shape as [number, number, number, number];
  if (H % f || W % f) throw new Error(`sysid: an image pyramid level pools by ${f}, which does not divide the frames' ${H}×${W}; use fewer pyramid levels or a resolution divisible by ${f}.`);
  return np.mean(np.reshape(x, [T, H / f, f, W / f, f, C]), [2, 4]);
}

/**
 * Pixelwise MSE summed over an image pyramid: the frames, and the frames average-pooled by
 * 2, 4, …, 2^(levels−1). The coarse levels still compare an object with its counterpart when
 * the two no longer overlap at full resolution (there the full-resolution loss is flat: a
 * plateau or a V with no pull towards the truth), which widens the basin of convergence when
 * several parameters trade off against each other (contact: mass against friction).
 */
export function pyramidMse(a: Array, b: Array, levels: number): Array {
  let total = mse(a, b);
  for (let k = 1; k < levels; k++) total = np.add(total, mse(poolFrames(a, 2 ** k), poolFrames(b, 2 ** k)));
  return total;
}

/** Mean over leaves of the MSE between two state pytrees (each leaf [T, ...]). */
export function statesMse(a: unknown, b: unknown): Array {
  const [la] = tree.flatten(a), [lb] = tree.flatten(b);
  if (la.length !== lb.length) throw new Error(`sysid: the simulated states have ${la.length} arrays, the observed states ${lb.length}.`);
  let total: Array | null = null;
  la.forEach((x, i) => {
    const e = mse(x as Array, lb[i] as Array);
    total = total ? np.add(total, e) : e;
  });
  return np.div(total!, la.length);
}

/** Which frames an image-space loss compares (the paper's Fig. 12 variants), or explicit indices. */
export type FrameSelection = "every" | "every2" | "every5" | "firstLast" | "firstMiddle" | readonly number[];

export function frameIndices(sel: FrameSelection, frames: number): number[] {
  if (typeof sel !== "string") {
    const bad = sel.find((i) => !Number.isInteger(i) || i < 0 || i >= frames);
    if (bad !== undefined) throw new Error(`sysid: frame index ${bad} is outside the video's ${frames} frames (0 to ${frames - 1}).`);
    return [...sel];
  }
  switch (sel) {
    case "every": return globalThis.Array.from({ length: frames }, (_, i) => i);
    case "every2": return globalThis.Array.from({ length: Math.floor(frames / 2) }, (_, i) => 2 * i + 1);
    case "every5": return globalThis.Array.from({ length: Math.floor(frames / 5) }, (_, i) => 5 * i + 4);
    case "firstLast": return [0, frames - 1];
    case "firstMiddle": return [0, Math.floor(frames / 2)];
  }
  throw new Error(`sysid: unknown frame selection ${JSON.stringify(sel)}; use every, every2, every5, firstLast, firstMiddle or a list of frame indices.`);
}

/** Frames `indices` (static) of every leaf [T, ...] of a state pytree. */
export function takeFrames<S>(states: S, indices: readonly number[]): S {
  const idx = np.array([...indices], { dtype: "int32" });
  return tree.map((x: Array) => np.take(x, idx, 0), states) as S;
}
