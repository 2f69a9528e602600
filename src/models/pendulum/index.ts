/** Simple and double pendulum (lengths, masses, gravity, damping, initial angles), RK4 with reported energy drift. */
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import type { DoublePendulum, DoublePendulumState, SimplePendulum, SimplePendulumState } from "./types.js";
export type { SimplePendulum, SimplePendulumState, DoublePendulum, DoublePendulumState, PendulumControls } from "./types.js";
export { simpleEnergy, doubleEnergy, simpleAcceleration, doubleAcceleration, simpleBob, doubleBobs } from "./energy.js";
export { simpleStep, doubleStep, simulateSimple, simulateDouble, energyDrift, simpleEnergyDrift, doubleEnergyDrift } from "./step.js";

/** gradSim demo_pendulum defaults: m 1, L 1, g 10, b 0.5; θ0 = 0, θ̇0 = 3. */
export function simplePendulum(o: { length?: number; mass?: number; gravity?: number; damping?: number; theta?: number; omega?: number; dtype?: DType } = {}):
  { system: SimplePendulum; state: SimplePendulumState } {
  const s = (x: number) => np.array(x, { dtype: o.dtype ?? "float32" });
  return {
    system: { length: s(o.length ?? 1), mass: s(o.mass ?? 1), gravity: s(o.gravity ?? 10), damping: s(o.damping ?? 0.5) },
    state: { theta: s(o.theta ?? 0), omega: s(o.omega ?? 3) },
  };
}

/** gradSim demo_double_pendulum defaults: L 1/1, m 1/1, g 10, y0 = (3π/7, 0, 3π/4, 0), no damping. */
export function doublePendulum(o: { length?: readonly [number, number]; mass?: readonly [number, number]; gravity?: number; damping?: readonly [number, number];
  theta?: readonly [number, number]; omega?: readonly [number, number]; dtype?: DType } = {}): { system: DoublePendulum; state: DoublePendulumState } {
  const dtype = o.dtype ?? "float32";
  const v = (x: readonly number[]) => np.array([...x], { dtype });
  return {
    system: { length: v(o.length ?? [1, 1]), mass: v(o.mass ?? [1, 1]), gravity: np.array(o.gravity ?? 10, { dtype }), damping: v(o.damping ?? [0, 0]) },
    state: { theta: v(o.theta ?? [(3 * Math.PI) / 7, (3 * Math.PI) / 4]), omega: v(o.omega ?? [0, 0]) },
  };
}
