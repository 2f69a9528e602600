/**
 * Analytic tet forces (elastic + Rayleigh damping), the vectorised form of dflex/warp
 * `eval_tetrahedra`: gather → per-tet P → H = P·Dmᵀ → scatter. Property-tested against
 * −∂U/∂x and −∂D/∂v of energy.ts.
 *
 *   P = μ(1 − 1/(I_C+1))·F + λ(J − α + a)·cof F + kd·(F·Ė + J̇·cof F)
 *   f_k = −V0·(P·Dmᵀ)[:, k] (k = 1..3),  f_0 = −(f_1 + f_2 + f_3)
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { scatterVertices } from "../common/elements.js";
import { matmul, mT } from "../common/vec.js";
import { deformationGradientT, invariants, restOffset } from "./kinematics.js";
import type { TetElements } from "./types.js";

const col = (a: Array): Array => np.expandDims(a, [1, 2]);

/** Vertex forces [N, 3] of all tets at positions x and velocities v (v = null: elastic only). */
export function tetForces(tets: TetElements, x: Array, v: Array | null, activation: Array = tets.activation): Array {
  const { FT, Ic, J, cofT } = invariants(tets, x);
  const { mu, lambda } = tets;
  const shear = np.mul(mu, np.sub(1, np.div(1, np.add(Ic, 1))));
  const volume = np.mul(lambda, np.add(np.sub(J, restOffset(mu, lambda)), activation));
  let PT = np.add(np.mul(col(shear), FT), np.mul(col(volume), cofT));
  if (v !== null) {
    const FdotT = deformationGradientT(tets, v);
    const M = matmul(FT, mT(FdotT));
    const Edot = np.mul(0.5, np.add(M, mT(M)));
    const Jdot = np.sum(np.mul(cofT, FdotT), [1, 2]);
    // (F·Ė)ᵀ = Ė·Fᵀ (Ė symmetric).
    const dampT = np.add(matmul(Edot, FT), np.mul(col(Jdot), cofT));
    PT = np.add(PT, np.mul(col(tets.damping), dampT));
  }
  // Rows of Hᵀ = Dm·Pᵀ are ∂(Ψ+D)/∂x_k for k = 1..3; scale by V0 and negate.
  const g = np.mul(col(np.neg(tets.restVolume)), matmul(tets.invRest, PT));
  const f0 = np.neg(np.sum(g, 1, { keepdims: true }));
  return scatterVertices(x, tets.indices, np.concatenate([f0, g], 1));
}
