/**
 * Dihedral bending (paper §A.1; dflex/warp `eval_bending`). For a hinge (x1, x2 | x3, x4) with
 * wings x1, x2 and edge e = x4 − x3,
 *
 *   n1 = (x3−x1)×(x4−x1),  n2 = (x4−x2)×(x3−x2),  θ = atan2((n2×n1)·ê, n1·n2)
 *
 * (dflex's signed acos, written with atan2 so it is smooth away from θ = ±π). The energy is
 * E = ½·ke·ē·(θ − θ0)² with ē the rest edge length, and the damping dissipation ½·kd·ē·θ̇². The
 * analytic forces use the Bridson–Marino–Fedkiw (2003) bending directions, which are exactly
 * ∂θ/∂x_k:
 *
 *   u1 = |e|·ñ1,  u2 = |e|·ñ2,  u3 = ((x1−x4)·ê)ñ1 + ((x2−x4)·ê)ñ2,  u4 = ((x3−x1)·ê)ñ1 + ((x3−x2)·ê)ñ2
 *
 * with ñ = n/|n|², so f_k = −ē·(ke(θ − θ0) + kd·θ̇)·u_k and θ̇ = Σ u_k·v_k. (dflex scales by the
 * current |e| without differentiating it, so its force is not the gradient of an energy.)
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { gatherVertices, scatterVertices, vertexSlots } from "../common/elements.js";
import { cross, dot, smoothNorm, squaredNorm } from "../common/vec.js";
import type { BendingElements } from "./types.js";

const vec = (a: Array): Array => np.expandDims(a, -1);

interface Hinge {
  x1: Array;
  x2: Array;
  x3: Array;
  x4: Array;
  n1: Array;
  n2: Array;
  e: Array;
  eLen: Array;
}

function hinge(b: BendingElements, x: Array): Hinge {
  const [x1, x2, x3, x4] = vertexSlots(gatherVertices(x, b.indices)) as [Array, Array, Array, Array];
  const n1 = cross(np.sub(x3, x1), np.sub(x4, x1));
  const n2 = cross(np.sub(x4, x2), np.sub(x3, x2));
  const e = np.sub(x4, x3);
  return { x1, x2, x3, x4, n1, n2, e, eLen: smoothNorm(e, 1e-12) };
}

/** Signed dihedral angle θ [E] (0 for a flat hinge). */
export function dihedralAngle(b: BendingElements, x: Array): Array {
  const h = hinge(b, x);
  return np.arctan2(np.div(dot(cross(h.n2, h.n1), h.e), h.eLen), dot(h.n1, h.n2));
}

export const bendingEnergy = (b: BendingElements, x: Array, restAngle: Array = b.restAngle): Array =>
  np.sum(np.mul(np.mul(np.mul(0.5, b.stiffness), b.restLength), np.square(np.sub(dihedralAngle(b, x), restAngle))));

/** ∂θ/∂x_k for k = 1..4, each [E, 3] (Bridson directions). */
function angleGradients(h: Hinge): [Array, Array, Array, Array] {
  const eHat = np.div(h.e, vec(h.eLen));
  // ñ = n/|n|²; the tiny floor keeps a collapsed wing finite (warp skips such hinges).
  const t1 = np.div(h.n1, vec(np.add(squaredNorm(h.n1), 1e-24)));
  const t2 = np.div(h.n2, vec(np.add(squaredNorm(h.n2), 1e-24)));
  const u1 = np.mul(vec(h.eLen), t1);
  const u2 = np.mul(vec(h.eLen), t2);
  const u3 = np.add(np.mul(vec(dot(np.sub(h.x1, h.x4), eHat)), t1), np.mul(vec(dot(np.sub(h.x2, h.x4), eHat)), t2));
  const u4 = np.add(np.mul(vec(dot(np.sub(h.x3, h.x1), eHat)), t1), np.mul(vec(dot(np.sub(h.x3, h.x2), eHat)), t2));
  return [u1, u2, u3, u4];
}

/** Rayleigh dissipation ½·kd·ē·θ̇² of the hinges. */
export function bendingDissipation(b: BendingElements, x: Array, v: Array): Array {
  const u = angleGradients(hinge(b, x));
  const vs = vertexSlots(gatherVertices(v, b.indices));
  const rate = u.map((uk, k) => dot(uk, vs[k]!)).reduce((a, c) => np.add(a, c));
  return np.sum(np.mul(np.mul(np.mul(0.5, b.damping), b.restLength), np.square(rate)));
}

/** Analytic bending forces [N, 3] (elastic, plus damping when v is given). */
export function bendingForces(b: BendingElements, x: Array, v: Array | null, restAngle: Array = b.restAngle): Array {
  const h = hinge(b, x);
  const theta = np.arctan2(np.div(dot(cross(h.n2, h.n1), h.e), h.eLen), dot(h.n1, h.n2));
  const u = angleGradients(h);
  let s = np.mul(b.stiffness, np.sub(theta, restAngle));
  if (v !== null) {
    const vs = vertexSlots(gatherVertices(v, b.indices));
    const rate = u.map((uk, k) => dot(uk, vs[k]!)).reduce((a, c) => np.add(a, c));
    s = np.add(s, np.mul(b.damping, rate));
  }
  const coef = vec(np.neg(np.mul(b.restLength, s)));
  return scatterVertices(
    x,
    b.indices,
    np.stack(
      u.map((uk) => np.mul(coef, uk)),
      1,
    ),
  );
}
