/**
 * The Table 2 scene sampler: contact coefficients in the scenes' mass-normalised units, in their
 * ranges and resolved by the scenes' substeps; the prior's ranges cover every truth and guess.
 */
import { describe, expect, it } from "vitest";
import { contactPriorRanges, CONTACT_RANGES, sampleContactScene } from "../examples/lib/rigid-dataset.js";
import { models, sysid } from "../src/index.js";
import { makeRng } from "../src/core/host-rng.js";

describe("sampleContactScene", () => {
  const rng = makeRng(11);
  const draws = Array.from({ length: 12 }, () => sampleContactScene(rng, 32));

  it("draws contact coefficients the scenes' substeps resolve (mass-normalised, in their documented ranges)", () => {
    for (const d of draws) {
      const c = d.spec.contact!;
      for (const [k, [lo, hi]] of Object.entries(CONTACT_RANGES)) {
        expect((c as unknown as Record<string, number>)[k], k).toBeGreaterThanOrEqual(lo);
        expect((c as unknown as Record<string, number>)[k], k).toBeLessThanOrEqual(hi);
      }
      expect(1 / (d.spec.fps * d.spec.substeps)).toBeLessThanOrEqual(models.contact.rigidContactStepLimit(c));
      expect(() => sysid.buildRigidScene(d.spec)).not.toThrow();
    }
    // Not a constant: the coefficients vary across the dataset.
    const kf = draws.map((d) => d.spec.contact!.kf);
    expect(Math.max(...kf) - Math.min(...kf)).toBeGreaterThan(0.3 * (CONTACT_RANGES.kf[1] - CONTACT_RANGES.kf[0]));
  });

  it("has prior ranges that contain each truth and each initial guess", () => {
    for (const d of draws) {
      const ranges = contactPriorRanges(d.volume);
      const truth = { mass: d.spec.mass, ...d.spec.contact! };
      const guess = { mass: d.initialMass, ...d.initialContact };
      for (const [k, [lo, hi]] of Object.entries(ranges)) {
        for (const v of [truth, guess]) {
          const x = (v as Record<string, number>)[k]!;
          expect(x, k).toBeGreaterThanOrEqual(lo);
          expect(x, k).toBeLessThanOrEqual(hi);
        }
      }
    }
  });
});
