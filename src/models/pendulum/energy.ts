/** Energies and equations of motion of the simple and double pendulum (gradSim bodies.py). */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import type {
  DoublePendulum,
  DoublePendulumState,
  PendulumControls,
  SimplePendulum,
  SimplePendulumState,
} from "./types.js";

// Component i along the last axis, so states batched over leading axes (frames, vmap) work unchanged.
const at = (a: Array, i: number): Array => np.take(a, i, -1);

export function simpleEnergy(p: SimplePendulum, s: SimplePendulumState): Array {
  const mL = np.mul(p.mass, p.length);
  return np.sub(
    np.mul(np.mul(0.5, np.mul(mL, p.length)), np.square(s.omega)),
    np.mul(np.mul(mL, p.gravity), np.cos(s.theta)),
  );
}

export function simpleAcceleration(p: SimplePendulum, s: SimplePendulumState, torque: PendulumControls): Array {
  let a = np.sub(
    np.neg(np.mul(np.div(p.damping, p.mass), s.omega)),
    np.mul(np.div(p.gravity, p.length), np.sin(s.theta)),
  );
  if (torque) a = np.add(a, np.div(torque, np.mul(p.mass, np.square(p.length))));
  return a;
}

/**
 * Double pendulum from its Lagrangian: M(θ)·θ̈ = Q with
 *   M = [[(m1+m2)L1², m2L1L2 cosΔ], [m2L1L2 cosΔ, m2L2²]],  Δ = θ1 − θ2,
 *   Q1 = −m2L1L2 sinΔ·θ̇2² − (m1+m2)gL1 sinθ1 − b1θ̇1 + τ1,
 *   Q2 =  m2L1L2 sinΔ·θ̇1² − m2gL2 sinθ2 − b2θ̇2 + τ2,
 * solved in closed form (det M = m2L1²L2²(m1 + m2 sin²Δ), gradSim's D).
 */
export function doubleAcceleration(p: DoublePendulum, s: DoublePendulumState, torque: PendulumControls): Array {
  const [m1, m2, L1, L2] = [at(p.mass, 0), at(p.mass, 1), at(p.length, 0), at(p.length, 1)];
  const [t1, t2, w1, w2] = [at(s.theta, 0), at(s.theta, 1), at(s.omega, 0), at(s.omega, 1)];
  const g = p.gravity;
  const d = np.sub(t1, t2),
    c = np.cos(d),
    sn = np.sin(d);
  const m12 = np.add(m1, m2);
  const k = np.mul(np.mul(m2, L1), L2);
  const M11 = np.mul(m12, np.square(L1)),
    M12 = np.mul(k, c),
    M22 = np.mul(m2, np.square(L2));
  let Q1 = np.sub(np.neg(np.mul(np.mul(k, sn), np.square(w2))), np.mul(np.mul(np.mul(m12, g), L1), np.sin(t1)));
  let Q2 = np.sub(np.mul(np.mul(k, sn), np.square(w1)), np.mul(np.mul(np.mul(m2, g), L2), np.sin(t2)));
  Q1 = np.sub(Q1, np.mul(at(p.damping, 0), w1));
  Q2 = np.sub(Q2, np.mul(at(p.damping, 1), w2));
  if (torque) {
    Q1 = np.add(Q1, at(torque, 0));
    Q2 = np.add(Q2, at(torque, 1));
  }
  const det = np.sub(np.mul(M11, M22), np.square(M12));
  const a1 = np.div(np.sub(np.mul(M22, Q1), np.mul(M12, Q2)), det);
  const a2 = np.div(np.sub(np.mul(M11, Q2), np.mul(M12, Q1)), det);
  return np.stack([a1, a2], -1);
}

/** E = ½θ̇ᵀMθ̇ − (m1+m2)gL1 cosθ1 − m2gL2 cosθ2 (gradSim's energy check). */
export function doubleEnergy(p: DoublePendulum, s: DoublePendulumState): Array {
  const [m1, m2, L1, L2] = [at(p.mass, 0), at(p.mass, 1), at(p.length, 0), at(p.length, 1)];
  const [t1, t2, w1, w2] = [at(s.theta, 0), at(s.theta, 1), at(s.omega, 0), at(s.omega, 1)];
  const v1 = np.mul(L1, w1),
    v2 = np.mul(L2, w2);
  const kin = np.add(
    np.mul(np.mul(0.5, m1), np.square(v1)),
    np.mul(
      np.mul(0.5, m2),
      np.add(np.add(np.square(v1), np.square(v2)), np.mul(np.mul(2, np.mul(v1, v2)), np.cos(np.sub(t1, t2)))),
    ),
  );
  const pot = np.add(
    np.mul(np.mul(np.mul(np.add(m1, m2), p.gravity), L1), np.cos(t1)),
    np.mul(np.mul(np.mul(m2, p.gravity), L2), np.cos(t2)),
  );
  return np.sub(kin, pot);
}

/** Bob positions: simple → [..., 3]; (L sin θ, −L cos θ, 0). */
export const simpleBob = (p: SimplePendulum, s: SimplePendulumState): Array =>
  np.stack([np.mul(p.length, np.sin(s.theta)), np.neg(np.mul(p.length, np.cos(s.theta))), np.zerosLike(s.theta)], -1);

/** Bob positions of the double pendulum [..., 2, 3]; bob 2 = bob 1 + L2(sin θ2, −cos θ2, 0). */
export function doubleBobs(p: DoublePendulum, s: DoublePendulumState): Array {
  const rel = np.stack(
    [np.mul(p.length, np.sin(s.theta)), np.neg(np.mul(p.length, np.cos(s.theta))), np.zerosLike(s.theta)],
    -1,
  );
  return np.cumsum(rel, -2);
}
