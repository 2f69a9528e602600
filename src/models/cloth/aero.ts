/**
 * Aerodynamic lift and drag on each triangle (dflex `eval_triangles`): with the mean velocity
 * v̄, unit normal n̂ and current area A,
 *
 *   f_drag = −k_drag·A·|n̂·v̄|·v̄,   f_lift = −k_lift·A·asin(n̂·v̂)·|v̄|²·n̂
 *
 * (asin(c) = π/2 − acos(c), dflex's form). Each vertex receives one third of the triangle's
 * force (dflex gives every vertex the full force, i.e. 3× the total). Gradients of |n̂·v̄| use the
 * correct sign of `abs` (dflex's adj_abs is sign-flipped, anchors §0.3); v̂ uses a smooth norm
 * so v̄ = 0 is not NaN, and the asin argument is clipped away from ±1 where its slope is infinite.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { gatherVertices, scatterVertices, vertexSlots } from "../common/elements.js";
import { cross, dot, smoothNorm } from "../common/vec.js";
import type { TriangleElements } from "./types.js";

const vec = (a: Array): Array => np.expandDims(a, -1);

export function aeroForces(tris: TriangleElements, x: Array, v: Array): Array {
  const [p, q, r] = vertexSlots(gatherVertices(x, tris.indices));
  const [vp, vq, vr] = vertexSlots(gatherVertices(v, tris.indices));
  const n = cross(np.sub(q!, p!), np.sub(r!, p!));
  const twiceArea = smoothNorm(n, 1e-12);
  const nHat = np.div(n, vec(twiceArea));
  const area = np.mul(0.5, twiceArea);
  const vMean = np.div(np.add(np.add(vp!, vq!), vr!), 3);
  const speed = smoothNorm(vMean, 1e-9);
  const vn = dot(nHat, vMean);
  const drag = np.mul(vec(np.mul(np.mul(tris.drag, area), np.abs(vn))), vMean);
  const cosine = np.clip(np.div(vn, speed), -1 + 1e-6, 1 - 1e-6);
  const lift = np.mul(vec(np.mul(np.mul(np.mul(tris.lift, area), np.arcsin(cosine)), np.square(speed))), nHat);
  const perVertex = np.div(np.neg(np.add(drag, lift)), 3);
  return scatterVertices(x, tris.indices, np.stack([perVertex, perVertex, perVertex], 1));
}
