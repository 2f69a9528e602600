/**
 * Ground-plane penalty contact for points (particles, rigid-body vertices).
 *
 * Gap φ = n·p − offset − r. Penetration is the smooth hinge pen = h_δ(−φ) ≈ max(−φ, 0) and the
 * elastic normal force is −∂/∂p of ½·ke·pen² (= ke·pen·h_δ'(−φ)·n), so it is conservative and
 * differentiable everywhere. Damping acts on the approaching normal velocity only (as dflex:
 * kd·min(v_n, 0)), gated by the same smooth contact indicator h_δ'(−φ).
 *
 * Friction is a relaxed, isotropic Coulomb law (Todorov 2014; paper §C.2) with a smooth
 * saturation: |f_t| = a·b/√(a² + b²) with a = kf·|v_t| (stick: viscous) and b = μ·f_n (slip:
 * Coulomb). It never exceeds min(a, b) (unlike warp's Huber-normalised direction, anchors §0.5),
 * tends to each branch away from the crossover, and is smooth in v_t, f_n, kf and μ, so all four
 * contact coefficients get useful gradients.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { dot, smoothRelu, smoothStep } from "../common/vec.js";
import type { GroundContact } from "./types.js";

/** Signed gap φ = n·p − offset − radius, [P]. */
export const groundGap = (g: GroundContact, p: Array, radius: Array | number = 0): Array =>
  np.sub(np.sub(dot(p, g.normal), g.offset), radius);

/** Elastic penalty energy Σ ½·ke·pen² (the conservative part of the contact force). */
export function groundEnergy(g: GroundContact, p: Array, radius: Array | number = 0): Array {
  const pen = smoothRelu(np.neg(groundGap(g, p, radius)), g.smoothing);
  return np.sum(np.mul(np.mul(0.5, g.ke), np.square(pen)));
}

/** Contact forces [P, 3] on points at positions p [P, 3] moving with velocities v [P, 3]. */
export function groundForces(g: GroundContact, p: Array, v: Array, radius: Array | number = 0): Array {
  const depth = np.neg(groundGap(g, p, radius));
  const pen = smoothRelu(depth, g.smoothing);
  const inContact = smoothStep(depth, g.smoothing);
  const vn = dot(v, g.normal);
  const vt = np.sub(v, np.mul(np.expandDims(vn, -1), g.normal));
  // Normal force magnitude (≥ 0): elastic + approach-only damping.
  const fn = np.mul(inContact, np.add(np.mul(g.ke, pen), np.mul(g.kd, np.maximum(np.neg(vn), 0))));
  // Smooth relaxed Coulomb: f_t = −v_t·kf·μf_n / √((μf_n)² + kf²|v_t|²); a tiny floor keeps 0/0 away.
  const bound = np.mul(g.mu, fn);
  const vt2 = np.sum(np.square(vt), -1);
  const scale = np.div(
    np.mul(g.kf, bound),
    np.sqrt(np.add(np.add(np.square(bound), np.mul(np.square(g.kf), vt2)), 1e-30)),
  );
  return np.sub(np.mul(np.expandDims(fn, -1), g.normal), np.mul(np.expandDims(scale, -1), vt));
}
