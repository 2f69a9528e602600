import { describe, expect, it } from "vitest";
import { np } from "../src/index.js";
import { pendulum } from "../src/models/index.js";
import { pseudoRandom } from "./models-helpers.js";

/** Times of upward zero crossings of a sampled signal (linear interpolation). */
function crossings(y: ArrayLike<number>, dt: number): number[] {
  const out: number[] = [];
  for (let i = 1; i < y.length; i++)
    if (y[i - 1]! < 0 && y[i]! >= 0) out.push((i - 1 + y[i - 1]! / (y[i - 1]! - y[i]!)) * dt);
  return out;
}
const meanPeriod = (t: number[]) => (t[t.length - 1]! - t[0]!) / (t.length - 1);

describe("pendula", () => {
  it("small-angle period of the simple pendulum is 2π√(L/g)", () => {
    const { system, state } = pendulum.simplePendulum({
      length: 0.7,
      gravity: 9.8,
      damping: 0,
      theta: 0.01,
      omega: 0,
      dtype: "float64",
    });
    const dt = 1 / 240;
    const out = pendulum.simulateSimple(system, state, { dt, substeps: 1, frames: 2400 });
    const T = meanPeriod(crossings(out.theta.dataSync(), dt));
    expect(T / (2 * Math.PI * Math.sqrt(0.7 / 9.8))).toBeCloseTo(1, 4);
  });

  it("damped oscillation frequency is √(g/L − (b/2m)²)", () => {
    const [L, g, b, m] = [1, 10, 0.5, 1];
    const { system, state } = pendulum.simplePendulum({
      length: L,
      gravity: g,
      damping: b,
      mass: m,
      theta: 0.005,
      omega: 0,
      dtype: "float64",
    });
    const dt = 1 / 240;
    const out = pendulum.simulateSimple(system, state, { dt, frames: 2400 });
    const T = meanPeriod(crossings(out.theta.dataSync(), dt));
    expect((2 * Math.PI) / T / Math.sqrt(g / L - (b / (2 * m)) ** 2)).toBeCloseTo(1, 4);
  });

  it("double pendulum: accelerations equal gradSim's ODE; energy drift (chaotic, 10 s) is reported and bounded", () => {
    const { system, state } = pendulum.doublePendulum({ dtype: "float64" });
    // gradSim bodies.DoublePendulum right-hand side (L1 = L2 = m1 = m2 = 1, g = 10).
    const r = pseudoRandom(40, 3);
    for (let k = 0; k < 10; k++) {
      const [t1, z1, t2, z2] = [3 * r[4 * k]!, 2 * r[4 * k + 1]!, 3 * r[4 * k + 2]!, 2 * r[4 * k + 3]!];
      const c = Math.cos(t1 - t2),
        s = Math.sin(t1 - t2),
        g = 10,
        D = 1 + s * s;
      const z1dot = (g * Math.sin(t2) * c - s * (z1 * z1 * c + z2 * z2) - 2 * g * Math.sin(t1)) / D;
      const z2dot = (2 * (z1 * z1 * s - g * Math.sin(t2) + g * Math.sin(t1) * c) + z2 * z2 * s * c) / D;
      const a = pendulum
        .doubleAcceleration(
          system,
          { theta: np.array([t1, t2], { dtype: "float64" }), omega: np.array([z1, z2], { dtype: "float64" }) },
          null,
        )
        .toList() as number[];
      expect(a[0]).toBeCloseTo(z1dot, 10);
      expect(a[1]).toBeCloseTo(z2dot, 10);
    }
    const out = pendulum.simulateDouble(system, state, { dt: 1 / 30 / 8, substeps: 8, frames: 300 });
    const drift = pendulum.doubleEnergyDrift(system, state, out);
    console.log(
      `double pendulum, 10 s at 30 fps × 8 RK4 substeps: max relative energy drift ${drift.toExponential(2)}`,
    );
    expect(drift).toBeLessThan(1e-5);
    expect(drift).toBeGreaterThan(0); // it is measured, not assumed
  });

  it("damping removes energy monotonically (simple pendulum)", () => {
    const { system, state } = pendulum.simplePendulum({ dtype: "float64" });
    const out = pendulum.simulateSimple(system, state, { dt: 1 / 120, frames: 200 });
    const e = pendulum.simpleEnergy(system, out).dataSync();
    for (let i = 1; i < e.length; i++) expect(e[i]!).toBeLessThan(e[i - 1]!);
  });
});
