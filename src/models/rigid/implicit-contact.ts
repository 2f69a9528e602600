/**
 * The ground contact's velocity-dependent forces — friction and the normal damping — taken implicitly
 * in the body velocities of the step's end, so that neither kf nor kd limits the step.
 *
 * Per contact point i (offset r_i from its body's COM, velocity J_i·u = v + ω × r_i for the body's
 * twist u = (v, ω)) the force is affine in the point's velocity v⁺ at the step's end:
 *   friction: −φ(s)·t − (φ/s)·(P − ttᵀ)·v⁺ with φ(|v⁺_t|) ≈ φ(s) + φ'(s)·(t·v⁺ − s): the smooth Coulomb law's
 *     magnitude φ (`rigidGroundFrictionSaturation`) linearised at s, the point's speed at the step's end as Coulomb's
 *     law alone would leave it, in the direction t of its tangential velocity (P = I − nnᵀ);
 *   normal: f_n(v⁺) ≈ f_n(v) − D·(n·v⁺ − n·v) with D = −∂f_n/∂v_n, linearised first at the step's start velocity
 *     (whose f_n is in the explicit wrench), then once more (a Newton step) at the first solve's end velocity.
 * So f_i = h_i − C_i·v⁺ with C_i = φ'·ttᵀ + (φ/s)·(P − ttᵀ) + D·nnᵀ, and each body solves the 6×6 system
 *   (M + dt·Σ J_iᵀ C_i J_i)·Δu = dt·Σ J_iᵀ f_i(û)
 * from its twist û after the explicit forces (M = diag(m·I, I_w)), by the Schur complement on 3×3 blocks. C is
 * positive semi-definite (φ rises, φ' ≥ 0), so the system is positive definite for any kf and kd: backward Euler's
 * stability, where the explicit law needed dt < 0.8/(3·kf). While sliding φ' ≈ 0 and the friction is Coulomb's μ·f_n
 * whatever the body's rotation does to the point's speed; while sticking φ/s = φ' = kf·w, implicit viscous friction.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { cross, dot, inv3, matmul, matvec, mT, skew, smoothNorm } from "../common/vec.js";
import { penetrationRamp, rigidGroundFrictionSaturation, tangentialVelocity } from "../contact/rigid-ground.js";
import type { GroundContact } from "../contact/types.js";

/** Contact points of the bodies: each point's body (int32 [P]) and its world offset from the body's COM [P, 3]. */
export interface ContactPointsAt {
  readonly body: Array;
  readonly r: Array;
  /** The points' velocities at the step's start [P, 3]. */
  readonly pv: Array;
  /** The points' mass shares w [P] (kg). */
  readonly w: Array;
  /**
   * The normal force f_n [P] (N) and its damping D = −∂f_n/∂v_n [P] (N·s/m) with the points moving at velocities v
   * [P, 3] (`rigidGroundNormal`); the explicit wrench holds f_n at pv.
   */
  readonly normal: (v: Array) => { readonly fn: Array; readonly damping: Array; readonly load: Array };
}

/** The bodies: mass [B], world inertia [B, 3, 3] and the twist (v, ω) [B, 3] ×2 after the step's explicit forces. */
interface Bodies {
  readonly mass: Array;
  readonly inertia: Array;
  readonly v: Array;
  readonly w: Array;
}

/** Speed (m/s) over which the estimated end speed of a point that Coulomb's law stops turns on. */
const END_SPEED_SMOOTHING = 1e-3;

const expand1 = (x: Array) => np.expandDims(x, -1);
const expand2 = (x: Array) => np.expandDims(x, [-1, -2]);
const outer = (a: Array, b: Array) => np.mul(np.expandDims(a, -1), np.expandDims(b, -2));

/**
 * The implicit contact's wrench [B, 3] ×2: the force and torque that take the bodies from the twist
 * `predicted` (after every explicit force of the step) to the twist at the step's end.
 */
export function implicitContactWrench(
  g: GroundContact,
  p: ContactPointsAt,
  predicted: Bodies,
  dt: number,
): { force: Array; torque: Array } {
  const n = g.normal;
  const nn = outer(n, n);
  const eye = np.eye(3, undefined, { dtype: predicted.mass.dtype });
  const S = skew(p.r);
  const pointVelocity = (v: Array, w: Array) => np.add(np.take(v, p.body, 0), cross(np.take(w, p.body, 0), p.r));
  const vHat = pointVelocity(predicted.v, predicted.w);
  const kfw = np.mul(g.kf, p.w);
  // Per-body sums of per-point vectors [B, 3] and matrices [B, 3, 3].
  const vectors = (x: Array) => np.scatterAdd(np.zerosLike(predicted.v), p.body, x, 0);
  const matrices = (x: Array) => np.scatterAdd(np.zerosLike(predicted.inertia), p.body, x, 0);
  /**
   * The twist change /dt [B, 3] ×2 with the normal force linearised as fn − D·(n·v⁺ − vn) (beyond the explicit
   * wrench's, at the start) and the friction at end speed s [P] in direction t [P, 3], bounded by μ times the point's
   * load (`rigidGroundNormal`'s) at the step's start (which holds an impact's damping: bounded by the end's, a tall box
   * that tipped over and landed on its side slid 6 cm too far at 15 substeps per frame).
   */
  const solve = (fn: Array, D: Array, vn: Array, s: Array, t: Array) => {
    const r = rigidGroundFrictionSaturation(g, start.load, p.w, np.square(s));
    const secant = np.mul(kfw, r);
    const slope = np.mul(kfw, np.power(r, 7));
    const tt = outer(t, t);
    const C = np.add(
      np.add(np.mul(expand2(slope), tt), np.mul(expand2(secant), np.sub(np.sub(eye, nn), tt))),
      np.mul(expand2(D), nn),
    );
    // f(û) = h − C·v̂ + (fn − fn0 + D·vn)·n with h = −(φ − φ'·s)·t.
    const h = np.mul(expand1(np.neg(np.mul(np.sub(secant, slope), s))), t);
    const normal = np.add(np.sub(fn, start.fn), np.mul(D, vn));
    const f = np.add(np.sub(h, matvec(C, vHat)), np.mul(expand1(normal), n));
    const CS = matmul(C, S);
    const A11 = np.add(np.mul(expand2(predicted.mass), eye), np.mul(dt, matrices(C)));
    const A12 = np.mul(-dt, matrices(CS));
    const A21 = mT(A12);
    const A22 = np.sub(predicted.inertia, np.mul(dt, matrices(matmul(S, CS))));
    const R1 = vectors(f);
    const R2 = vectors(cross(p.r, f));
    // (M + dt·K)·(Δv, Δω)/dt = (R1, R2) by the Schur complement of A11 (both SPD).
    const A11inv = inv3(A11);
    const schur = np.sub(A22, matmul(A21, matmul(A11inv, A12)));
    const dw = matvec(inv3(schur), np.sub(R2, matvec(A21, matvec(A11inv, R1))));
    const dv = matvec(A11inv, np.sub(R1, matvec(A12, dw)));
    return { dv, dw };
  };
  // First linearised at the step's start (the normal force) and at the end speed Coulomb's law alone leaves,
  // |v̂_t| − dt·μ·f_n/w kept ≥ 0 by a C¹ ramp, in v̂_t's direction (the friction). Then once more (a Newton step) at
  // the first solve's end velocities, which hold what the damping and the body's rotation do to the point within
  // the step: linearised at the start alone, the damping's switch as a point lifts off (D's turn-off) multiplied the
  // whole step's velocity change, and a tumbling box's trajectory became rugged in μ at 480 Hz.
  const start = p.normal(p.pv);
  const vt = tangentialVelocity(g, vHat);
  const speed = smoothNorm(vt, 1e-6);
  const slowing = np.mul(dt, np.div(np.mul(g.mu, start.load), p.w));
  const smoothing = np.full([], END_SPEED_SMOOTHING, { dtype: vt.dtype });
  const startSpeed = penetrationRamp(np.sub(speed, slowing), smoothing);
  const first = solve(start.fn, start.damping, dot(p.pv, n), startSpeed, np.div(vt, expand1(speed)));
  const v1 = pointVelocity(np.add(predicted.v, np.mul(dt, first.dv)), np.add(predicted.w, np.mul(dt, first.dw)));
  const end = p.normal(v1);
  const v1t = tangentialVelocity(g, v1);
  const speed1 = smoothNorm(v1t, 1e-6);
  const { dv, dw } = solve(end.fn, end.damping, dot(v1, n), speed1, np.div(v1t, expand1(speed1)));
  return { force: np.mul(expand1(predicted.mass), dv), torque: matvec(predicted.inertia, dw) };
}
