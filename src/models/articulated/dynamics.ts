/**
 * Articulated dynamics in joint coordinates from the point masses' kinematics with the library's
 * own autodiff (d'Alembert / virtual work): with p(q) the masses' positions and J = ∂p/∂q,
 *   M(q)·q̈ = Σ m Jᵀ(g − J̇q̇) + τ − k(q − rest) − b·q̇ + τ_limits,   M = Σ m JᵀJ,
 * where J̇q̇ = d²/ds² p(q + s·q̇) is a second directional derivative (nested jvp). M is symmetric
 * positive definite, solved by Gauss–Jordan elimination without pivoting (array ops, so grad,
 * vmap and jit go through it). Time stepping: semi-implicit Euler.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { jacfwd, jvp } from "../../transforms/index.js";
import { rollout, type SimulateOptions } from "../common/simulate.js";
import { massPositions } from "./kinematics.js";
import type { ArticulatedControls, ArticulatedState, ArticulatedSystem } from "./types.js";

/** x = A⁻¹b for a symmetric positive definite A [n, n] and b [n]: Gauss–Jordan, one rank-1 update per column. */
export function solveSpd(A: Array, b: Array): Array {
  const n = A.shape[0]!;
  let aug = np.concatenate([A, np.expandDims(b, 1)], 1);
  for (let k = 0; k < n; k++) {
    const row = np.div(np.index(aug, k), np.index(np.index(aug, k), k));
    const column = np.sub(np.take(aug, k, 1), np.take(np.eye(n, undefined, { dtype: A.dtype }), k, 1));
    aug = np.sub(aug, np.outer(column, row));
  }
  return np.take(aug, n, 1);
}

/** Joint-space spring, damping and limit torques. */
function jointTorques(sys: ArticulatedSystem, s: ArticulatedState): Array {
  let tau = np.neg(np.add(np.mul(sys.stiffness, np.sub(s.q, sys.rest)), np.mul(sys.damping, s.qd)));
  if (sys.limits) {
    const { lower, upper, stiffness } = sys.limits;
    tau = np.add(tau, np.mul(stiffness, np.sub(np.maximum(np.sub(lower, s.q), 0), np.maximum(np.sub(s.q, upper), 0))));
  }
  return tau;
}

/** The mass matrix M(q) [J, J] and the point Jacobian [P, 3, J]. */
export function massMatrix(sys: ArticulatedSystem, q: Array): { M: Array; jacobian: Array } {
  const jacobian = jacfwd((x: Array) => massPositions(sys, x))(q) as Array;
  return { M: np.einsum("pik,pil,p->kl", jacobian, jacobian, sys.mass), jacobian };
}

/** Joint accelerations q̈ [J] under motor torques (or null). */
export function acceleration(sys: ArticulatedSystem, s: ArticulatedState, torque: ArticulatedControls): Array {
  if (s.qd.shape.join() !== s.q.shape.join())
    throw new Error(`articulated: velocities [${s.qd.shape}] must match the angles [${s.q.shape}].`);
  const { M, jacobian } = massMatrix(sys, s.q);
  const velocity = (x: Array) => jvp((y: Array) => massPositions(sys, y), [x], [s.qd])[1] as Array;
  const bias = jvp(velocity, [s.q], [s.qd])[1] as Array; // J̇q̇ [P, 3]
  const pointForce = np.mul(np.expandDims(sys.mass, 1), np.sub(sys.gravity, bias));
  let tau = np.add(np.einsum("pik,pi->k", jacobian, pointForce), jointTorques(sys, s));
  if (torque) {
    if (torque.shape.join() !== s.q.shape.join())
      throw new Error(`articulated: motor torques must be [${s.q.shape}] (one per joint), got [${torque.shape}].`);
    tau = np.add(tau, torque);
  }
  return solveSpd(M, tau);
}

/** Kinetic + gravitational + joint-spring + limit-spring energy (what motors and damping change). */
export function energy(sys: ArticulatedSystem, s: ArticulatedState): Array {
  const p = massPositions(sys, s.q);
  const v = jvp((y: Array) => massPositions(sys, y), [s.q], [s.qd])[1] as Array;
  const kinetic = np.mul(0.5, np.sum(np.mul(sys.mass, np.sum(np.square(v), 1))));
  const gravity = np.neg(np.sum(np.mul(sys.mass, np.sum(np.mul(p, sys.gravity), 1))));
  let spring = np.mul(0.5, np.sum(np.mul(sys.stiffness, np.square(np.sub(s.q, sys.rest)))));
  if (sys.limits) {
    const { lower, upper, stiffness } = sys.limits;
    const beyond = np.add(np.square(np.maximum(np.sub(lower, s.q), 0)), np.square(np.maximum(np.sub(s.q, upper), 0)));
    spring = np.add(spring, np.mul(0.5, np.mul(stiffness, np.sum(beyond))));
  }
  return np.add(np.add(kinetic, gravity), spring);
}

/** One semi-implicit Euler step: q̇ += dt·q̈, then q += dt·q̇. */
export function step(
  sys: ArticulatedSystem,
  s: ArticulatedState,
  torque: ArticulatedControls,
  dt: number,
): ArticulatedState {
  const qd = np.add(s.qd, np.mul(acceleration(sys, s, torque), dt));
  return { q: np.add(s.q, np.mul(qd, dt)), qd };
}

/** Per-frame states of a rollout; controls: motor torques [frames, J] or null. */
export function simulate(
  sys: ArticulatedSystem,
  state0: ArticulatedState,
  opts: SimulateOptions<ArticulatedControls>,
): ArticulatedState {
  const J = sys.parent.length;
  if (
    opts.controls &&
    (opts.controls.ndim !== 2 || opts.controls.shape[0] !== opts.frames || opts.controls.shape[1] !== J)
  ) {
    throw new Error(
      `articulated: motor torques must be [frames, joints] = [${opts.frames}, ${J}], got [${opts.controls.shape}].`,
    );
  }
  return rollout(step, sys, state0, opts);
}
