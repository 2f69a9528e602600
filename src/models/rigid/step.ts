/**
 * Rigid-body dynamics (paper eq. 2, Newton–Euler): m·v̇ = f and I·ω̇ + ω×(I·ω) = τ (body frame).
 *
 * Linear part: semi-implicit Euler, v' = v + dt·f/m, x' = x + dt·v'.
 * Angular part: Euler's equation in its world-frame momentum form dL/dt = τ with
 * L = R·I·Rᵀ·ω — the gyroscopic term ω×Iω is what this form contains implicitly (it is the
 * rate of change of R·I·Rᵀ). We step L' = L + dt·τ, rotate with the midpoint angular velocity
 * ω_mid = I_w(q_mid)⁻¹·L' (q' = exp(dt·ω_mid)⊗q, exact unit-quaternion exponential), and set
 * ω' = I_w(q')⁻¹·L'. Torque-free bodies therefore conserve L to rounding and precess/tumble
 * correctly (tested against the closed-form precession of a symmetric top); dflex drops ω×Iω
 * entirely (anchors §4.2).
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { rollout, type SimulateOptions } from "../common/simulate.js";
import { quatFromRotationVector, quatMul, quatNormalize, quatToMatrix } from "../common/quat.js";
import { cross, inv3, matmul, matvec, mT } from "../common/vec.js";
import { groundForces } from "../contact/ground.js";
import { rigidGroundFriction, rigidGroundNormal } from "../contact/rigid-ground.js";
import { implicitContactWrench } from "./implicit-contact.js";
import type { RigidControls, RigidState, RigidSystem } from "./types.js";

/** A body-frame tensor in the world frame, R·T·Rᵀ [B, 3, 3] (the inertia, or its inverse). */
const toWorld = (R: Array, T: Array): Array => matmul(matmul(R, T), mT(R));

/**
 * How much of a force window [start, end] acts in the step [t, t + dt]: the share of the step that
 * lies inside the window, so a window's impulse is exactly force·(end − start) wherever it lies on
 * the step grid, and continuous (differentiable) in start and end — a push's start time can be
 * estimated. Without a step length (dt 0) it is the closed interval.
 */
export function windowActivity(t: Array, start: Array, end: Array, dt: number): Array {
  if (!(dt > 0)) return np.where(np.logicalAnd(np.greaterEqual(t, start), np.lessEqual(t, end)), 1, 0);
  const overlap = np.sub(np.minimum(np.add(t, dt), end), np.maximum(t, start));
  return np.div(np.clip(overlap, 0, dt), dt);
}

/**
 * Net force and torque about the COM [B, 3] on every body during a step of length dt (force
 * windows ramp over one step). With mass-normalised ground contact and dt > 0, friction and the
 * normal damping act on the contact points' velocities at the step's end (implicit-contact.ts):
 * the step's other forces are summed first. Without dt, friction sees the current velocities.
 */
export function wrench(
  sys: RigidSystem,
  s: RigidState,
  controls: RigidControls | null = null,
  dt = 0,
): { force: Array; torque: Array } {
  const R = quatToMatrix(s.q);
  let force = np.mul(np.expandDims(sys.mass, -1), sys.gravity);
  let torque = np.zerosLike(s.w);
  const add = (body: Array, r: Array, f: Array) => {
    force = np.scatterAdd(force, body, f, 0);
    torque = np.scatterAdd(torque, body, cross(r, f), 0);
  };
  if (sys.forceWindows) {
    const k = sys.forceWindows;
    add(
      k.body,
      matvec(np.take(R, k.body, 0), k.local),
      np.mul(np.expandDims(windowActivity(s.t, k.start, k.end, dt), -1), k.force),
    );
  }
  if (controls?.force) force = np.add(force, controls.force);
  if (controls?.torque) torque = np.add(torque, controls.torque);
  if (sys.contacts && sys.ground) {
    const c = sys.contacts,
      g = sys.ground;
    // The gap is the point's (a sphere's centre's) less its radius; the force acts where the point touches the
    // plane, centre − radius·n, and moves with that point: friction there spins a sphere (applied at the centre, a
    // ball slid without ever rolling).
    const centre = matvec(np.take(R, c.body, 0), c.local);
    const p = np.add(np.take(s.x, c.body, 0), centre);
    const r = np.sub(centre, np.mul(np.expandDims(c.radius, -1), g.normal));
    const pv = np.add(np.take(s.v, c.body, 0), cross(np.take(s.w, c.body, 0), r));
    if (g.scaling !== "per-body-mass") {
      add(c.body, r, groundForces(g, p, pv, c.radius));
    } else {
      const normal = (v: Array) => rigidGroundNormal(g, p, v, c.radius, c.body, sys.mass, sys.gravity);
      const { fn, w, load } = normal(pv);
      add(c.body, r, np.mul(np.expandDims(fn, -1), g.normal));
      if (dt > 0) {
        // Friction and normal damping implicit in the step's end velocities (implicit-contact.ts), from the twist
        // that every other force of the step leaves (the gyroscopic term is second order here).
        const Iw = toWorld(R, sys.inertia);
        const predicted = {
          mass: sys.mass,
          inertia: Iw,
          v: np.add(s.v, np.mul(np.div(force, np.expandDims(sys.mass, -1)), dt)),
          w: np.add(s.w, np.mul(matvec(toWorld(R, inv3(sys.inertia)), torque), dt)),
        };
        const implicit = implicitContactWrench(g, { body: c.body, r, pv, w, normal }, predicted, dt);
        force = np.add(force, implicit.force);
        torque = np.add(torque, implicit.torque);
      } else add(c.body, r, rigidGroundFriction(g, load, w, pv));
    }
  }
  return { force, torque };
}

/** World angular momentum L = R·I·Rᵀ·ω [B, 3]. */
export function angularMomentum(sys: RigidSystem, s: RigidState): Array {
  const R = quatToMatrix(s.q);
  return matvec(toWorld(R, sys.inertia), s.w);
}

/** Kinetic energy ½Σ(m|v|² + ω·L). */
export function kineticEnergy(sys: RigidSystem, s: RigidState): Array {
  const lin = np.sum(np.mul(sys.mass, np.sum(np.square(s.v), -1)));
  const ang = np.sum(np.mul(s.w, angularMomentum(sys, s)));
  return np.mul(0.5, np.add(lin, ang));
}

export function step(sys: RigidSystem, s: RigidState, controls: RigidControls | null, dt: number): RigidState {
  const { force, torque } = wrench(sys, s, controls, dt);
  const v = np.add(s.v, np.mul(np.div(force, np.expandDims(sys.mass, -1)), dt));
  const x = np.add(s.x, np.mul(v, dt));
  const invI = inv3(sys.inertia);
  const L = np.add(angularMomentum(sys, s), np.mul(torque, dt));
  const omegaAt = (q: Array) => matvec(toWorld(quatToMatrix(q), invI), L);
  const rotate = (q: Array, w: Array, h: number) => quatNormalize(quatMul(quatFromRotationVector(np.mul(w, h)), q));
  const qMid = rotate(s.q, omegaAt(s.q), 0.5 * dt);
  const q = rotate(s.q, omegaAt(qMid), dt);
  return { x, q, v, w: omegaAt(q), t: np.add(s.t, dt) };
}

/** Per-frame rigid states (leading frames axis), built on lax.scan. */
export const simulate = (
  sys: RigidSystem,
  state0: RigidState,
  opts: SimulateOptions<RigidControls | null>,
): RigidState => rollout(step, sys, state0, opts);
