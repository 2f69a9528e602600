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
  if (H % f || W % f)
    throw new Error(
      `sysid: an image pyramid level pools by ${f}, which does not divide the ` +
        `frames' ${H}×${W}; use fewer pyramid levels or a resolution divisible by ${f}.`,
    );
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

/**
 * Gaussian weights [n, n] (σ in pixels): row i blurs pixel i along one axis, zero outside the
 * image (not renormalised at the edges: an object leaving the view fades out of the blurred image
 * rather than piling up along its border).
 */
function gaussianMatrix(n: number, sigma: number): number[][] {
  const norm = 1 / (Math.sqrt(2 * Math.PI) * sigma);
  return globalThis.Array.from({ length: n }, (_, i) =>
    globalThis.Array.from({ length: n }, (_, j) => norm * Math.exp(-0.5 * ((i - j) / sigma) ** 2)),
  );
}

/** Images [..., H, W, C] blurred by a Gaussian of σ pixels (separable: two matrix products). */
export function gaussianBlur(x: Array, sigma: number): Array {
  if (!(sigma > 0)) throw new Error(`sysid: a Gaussian blur needs σ > 0 pixels, got ${sigma}.`);
  const n = x.ndim,
    H = x.shape[n - 3]!,
    W = x.shape[n - 2]!;
  const gy = np.array(gaussianMatrix(H, sigma), { dtype: x.dtype }),
    gx = np.array(gaussianMatrix(W, sigma), { dtype: x.dtype });
  const cols = np.matmul(gy, np.reshape(x, [...x.shape.slice(0, n - 3), H, W * x.shape[n - 1]!])); // blur rows
  const back = np.reshape(cols, x.shape);
  const perm = [...x.shape.keys()].slice(0, n - 3);
  const t = np.transpose(back, [...perm, n - 2, n - 3, n - 1]); // [..., W, H, C]
  const blurred = np.reshape(
    np.matmul(gx, np.reshape(t, [...x.shape.slice(0, n - 3), W, H * x.shape[n - 1]!])),
    t.shape,
  );
  return np.transpose(blurred, [...perm, n - 2, n - 3, n - 1]);
}

/**
 * Σ over Gaussian blurs (σ in pixels; 0 = unblurred) of 1 − the normalised cross-correlation of
 * two images [..., H, W, C] — meant for images minus their background (what is not background).
 * An object far from its counterpart still overlaps it once both are blurred by more than their
 * distance, and the correlation rises as it approaches. Unlike the MSE it cannot be lowered by
 * moving the object out of view (the MSE of an absent object is less than that of a misplaced
 * one) or by changing the object's visible area (it is scale-free).
 */
export function blurredCorrelationLoss(a: Array, b: Array, sigmas: readonly number[]): Array {
  const term = (x: Array, y: Array) =>
    np.sub(1, np.div(np.sum(np.mul(x, y)), np.sqrt(np.add(np.mul(np.sum(np.square(x)), np.sum(np.square(y))), 1e-20))));
  return sigmas
    .map((s) => (s === 0 ? term(a, b) : term(gaussianBlur(a, s), gaussianBlur(b, s))))
    .reduce((x, y) => np.add(x, y));
}

/** Mean over leaves of the MSE between two state pytrees (each leaf [T, ...]). */
export function statesMse(a: unknown, b: unknown): Array {
  const [la] = tree.flatten(a),
    [lb] = tree.flatten(b);
  if (la.length !== lb.length)
    throw new Error(`sysid: the simulated states have ${la.length} arrays, the observed states ${lb.length}.`);
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
    if (bad !== undefined)
      throw new Error(`sysid: frame index ${bad} is outside the video's ${frames} frames (0 to ${frames - 1}).`);
    return [...sel];
  }
  switch (sel) {
    case "every":
      return globalThis.Array.from({ length: frames }, (_, i) => i);
    case "every2":
      return globalThis.Array.from({ length: Math.floor(frames / 2) }, (_, i) => 2 * i + 1);
    case "every5":
      return globalThis.Array.from({ length: Math.floor(frames / 5) }, (_, i) => 5 * i + 4);
    case "firstLast":
      return [0, frames - 1];
    case "firstMiddle":
      return [0, Math.floor(frames / 2)];
  }
  throw new Error(
    `sysid: unknown frame selection ${JSON.stringify(sel)}; use every, ` +
      `every2, every5, firstLast, firstMiddle or a list of frame indices.`,
  );
}

/** Frames `indices` (static) of every leaf [T, ...] of a state pytree. */
export function takeFrames<S>(states: S, indices: readonly number[]): S {
  const idx = np.array([...indices], { dtype: "int32" });
  return tree.map((x: Array) => np.take(x, idx, 0), states) as S;
}
