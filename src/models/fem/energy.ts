/**
 * Stable Neo-Hookean energy (Smith et al. 2018; gradSim eq. 1), integrated over linear tets:
 *
 *   U = Σ_e V0·[ μ/2·(I_C − 3) − μ/2·log(I_C + 1) + λ/2·(J − α + a)² ],  α = 1 + 3μ/(4λ),
 *
 * with I_C = ‖F‖²_F (warp's rotation-invariant form; dflex sums only the diagonal, anchors
 * §0.1). μ and λ are used raw as in dflex/warp; the small-strain Lamé moduli are
 * μ_L = 3μ/4 and λ_L = λ − 5μ/8 (see `lameFromStableNeoHookean`).
 *
 * Damping is Rayleigh dissipation D = Σ_e V0·kd/2·(‖Ė‖² + J̇²) on the Green strain rate
 * Ė = sym(FᵀḞ) and the volume rate J̇: it vanishes for every rigid motion, so it is Galilean- and
 * rotation-invariant and conserves linear and angular momentum (dflex/warp damp Ḟ and use
 * absolute velocities in the volume term, which damps uniform translation, anchors §0.2).
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { deformationGradientT, invariants, restOffset } from "./kinematics.js";
import type { TetElements } from "./types.js";
import { matmul, mT } from "../common/vec.js";

/** Strain energy density Ψ per tet [T] (per unit rest volume). */
export function energyDensity(tets: TetElements, x: Array, activation: Array = tets.activation): Array {
  const { Ic, J } = invariants(tets, x);
  const { mu, lambda } = tets;
  const dev = np.mul(np.mul(0.5, mu), np.sub(np.sub(Ic, 3), np.log(np.add(Ic, 1))));
  const vol = np.mul(np.mul(0.5, lambda), np.square(np.add(np.sub(J, restOffset(mu, lambda)), activation)));
  return np.add(dev, vol);
}

/** Total elastic energy Σ V0·Ψ. */
export const elasticEnergy = (tets: TetElements, x: Array, activation: Array = tets.activation): Array =>
  np.sum(np.mul(tets.restVolume, energyDensity(tets, x, activation)));

/** Rayleigh dissipation D(x, v) = Σ V0·kd/2·(‖sym(FᵀḞ)‖² + J̇²); the damping force is −∂D/∂v. */
export function dissipation(tets: TetElements, x: Array, v: Array): Array {
  const { FT, cofT } = invariants(tets, x);
  const FdotT = deformationGradientT(tets, v);
  const M = matmul(FT, mT(FdotT)); // (FᵀḞ)_ij = f_i·ḟ_j
  const Edot = np.mul(0.5, np.add(M, mT(M)));
  const Jdot = np.sum(np.mul(cofT, FdotT), [1, 2]);
  const rate = np.add(np.sum(np.square(Edot), [1, 2]), np.square(Jdot));
  return np.sum(np.mul(np.mul(np.mul(0.5, tets.restVolume), tets.damping), rate));
}

/** Small-strain Lamé moduli (μ_L, λ_L) of the stable Neo-Hookean model with raw parameters (μ, λ). */
export const lameFromStableNeoHookean = (mu: number, lambda: number): { muL: number; lambdaL: number } => ({
  muL: 0.75 * mu,
  lambdaL: lambda - (5 / 8) * mu,
});
/** Raw (μ, λ) that give the small-strain Lamé moduli (μ_L, λ_L) (Smith et al. 2018 eq. 16). */
export const stableNeoHookeanFromLame = (muL: number, lambdaL: number): { mu: number; lambda: number } => ({
  mu: (4 / 3) * muL,
  lambda: lambdaL + (5 / 6) * muL,
});
/** (μ, λ) from Young's modulus E and Poisson's ratio ν. */
export function stableNeoHookeanFromYoung(E: number, nu: number): { mu: number; lambda: number } {
  const muL = E / (2 * (1 + nu)),
    lambdaL = (E * nu) / ((1 + nu) * (1 - 2 * nu));
  return stableNeoHookeanFromLame(muL, lambdaL);
}
