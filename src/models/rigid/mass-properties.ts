/**
 * Mass, centre of mass and inertia of a closed, outward-wound triangle mesh of uniform density,
 * by the divergence theorem: each face and the origin span a signed tet; volume, first moment and
 * second moment (covariance) are summed over them (Mirtich 1996; Blow & Binstock 2004). Written
 * with `np`, so it is differentiable w.r.t. vertex positions and density (shape optimisation).
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { gatherVertices, vertexSlots } from "../common/elements.js";
import { cross, dot } from "../common/vec.js";

export interface MassProperties {
  /** [] (kg). */
  readonly mass: Array;
  /** Volume [] (m³). */
  readonly volume: Array;
  /** Centre of mass [3]. */
  readonly com: Array;
  /** Inertia about the COM in mesh axes [3, 3]. */
  readonly inertia: Array;
}

/** Mass properties of a closed mesh: vertices [V, 3], faces int32 [F, 3], density (kg/m³). */
export function massProperties(vertices: Array, faces: Array, density: Array | number): MassProperties {
  const [a, b, c] = vertexSlots(gatherVertices(vertices, faces)) as [Array, Array, Array];
  const det = dot(a, cross(b, c)); // 6 × signed volume of tet (0, a, b, c)
  const volume = np.div(np.sum(det), 6);
  const mass = np.mul(density, volume);
  // First moment: Σ vol_i·(a+b+c)/4.
  const moment = np.sum(np.mul(np.expandDims(np.div(det, 24), -1), np.add(np.add(a, b), c)), 0);
  const com = np.div(moment, volume);
  // Covariance about the origin of tet (0, a, b, c): det/120 · (Σ_k p_k p_kᵀ + s sᵀ), s = a+b+c.
  const s = np.add(np.add(a, b), c);
  const outer = (u: Array, w: Array) => np.mul(np.expandDims(u, -1), np.expandDims(w, -2));
  const sumOuter = np.add(np.add(np.add(outer(a, a), outer(b, b)), outer(c, c)), outer(s, s));
  const cov0 = np.mul(density, np.sum(np.mul(np.expandDims(np.div(det, 120), [-1, -2]), sumOuter), 0));
  // Parallel axis: covariance about the COM, then I = tr(C)·𝟙 − C.
  const cov = np.sub(cov0, np.mul(mass, np.mul(np.expandDims(com, -1), np.expandDims(com, -2))));
  // A CPU constant works with inputs on any backend (uploaded on use) and in float64 (WebGPU has none).
  const eye = np.eye(3, undefined, { dtype: vertices.dtype, backend: "cpu" });
  const inertia = np.sub(np.mul(np.sum(np.mul(cov, eye)), eye), cov);
  return { mass, volume, com, inertia };
}
