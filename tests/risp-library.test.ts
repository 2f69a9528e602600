/**
 * gradsim.risp as a user meets it: RISP for a system none of the paper's environments is — a box
 * sliding to rest on a floor under Coulomb friction — written against the package entry alone
 * ("gradsim", resolved to src/ by tsconfig paths and vitest's alias). Plus the two pieces the
 * tasks added to sysid's descent: the box (projected Adam) and the sign-step polish.
 */
import { describe, expect, it } from "vitest";
import { init, makeRng, np, risp, sysid, vmap, type NDArray } from "gradsim";

await init({ backend: "cpu" });

const f32 = (x: unknown) => np.array(x, { dtype: "float32" });

/** A 0.3 m box (four vertices per face, each face its own paint) sliding along x. */
function slidingBox(): risp.RispEnv & { readonly body: Float64Array } {
  const vertices: number[] = [], faces: number[] = [], pattern: number[] = [];
  const paints = [[0.9, 0.3, 0.3], [0.3, 0.8, 0.3], [0.3, 0.3, 0.9], [0.9, 0.9, 0.3], [0.8, 0.3, 0.8], [0.3, 0.9, 0.9]];
  let face = 0;
  for (let a = 0; a < 3; a++) for (const s of [1, -1]) {
    const u = (a + 1) % 3, v = (a + 2) % 3, base = vertices.length / 3;
    const corners = s > 0 ? [[-1, -1], [1, -1], [1, 1], [-1, 1]] : [[-1, -1], [-1, 1], [1, 1], [1, -1]];
    for (const [cu, cv] of corners) {
      const p = [0, 0, 0];
      p[a] = 0.15 * s; p[u] = 0.15 * cu!; p[v] = 0.15 * cv!;
      vertices.push(p[0]!, p[1]! + 0.15, p[2]!);
      pattern.push(...paints[face]!);
    }
    faces.push(base, base + 1, base + 2, base, base + 2, base + 3);
    face++;
  }
  const body = Float64Array.from(vertices);
  const at = (x: number) => body.map((c, i) => (i % 3 === 0 ? c + x : c));
  return {
    name: "sliding box", stateNames: ["x (m)"], faces: Int32Array.from(faces), pattern: Float32Array.from(pattern), groundY: 0, body,
    camera: { eye: [0, 1.2, -2.2], at: [0, 0.15, 0], fovY: 40, convention: "softras-mirror" },
    sample(rng, n) {
      const xs = Array.from({ length: n }, () => rng.uniform(-0.5, 0.5));
      return { states: xs.map((x) => [x]), vertices: xs.map(at) };
    },
  };
}

/** The box pushed at 2 m/s from x = −0.5 with friction coefficient μ: x(t) = x0 + v0·t − ½μg·t² (it stops after the last frame). */
function slideScenario(env: ReturnType<typeof slidingBox>): risp.RispScenario {
  const T = 8, dt = 0.05, body = f32(Array.from({ length: env.body.length / 3 }, (_, i) => [env.body[3 * i]!, env.body[3 * i + 1]!, env.body[3 * i + 2]!]));
  const t = f32(Array.from({ length: T }, (_, k) => k * dt));
  return {
    unknowns: ["friction coefficient μ"], lower: [0.1], upper: [0.9], truth: [0.4], frames: Array.from({ length: T }, (_, k) => k), start: [-0.5],
    guess: (rng) => [rng.uniform(0.1, 0.9)],
    rollout: (u, start) => {
      const x = np.sub(np.add(np.index(start, 0), np.mul(2, t)), np.mul(np.mul(0.5 * 9.8, np.index(u, 0)), np.square(t))); // [T]
      const offset = np.stack([x, np.zerosLike(x), np.zerosLike(x)], -1); // [T, 3]
      return { states: np.reshape(x, [T, 1]), vertices: vmap((o: NDArray) => np.add(body, o))(offset) };
    },
    parameterError: (u) => Math.abs(u[0]! - 0.4), errorName: "μ error",
  };
}

const settings: risp.TaskFitSettings = { iterations: 30, lr: 0.1, scanPoints: 8, polishSteps: 10, imitationStages: 1 };

describe("gradsim.risp on a user's own system (a sliding box), through the package entry", () => {
  it("training images with exact ∂I/∂ψ columns, and a predictor trained with the exact regulariser (Eq. 10)", async () => {
    const env = slidingBox(), R = 16, rng = makeRng(3);
    const { states, vertices } = env.sample(rng, 8);
    const data = risp.trainingSet(env, R, states, vertices, rng, { noise: 0.01, chunk: 4 });
    expect(data.images.shape).toEqual([8, R, R, 3]);
    expect(data.dImages.shape).toEqual([8, risp.PSI_NAMES.length, R, R, 3]);
    // The ambient column (ψ₀) of image 0 against a central difference of the renderer itself.
    const psi = risp.samplePsi(makeRng(9)), background = risp.plainBackground(env, R);
    const v = f32(Array.from({ length: vertices[0]!.length / 3 }, (_, i) => [...vertices[0]!.subarray(3 * i, 3 * i + 3)]));
    const image = (p: number[]) => risp.softImage(env, R, v, f32(p), background).dataSync();
    const h = 1e-2, up = image(psi.map((x, i) => (i === 0 ? x + h : x))), down = image(psi.map((x, i) => (i === 0 ? x - h : x)));
    const fd = Array.from(up, (x, k) => (x - down[k]!) / (2 * h));
    expect(Math.max(...fd.map(Math.abs))).toBeGreaterThan(0.05);
    expect(data.dImages.dataSync().every(Number.isFinite)).toBe(true);
    const cfg: risp.PredictorTraining = { resolution: R, epochs: 2, batch: 4, penalised: 1, widths: [4], lr: 3e-3 };
    const trained = await risp.trainPredictor({ cfg, row: "ours-exact", gamma: 0.01, data, seed: 1, progress: false });
    expect(Number.isFinite(trained.finalLoss)).toBe(true);
    expect(trained.predict(np.index(data.images, 0)).shape).toEqual([1]);
    expect(trained.standardisation.mu[0]).toBeCloseTo(states.reduce((a, s) => a + s[0]!, 0) / 8, 5);
  }, 240_000);

  it("system identification of the friction from its states and from its video (sysid's projected descent, scan and sign steps)", async () => {
    const env = slidingBox(), problem = risp.rispProblem(env, "sysid", slideScenario(env));
    expect(problem.error(problem.truth, problem.start)).toBe(0);
    const start = f32(problem.start), guess = [0.8];
    for (const loss of [{ kind: "states" }, { kind: "pixels" }] as const) {
      const layout = risp.taskLayout(problem, loss);
      const R = 24, fn = risp.taskLoss(problem, loss, { resolution: R });
      // The pixels' reference: our own renderer at the truth (the paper's tables trace it; this checks the plumbing).
      const reference = loss.kind === "states" ? f32(problem.reference.states)
        : vmap((v: NDArray) => risp.softImage(env, R, v, f32(risp.psiMiddle()), risp.plainBackground(env, R)))(problem.rollout(f32(problem.truth), start).vertices);
      const fit = await risp.fitTask(problem, layout, [risp.compileTaskLoss(fn)], reference, start, guess, settings);
      expect(fit.estimate[0]!, loss.kind).toBeGreaterThanOrEqual(0.1);
      expect(problem.error(fit.estimate, problem.start), loss.kind).toBeLessThan(loss.kind === "states" ? 1e-3 : 2e-2);
      expect(fit.scan.scores, loss.kind).toHaveLength(settings.scanPoints);
      expect(fit.polish.after, loss.kind).toBeLessThanOrEqual(fit.polish.before);
    }
  }, 240_000);

  it("bad descriptions are clear errors", () => {
    const env = slidingBox();
    expect(() => risp.trainingSet({ ...env, faces: Int32Array.from([0, 1, 99]) }, 16, [[0]], [env.body], makeRng(1), { noise: 0 })).toThrow(/faces use vertex 99/);
    expect(() => risp.trainingSet(env, 16, [[0]], [env.body.subarray(3)], makeRng(1), { noise: 0 })).toThrow(/has 69 numbers; its mesh has 24 vertices/);
    expect(() => risp.samplePsi(makeRng(1), risp.DEFAULT_PSI.slice(1))).toThrow(/one range per parameter \(14/);
    expect(() => risp.rispProblem(env, "sysid", { ...slideScenario(env), upper: [0.1] })).toThrow(/empty box/);
  });
});

describe("sysid's descent for bounded unknowns and kinked losses", () => {
  /** |u − target| summed, with its sign gradient, counting evaluations. */
  const l1 = (target: number[], visited: number[][] = []): sysid.Objective => ({
    size: target.length,
    valueAndGrad: (u) => { const x = Array.from(u.dataSync()); visited.push(x); return [f32(x.reduce((a, v, i) => a + Math.abs(v - target[i]!), 0)), f32(x.map((v, i) => Math.sign(v - target[i]!)))]; },
    value: (u) => f32(Array.from(u.dataSync()).reduce((a, v, i) => a + Math.abs(v - target[i]!), 0)),
    residual: () => { throw new Error("no residual"); }, values: async () => [], diagnose: async () => null, gradientCulprit: async () => "render",
  });

  it("sign steps settle an L1 kink without evaluating a point twice, keeping the lowest iterate", async () => {
    // From 0.5 towards 0.3137: the steps grow from 0.01 to cross the kink, then halve at each flip.
    const truth = 0.3137, visited: number[][] = [];
    const r = await sysid.signSteps(l1([truth], visited), [0.5], 20, { step: 0.01, maxStep: 0.1 }, { lower: [0], upper: [1] });
    expect(visited).toHaveLength(20);
    expect(new Set(visited.map((x) => x[0])).size).toBe(20);
    expect(r.losses[0]).toBeCloseTo(0.5 - truth, 6);
    expect(r.loss).toBeCloseTo(Math.min(...visited.map((x) => Math.abs(x[0]! - truth))), 6);
    expect(Math.abs(r.u[0]! - truth)).toBeLessThan(2e-4);
  });

  it("a box keeps Adam's iterates inside it (the minimum outside: the estimate at the wall), and polish by sign steps lowers an L1 loss Adam leaves oscillating", async () => {
    const visited: number[][] = [];
    const d = await sysid.descend(l1([1.7, 0.42], visited), [0.5, 0.9], { optimizer: "adam", steps: 40, adam: { lr: 0.1, lrEnd: 0.01, schedule: "cosine", b1: 0.9 }, box: { lower: [0, 0], upper: [1, 1] }, progress: false });
    expect(visited.every(([a, b]) => a! >= 0 && a! <= 1 && b! >= 0 && b! <= 1)).toBe(true);
    expect(d.u[0]).toBe(1);
    const polished = await sysid.polish(l1([1.7, 0.42]), d, { optimizer: "adam", steps: 40, polish: 20, polishBy: { step: 0.01, maxStep: 0.1 }, box: { lower: [0, 0], upper: [1, 1] }, progress: false });
    expect(polished.finalLoss).toBeLessThanOrEqual(d.finalLoss);
    expect(Math.abs(polished.u[1]! - 0.42)).toBeLessThan(2e-3);
  });

  it("a start outside the box, or a box with L-BFGS, is a clear error", async () => {
    await expect(sysid.descend(l1([0]), [2], { optimizer: "adam", steps: 1, box: { lower: [0], upper: [1] }, progress: false })).rejects.toThrow(/outside the box \[0, 1\]/);
    await expect(sysid.descend(l1([0]), [0.5], { optimizer: "lbfgs", steps: 1, box: { lower: [0], upper: [1] }, progress: false })).rejects.toThrow(/box \(projected descent\) is for Adam/);
  });
});
