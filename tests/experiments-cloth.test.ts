/** The `cloth` experiment (Table 3: per-particle initial velocities) in its quick mode on the CPU. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { experiment as cloth } from "../examples/cloth.js";
import { fmtNumber } from "../examples/lib/tables.js";
import { lossColumn, readResult, runQuiet, table3Cells } from "./experiments-helpers.js";

describe("cloth (quick)", () => {
  it("moves the per-particle initial velocities from the mean throw towards the true field", async () => {
    const { code, out } = await runQuiet(cloth);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(r.mode).toBe("scene");
    const v = r.velocity;
    // 75 unknowns (quick: 25 particles); the mean throw misses the spin and the deformation entirely.
    expect(v.initialRelMae.V).toBeGreaterThan(0.15);
    // 15 L-BFGS steps alone leave 0.075; the 2 Levenberg–Marquardt steps after them reach 0.016.
    expect(v.polishSteps).toBe(2);
    expect(v.relMae.V).toBeLessThan(0.03);
    expect(v.finalLoss).toBeLessThan(0.01 * v.initialLoss);
    for (const f of ["ground-truth.gif", "estimate.gif", "frames.png", "loss.png", "loss.csv"]) expect(existsSync(join(out, "velocity", f))).toBe(true);
    expect(lossColumn(join(out, "velocity", "loss.csv"))).toHaveLength(v.iterations + v.polishSteps + 1);
    expect(r.table3).toEqual({ gradsim: { velocity: v.relMae.V } });
    expect(table3Cells({ deformable: null, cloth: r.table3 })("∇Sim", "velocity")).toEqual([fmtNumber(v.relMae.V), fmtNumber(0.026)]);
  }, 180_000);
});
