/** Simple and double pendulum (lengths, masses, gravity, damping, initial angles), RK4 with reported energy drift. */
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import type { DoublePendulum, DoublePendulumState, SimplePendulum, SimplePendulumState } from "./types.js";
import { requireParam, type ParamRange } from "../common/params.js";
export type {
  SimplePendulum,
  SimplePendulumState,
  DoublePendulum,
  DoublePendulumState,
  PendulumControls,
} from "./types.js";
export { simpleEnergy, doubleEnergy, simpleAcceleration, doubleAcceleration, simpleBob, doubleBobs } from "./energy.js";
export {
  simpleStep,
  doubleStep,
  simulateSimple,
  simulateDouble,
  energyDrift,
  simpleEnergyDrift,
  doubleEnergyDrift,
} from "./step.js";

/** gradSim demo_pendulum defaults: m 1, L 1, g 10, b 0.5; θ0 = 0, θ̇0 = 3. */
export function simplePendulum(
  o: {
    length?: number;
    mass?: number;
    gravity?: number;
    damping?: number;
    theta?: number;
    omega?: number;
    dtype?: DType;
  } = {},
): { system: SimplePendulum; state: SimplePendulumState } {
  const s = (name: string, x: number, range: ParamRange, unit: string) =>
    np.array(requireParam("pendulum.simplePendulum", name, x, range, unit), { dtype: o.dtype ?? "float32" });
  return {
    system: {
      length: s("length", o.length ?? 1, "positive", "m"),
      mass: s("mass", o.mass ?? 1, "positive", "kg"),
      gravity: s("gravity", o.gravity ?? 10, "finite", "m/s²"),
      damping: s("damping", o.damping ?? 0.5, "nonnegative", ""),
    },
    state: { theta: s("theta", o.theta ?? 0, "finite", "rad"), omega: s("omega", o.omega ?? 3, "finite", "rad/s") },
  };
}

/** gradSim demo_double_pendulum defaults: L 1/1, m 1/1, g 10, y0 = (3π/7, 0, 3π/4, 0), no damping. */
export function doublePendulum(
  o: {
    length?: readonly [number, number];
    mass?: readonly [number, number];
    gravity?: number;
    damping?: readonly [number, number];
    theta?: readonly [number, number];
    omega?: readonly [number, number];
    dtype?: DType;
  } = {},
): { system: DoublePendulum; state: DoublePendulumState } {
  const dtype = o.dtype ?? "float32";
  const v = (name: string, x: readonly number[], range: ParamRange, unit: string) =>
    np.array(
      x.map((c, i) => requireParam("pendulum.doublePendulum", `${name}[${i}]`, c, range, unit)),
      { dtype },
    );
  return {
    system: {
      length: v("length", o.length ?? [1, 1], "positive", "m"),
      mass: v("mass", o.mass ?? [1, 1], "positive", "kg"),
      gravity: np.array(requireParam("pendulum.doublePendulum", "gravity", o.gravity ?? 10, "finite", "m/s²"), {
        dtype,
      }),
      damping: v("damping", o.damping ?? [0, 0], "nonnegative", ""),
    },
    state: {
      theta: v("theta", o.theta ?? [(3 * Math.PI) / 7, (3 * Math.PI) / 4], "finite", "rad"),
      omega: v("omega", o.omega ?? [0, 0], "finite", "rad/s"),
    },
  };
}
