/**
 * The estimation helpers of the non-rigid experiments (examples/lib/estimation.ts): the
 * smoothing preconditioner is a valid change of variables (same minimiser) that speeds up
 * descent on losses whose rough directions are stiff, as per-particle velocities of a membrane;
 * extra starting points reach a far basin, and a Levenberg–Marquardt polish follows the gradient steps.
 */
import { describe, expect, it } from "vitest";
import { np, type Array } from "../src/index.js";
import { makeRng } from "../src/core/host-rng.js";
import { descentDirection, fitStates, range, relMae, smoothingPreconditioner, type EstimationProblem } from "../examples/lib/estimation.js";

const N = 24;
const path = range(N - 1).map((i) => [i, i + 1] as const);
const host = async (a: Array) => globalThis.Array.from(await a.data(), Number);

describe("smoothingPreconditioner", () => {
  it("is (I + αL)⁻¹ with its inverse, and leaves constant fields unchanged", async () => {
    const p = smoothingPreconditioner(N, path, 2);
    const identity = await host(np.matmul(p.matrix, p.inverse));
    identity.forEach((x, k) => expect(x).toBeCloseTo(Math.floor(k / N) === k % N ? 1 : 0, 4));
    for (const x of await host(np.matmul(p.matrix, np.ones([N, 1], { dtype: "float32" })))) expect(x).toBeCloseTo(1, 5);
  });

  it("keeps the minimiser and reaches it in far fewer L-BFGS steps when rough directions are stiff", async () => {
    // States: the field with its rough part amplified (I + 3L; like a membrane's fast oscillations), 2 components per node.
    const stiff = smoothingPreconditioner(N, path, 3).inverse;
    const rng = makeRng(5);
    const truth = range(2 * N).map((i) => Math.sin((i >> 1) / 4) + (i % 2) + 0.3 * rng.uniform(-1, 1));
    const base: EstimationProblem = {
      logScale: range(2 * N).map(() => false),
      states: (x) => np.matmul(stiff, np.reshape(x, [N, 2])),
      video: () => { throw new Error("not used"); },
    };
    const target = base.states(np.array(truth, { dtype: "float32" }));
    const initial = range(2 * N).map(() => 0.5);
    const fit = (problem: EstimationProblem, steps: number) => fitStates(problem, target, initial, { optimizer: "lbfgs", steps, progress: false });
    const all = range(2 * N);
    // Measured: 6 steps 0.60 plain, 6e-5 preconditioned; 24 steps 0.027 plain.
    const plain = relMae((await fit(base, 6)).estimate, truth, all);
    const pre = relMae((await fit({ ...base, precondition: smoothingPreconditioner(N, path, 2) }, 6)).estimate, truth, all);
    expect(plain).toBeGreaterThan(0.1);
    expect(pre).toBeLessThan(1e-3);
    expect(relMae((await fit(base, 100)).estimate, truth, all)).toBeLessThan(1e-3); // the same minimiser
  }, 60_000);
});

describe("descentDirection", () => {
  it("keeps a downhill quasi-Newton direction and replaces an uphill one by steepest descent", async () => {
    const g = np.array([1, -2], { dtype: "float32" });
    const down = await descentDirection(g, np.array([-0.5, 0.5], { dtype: "float32" }));
    expect(await host(down.direction)).toEqual([-0.5, 0.5]);
    expect(down.slope).toBeCloseTo(-1.5, 6);
    const up = await descentDirection(g, np.array([0.5, 0], { dtype: "float32" }));
    expect(await host(up.direction)).toEqual([-1, 2]);
    expect(up.slope).toBeCloseTo(-5, 6);
  });
});

describe("fit starts and polish", () => {
  // One unknown, states (cos 4x − cos 8, 0.1·(x − 2)): many local minima where cos 4x = cos 8,
  // the global one at x = 2. From x = 0.3 descent ends in the basin near 0.43.
  const problem: EstimationProblem = {
    logScale: [false],
    states: (x) => np.stack([np.sub(np.cos(np.mul(4, np.take(x, 0))), Math.cos(8)), np.mul(0.1, np.sub(np.take(x, 0), 2))]),
    video: () => { throw new Error("not used"); },
  };
  const target = np.zeros([2], { dtype: "float32" });
  const fit = (s: { starts?: number[][]; polish?: number; steps?: number }) =>
    fitStates(problem, target, [0.3], { optimizer: "lbfgs", steps: s.steps ?? 40, progress: false, ...s });

  it("starts from the lowest-loss candidate, so a far basin is reached", async () => {
    expect(Math.abs((await fit({})).estimate[0]! - 2)).toBeGreaterThan(0.5);
    const withStarts = await fit({ starts: [[-1], [1.9], [3]] });
    expect(withStarts.estimate[0]!).toBeCloseTo(2, 4);
  });

  it("a Levenberg–Marquardt polish adds its steps and its losses after the gradient steps", async () => {
    const r = await fit({ starts: [[1.9]], steps: 1, polish: 5 });
    expect(r.steps).toBe(1);
    expect(r.polishSteps).toBeGreaterThan(0);
    expect(r.losses).toHaveLength(r.steps + r.polishSteps + 1);
    expect(r.estimate[0]!).toBeCloseTo(2, 4);
  });
});
