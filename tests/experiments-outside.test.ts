/**
 * The outside validation set's quick run (two of its videos, made by MuJoCo and rendered by
 * POV-Ray, fitted as a user would with gradsim fit, asking ±2%): a pushed box's mass and μ within 2% of the
 * truth inside the printed intervals, the verdict "fits" where both intervals are within ±2% and "imprecise" where
 * one is wider, and a resting box whose mass the verdict calls undetermined.
 * The whole set runs in `npm run reproduce` (results/runs/outside).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { believable, experiment as outside, QUICK_CASES, TOLERANCE, type OutsideResult } from "../examples/outside.js";
import { readResult, runQuiet } from "./experiments-helpers.js";

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
});
