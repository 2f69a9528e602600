/**
 * The outside validation set's quick run (two of its videos, made by MuJoCo and PyBullet and
 * rendered by POV-Ray, fitted as a user would with gradsim fit): the determined unknowns within
 * 2% of the truth and a "fits" verdict whose interval is honest about its width; the table says so.
 * The whole set runs in `npm run reproduce` (results/runs/outside).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { experiment as outside, QUICK_CASES, TOLERANCE, type OutsideResult } from "../examples/outside.js";
import { readResult, runQuiet } from "./experiments-helpers.js";

describe("outside (quick)", () => {
  it("recovers mass and μ of two other engines' videos to within 2%, and says each can be believed", async () => {
    const { code, out } = await runQuiet(outside);
    expect(code).toBe(0);
    const r = readResult(out) as OutsideResult;
    expect(r.cases.map((c) => c.case)).toEqual([...QUICK_CASES]);
    for (const c of r.cases) {
      expect(c.verdict, c.case).toBe("fits");
      for (const n of ["mass", "mu"]) expect(c.relError[n], `${c.case} ${n}`).toBeLessThan(TOLERANCE);
      expect(c.trustworthy).toBe(true);
    }
    expect(r.summary).toMatchObject({ cases: 2, withinTolerance: 2, trustworthy: 2, fitsButWrong: [] });
    const md = readFileSync(join(out, "outside.md"), "utf8");
    expect(md).toMatch(/\| box-light-mujoco \| box \| mujoco \+ povray \| opencv \| mass and mu \| 0\.3000 → 0\.30\d\d/);
    expect(md).toContain("2 of the 2 cases whose video determines an unknown are within 2%");
  }, 900_000);
});
