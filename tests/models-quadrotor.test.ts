/**
 * The quadrotor (RISP's first environment): hovering at m·g/4 per rotor, roll and yaw from
 * differential thrust in the directions the rotor layout says, thrust gradients against central
 * differences (float64), and a clear error for thrusts of the wrong shape.
 */
import { describe, expect, it } from "vitest";
import { grad, init, models, np, type Array } from "../src/index.js";

await init({ backend: "cpu" });
const { rigid } = models;
const f64 = (x: unknown) => np.array(x, { dtype: "float64" });
const frames = 30,
  dt = 1 / 240,
  substeps = 8;

describe("quadrotor", () => {
  const { quad, state } = rigid.quadrotor({ mass: 1.2, dtype: "float64" });
  const hover = (1.2 * 9.8) / 4;
  const run = (thrusts: Array) =>
    rigid.simulateQuadrotor(quad, state, { dt, substeps, frames, controls: np.broadcastTo(thrusts, [frames, 4]) });

  it("hovers at m·g/4 per rotor and climbs with more", () => {
    const still = run(f64([hover, hover, hover, hover]));
    expect(np.max(np.abs(np.sub(np.index(still.x, frames - 1), f64([[0, 1, 0]])))).item()).toBeLessThan(1e-12);
    const up = run(f64([hover + 0.3, hover + 0.3, hover + 0.3, hover + 0.3]));
    const a = (4 * 0.3) / 1.2;
    // Semi-implicit Euler: x_n = x0 + a·dt²·n(n+1)/2.
    const n = frames * substeps;
    expect(np.index(up.x, frames - 1).dataSync()[1]! - 1).toBeCloseTo((a * dt * dt * n * (n + 1)) / 2, 10);
  });

  it("differential thrust rolls it about the axis the rotor layout gives, and opposite spins yaw it", () => {
    // Rotor 1 at +x pushes harder than rotor 3 at −x: torque (arm, 0, 0) × (0, f, 0) points along +z.
    const roll = run(f64([hover + 0.1, hover, hover - 0.1, hover]));
    const w = np.index(roll.w, frames - 1).dataSync();
    expect(w[2]!).toBeGreaterThan(0.1);
    expect(Math.abs(w[0]!)).toBeLessThan(1e-9);
    // Rotors 1 and 3 (+k) harder than 2 and 4 (−k): a net torque along +y.
    const yaw = run(f64([hover + 0.1, hover - 0.1, hover + 0.1, hover - 0.1]));
    const wy = np.index(yaw.w, frames - 1).dataSync();
    expect(wy[1]!).toBeGreaterThan(0.01);
    expect(Math.abs(wy[0]!) + Math.abs(wy[2]!)).toBeLessThan(1e-9);
  });

  it("the final pose's gradient with respect to per-frame thrusts matches central differences (float64)", () => {
    const u0 = f64(
      globalThis.Array.from({ length: frames }, (_, t) => [
        hover + 0.05 * Math.sin(t),
        hover,
        hover - 0.03,
        hover + 0.02 * Math.cos(t),
      ]),
    );
    const w = f64([0.3, 1, -0.7]);
    const loss = (u: Array) => {
      const s = rigid.simulateQuadrotor(quad, state, { dt, substeps, frames, controls: u });
      return np.add(np.sum(np.mul(np.index(s.x, frames - 1), w)), np.sum(np.index(s.q, frames - 1)));
    };
    const g = grad(loss)(u0).dataSync();
    const h = 1e-6;
    for (const k of [0, 13, 4 * frames - 1]) {
      const e = f64(
        globalThis.Array.from({ length: frames }, (_, t) => [0, 1, 2, 3].map((r) => (4 * t + r === k ? h : 0))),
      );
      const fd = (loss(np.add(u0, e)).item() - loss(np.sub(u0, e)).item()) / (2 * h);
      expect(Math.abs(g[k]! - fd)).toBeLessThan(1e-6 * Math.max(1, Math.abs(fd)));
    }
  });

  it("thrusts of the wrong shape are a clear error", () => {
    expect(() => rigid.simulateQuadrotor(quad, state, { dt, frames, controls: f64([[1, 2, 3]]) })).toThrow(
      /thrusts must be \[frames, 4\] = \[30, 4\]/,
    );
    expect(() => rigid.simulateQuadrotor(quad, state, { dt, frames })).toThrow(/give the thrusts/);
    expect(() => rigid.quadrotor({ mass: -1 })).toThrow(/mass/);
  });
});
