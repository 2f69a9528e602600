/**
 * RISP's training losses (RISP, ICLR 2022, §3): the state error and the rendering-gradient
 * regulariser, for a predictor N: image → state.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { jvp, vmap } from "../transforms/index.js";

/** L_error (RISP Eq. 8): mean absolute error between predicted and true states [..., S]. */
export const stateError = (predicted: Array, truth: Array): Array => np.mean(np.abs(np.sub(predicted, truth)));

/**
 * The exact rendering-gradient regulariser (RISP Eq. 10), squared: ‖∂N/∂I · ∂I/∂ψ‖²_F for one
 * image, given the columns ∂I/∂ψ_k [P, H, W, C] (made once per image by forward mode through the
 * renderer). Each column is pushed through N by one jvp (vmapped over the P columns), so the cost
 * is about P forward passes of N, and reverse mode over it gives the parameter gradient — instead
 * of the O(|s|·|θ|) that led the paper to approximate it (Eq. 12).
 */
export function renderingGradientPenalty(net: (image: Array) => Array, image: Array, dImage: Array): Array {
  if (dImage.ndim !== image.ndim + 1 || dImage.shape.slice(1).join() !== image.shape.join()) {
    throw new Error(`renderingGradientPenalty: the image derivatives must be [P, ${image.shape}] (one image-shaped column per rendering parameter), got [${dImage.shape}].`);
  }
  const columns = vmap((t: Array) => jvp(net, [image], [t])[1] as Array)(dImage); // [P, S]
  return np.sum(np.square(columns));
}
