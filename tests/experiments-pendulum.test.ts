/** The `pendulum` and `double-pendulum` experiments (lengths and initial angles) in their quick modes on the CPU. */
import { describe, expect, it } from "vitest";
import { experiment as pendulum } from "../examples/pendulum.js";
import { experiment as doublePendulum } from "../examples/double-pendulum.js";
import { readResult, runQuiet } from "./experiments-helpers.js";

describe("pendulum (quick)", () => {
  it("recovers the rod length and the initial angle from video to within 1%", async () => {
    const { code, out } = await runQuiet(pendulum);
    expect(code).toBe(0);
    const p = readResult(out).pendulum;
    expect(p.initialRelMae.L).toBeGreaterThan(0.3);
    expect(p.initialRelMae.theta0).toBeGreaterThan(0.3);
    expect(p.relMae.L).toBeLessThan(0.01);
    expect(p.relMae.theta0).toBeLessThan(0.01);
    expect(Math.abs(p.estimate.L[0] - p.truth.L[0]) / p.truth.L[0]).toBeCloseTo(p.relMae.L, 10);
  }, 180_000);
});

describe("double-pendulum (quick)", () => {
  it("recovers both lengths and both initial angles from video to within 2%", async () => {
    const { code, out } = await runQuiet(doublePendulum);
    expect(code).toBe(0);
    const p = readResult(out).doublePendulum;
    expect(p.initialRelMae.L).toBeGreaterThan(0.05);
    expect(p.initialRelMae.theta0).toBeGreaterThan(0.05);
    expect(p.relMae.L).toBeLessThan(0.02);
    expect(p.relMae.theta0).toBeLessThan(0.02);
    expect([p.estimate.L.length, p.estimate.theta0.length]).toEqual([2, 2]);
  }, 180_000);
});
