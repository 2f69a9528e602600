/**
 * The rigid-body experiments of issue 8 in their quick (smoke) modes, run in-process on the CPU
 * backend, asserting recovery; and the CLI's handling of bad input (exit code 2, clear message).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { experiment as rigidMass, DEFAULT_INITIAL_MASS, massBenchmark } from "../examples/rigid-mass.js";
import { contactBenchmark, experiment as rigidContact, QUICK_INITIAL } from "../examples/rigid-contact.js";
import { sysid } from "../src/index.js";
import { experiment as landscape } from "../examples/landscape.js";
import { EXPERIMENTS } from "../examples/registry.js";
import { cli, lossColumn, outDir, readResult, runQuiet } from "./experiments-helpers.js";

describe("rigid-mass (quick)", () => {
  it("recovers the default scene's mass from video to within 1%", async () => {
    const { code, out } = await runQuiet(rigidMass);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(r.backend).toBe("cpu");
    expect(r.initialMass).toBe(DEFAULT_INITIAL_MASS.quick);
    expect(Math.abs(r.initialMass - r.trueMass) / r.trueMass).toBeGreaterThan(0.2);
    expect(r.relError).toBeLessThan(0.01);
    expect(Math.abs(r.estimatedMass - r.trueMass)).toBeCloseTo(r.absError, 12);
    for (const f of ["ground-truth.gif", "estimate.gif", "frames.png", "loss.png", "loss.csv"])
      expect(existsSync(join(out, f))).toBe(true);
    const losses = lossColumn(join(out, "loss.csv"));
    expect(Math.min(...losses)).toBeLessThan(losses[0]! * 1e-3);
  }, 150_000);

  it("runs the Table 1 protocol with every baseline on a one-object dataset", async () => {
    const { code, out } = await runQuiet(rigidMass, ["--dataset", "1", "--seed", "3", "--iters", "40"]);
    expect(code).toBe(0);
    const r = readResult(out).dataset;
    expect(readResult(out).mode).toBe("dataset");
    expect(Object.keys(r.rows).sort()).toEqual(["average", "diffphysics", "gradsim", "paper", "random", "reinforce"]);
    const rel = (m: string) => r.rows[m].relMae.mass as number;
    // Gradient descent from the prior's guess: privileged 3-D supervision is near exact, video close behind.
    expect(rel("diffphysics")).toBeLessThan(1e-3);
    expect(rel("gradsim")).toBeLessThan(1e-3); // Adam, then L-BFGS (measured ~1e-6)
    const initialRel = Math.abs(r.records[0].initial.mass - r.records[0].truth.mass) / r.records[0].truth.mass;
    expect(rel("gradsim")).toBeLessThan(initialRel);
  }, 150_000);
});

describe("rigid-contact (quick)", () => {
  it("recovers mass and friction (Adam, then L-BFGS, then Levenberg–Marquardt)", async () => {
    const { code, out } = await runQuiet(rigidContact);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(Object.keys(r.estimate).sort()).toEqual(Object.keys(QUICK_INITIAL).sort());
    // Adam into the basin, then L-BFGS: both to float32-level precision (measured ~1e-6).
    expect(r.relError.mass).toBeLessThan(1e-4);
    expect(r.relError.mu).toBeLessThan(1e-4);
    const losses = lossColumn(join(out, "loss.csv"));
    expect(r.fit.polishSteps).toBeGreaterThan(0);
    expect(losses).toHaveLength(r.iterations + r.fit.polishSteps + 1);
    expect(Math.min(...losses)).toBeLessThan(losses[0]! * 1e-6);
  }, 150_000);

  it("runs the Table 2 protocol (curriculum over video length, every baseline) on a one-object dataset", async () => {
    const { code, out } = await runQuiet(rigidContact, ["--dataset", "1"]);
    expect(code).toBe(0);
    const r = readResult(out).dataset;
    expect(readResult(out).mode).toBe("dataset");
    expect(Object.keys(r.rows).sort()).toEqual(["average", "diffphysics", "gradsim", "paper", "random", "reinforce"]);
    const o = r.records[0];
    const rel = (v: Record<string, number>, k: string) => Math.abs(v[k]! - o.truth[k]) / o.truth[k];
    // The guess is drawn over the prior's range (here 48% off in mass); quick mode measured ~10%.
    expect(rel(o.initial, "mass")).toBeGreaterThan(0.3);
    expect(rel(o.estimates.gradsim, "mass")).toBeLessThan(0.5 * rel(o.initial, "mass"));
    // Both gradient methods started their whole-video fit where the curriculum left them, nearer the truth.
    for (const m of ["gradsim", "diffphysics"])
      expect(rel(o.curriculumEstimates[m], "mass")).toBeLessThan(0.5 * rel(o.initial, "mass"));
    // Both end with Levenberg–Marquardt steps on the residuals.
    for (const m of ["gradsim", "diffphysics"]) expect(o.polishSteps[m]).toBeGreaterThan(0);
    // Both scanned each unknown across its prior after the whole video's descent (kept descents counted).
    for (const m of ["gradsim", "diffphysics"]) expect(o.scanEscapes[m]).toBeGreaterThanOrEqual(0);
    // The paper's budget: its 30 steps from the same start, one descent, no curriculum, scan or polish.
    expect(o.iterations.paper).toBe(sysid.PAPER_RIGID_PROCEDURE.steps);
    expect(o.curriculumEstimates.paper).toBeUndefined();
    expect(o.scanEscapes.paper).toBeUndefined();
    expect(o.polishSteps.paper).toBeUndefined();
  }, 150_000);
});

describe("landscape (quick)", () => {
  it("has its minimum at the true mass and Lamé parameters", async () => {
    const { code, out } = await runQuiet(landscape);
    expect(code).toBe(0);
    const r = readResult(out);
    // The grid contains the truth. Losses over every (5th) frame bottom out there in a single
    // basin (paper Fig. 12); first+last frames alone may not pin down λ, so those are only reported.
    for (const s of r.sweeps) {
      expect(s.values).toContain(s.truth);
      for (const sel of ["every", "every5"]) {
        expect(s.argmin[sel]).toBe(s.truth);
        expect(s.localMinima[sel]).toBe(1);
      }
    }
    for (const f of ["landscape-mass.png", "landscape-mass.csv", "landscape-mu.png", "landscape-lambda.csv"])
      expect(existsSync(join(out, f))).toBe(true);
  }, 150_000);
});

describe("gradsim CLI input errors", () => {
  it("lists the rigid experiments in the registry", () => {
    for (const name of ["rigid-mass", "rigid-contact", "landscape"]) expect(EXPERIMENTS[name]).toBeTypeOf("function");
  });

  it("rejects an unknown experiment with exit code 2", () => {
    const r = cli(["no-such-experiment"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown experiment "no-such-experiment".*rigid-mass/s);
  });

  it("rejects a non-numeric flag with exit code 2", () => {
    const r = cli(["rigid-mass", "--iters", "many"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--iters expects an integer ≥ 1 and ≤ 100000000, got "many"');
  });

  it("rejects --target for an experiment whose scene is built in, with exit code 2", () => {
    const r = cli(["pendulum", "--target", "scene.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("gradsim pendulum: does not take --target");
  });

  it("rejects another experiment's flags (--envs, --task) with exit code 2, saying who takes them", () => {
    const envs = cli(["pendulum", "--envs", "rod"]);
    expect(envs.code).toBe(2);
    expect(envs.stderr).toContain(
      "gradsim pendulum: does not take --envs; only risp-state and risp-tasks choose environments.",
    );
    const task = cli(["risp-state", "--task", "sysid"]);
    expect(task.code).toBe(2);
    expect(task.stderr).toContain(
      "gradsim risp-state: does not take --task; only risp-tasks (RISP Tables 2–4) takes --task.",
    );
  });

  it("rejects a missing --target file with exit code 2", () => {
    const r = cli(["rigid-mass", "--backend", "cpu", "--target", "/nonexistent/scene.json", "--out", outDir("target")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--target file "/nonexistent/scene.json" does not exist');
  });
});

describe("rigid dataset protocol", () => {
  it("REINFORCE scores the same loss as gradsim: its frames and pyramid", () => {
    for (const config of [massBenchmark(false), contactBenchmark(false)]) {
      const m = sysid.rigidDatasetTask(config, { progress: false }).methods(0, 0);
      expect(m.reinforce!.settings.frames).toBe(m.gradsim!.settings.frames);
      expect(m.reinforce!.settings.pyramid).toBe(m.gradsim!.settings.pyramid);
      expect(m.gradsim!.settings.frames).toBe(config.fit.frames);
    }
  });
});
