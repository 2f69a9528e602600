/**
 * The Table 2 scene sampler: kf is drawn per kilogram (the truth's from the true mass, the
 * guess's from the guessed mass), and the prior's ranges cover every truth and guess.
 */
import { describe, expect, it } from "vitest";
import { contactPriorRanges, KF_PER_KG, sampleContactScene } from "../examples/lib/rigid-dataset.js";
import { makeRng } from "../src/core/host-rng.js";

describe("sampleContactScene", () => {
  const rng = makeRng(11);
  const draws = Array.from({ length: 12 }, () => sampleContactScene(rng, 32));

  it("draws the friction stiffness per kilogram of the object's mass", () => {
    const [lo, hi] = KF_PER_KG;
    for (const d of draws) {
      const perKg = d.spec.contact!.kf / d.spec.mass;
      expect(perKg).toBeGreaterThanOrEqual(lo);
      expect(perKg).toBeLessThanOrEqual(hi);
      const guessPerKg = d.initialContact.kf / d.initialMass;
      expect(guessPerKg).toBeGreaterThanOrEqual(lo);
      expect(guessPerKg).toBeLessThanOrEqual(hi);
    }
    // Not a constant multiple: k̂ varies across the dataset.
    const perKg = draws.map((d) => d.spec.contact!.kf / d.spec.mass);
    expect(Math.max(...perKg) - Math.min(...perKg)).toBeGreaterThan(0.3 * (hi - lo));
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
