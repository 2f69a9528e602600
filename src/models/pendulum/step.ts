/**
 * Pendulum time stepping with classical RK4. The pendula are ODEs (gradSim integrates them with
 * adaptive dopri5, anchors §0.9). Their Hamiltonians are not separable (the double pendulum's
 * mass matrix depends on θ), so explicit symplectic schemes do not apply; RK4's energy error is
 * O(T·dt⁴) — at 30 fps × 8 substeps the undamped drift over 10 s is ~1e-8 relative, which
 * `energyDrift` reports and the tests bound.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { rollout, type SimulateOptions } from "../common/simulate.js";
import { doubleAcceleration, doubleEnergy, simpleAcceleration, simpleEnergy } from "./energy.js";
import type {
  DoublePendulum,
  DoublePendulumState,
  PendulumControls,
  SimplePendulum,
  SimplePendulumState,
} from "./types.js";

interface AngleState {
  readonly theta: Array;
  readonly omega: Array;
}

function rk4<S extends AngleState>(accel: (s: AngleState) => Array, s: S, dt: number): AngleState {
  const at = (base: AngleState, k: AngleState, h: number): AngleState => ({
    theta: np.add(base.theta, np.mul(k.theta, h)),
    omega: np.add(base.omega, np.mul(k.omega, h)),
  });
  const deriv = (y: AngleState): AngleState => ({ theta: y.omega, omega: accel(y) });
  const k1 = deriv(s);
  const k2 = deriv(at(s, k1, dt / 2));
  const k3 = deriv(at(s, k2, dt / 2));
  const k4 = deriv(at(s, k3, dt));
  const comb = (f: (k: AngleState) => Array) => np.add(np.add(f(k1), np.mul(2, np.add(f(k2), f(k3)))), f(k4));
  return {
    theta: np.add(
      s.theta,
      np.mul(
        comb((k) => k.theta),
        dt / 6,
      ),
    ),
    omega: np.add(
      s.omega,
      np.mul(
        comb((k) => k.omega),
        dt / 6,
      ),
    ),
  };
}

export const simpleStep = (
  p: SimplePendulum,
  s: SimplePendulumState,
  torque: PendulumControls,
  dt: number,
): SimplePendulumState => rk4((y) => simpleAcceleration(p, y, torque), s, dt);

export const doubleStep = (
  p: DoublePendulum,
  s: DoublePendulumState,
  torque: PendulumControls,
  dt: number,
): DoublePendulumState => rk4((y) => doubleAcceleration(p, y, torque), s, dt);

export const simulateSimple = (
  p: SimplePendulum,
  s0: SimplePendulumState,
  opts: SimulateOptions<PendulumControls>,
): SimplePendulumState => rollout(simpleStep, p, s0, opts);
export const simulateDouble = (
  p: DoublePendulum,
  s0: DoublePendulumState,
  opts: SimulateOptions<PendulumControls>,
): DoublePendulumState => rollout(doubleStep, p, s0, opts);

/** max_t |E(t) − E(0)| / |E(0)| over a rollout's frames (states with a leading frames axis). */
export function energyDrift(energyAt: (s: AngleState) => Array, s0: AngleState, frames: AngleState): number {
  const e0 = energyAt(s0).item();
  const e = energyAt(frames).dataSync();
  let worst = 0;
  for (const v of e) worst = Math.max(worst, Math.abs(v - e0));
  return worst / Math.abs(e0);
}
export const simpleEnergyDrift = (p: SimplePendulum, s0: SimplePendulumState, frames: SimplePendulumState): number =>
  energyDrift((s) => simpleEnergy(p, s), s0, frames);
export const doubleEnergyDrift = (p: DoublePendulum, s0: DoublePendulumState, frames: DoublePendulumState): number =>
  energyDrift((s) => doubleEnergy(p, s), s0, frames);
