/**
 * Element gathers and scatters: the one vectorised pattern every mesh force uses
 * (gather vertex rows per element → batched per-element math → scatter-add back).
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";

/** x[indices]: [N, d] gathered by int32 [E, k] → [E, k, d]. */
export const gatherVertices = (x: Array, indices: Array): Array => np.take(x, indices, 0);

/** Σ over elements: per-element vertex values [E, k, d] added into zeros shaped like `like` ([N, d]). */
export const scatterVertices = (like: Array, indices: Array, values: Array): Array =>
  np.scatterAdd(np.zerosLike(like), indices, values, 0);

/** The per-element vertex slots of [E, k, d] as k arrays [E, d]. */
export const vertexSlots = (xe: Array): Array[] => np.split(xe, xe.shape[1]!, 1).map((p) => np.squeeze(p, 1));
