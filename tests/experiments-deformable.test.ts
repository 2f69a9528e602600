/**
 * The `deformable` experiment (Table 3: μ, λ and per-particle masses of a clamped soft beam)
 * in its quick mode on the CPU: recovery from video, the dataset protocol's rows, bad input.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runExperiment } from "../examples/lib/run.js";
import { experiment as deformable } from "../examples/deformable.js";
import { fmtNumber } from "../examples/lib/tables.js";
import { lossColumn, readResult, runQuiet, table3Cells } from "./experiments-helpers.js";

describe("deformable (quick)", () => {
  it("recovers μ and λ from video to within 1% and reduces the per-particle mass error", async () => {
    const { code, out } = await runQuiet(deformable);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(r.mode).toBe("scene");
    expect(r.backend).toBe("cpu");
    // Material: the initial guess is far off (40% and 90%); the estimate is within 1%.
    expect(r.material.initialRelMae.mu).toBeGreaterThan(0.3);
    expect(r.material.initialRelMae.lambda).toBeGreaterThan(0.3);
    expect(r.material.relMae.mu).toBeLessThan(0.01);
    expect(r.material.relMae.lambda).toBeLessThan(0.01);
    const { mu, lambda } = r.material.estimate;
    expect(Math.abs(mu - r.material.truth.mu) / r.material.truth.mu).toBeCloseTo(r.material.relMae.mu, 10);
    expect(Math.abs(lambda - r.material.truth.lambda) / r.material.truth.lambda).toBeCloseTo(
      r.material.relMae.lambda,
      10,
    );
    expect(r.material.unknowns).toEqual([
      { name: "mu", unit: "Pa", transform: "log" },
      { name: "lambda", unit: "Pa", transform: "log" },
    ]);
    // Masses: 16 unknowns, 12 L-BFGS steps (0.17 → 0.10) and 3 Levenberg–Marquardt steps (→ 0.044).
    expect(r.mass.initialRelMae.m).toBeGreaterThan(0.1);
    expect(r.mass.polishSteps).toBe(3);
    expect(r.mass.relMae.m).toBeLessThan(0.06);
    for (const task of ["material", "mass"]) {
      for (const f of ["ground-truth.gif", "estimate.gif", "frames.png", "loss.png", "loss.csv"])
        expect(existsSync(join(out, task, f))).toBe(true);
      const losses = lossColumn(join(out, task, "loss.csv"));
      expect(Math.min(...losses)).toBeLessThan(losses[0]! * 0.05);
    }
    // The reproduce harness's Table 3 contract: relative MAEs per method and column.
    expect(r.table3).toEqual({
      gradsim: { mass: r.mass.relMae.m, mu: r.material.relMae.mu, lambda: r.material.relMae.lambda },
    });
    const cell = table3Cells({ deformable: r.table3, cloth: null });
    expect(cell("∇Sim", "mu")[0]).toBe(fmtNumber(r.material.relMae.mu));
    expect(cell("∇Sim", "velocity")[0]).toBe("—");
    expect(cell("DiffPhysics", "mass")[0]).toBe("—");
  }, 180_000);

  it("runs the Table 3 protocol on a one-instance dataset with every baseline row", async () => {
    const { code, out } = await runQuiet(deformable, ["--dataset", "1", "--iters", "4", "--seed", "2"]);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(r.mode).toBe("dataset");
    expect(r.material.instances).toBe(1);
    for (const task of [r.material, r.mass]) {
      // Quick mode skips the score-function baseline (its row is then absent, not invented).
      expect(Object.keys(task.rows).sort()).toEqual(["average", "diffphysics", "gradsim", "random"]);
      for (const m of ["average", "random", "diffphysics", "gradsim"])
        for (const v of Object.values(task.rows[m].relMae)) expect(Number.isFinite(v)).toBe(true);
    }
    // Even four steps move both gradient methods towards the truth.
    const rec = r.material.records[0];
    expect(rec.relMae.gradsim.mu).toBeLessThan(rec.initialRelMae.mu);
    expect(rec.relMae.diffphysics.mu).toBeLessThan(rec.initialRelMae.mu);
    expect(Object.keys(r.table3).sort()).toEqual(["average", "diffphysics", "gradsim", "random"]);
    const cell = table3Cells({ deformable: r.table3, cloth: null });
    expect(cell("∇Sim", "mu")).toEqual([fmtNumber(r.material.rows.gradsim.relMae.mu), fmtNumber(0.0054)]);
    expect(cell("DiffPhysics", "mass")[0]).toBe(fmtNumber(r.mass.rows.diffphysics.relMae.m));
    expect(cell("REINFORCE", "mass")[0]).toBe("—");
    expect(cell("Average", "lambda")[1]).toBe("—");
  }, 180_000);

  it("rejects bad flags with exit code 2", async () => {
    const err = process.stderr.write;
    let text = "";
    process.stderr.write = ((s: string) => {
      text += s;
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(await runExperiment(deformable, ["--iters", "many"])).toBe(2);
      expect(text).toContain("--iters expects an integer");
    } finally {
      process.stderr.write = err;
    }
  });
});
