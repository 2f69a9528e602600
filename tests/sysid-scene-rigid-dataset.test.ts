/**
 * The rigid scenes' dataset (src/sysid/scenes/rigid-dataset.ts and rigid-task.ts). The Table 2 scene sampler: contact
 * coefficients in the scenes' mass-normalised units, in their ranges and resolved by the scenes' substeps; the prior's
 * ranges cover every truth and guess.
 */
import { describe, expect, it } from "vitest";
import { makeRng, models, sysid } from "../src/index.js";

const { contactPriorRanges, RIGID_CONTACT_RANGES: CONTACT_RANGES, sampleContactScene } = sysid;

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

describe("sampleMassScene and defaultMassScene", () => {
  it("draws Table 1 scenes: free flight, a mass and starting guess in the prior's range for the shape's volume", () => {
    const rng = makeRng(4);
    for (let i = 0; i < 8; i++) {
      const d = sysid.sampleMassScene(rng, 16);
      expect(d.volume).toBeCloseTo(sysid.shapeVolume(d.spec.shape as sysid.RigidShape, d.spec.scale), 12);
      const [lo, hi] = sysid.rigidMassRange(d.volume);
      for (const m of [d.spec.mass, d.initialMass]) {
        expect(m).toBeGreaterThanOrEqual(lo);
        expect(m).toBeLessThanOrEqual(hi);
      }
      expect(d.spec.gravity).toEqual([0, 0, 0]);
      expect(d.spec.contact).toBeNull();
      expect([d.spec.frames, d.spec.fps, d.spec.resolution]).toEqual([sysid.RIGID_FRAMES, sysid.RIGID_FPS, 16]);
      expect(d.spec.impulses[0]!.duration).toBe(sysid.RIGID_IMPULSE_SECONDS);
    }
    // Reproducible from the seed alone.
    expect(sysid.sampleMassScene(makeRng(9), 16)).toEqual(sysid.sampleMassScene(makeRng(9), 16));
    expect(() => sysid.sampleMassScene(makeRng(1), 16, [])).toThrow();
  });

  it("the demo's scene is a fixed 2.5 kg box at the asked resolution", () => {
    const s = sysid.defaultMassScene(24);
    expect([s.shape, s.mass, s.resolution, s.frames]).toEqual(["box", 2.5, 24, sysid.RIGID_FRAMES]);
    expect(sysid.defaultMassScene(24)).toEqual(s);
  });
});

describe("rigidDatasetTask", () => {
  // A small table: Table 1's draws, shortened to 6 frames at 16² so that a problem builds in a moment.
  const config: sysid.RigidTaskConfig = {
    name: "small",
    unknowns: ["mass"],
    sample: (rng) => {
      const s = sysid.sampleMassScene(rng, 16);
      const ranges = { mass: sysid.rigidMassRange(s.volume) };
      return {
        spec: { ...s.spec, frames: 6 },
        initial: { mass: s.initialMass },
        prior: { mass: rng.uniform(...ranges.mass) },
        ranges,
      };
    },
    fit: { steps: 5, lr: 0.1, lrEnd: 1e-3, frames: "every2", pyramid: 2, polish: 3 },
    curriculum: { horizons: [0.5], candidates: 2, stageSteps: 2, finalLr: 0.02 },
    reinforceSteps: 7,
    trainSize: 3,
  };

  it("a draw holds the scene's truth, the guess, the prior's ranges, and a description that names them", () => {
    const task = sysid.rigidDatasetTask(config, { progress: false });
    expect(task.unknowns).toEqual([{ name: "mass", transform: "log", unit: "kg" }]);
    const rng = makeRng(2),
      again = makeRng(2);
    const d = task.sample(rng),
      s = config.sample(again);
    expect(d.truth).toEqual(sysid.rigidTrueValues(s.spec, ["mass"]));
    expect(d.truth).toEqual({ mass: s.spec.mass });
    expect(d.initial).toEqual(s.initial);
    expect(d.priorRanges).toEqual(s.ranges);
    expect(d.describe).toContain(`truth ${sysid.formatRigidValues(d.truth as sysid.RigidValues)}, initial `);
    const problem = d.problem();
    expect(problem.frames).toBe(6);
    expect(typeof problem.render).toBe("function");
  });

  // --iters overrides the rows' steps.
  it("its rows: gradsim on pixels, the paper's budget, diffphysics on states, REINFORCE on gradsim's loss", () => {
    const m = sysid.rigidDatasetTask(config, { steps: 11, progress: false }).methods(3, 5);
    expect(Object.keys(m)).toEqual(["gradsim", "paper", "diffphysics", "reinforce"]);
    // The paper's budget is fixed (--iters does not change it): 30 steps at rate 0.1 on every 5th frame, one start.
    expect(m.paper!.method).toBe("pixels");
    expect(m.paper!.settings).toEqual({
      optimizer: "adam",
      steps: 30,
      adam: { lr: 0.1, lrEnd: 0.1, b1: 0.5 },
      frames: "every5",
      progress: false,
    });
    expect(m.gradsim!.method).toBe("pixels");
    expect(m.gradsim!.settings).toMatchObject({
      optimizer: "adam",
      steps: 11,
      frames: "every2",
      pyramid: 2,
      polish: 3,
    });
    expect(m.diffphysics!.method).toBe("states");
    expect(m.diffphysics!.settings).toMatchObject({ optimizer: "lbfgs", steps: 11, polish: 3 });
    // The same curriculum restarts for both gradient methods.
    expect(m.gradsim!.settings.seed).toBe(m.diffphysics!.settings.seed);
    expect(m.reinforce!.method).toBe("reinforce");
    expect(m.reinforce!.settings).toMatchObject({ steps: 7, frames: "every2", pyramid: 2 });
    expect(sysid.rigidGradsimSettings(config.fit, false)).toMatchObject({ optimizer: "adam", steps: 5 });
  });
});
