/**
 * The outside validation set's quick run (two of its videos, made by MuJoCo and rendered by
 * POV-Ray, fitted as a user would with gradsim fit, asking ±2%): a pushed box's mass and μ within 2% of the
 * truth inside the printed intervals, the verdict "fits" where both intervals are within ±2% and "imprecise" where
 * one is wider, and a resting box whose mass the verdict calls undetermined.
 * The whole set runs in `npm run reproduce` (results/runs/outside).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadVideoScene } from "gradsim/sysid/node";
import {
  believable,
  experiment as outside,
  loadCases,
  QUICK_CASES,
  TOLERANCE,
  type OutsideResult,
} from "../examples/outside.js";
import { runExperiment } from "../examples/lib/run.js";
import { outDir, readResult, runQuiet } from "./experiments-helpers.js";

describe("outside (quick)", () => {
  it("believes an estimate within 2%, a poor or undetermined verdict, an imprecise one holding the truth", () => {
    expect(believable("fits", true, false)).toBe(true);
    expect(believable("fits", false, true)).toBe(false);
    for (const v of ["poor", "undetermined"]) expect(believable(v, false, false)).toBe(true);
    expect(believable("imprecise", false, true)).toBe(true);
    expect(believable("imprecise", false, false)).toBe(false);
  });

  it("finds a MuJoCo box's mass and μ in a POV-Ray video within 2%; a resting box's mass is undetermined", async () => {
    const { code, out } = await runQuiet(outside);
    expect(code).toBe(0);
    const r = readResult(out) as OutsideResult;
    expect(r.cases.map((c) => c.case)).toEqual([...QUICK_CASES]);
    const [pushed, resting] = r.cases as [OutsideResult["cases"][number], OutsideResult["cases"][number]];
    const halfWidth = (n: string) => {
      const [lo, hi] = pushed.interval[n]!;
      return (hi - lo) / 2 / pushed.estimate[n]!;
    };
    const loose = ["mass", "mu"].filter((n) => halfWidth(n) > TOLERANCE);
    expect(pushed.verdict).toBe(loose.length ? "imprecise" : "fits");
    for (const n of loose) expect(pushed.reasons.join(" ")).toMatch(new RegExp(`determines ${n} only to ±[\\d.]+%`));
    for (const n of ["mass", "mu"]) {
      expect(pushed.relError[n], `pushed box: ${n}`).toBeLessThan(TOLERANCE);
      // The printed interval covers the truth (it includes the foreground's and the outline's alternatives).
      expect(pushed.interval[n]![0], `pushed box: ${n}'s interval`).toBeLessThanOrEqual(pushed.truth[n]!);
      expect(pushed.interval[n]![1], `pushed box: ${n}'s interval`).toBeGreaterThanOrEqual(pushed.truth[n]!);
    }
    expect(pushed.covered).toBe(true);
    // Pushed straight, the box moves alike however its load spreads over the face or splits over the corners: the
    // verdict re-fits it under both, and neither moves the estimate by 1%.
    for (const a of ["contacts", "load"])
      for (const n of ["mass", "mu"]) expect(pushed.shares[a]![n], `${a}: ${n}`).toBeLessThan(0.01);
    expect(resting.verdict).toBe("undetermined");
    expect(resting.reasons.join(" ")).toMatch(/does not determine mass/);
    expect(r.summary).toMatchObject({ cases: 2, withinTolerance: 1, covered: 1, trustworthy: 2, fitsButWrong: [] });
    const md = readFileSync(join(out, "outside.md"), "utf8");
    expect(md).toMatch(
      new RegExp(
        /\| box-light-mujoco \| box \| mujoco \+ povray \| opencv \| mass and mu /.source +
          /\| 0\.3000 → 0\.\d{4} \(\d\.\d\d%\) \[0\.\d{4}, 0\.\d{4}\] /.source +
          /\| 0\.4000 → 0\.\d{4} \(\d\.\d\d%\) \[0\.\d{4}, 0\.\d{4}\] /.source +
          /\| \d\.\d\d, \d+\.\d% \| (fits|imprecise) \| yes \| yes \|/.source,
      ),
    );
    expect(md).toContain("1 of the 1 cases whose video determines an unknown are within 2%");
    expect(md).toContain("in 1 of them every such unknown's truth lies inside the printed 95% interval");
    expect(md).toContain("2 of 2 believable");
  }, 900_000);

  it("holds out cases of its own: whole, readable and none of them a validation case", () => {
    const dir = join("examples", "data", "outside-held-out");
    const held = loadCases("held-out");
    expect(held.length).toBeGreaterThanOrEqual(5);
    const validation = new Set(loadCases().map((c) => c.case));
    for (const c of held) {
      expect(validation.has(c.case), c.case).toBe(false);
      for (const f of [c.video, c.scene, c.truth]) expect(existsSync(join(dir, f)), f).toBe(true);
      const truth = JSON.parse(readFileSync(join(dir, c.truth), "utf8"));
      expect(truth.trajectory.position.length, c.case).toBe(truth.frames);
      // The scene file a user writes: it validates, and holds no truth.
      expect(loadVideoScene(join(dir, c.scene)).file.mass, c.case).not.toBe(truth.mass);
    }
  });

  it("refuses an unknown --set with exit code 2", async () => {
    expect(await runExperiment(outside, ["--set", "nope", "--out", outDir("outside-set")])).toBe(2);
  });
});
