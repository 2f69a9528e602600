/**
 * Damped spring: energy ½·ke·(l − L0)², dissipation ½·kd·l̇² (Rayleigh), with l = |x_i − x_j|.
 * The length is √(|d|² + ε²) with ε = 1e-12 so that a collapsed spring gives zero force rather
 * than NaN (dflex divides by l unguarded, anchors §6).
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { gatherVertices, scatterVertices, vertexSlots } from "../common/elements.js";
import { dot, smoothNorm } from "../common/vec.js";
import type { SpringElements } from "./types.js";

const EPS = 1e-12;

export function springEnergy(s: SpringElements, x: Array): Array {
  const [xi, xj] = vertexSlots(gatherVertices(x, s.indices));
  const l = smoothNorm(np.sub(xi!, xj!), EPS);
  return np.sum(np.mul(np.mul(0.5, s.stiffness), np.square(np.sub(l, s.restLength))));
}

/** Analytic spring forces [N, 3]: f_i = −(ke·c + kd·ċ)·d̂, f_j = −f_i (dflex eval_springs). */
export function springForces(s: SpringElements, x: Array, v: Array): Array {
  const [xi, xj] = vertexSlots(gatherVertices(x, s.indices));
  const [vi, vj] = vertexSlots(gatherVertices(v, s.indices));
  const d = np.sub(xi!, xj!);
  const l = smoothNorm(d, EPS, true);
  const dir = np.div(d, l);
  const c = np.sub(np.squeeze(l, -1), s.restLength);
  const cdot = dot(dir, np.sub(vi!, vj!));
  const fi = np.mul(np.expandDims(np.neg(np.add(np.mul(s.stiffness, c), np.mul(s.damping, cdot))), -1), dir);
  return scatterVertices(x, s.indices, np.stack([fi, np.neg(fi)], 1));
}
