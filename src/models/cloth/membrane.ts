/**
 * Triangle membrane (dflex `eval_triangles`, paper §A.1 "thin shells"): per unit rest area
 *
 *   Ψ = μ/2·(‖F‖² − 2) + λ/2·(A/A0 − α + a)²,  α = 1 + μ/λ,
 *
 * with F = [q−p, r−p]·Dm (3×2) — a Neo-Hookean-style in-plane term plus an area term; the
 * offset α makes the rest shape stress-free. Damping is Rayleigh dissipation
 * D = A0·kd/2·(‖sym(FᵀḞ)‖² + (Ȧ/A0)²), invariant to rigid motion (Galilean and rotational).
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { gatherVertices, scatterVertices, vertexSlots } from "../common/elements.js";
import { cross, dot, matmul, mT, smoothNorm } from "../common/vec.js";
import type { TriangleElements } from "./types.js";

const EPS = 1e-12;
const col = (a: Array): Array => np.expandDims(a, [1, 2]);
const vec = (a: Array): Array => np.expandDims(a, -1);

interface TriangleKinematics {
  /** Fᵀ [F, 2, 3]. */
  readonly FT: Array;
  /** Current area A [F]. */
  readonly area: Array;
  /** ∂A/∂q and ∂A/∂r [F, 3]. */
  readonly dAdq: Array;
  readonly dAdr: Array;
}

function kinematics(tris: TriangleElements, x: Array): TriangleKinematics {
  const [p, q, r] = vertexSlots(gatherVertices(x, tris.indices));
  const qp = np.sub(q!, p!),
    rp = np.sub(r!, p!);
  const FT = matmul(mT(tris.invRest), np.stack([qp, rp], 1));
  const n = cross(qp, rp);
  const twiceArea = smoothNorm(n, EPS);
  const nHat = np.div(n, vec(twiceArea));
  // A = ½|qp × rp|: ∂A/∂q = ½ rp × n̂, ∂A/∂r = ½ n̂ × qp (and ∂A/∂p = −(∂A/∂q + ∂A/∂r)).
  return { FT, area: np.mul(0.5, twiceArea), dAdq: np.mul(0.5, cross(rp, nHat)), dAdr: np.mul(0.5, cross(nHat, qp)) };
}

const areaOffset = (t: TriangleElements): Array => np.add(1, np.div(t.mu, t.lambda));

export function membraneEnergy(tris: TriangleElements, x: Array, activation: Array = tris.activation): Array {
  const { FT, area } = kinematics(tris, x);
  const shear = np.mul(np.mul(0.5, tris.mu), np.sub(np.sum(np.square(FT), [1, 2]), 2));
  const c = np.add(np.sub(np.div(area, tris.restArea), areaOffset(tris)), activation);
  const areaTerm = np.mul(np.mul(0.5, tris.lambda), np.square(c));
  return np.sum(np.mul(tris.restArea, np.add(shear, areaTerm)));
}

/** Rayleigh dissipation of the membrane; the damping force is −∂D/∂v. */
export function membraneDissipation(tris: TriangleElements, x: Array, v: Array): Array {
  const { FT, dAdq, dAdr } = kinematics(tris, x);
  const FdotT = matmul(mT(tris.invRest), edgeRates(tris, v));
  const M = matmul(FT, mT(FdotT));
  const Edot = np.mul(0.5, np.add(M, mT(M)));
  const Jdot = np.div(areaRate(tris, v, dAdq, dAdr), tris.restArea);
  const rate = np.add(np.sum(np.square(Edot), [1, 2]), np.square(Jdot));
  return np.sum(np.mul(np.mul(np.mul(0.5, tris.restArea), tris.damping), rate));
}

function edgeRates(tris: TriangleElements, v: Array): Array {
  const [vp, vq, vr] = vertexSlots(gatherVertices(v, tris.indices));
  return np.stack([np.sub(vq!, vp!), np.sub(vr!, vp!)], 1);
}
function areaRate(tris: TriangleElements, v: Array, dAdq: Array, dAdr: Array): Array {
  const rel = edgeRates(tris, v);
  const [dq, dr] = [np.squeeze(np.split(rel, 2, 1)[0]!, 1), np.squeeze(np.split(rel, 2, 1)[1]!, 1)];
  return np.add(dot(dAdq, dq), dot(dAdr, dr));
}

/** Analytic membrane forces [N, 3] (elastic, plus damping when v is given). */
export function membraneForces(
  tris: TriangleElements,
  x: Array,
  v: Array | null,
  activation: Array = tris.activation,
): Array {
  const { FT, area, dAdq, dAdr } = kinematics(tris, x);
  let PT = np.mul(col(tris.mu), FT); // ∂(μ/2‖F‖²)/∂F = μF
  // Area term: A0·λ·c·∂(A/A0)/∂x = λ·c·∂A/∂x.
  let areaCoef = np.mul(tris.lambda, np.add(np.sub(np.div(area, tris.restArea), areaOffset(tris)), activation));
  if (v !== null) {
    const FdotT = matmul(mT(tris.invRest), edgeRates(tris, v));
    const M = matmul(FT, mT(FdotT));
    const Edot = np.mul(0.5, np.add(M, mT(M)));
    PT = np.add(PT, np.mul(col(tris.damping), matmul(Edot, FT)));
    const Jdot = np.div(areaRate(tris, v, dAdq, dAdr), tris.restArea);
    areaCoef = np.add(areaCoef, np.mul(tris.damping, Jdot));
  }
  // Gradient rows for q, r: A0·(Dm·Pᵀ) plus the area term.
  const H = np.mul(col(tris.restArea), matmul(tris.invRest, PT));
  const [hq, hr] = [np.squeeze(np.split(H, 2, 1)[0]!, 1), np.squeeze(np.split(H, 2, 1)[1]!, 1)];
  const gq = np.add(hq, np.mul(vec(areaCoef), dAdq));
  const gr = np.add(hr, np.mul(vec(areaCoef), dAdr));
  const gp = np.neg(np.add(gq, gr));
  return scatterVertices(x, tris.indices, np.neg(np.stack([gp, gq, gr], 1)));
}
