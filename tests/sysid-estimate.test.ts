/**
 * sysid.estimate and its parts on small problems with known answers: the unknowns' transforms,
 * the three methods (pixels through a differentiable toy renderer, 3-D states, REINFORCE), the
 * strategies (starts and restarts scored over a prior, preconditioning, Levenberg–Marquardt
 * polishing), and the errors bad input gets.
 */
import { describe, expect, it } from "vitest";
import { jvp, np, sysid, type Array } from "../src/index.js";
import { makeRng } from "../src/core/host-rng.js";

const range = (n: number, start = 0): number[] => globalThis.Array.from({ length: n }, (_, i) => start + i);
const host = async (a: Array) => globalThis.Array.from(await a.data(), Number);
const quiet = { progress: false } as const;

describe("Layout (unknowns and their transforms)", () => {
  const layout = new sysid.Layout([
    { name: "mass", transform: "log", unit: "kg" },
    { name: "v", size: 3 },
    { name: "mu", transform: { box: [0, 2] } },
  ]);

  it("spreads restarts over the prior: one per stratum of every scalar, log strata for log unknowns", () => {
    const spread = new sysid.Layout([
      { name: "mass", transform: "log", prior: [0.5, 8] },
      { name: "v", size: 2, prior: [-1, 1] },
    ]);
    const n = 12;
    const starts = spread.drawStarts(makeRng(3), n);
    expect(starts).toHaveLength(n);
    const strata = (xs: number[], at: (x: number) => number) =>
      xs.map((x) => Math.floor(at(x) * n)).sort((a, b) => a - b);
    const all = globalThis.Array.from({ length: n }, (_, i) => i);
    expect(
      strata(
        starts.map((s) => s.mass as number),
        (m) => Math.log(m / 0.5) / Math.log(16),
      ),
    ).toEqual(all);
    for (const j of [0, 1])
      expect(
        strata(
          starts.map((s) => (s.v as number[])[j]!),
          (v) => (v + 1) / 2,
        ),
      ).toEqual(all);
    // Not the same pairing in every column.
    expect(starts.map((s) => (s.v as number[])[0])).not.toEqual(starts.map((s) => (s.v as number[])[1]));
  });

  it("maps values to the unconstrained vector and back, and to differentiable Arrays", async () => {
    const values = { mass: 2.5, v: [1, -2, 0.5], mu: 0.6 };
    const u = layout.toU(values);
    expect(u).toHaveLength(5);
    expect(u[0]).toBeCloseTo(Math.log(2.5), 12);
    const back = layout.fromU(u);
    expect(back.mass).toBeCloseTo(2.5, 12);
    expect(back.v).toEqual([1, -2, 0.5]);
    expect(back.mu as number).toBeCloseTo(0.6, 12);
    const p = layout.params(np.array(u, { dtype: "float64" }));
    expect(p.mass!.shape).toEqual([]);
    expect(p.v!.shape).toEqual([3]);
    expect((await host(p.mu!))[0]).toBeCloseTo(0.6, 12);
    // ∂mass/∂u₀ = mass (log transform); ∂μ/∂u₄ = (hi − lo)·σ(u)(1 − σ(u)) = μ(2 − μ)/2.
    const [, dm] = jvp(
      (x: Array) => layout.params(x).mass!,
      [np.array(u, { dtype: "float64" })],
      [np.array([1, 0, 0, 0, 0], { dtype: "float64" })],
    ) as [Array, Array];
    expect((await host(dm))[0]).toBeCloseTo(2.5, 10);
    const [, dmu] = jvp(
      (x: Array) => layout.params(x).mu!,
      [np.array(u, { dtype: "float64" })],
      [np.array([0, 0, 0, 0, 1], { dtype: "float64" })],
    ) as [Array, Array];
    expect((await host(dmu))[0]).toBeCloseTo((0.6 * 1.4) / 2, 10);
  });

  it("names what is wrong with bad unknowns and values", () => {
    expect(() => layout.toU({ mass: -1, v: [0, 0, 0], mu: 0.5 })).toThrow(
      /"mass" is -1, but it must be positive \(it is estimated in log space\)/,
    );
    expect(() => layout.toU({ mass: 1, v: [0, 0], mu: 0.5 })).toThrow(/"v" needs 3 numbers, got \[0,0\]/);
    expect(() => layout.toU({ mass: 1, v: [0, NaN, 0], mu: 0.5 })).toThrow(
      /"v"\[1\] is NaN; every value must be a finite number/,
    );
    expect(() => layout.toU({ mass: 1, v: [0, 0, 0], mu: 2 })).toThrow(/"mu" is 2, outside its box \(0, 2\)/);
    expect(() => layout.toU({ mass: 1, v: [0, 0, 0] })).toThrow(/no value for the unknown "mu"/);
    expect(() => new sysid.Layout([{ name: "a" }, { name: "a" }])).toThrow(/"a" is listed twice/);
    expect(() => new sysid.Layout([{ name: "k", transform: "log", prior: [0, 1] }])).toThrow(
      /positive \(log transform\) but its prior \[0, 1\] reaches 0/,
    );
    expect(() => new sysid.Layout([])).toThrow(/no unknowns given/);
    expect(() => layout.drawStarts(makeRng(1), 1)).toThrow(/"mass" has no prior range/);
  });
});

/**
 * A toy camera: a blob at position x(t) = x0 + v·t on a 1-D "image" of 24 pixels per frame,
 * brightness exp(−(p − x(t))²/2σ²). The unknowns are the start x0 and the velocity v.
 */
const FRAMES = 12;
const PIXELS = np.reshape(np.array(range(24), { dtype: "float32" }), [1, 1, 24, 1]);
const blobProblem: sysid.Problem<Array> = {
  frames: FRAMES,
  simulate: (p, frames) => np.add(p.x0!, np.mul(p.v!, np.array(range(frames), { dtype: "float32" }))),
  render: (x) => np.exp(np.mul(-0.5 / 4, np.square(np.sub(PIXELS, np.reshape(x, [-1, 1, 1, 1]))))),
};
const blobUnknowns: sysid.Unknown[] = [
  { name: "x0", unit: "px", prior: [2, 20] },
  { name: "v", transform: "log", unit: "px/frame", prior: [0.2, 2] },
];
const blobTruth = { x0: 4, v: 1.3 };
const blobObserved = sysid.observe(blobProblem, sysid.paramsOf(blobUnknowns, blobTruth));

const blob = (method: sysid.Method, settings: sysid.EstimateSettings, initial: sysid.Values = { x0: 6, v: 1 }) =>
  sysid.estimate({
    ...blobProblem,
    observed: blobObserved,
    unknowns: blobUnknowns,
    initial,
    method,
    settings: { ...quiet, ...settings },
  });

describe("estimate", () => {
  it("recovers the unknowns from pixels (Adam, then L-BFGS) and from 3-D states", async () => {
    const pixels = await blob("pixels", { optimizer: "adam", steps: 60, adam: { lr: 0.1, lrEnd: 0.01 }, refine: 20 });
    expect(pixels.estimate.x0 as number).toBeCloseTo(4, 3);
    expect(pixels.estimate.v as number).toBeCloseTo(1.3, 4);
    expect(pixels.losses[pixels.losses.length - 1]!).toBeLessThan(pixels.losses[0]! * 1e-6);
    expect(pixels.unknowns.map((k) => k.unit)).toEqual(["px", "px/frame"]);
    const states = await blob("states", { optimizer: "lbfgs", steps: 30 });
    expect(states.estimate.x0 as number).toBeCloseTo(4, 4);
    expect(states.estimate.v as number).toBeCloseTo(1.3, 4);
  }, 60_000);

  it("REINFORCE moves towards the truth with forward passes only", async () => {
    const r = await blob("reinforce", { optimizer: "adam", steps: 80, adam: { lr: 0.2, lrEnd: 0.02 }, seed: 3 });
    expect(r.losses).toHaveLength(81);
    expect(Math.abs((r.estimate.x0 as number) - 4)).toBeLessThan(0.5); // from 2 away
    expect(r.finalLoss).toBeLessThan(r.losses[0]!);
  }, 60_000);

  // A start beyond the blob's reach has no gradient.
  it("scores restarts drawn from the prior and descends from the best", async () => {
    // From x0 = 18 the two blobs never overlap: the pixel loss is flat and descent stays there.
    const far = { x0: 18, v: 0.3 };
    const stuck = await blob("pixels", { optimizer: "lbfgs", steps: 20 }, far);
    expect(Math.abs((stuck.estimate.x0 as number) - 4)).toBeGreaterThan(5);
    const restarted = await blob("pixels", { optimizer: "lbfgs", steps: 20, restarts: 30, finalists: 2, seed: 1 }, far);
    expect(restarted.estimate.x0 as number).toBeCloseTo(4, 3);
    expect(restarted.start).not.toEqual(far);
  }, 60_000);

  it("fits growing prefixes of the video first with a curriculum", async () => {
    const r = await blob(
      "pixels",
      {
        optimizer: "adam",
        steps: 30,
        adam: { lr: 0.05 },
        refine: 10,
        curriculum: {
          horizons: [0.25, 0.5],
          candidates: 10,
          finalists: 1,
          stageSteps: 20,
          stageRefine: 5,
          finalLr: 0.01,
        },
        seed: 2,
      },
      { x0: 15, v: 0.5 },
    );
    expect(r.curriculum!.map((s) => s.frames)).toEqual([3, 6]);
    expect(r.estimate.x0 as number).toBeCloseTo(4, 3);
  }, 60_000);

  it("names what is missing", async () => {
    await expect(
      sysid.estimate({
        ...blobProblem,
        render: undefined,
        observed: blobObserved,
        unknowns: blobUnknowns,
        initial: { x0: 6, v: 1 },
        method: "pixels",
        settings: { optimizer: "lbfgs", steps: 1, ...quiet },
      }),
    ).rejects.toThrow(/pixels method needs problem.render/);
    await expect(
      sysid.estimate({
        ...blobProblem,
        observed: { states: blobObserved.states },
        unknowns: blobUnknowns,
        initial: { x0: 6, v: 1 },
        method: "pixels",
        settings: { optimizer: "lbfgs", steps: 1, ...quiet },
      }),
    ).rejects.toThrow(/needs an observed video/);
    await expect(blob("pixels", { optimizer: "lbfgs", steps: 1 }, { x0: 6 })).rejects.toThrow(
      /initial guess has no value for the unknown "v"/,
    );
    await expect(
      sysid.estimate({
        ...blobProblem,
        observed: blobObserved,
        unknowns: blobUnknowns,
        prior: { mass: [1, 2] },
        initial: { x0: 6, v: 1 },
        method: "pixels",
        settings: { optimizer: "lbfgs", steps: 1, ...quiet },
      }),
    ).rejects.toThrow(/prior given for mass, which is not an unknown/);
    await expect(
      sysid.estimate({
        ...blobProblem,
        observed: blobObserved,
        unknowns: blobUnknowns,
        initial: { x0: 6, v: 1 },
        method: "magic" as never,
        settings: { optimizer: "lbfgs", steps: 1, ...quiet },
      }),
    ).rejects.toThrow(/unknown method "magic"/);
    const wrongSize: sysid.Problem<Array> = { ...blobProblem, render: (x) => np.zeros([x.shape[0]!, 1, 5, 1]) };
    await expect(
      sysid.estimate({
        ...wrongSize,
        observed: blobObserved,
        unknowns: blobUnknowns,
        initial: { x0: 6, v: 1 },
        method: "pixels",
        settings: { optimizer: "lbfgs", steps: 1, ...quiet },
      }),
    ).rejects.toThrow(/render\(states\) gave frames \[12,1,5,1\], but the observed video's frames are \[12,1,24,1\]/);
  });
});

describe("descend on 3-D states: preconditioning, starts and polishing", () => {
  const N = 24;
  const path = range(N - 1).map((i) => [i, i + 1] as const);

  it("the smoothing preconditioner is (I + αL)⁻¹ with its inverse, and leaves constant fields unchanged", async () => {
    const p = sysid.smoothingPreconditioner(N, path, 2);
    const identity = await host(np.matmul(p.matrix, p.inverse));
    identity.forEach((x, k) => expect(x).toBeCloseTo(Math.floor(k / N) === k % N ? 1 : 0, 4));
    for (const x of await host(np.matmul(p.matrix, np.ones([N, 1], { dtype: "float32" })))) expect(x).toBeCloseTo(1, 5);
  });

  it("keeps the minimiser and reaches it in far fewer L-BFGS steps when rough directions are stiff", async () => {
    // States: the field with its rough part amplified (I + 3L; like a membrane's fast oscillations), 2 components per
    // node.
    const stiff = sysid.smoothingPreconditioner(N, path, 3).inverse;
    const rng = makeRng(5);
    const truth = range(2 * N).map((i) => Math.sin((i >> 1) / 4) + (i % 2) + 0.3 * rng.uniform(-1, 1));
    const problem: sysid.Problem<Array> = {
      frames: N,
      simulate: (p) => np.matmul(stiff, np.reshape(p.field!, [N, 2])),
    };
    const unknowns = [{ name: "field", size: 2 * N }];
    const observed = sysid.observe(problem, sysid.paramsOf(unknowns, { field: truth }), false);
    const fit = async (steps: number, precondition?: sysid.Preconditioner) =>
      sysid.relMae(
        (
          await sysid.estimate({
            ...problem,
            observed,
            unknowns,
            initial: { field: range(2 * N).map(() => 0.5) },
            method: "states",
            settings: { optimizer: "lbfgs", steps, precondition, ...quiet },
          })
        ).estimate.field as number[],
        truth,
        range(2 * N),
      );
    // Measured: 6 steps 0.60 plain, 6e-5 preconditioned; 24 steps 0.027 plain.
    expect(await fit(6)).toBeGreaterThan(0.1);
    expect(await fit(6, sysid.smoothingPreconditioner(N, path, 2))).toBeLessThan(1e-3);
    expect(await fit(100)).toBeLessThan(1e-3); // the same minimiser
  }, 60_000);

  it("keeps a downhill quasi-Newton direction and replaces an uphill one by steepest descent", async () => {
    const g = np.array([1, -2], { dtype: "float32" });
    const down = await sysid.descentDirection(g, np.array([-0.5, 0.5], { dtype: "float32" }));
    expect(await host(down.direction)).toEqual([-0.5, 0.5]);
    expect(down.slope).toBeCloseTo(-1.5, 6);
    const up = await sysid.descentDirection(g, np.array([0.5, 0], { dtype: "float32" }));
    expect(await host(up.direction)).toEqual([-1, 2]);
    expect(up.slope).toBeCloseTo(-5, 6);
  });

  // One unknown, states (cos 4x − cos 8, 0.1·(x − 2)): many local minima where cos 4x = cos 8,
  // the global one at x = 2. From x = 0.3 descent ends in the basin near 0.43.
  const wavy: sysid.Problem<Array> = {
    frames: 2,
    simulate: (p) => np.stack([np.sub(np.cos(np.mul(4, p.x!)), Math.cos(8)), np.mul(0.1, np.sub(p.x!, 2))]),
  };
  const wavyFit = (s: {
    starts?: number[];
    polish?: number;
    steps?: number;
    initial?: number;
    descendFromInitial?: boolean;
  }) =>
    sysid.estimate({
      ...wavy,
      observed: { states: np.zeros([2], { dtype: "float32" }) },
      unknowns: [{ name: "x" }],
      initial: { x: s.initial ?? 0.3 },
      method: "states",
      settings: {
        optimizer: "lbfgs",
        steps: s.steps ?? 40,
        polish: s.polish,
        starts: s.starts?.map((x) => ({ x })),
        descendFromInitial: s.descendFromInitial,
        ...quiet,
      },
    });

  it("starts from the lowest-loss candidate, so a far basin is reached", async () => {
    expect(Math.abs(((await wavyFit({})).estimate.x as number) - 2)).toBeGreaterThan(0.5);
    expect((await wavyFit({ starts: [-1, 1.9, 3] })).estimate.x as number).toBeCloseTo(2, 4);
  });

  it("descendFromInitial also fits from the initial guess if a better-scoring start is in a worse basin", async () => {
    // From 1.9 (loss 0.16) descent reaches the truth; the start 2 − π/2 scores lower (0.025) but sits in a local
    // minimum.
    const byScore = await wavyFit({ initial: 1.9, starts: [2 - Math.PI / 2] });
    expect(Math.abs((byScore.estimate.x as number) - 2)).toBeGreaterThan(1);
    const both = await wavyFit({ initial: 1.9, starts: [2 - Math.PI / 2], descendFromInitial: true });
    expect(both.estimate.x as number).toBeCloseTo(2, 4);
    expect(both.start).toEqual({ x: 1.9 });
    expect(both.finalLoss).toBeLessThan(byScore.finalLoss);
    // Only the best fit is polished, and exactly as a lone descent polishes its own.
    const polished = await wavyFit({
      initial: 1.9,
      starts: [2 - Math.PI / 2],
      descendFromInitial: true,
      steps: 2,
      polish: 4,
    });
    const alone = await wavyFit({ initial: 1.9, steps: 2, polish: 4 });
    expect(polished.polishSteps).toBeGreaterThan(0);
    expect([polished.estimate, polished.losses, polished.steps, polished.polishSteps, polished.stopReason]).toEqual([
      alone.estimate,
      alone.losses,
      alone.steps,
      alone.polishSteps,
      alone.stopReason,
    ]);
  });

  // Two unknowns, states (0.1·(x − 2), √0.4·sin πx, 0.5·(y − 1)): along x a gentle trend towards 2
  // under ripples of period 1 that stop a descent in the basin of the nearest whole number; y is easy.
  // `nanBelow`: the states are NaN for x below it (a simulation that diverges in part of the prior).
  const rippled = (nanBelow?: number): sysid.Problem<Array> => ({
    frames: 3,
    simulate: (p) => {
      const states = np.stack([
        np.mul(0.1, np.sub(p.x!, 2)),
        np.mul(Math.sqrt(0.4), np.sin(np.mul(Math.PI, p.x!))),
        np.mul(0.5, np.sub(p.y!, 1)),
      ]);
      return nanBelow === undefined ? states : np.add(states, np.mul(0, np.sqrt(np.sub(p.x!, nanBelow))));
    },
  });
  const rippledFit = (initial: sysid.Values, scan?: sysid.ScanSettings, polish?: number, nanBelow?: number) =>
    sysid.estimate({
      ...rippled(nanBelow),
      observed: { states: np.zeros([3], { dtype: "float32" }) },
      initial,
      method: "states",
      unknowns: [
        { name: "x", prior: [0, 6] },
        { name: "y", transform: "log", prior: [0.1, 10] },
      ],
      settings: { optimizer: "lbfgs", steps: 40, scan, polish, ...quiet },
    });

  it("scan: a grid over each unknown's prior, the others at the estimate, leads out of a local minimum", async () => {
    const stuck = await rippledFit({ x: 4.8, y: 0.2 });
    expect(stuck.estimate.x as number).toBeCloseTo(5, 1);
    expect(stuck.estimate.y as number).toBeCloseTo(1, 4);
    const scanned = await rippledFit({ x: 4.8, y: 0.2 }, { points: 16 }, 3);
    expect(scanned.estimate.x as number).toBeCloseTo(2, 4);
    expect(scanned.estimate.y as number).toBeCloseTo(1, 4);
    // The lowest grid point moved x alone (cell midpoints over [0, 6]: 2.0625) and kept y's estimate.
    expect(scanned.scans).toHaveLength(1); // rounds: 1 by default
    const [first] = scanned.scans!;
    expect(first!.start.x).toBe(2.0625);
    expect(first!.start.y as number).toBeCloseTo(1, 4);
    expect(first!.score).toBeLessThan(first!.before);
    expect(first!.kept).toBe(true);
    expect(scanned.start).toEqual(first!.start);
    // The polish comes after the scan, on its result (at float32's floor already, it may find no lower loss).
    expect(scanned.stopReason).toMatch(/; Levenberg–Marquardt /);
    expect(scanned.finalLoss).toBeLessThan(stuck.finalLoss / 1e6);
  });

  it("scan: a grid point whose loss is NaN does not hide the lower ones", async () => {
    // The first grid point (x = 0.1875) diverges; the one at 2.0625 still leads to the truth.
    const r = await rippledFit({ x: 4.8, y: 0.2 }, { points: 16 }, undefined, 0.3);
    expect(r.scans![0]!.start.x).toBe(2.0625);
    expect(r.estimate.x as number).toBeCloseTo(2, 4);
  });

  it("scan: at the global minimum no grid point scores lower, and nothing more is descended", async () => {
    const r = await rippledFit({ x: 2.3, y: 0.5 }, { points: 8, rounds: 3 });
    expect(r.estimate.x as number).toBeCloseTo(2, 4);
    expect(r.scans).toHaveLength(1);
    expect(r.scans![0]!.kept).toBe(false);
    expect(r.scans![0]!.loss).toBeUndefined();
    expect(r.start).toEqual({ x: 2.3, y: 0.5 });
  });

  it("scan: grids of log unknowns are geometric, and bad settings are named", () => {
    const [a, b] = sysid.priorGrid({ name: "k", transform: "log", prior: [1, 100] }, 2);
    expect(a).toBeCloseTo(Math.sqrt(10), 12);
    expect(b).toBeCloseTo(10 * Math.sqrt(10), 10);
    expect(sysid.priorGrid({ name: "mu", prior: [0, 1] }, 4)).toEqual([0.125, 0.375, 0.625, 0.875]);
    expect(() => sysid.priorGrid({ name: "mu" }, 4)).toThrow(/"mu" has none \(give prior: \[lo, hi\]\)/);
    const vectors = new sysid.Layout([{ name: "v", size: 3, prior: [0, 1] }]);
    expect(() => sysid.scanCandidates(vectors, { v: [0, 0, 0] }, 4)).toThrow(/every unknown here is a vector/);
    expect(() => sysid.scanCandidates(vectors, { v: [0, 0, 0] }, 1.5)).toThrow(
      /scan.points must be a whole number ≥ 2, got 1.5/,
    );
  });

  // One unknown, states max(x, 0) against 0: the loss reaches its floor (exactly 0) at x ≤ 0 and stays there.
  const floorFit = (settings: sysid.EstimateSettings) =>
    sysid.estimate({
      frames: 1,
      simulate: (p) => np.reshape(np.maximum(p.x!, 0), [1]),
      observed: { states: np.zeros([1], { dtype: "float32" }) },
      unknowns: [{ name: "x" }],
      initial: { x: 1 },
      method: "states",
      settings: { ...settings, ...quiet },
    });

  it("Adam with patience stops after that many steps without a lower loss", async () => {
    const adam = { lr: 0.3, lrEnd: 0.3 };
    const all = await floorFit({ optimizer: "adam", steps: 100, adam });
    const patient = await floorFit({ optimizer: "adam", steps: 100, adam: { ...adam, patience: 5 } });
    expect(all.steps).toBeGreaterThan(25); // stops when the updates no longer change x (31 steps)
    expect(patient.finalLoss).toBe(0);
    expect(patient.stopReason).toBe("no lower loss in 5 steps");
    // The first zero loss, then 5 more steps.
    expect(patient.steps).toBe(patient.losses.indexOf(0) + 5);
    expect(patient.estimate).toEqual(all.estimate); // the first iterate at the floor, in both
    await expect(floorFit({ optimizer: "adam", steps: 10, adam: { ...adam, patience: 0 } })).rejects.toThrow(
      /patience must be a whole number of steps ≥ 1, got 0/,
    );
  });

  it("L-BFGS stops when its line search finds the loss unchanged", async () => {
    // At x ≤ 0 every trial step gives the same loss (0): Armijo's test alone would accept them all.
    const r = await floorFit({ optimizer: "lbfgs", steps: 30 });
    expect(r.finalLoss).toBe(0);
    expect(r.stopReason).toBe("no lower loss along the line search");
    expect(r.steps).toBeLessThan(5);
  });

  it("L-BFGS keeps its lowest-loss iterate when line-search losses disagree with the gradient's loss", async () => {
    // (u − 1)² seen by the line search; valueAndGrad adds a drift that grows with every call, as
    // rounding differences between the two compiled programs do near a contact fit's floor.
    let calls = 0;
    const loss = (u: Array) => np.sum(np.square(np.sub(u, 1)));
    const objective: sysid.Objective = {
      size: 1,
      valueAndGrad: (u) => [np.add(loss(u), 1e-3 * calls++), np.mul(2, np.sub(u, 1))],
      value: loss,
      residual: (u) => np.sub(u, 1),
      values: async (us) => us.map((u) => (u[0]! - 1) ** 2),
      diagnose: async () => null,
      gradientCulprit: async () => "render",
    };
    const r = await sysid.descend(objective, [0], { optimizer: "lbfgs", steps: 8, ...quiet });
    expect(r.losses[r.losses.length - 1]!).toBeGreaterThan(Math.min(...r.losses)); // the drift wins near u = 1
    expect(r.finalLoss).toBe(Math.min(...r.losses));
    const at = r.losses.indexOf(r.finalLoss);
    expect(r.u[0]).toBeCloseTo(1, 2);
    expect(at).toBeLessThan(r.losses.length - 1);
  });

  it("a Levenberg–Marquardt polish adds its steps and its losses after the gradient steps", async () => {
    const r = await wavyFit({ starts: [1.9], steps: 1, polish: 5 });
    expect(r.steps).toBe(1);
    expect(r.polishSteps).toBeGreaterThan(0);
    expect(r.losses).toHaveLength(r.steps + r.polishSteps + 1);
    expect(r.estimate.x as number).toBeCloseTo(2, 4);
    // The polish's losses continue the curve on the objective's scale (decreasing from where the gradient steps ended).
    expect(r.losses[r.losses.length - 1]!).toBeLessThan(r.losses[1]!);
    expect(r.finalLoss).toBeCloseTo(r.losses[r.losses.length - 1]!, 12);
  });
});

describe("a non-finite gradient names the part that made it", () => {
  // √(0·m): the state is finite (0), its derivative 0/0.
  const kink = (p: sysid.Params) => np.reshape(np.sqrt(np.mul(0, p.m!)), [1, 1, 1, 1]);
  const base = {
    frames: 1,
    observed: { video: np.ones([1, 1, 1, 1], { dtype: "float32" }) },
    unknowns: [{ name: "m", transform: "log" as const }],
    initial: { m: 2 },
    method: "pixels" as const,
    log: () => {},
  };
  it("blames the simulation's derivative when the states stay finite but their gradient does not", async () => {
    await expect(
      sysid.estimate({
        ...base,
        simulate: (p) => kink(p),
        render: (s) => s,
        settings: { optimizer: "adam", steps: 3, progress: false, gradient: "reverse" },
      }),
    ).rejects.toThrow(/the simulated states stayed finite but the simulation's derivative did not/);
  });
  it("blames the rendering when the simulation and its derivative are finite", async () => {
    await expect(
      sysid.estimate({
        ...base,
        simulate: (p) => np.reshape(np.mul(0, p.m!), [1, 1, 1, 1]),
        render: (s) => np.sqrt(s),
        settings: { optimizer: "adam", steps: 3, progress: false, gradient: "reverse" },
      }),
    ).rejects.toThrow(/the simulation and its derivative stayed finite, so the rendering or the loss produced it/);
  });
});
