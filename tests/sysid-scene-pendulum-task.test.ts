/**
 * The pendulum experiments' dataset task (sysid.pendulumDatasetTask, src/sysid/scenes/pendulum-task.ts)
 * and the Table 3 rows it shares with the cloth and deformable experiments (sysid.table3Rows).
 */
import { describe, expect, it } from "vitest";
import { makeRng, sysid } from "../src/index.js";

const PRIOR: sysid.PendulumPrior = {
  length: [
    [0.5, 1],
    [0.4, 0.8],
  ],
  theta0: [
    [0.2, 1],
    [-1, -0.3],
  ],
};

describe("pendulumDatasetTask", () => {
  const task = sysid.pendulumDatasetTask(sysid.defaultDoublePendulum(16), PRIOR, {
    name: "small",
    steps: 4,
    reinforceSteps: 3,
    progress: false,
    initial: (rng, truth) => truth.map((x) => x * rng.uniform(0.9, 1.1)),
  });

  it("draws lengths and initial angles from the prior as the unknowns L (log) and theta0 of one shared problem", () => {
    expect(task.unknowns).toEqual([
      { name: "L", size: 2, transform: "log", unit: "m" },
      { name: "theta0", size: 2, unit: "rad" },
    ]);
    const rng = makeRng(7);
    for (let i = 0; i < 5; i++) {
      const d = task.sample(rng);
      const L = d.truth.L as number[],
        theta0 = d.truth.theta0 as number[];
      for (const [values, ranges] of [
        [L, PRIOR.length],
        [theta0, PRIOR.theta0],
      ] as const)
        ranges.forEach(([lo, hi], k) => {
          expect(values[k]).toBeGreaterThanOrEqual(lo);
          expect(values[k]).toBeLessThan(hi);
        });
      (d.initial.L as number[]).forEach((x, k) => expect(x / L[k]!).toBeGreaterThanOrEqual(0.9));
      expect(d.problem()).toBe(task.problem);
      const guess = [...(d.initial.L as number[]), ...(d.initial.theta0 as number[])];
      expect(d.describe).toBe(
        `truth ${sysid.describePendulum([...L, ...theta0], 2)}; initial guess ${sysid.describePendulum(guess, 2)}`,
      );
    }
    expect(sysid.describePendulum([1, 0.5, 0.25, -0.125], 2)).toBe("L = (1.000, 0.500) m, θ₀ = (0.250, -0.125) rad");
    expect(sysid.samplePendulum(makeRng(3), PRIOR)).toEqual(sysid.samplePendulum(makeRng(3), PRIOR));
  });

  it("fits by L-BFGS on the rendered frames, with the Table 3 rows", () => {
    expect(task.settings).toMatchObject({ optimizer: "lbfgs", steps: 4, progress: false });
    const m = task.methods(2, 9);
    expect(Object.keys(m)).toEqual(["gradsim", "diffphysics", "reinforce"]);
    expect(m.gradsim).toEqual({ method: "pixels", settings: task.settings });
    expect(m.diffphysics).toEqual({ method: "states", settings: task.settings });
  });
});

describe("table3Rows", () => {
  const fit: sysid.EstimateSettings = { optimizer: "lbfgs", steps: 5, progress: false };
  // REINFORCE also takes a seed per instance.
  it("gradsim and DiffPhysics share the fit; REINFORCE takes the paper's Adam settings, or is left out", () => {
    const rows = sysid.table3Rows(fit, 12, 0.05);
    const a = rows(0, 1),
      b = rows(1, 1);
    expect(a.gradsim).toEqual({ method: "pixels", settings: fit });
    expect(a.diffphysics).toEqual({ method: "states", settings: fit });
    expect(a.reinforce!.method).toBe("reinforce");
    expect(a.reinforce!.settings).toMatchObject({
      optimizer: "adam",
      steps: 12,
      adam: { lr: 0.05, lrEnd: 0.0005, schedule: "cosine", b1: 0.9 },
    });
    expect(a.reinforce!.settings.seed).not.toBe(b.reinforce!.settings.seed);
    expect(Object.keys(sysid.table3Rows(fit, 0, 0.05)(0, 1))).toEqual(["gradsim", "diffphysics"]);
  });
});
