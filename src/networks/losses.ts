/**
 * RISP's training losses (RISP, ICLR 2022, §3): the state error and the rendering-gradient
 * regulariser, for a predictor N: image → state.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { grad, jvp, vmap } from "../transforms/index.js";

/** L_error (RISP Eq. 8): mean absolute error between predicted and true states [..., S]. */
export const stateError = (predicted: Array, truth: Array): Array => np.mean(np.abs(np.sub(predicted, truth)));

/** The image derivatives must be [P, ...image shape]: one image-shaped column per rendering parameter. */
function checkColumns(what: string, image: Array, dImage: Array): void {
  if (dImage.ndim !== image.ndim + 1 || dImage.shape.slice(1).join() !== image.shape.join()) {
    throw new Error(
      `${what}: the image derivatives must be [P, ${image.shape}] (one ` +
        `image-shaped column per rendering parameter), got [${dImage.shape}].`,
    );
  }
}

/** √(Σx² + tiny): the norm with a finite gradient at zero. */
const norm = (x: Array): Array => np.sqrt(np.add(np.sum(np.square(x)), 1e-30));

/**
 * The exact rendering-gradient regulariser of one image (RISP Eq. 10): ‖∂N/∂I · ∂I/∂ψ‖_F, given
 * the columns ∂I/∂ψ_k [P, H, W, C] (made once per image by forward mode through the renderer).
 * Each column is pushed through N by one jvp (vmapped over the P columns), so the cost is about P
 * forward passes of N, and reverse mode over it gives the parameter gradient — instead of the
 * O(|s|·|θ|) that led the paper to approximate it (Eq. 12). `squared: true` gives ‖·‖²_F.
 */
export function renderingGradientPenalty(
  net: (image: Array) => Array,
  image: Array,
  dImage: Array,
  o: { squared?: boolean } = {},
): Array {
  checkColumns("renderingGradientPenalty", image, dImage);
  const columns = vmap((t: Array) => jvp(net, [image], [t])[1] as Array)(dImage); // [P, S]
  return o.squared ? np.sum(np.square(columns)) : norm(columns);
}

/**
 * RISP's cheaper regulariser (Eq. 12): ‖∂L_error/∂ψ‖ for one image and its true state — the
 * sensitivity of the prediction's error, not of the prediction, to the rendering parameters. The
 * error is a scalar, so one reverse pass gives ∇_I L_error and the columns contract with it:
 * ∂L_error/∂ψ_k = ⟨∂I/∂ψ_k, ∇_I L_error⟩ — O(|θ|) per image whatever |ψ| (RISP's Theorem 1),
 * where a jvp per column costs |ψ| passes.
 */
export function errorGradientPenalty(net: (image: Array) => Array, image: Array, state: Array, dImage: Array): Array {
  checkColumns("errorGradientPenalty", image, dImage);
  const gradient = grad((x: Array) => stateError(net(x), state))(image) as Array;
  return norm(np.tensordot(dImage, gradient, image.ndim));
}
