/** Gradient clipping. */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { tree } from "../core/tree.js";
import { emptyState, type EmptyState, type GradientTransformation } from "./base.js";
import { constLike, globalNorm } from "./tree-math.js";

/**
 * Rescale the whole update tree so its global norm is at most `maxNorm`
 * (Pascanu et al. 2013): g · maxNorm / max(‖g‖, maxNorm). Directions are kept.
 */
export function clipByGlobalNorm(maxNorm: number): GradientTransformation<EmptyState> {
  if (!(maxNorm > 0)) throw new Error(`clipByGlobalNorm: maxNorm must be positive, got ${maxNorm}.`);
  return {
    init: () => emptyState(),
    update: (updates, state) => {
      const norm = globalNorm(updates);
      // max(‖g‖, maxNorm) is never 0, so an all-zero gradient passes through unchanged.
      const factor = np.div(constLike(maxNorm, norm), np.maximum(norm, constLike(maxNorm, norm)));
      return [tree.map((g: Array) => np.mul(g, factor.astype(g.dtype)), updates), state];
    },
  };
}

/** Clamp every element of the updates to [−maxDelta, maxDelta]. */
export function clipElementwise(maxDelta: number): GradientTransformation<EmptyState> {
  if (!(maxDelta > 0)) throw new Error(`clipElementwise: maxDelta must be positive, got ${maxDelta}.`);
  return {
    init: () => emptyState(),
    update: (updates, state) => [
      tree.map((g: Array) => np.clip(g, constLike(-maxDelta, g), constLike(maxDelta, g)), updates),
      state,
    ],
  };
}
