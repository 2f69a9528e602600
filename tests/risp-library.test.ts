/**
 * gradsim.risp as a user meets it: RISP for a system none of the paper's environments is — a box
 * sliding to rest on a floor under Coulomb friction — written against the package entry alone
 * ("gradsim", resolved to src/ by tsconfig paths and vitest's alias). Plus the two pieces the
 * tasks added to sysid's descent: the box (projected Adam) and the sign-step polish.
 */
import { describe, expect, it } from "vitest";
import { init, makeRng, networks, np, random, risp, sysid, vmap, type NDArray } from "gradsim";

await init({ backend: "cpu" });

const f32 = (x: unknown) => np.array(x, { dtype: "float32" });
/** Vertices [V·3] as an Array [V, 3]. */
const posed = (v: Float64Array) => np.reshape(f32(v), [-1, 3]);

/** A 0.3 m box (four vertices per face, each face its own paint) sliding along x. */
function slidingBox(): risp.RispEnv & { readonly body: Float64Array } {
  const vertices: number[] = [],
    faces: number[] = [],
    pattern: number[] = [];
  const paints = [
    [0.9, 0.3, 0.3],
    [0.3, 0.8, 0.3],
    [0.3, 0.3, 0.9],
    [0.9, 0.9, 0.3],
    [0.8, 0.3, 0.8],
    [0.3, 0.9, 0.9],
  ];
  let face = 0;
  for (let a = 0; a < 3; a++)
    for (const s of [1, -1]) {
      const u = (a + 1) % 3,
        v = (a + 2) % 3,
        base = vertices.length / 3;
      const corners =
        s > 0
          ? [
              [-1, -1],
              [1, -1],
              [1, 1],
              [-1, 1],
            ]
          : [
              [-1, -1],
              [-1, 1],
              [1, 1],
              [1, -1],
            ];
      for (const [cu, cv] of corners) {
        const p = [0, 0, 0];
        p[a] = 0.15 * s;
        p[u] = 0.15 * cu!;
        p[v] = 0.15 * cv!;
        vertices.push(p[0]!, p[1]! + 0.15, p[2]!);
        pattern.push(...paints[face]!);
      }
      faces.push(base, base + 1, base + 2, base, base + 2, base + 3);
      face++;
    }
  const body = Float64Array.from(vertices);
  const at = (x: number) => body.map((c, i) => (i % 3 === 0 ? c + x : c));
  return {
    name: "sliding box",
    stateNames: ["x (m)"],
    faces: Int32Array.from(faces),
    pattern: Float32Array.from(pattern),
    groundY: 0,
    body,
    // Low enough that the top of the image shows the sky (ψ's sky colours move it).
    camera: { eye: [0, 0.6, -2.2], at: [0, 0.3, 0], fovY: 40, convention: "softras-mirror" },
    sample(rng, n) {
      const xs = Array.from({ length: n }, () => rng.uniform(-0.5, 0.5));
      return { states: xs.map((x) => [x]), vertices: xs.map(at) };
    },
  };
}

/**
 * The box pushed at 2 m/s from x = −0.5 with friction coefficient μ: x(t) = x0 + v0·τ − ½μg·τ², τ = min(t, v0/(μg))
 * (at rest from then on).
 */
function slideScenario(env: ReturnType<typeof slidingBox>): risp.RispScenario {
  const T = 8,
    dt = 0.05,
    body = f32(
      Array.from({ length: env.body.length / 3 }, (_, i) => [
        env.body[3 * i]!,
        env.body[3 * i + 1]!,
        env.body[3 * i + 2]!,
      ]),
    );
  const t = f32(Array.from({ length: T }, (_, k) => k * dt));
  return {
    unknowns: ["friction coefficient μ"],
    lower: [0.1],
    upper: [0.9],
    truth: [0.4],
    frames: Array.from({ length: T }, (_, k) => k),
    start: [-0.5],
    guess: (rng) => [rng.uniform(0.1, 0.9)],
    rollout: (u, start) => {
      const mu = np.index(u, 0),
        tau = np.minimum(t, np.div(2, np.mul(9.8, mu)));
      // [T]
      const x = np.sub(np.add(np.index(start, 0), np.mul(2, tau)), np.mul(np.mul(0.5 * 9.8, mu), np.square(tau)));
      const offset = np.stack([x, np.zerosLike(x), np.zerosLike(x)], -1); // [T, 3]
      return { states: np.reshape(x, [T, 1]), vertices: vmap((o: NDArray) => np.add(body, o))(offset) };
    },
    parameterError: (u) => Math.abs(u[0]! - 0.4),
    errorName: "μ error",
  };
}

const settings: risp.TaskFitSettings = { iterations: 30, lr: 0.1, scanPoints: 8, polishSteps: 10, imitationStages: 1 };

describe("gradsim.risp on a user's own system (a sliding box), through the package entry", () => {
  it("training images with exact ∂I/∂ψ columns; a predictor trained with the exact regulariser (Eq. 10)", async () => {
    const env = slidingBox(),
      R = 16,
      rng = makeRng(3);
    const { states, vertices } = env.sample(rng, 8);
    const data = risp.trainingSet(env, R, states, vertices, rng, { noise: 0.01, chunk: 4 });
    expect(data.images.shape).toEqual([8, R, R, 3]);
    expect(data.dImages.shape).toEqual([8, risp.PSI_NAMES.length, R, R, 3]);
    expect(data.dImages.dataSync().every(Number.isFinite)).toBe(true);
    const cfg: risp.PredictorTraining = { resolution: R, epochs: 2, batch: 4, penalised: 1, widths: [4], lr: 3e-3 };
    // Each epoch's reader reads with that epoch's network: the last one's readings are the trained predictor's.
    const read: number[][] = [];
    const trained = await risp.trainPredictor({
      cfg,
      row: "ours-exact",
      gamma: 0.01,
      data,
      seed: 1,
      progress: false,
      onEpoch: (_, reader) => void read.push(Array.from(reader(data.images).dataSync())),
    });
    expect(Number.isFinite(trained.finalLoss)).toBe(true);
    expect(trained.epochLosses).toHaveLength(2);
    expect(trained.predict(np.index(data.images, 0)).shape).toEqual([1]);
    expect(read).toHaveLength(2);
    expect(read[0]).not.toEqual(read[1]);
    expect(read[1]).toEqual(
      read[1]!.map((_, i) => expect.closeTo(trained.predict(np.index(data.images, i)).item(), 5)),
    );
    expect(trained.standardisation.mu[0]).toBeCloseTo(states.reduce((a, s) => a + s[0]!, 0) / 8, 5);
  }, 240_000);

  it("identifies the friction from its states and video (sysid's projected descent, scan, sign steps)", async () => {
    const env = slidingBox(),
      problem = risp.rispProblem(env, "sysid", slideScenario(env));
    expect(problem.error(problem.truth, problem.start)).toBe(0);
    const start = f32(problem.start),
      guess = [0.8];
    for (const loss of [{ kind: "states" }, { kind: "pixels" }] as const) {
      const layout = risp.taskLayout(problem, loss);
      const R = 24,
        fn = risp.taskLoss(problem, loss, { resolution: R });
      // The pixels' reference: our own renderer at the truth (the paper's tables trace it; this checks the plumbing).
      const reference =
        loss.kind === "states"
          ? f32(problem.reference.states)
          : vmap((v: NDArray) => risp.softImage(env, R, v, f32(risp.psiMiddle()), risp.plainBackground(env, R)))(
              problem.rollout(f32(problem.truth), start).vertices,
            );
      const fit = await risp.fitTask(problem, layout, [risp.compileTaskLoss(fn)], reference, start, guess, settings);
      expect(fit.estimate[0]!, loss.kind).toBeGreaterThanOrEqual(0.1);
      expect(problem.error(fit.estimate, problem.start), loss.kind).toBeLessThan(loss.kind === "states" ? 1e-3 : 2e-2);
      expect(fit.scan.scores, loss.kind).toHaveLength(settings.scanPoints);
      expect(fit.polish.after, loss.kind).toBeLessThanOrEqual(fit.polish.before);
    }
  }, 240_000);

  it("each ∂I/∂ψ column of a training image is the derivative in its rendering parameter (central differences)", () => {
    const env = slidingBox(),
      R = 16;
    const { states, vertices } = env.sample(makeRng(7), 2);
    const set = risp.trainingSet(env, R, states, vertices, makeRng(8), { noise: 0, chunk: 2 });
    // Image 0's look drawn the way trainingSet drew it (the same rng sequence: the batch's looks first).
    const look = risp.sampleTrainingLook(env, R, vertices[0]!, makeRng(8), 0);
    const image = (p: number[]) => risp.softImage(env, R, posed(vertices[0]!), f32(p), look.background);
    expect(np.max(np.abs(np.sub(image(look.psi), np.index(set.images, 0)))).item()).toBeLessThan(1e-5);
    let moving = 0;
    for (let k = 0; k < risp.PSI_NAMES.length; k++) {
      const h = 1e-2,
        up = [...look.psi],
        down = [...look.psi];
      up[k]! += h;
      down[k]! -= h;
      const fd = np.div(np.sub(image(up), image(down)), 2 * h);
      const err = np.max(np.abs(np.sub(np.index(np.index(set.dImages, 0), k), fd))).item(),
        size = np.max(np.abs(fd)).item();
      if (size > 1e-3) moving++;
      expect(err, risp.PSI_NAMES[k]).toBeLessThan(0.05 * size + 2e-4);
    }
    // A highlight can miss a small image entirely; every other parameter moves it.
    expect(moving).toBeGreaterThanOrEqual(risp.PSI_NAMES.length - 1);
  });

  it("a training set of fixed configurations draws every image under one of them (RISP Fig. 6a)", () => {
    const env = slidingBox(),
      R = 16;
    // The same state four times: without noise its images differ only by their configurations.
    const { states, vertices } = env.sample(makeRng(17), 1);
    const four = <T>(x: T) => [x, x, x, x];
    const distinct = (configurations?: risp.TrainingConfiguration[]) => {
      const set = risp.trainingSet(env, R, four(states[0]!), four(vertices[0]!), makeRng(18), {
        noise: 0,
        chunk: 4,
        ...(configurations ? { configurations } : {}),
      });
      const rows = Array.from({ length: 4 }, (_, i) => Array.from(np.index(set.images, i).dataSync()).join());
      return new Set(rows).size;
    };
    const rng = makeRng(19);
    expect(distinct([risp.sampleTrainingConfiguration(rng)])).toBe(1);
    expect(distinct()).toBe(4);
    expect(() => distinct([])).toThrow(/needs at least one/);
  });

  // The procedural ground families: blotches, checkers, stripes; the shadow is the object's.
  it("training looks: grounds of every family, shadowed under ψ's light; traced targets vary by configuration", () => {
    const rng = makeRng(12);
    const spreads = Array.from({ length: 30 }, () => {
      const texture = risp.randomGroundTexture(rng);
      const values = Array.from({ length: 400 }, (_, k) =>
        texture(-2 + (k % 20) * 0.2, Math.floor(k / 20) * 0.3),
      ).flat();
      for (const x of values) {
        expect(Number.isFinite(x)).toBe(true);
        expect(x).toBeGreaterThan(0);
        expect(x).toBeLessThan(2);
      }
      return new Set(values.map((x) => x.toFixed(6))).size;
    });
    expect(spreads.filter((n) => n <= 6).length).toBeGreaterThan(3); // checkers: two colours
    expect(spreads.filter((n) => n > 100).length).toBeGreaterThan(10); // blotches and stripes: continuous
    // The box on the ground: under some draws of ψ's light its shadow darkens ground pixels (the lit layer below the
    // unlit one).
    const env = slidingBox(),
      R = 16,
      { vertices } = env.sample(makeRng(13), 2);
    const shadowed = Array.from({ length: 6 }, () => {
      const layers = risp.sampleTrainingLook(env, R, vertices[0]!, rng, 0.03).background.dataSync();
      let n = 0;
      for (let p = 0; p < R * R; p++) if (layers[7 * p + 4]! < layers[7 * p + 1]! - 1e-6) n++;
      return n;
    });
    expect(shadowed.some((n) => n > 0)).toBe(true);
    const a = risp.targetImages(env, R, vertices, risp.sampleTargetConfig(rng), 1),
      b = risp.targetImages(env, R, vertices, risp.sampleTargetConfig(rng), 2);
    expect(a.shape).toEqual([2, R, R, 3]);
    expect(np.mean(np.abs(np.sub(a, b))).item()).toBeGreaterThan(0.02);
    const values = Array.from(a.dataSync());
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThanOrEqual(1);
  });

  it("the held-out split: every test configuration outside the training ranges by the stated margins", () => {
    const d = risp.HELD_OUT_TRAINING_PSI,
      rng = makeRng(14);
    const name = (k: string) => risp.PSI_NAMES.indexOf(k as (typeof risp.PSI_NAMES)[number]);
    const width = (k: string) => d[name(k)]!.high - d[name(k)]!.low;
    for (let n = 0; n < 300; n++) {
      const c = risp.sampleHeldOutConfig(rng),
        psi = risp.configPsi(c),
        excess = risp.psiExcess(psi, d);
      // The light's angles read back from its direction.
      const [x, y, z] = risp.hostLightDirection(psi[1]!, psi[2]!);
      expect(Math.hypot(x - c.light[0], y - c.light[1], z - c.light[2])).toBeLessThan(1e-12);
      const at = (k: string) => excess[name(k)]! * width(k);
      expect(at("ambient")).toBeGreaterThanOrEqual(0.05 - 1e-9);
      expect(at("light azimuth (rad)")).toBeGreaterThanOrEqual(0.4 - 1e-9);
      expect(at("light elevation (rad)")).toBeGreaterThanOrEqual(0.15 - 1e-9);
      expect(at("specular")).toBeGreaterThanOrEqual(0.1 - 1e-9);
      expect(Math.max(at("albedo r"), at("albedo g"), at("albedo b"))).toBeGreaterThanOrEqual(0.1 - 1e-9);
      // The tables' own configurations: the light's direction lies inside the training ranges.
      const table = risp.psiExcess(risp.configPsi(risp.sampleTargetConfig(rng)), risp.DEFAULT_PSI);
      expect(table[name("light azimuth (rad)")]! + table[name("light elevation (rad)")]!).toBe(0);
    }
    // A training look is inside (its ground entries too); the azimuth's distance goes round the circle.
    const look = risp.samplePsi(rng, d);
    expect(risp.psiExcess(look, d).every((v) => v === 0)).toBe(true);
    const az = [...look];
    az[1] = Math.PI - 0.1; // 2.04 rad past +1; round the back, 2.24 short of −1
    expect(risp.psiExcess(az, d)[1]! * 2).toBeCloseTo(Math.PI - 0.1 - 1, 12);
    az[1] = -3 * Math.PI; // −π again
    expect(risp.psiExcess(az, d)[1]! * 2).toBeCloseTo(Math.PI - 1, 12);
    // A training look traced: its ψ again (the ground's two shades average to its colour).
    expect(risp.configPsi(risp.configOfPsi(look))).toEqual(look.map((v) => expect.closeTo(v, 12)));
    expect(() => risp.psiExcess([1, 2], d)).toThrow(/ψ has 14 entries/);
  });

  it("SoftRas under a test configuration is nearer the tracer's image under it than under another", () => {
    const env = slidingBox(),
      R = 16,
      rng = makeRng(15),
      { vertices } = env.sample(makeRng(16), 2);
    const [c1, c2] = [risp.sampleHeldOutConfig(rng), risp.sampleHeldOutConfig(rng)];
    const soft = risp.softConfigImages(env, R, vertices, c1!);
    expect(soft.shape).toEqual([2, R, R, 3]);
    const gap = (c: risp.TargetConfig) =>
      np.mean(np.abs(np.sub(soft, risp.targetImages(env, R, vertices, c, 3)))).item();
    // 0.020 here (another configuration: 0.059; the ground tinted twice by its colour: 0.074).
    expect(gap(c1!)).toBeLessThan(0.035);
    expect(gap(c1!)).toBeLessThan(0.7 * gap(c2!));
  });

  // The losses: on states, on pixels, and on a predictor's reading with the look.
  it("imitation's curriculum: prefixes for actions in time only; a stage's loss ignores frames past its prefix", () => {
    const env = slidingBox(),
      R = 16;
    const problemOf = (task: risp.RispTask, T: number, timedActions: boolean) => {
      const sc = slideScenario(env);
      return risp.rispProblem(env, task, { ...sc, frames: sc.frames.slice(0, T), timedActions });
    };
    expect(risp.stagePrefixes(problemOf("imitation", 8, true), { imitationStages: 4 })).toEqual([2, 4, 6, 8]);
    expect(risp.stagePrefixes(problemOf("imitation", 7, true), { imitationStages: 3 })).toEqual([3, 5, 7]);
    expect(risp.stagePrefixes(problemOf("imitation", 8, false), { imitationStages: 4 })).toEqual([8]);
    expect(risp.stagePrefixes(problemOf("sysid", 8, true), { imitationStages: 4 })).toEqual([8]);
    const p = problemOf("imitation", 8, true),
      T = 8,
      shown = 3,
      rng = makeRng(5);
    const u = f32([0.7]),
      start = f32(p.start);
    const first = (x: NDArray) => np.take(x, np.arange(0, shown), 0);
    // The same reference but for its frames after the prefix.
    const later = (x: NDArray) => np.concatenate([first(x), np.add(np.take(x, np.arange(shown, T), 0), 0.3)], 0);
    const states = f32(p.reference.states),
      images = np.reshape(f32(Array.from({ length: T * R * R * 3 }, () => rng.uniform(0, 1))), [T, R, R, 3]);
    const net = {
      image: [R, R, 3] as [number, number, number],
      outputs: 1,
      widths: [4],
      coordinates: true,
      head: "flatten" as const,
    };
    const params = networks.initPredictor(random.key(1), net);
    const losses: [risp.TaskLoss, NDArray, NDArray][] = [
      [{ kind: "states" }, states, u],
      [{ kind: "pixels" }, images, u],
      [
        { kind: "predictor", read: (im) => networks.predictor(params, net, im) },
        images,
        np.concatenate([u, f32(risp.PSI_NAMES.map(() => 0.5))]),
      ],
    ];
    const direct = np.mean(np.abs(np.sub(first(p.rollout(u, start).states), first(states)))).item();
    expect(risp.taskLoss(p, { kind: "states" }, { resolution: R }, shown)(u, states, start).item()).toBeCloseTo(
      direct,
      6,
    );
    for (const [loss, ref, u0] of losses) {
      const stage = risp.taskLoss(p, loss, { resolution: R }, shown),
        whole = risp.taskLoss(p, loss, { resolution: R });
      expect(stage(u0, later(ref), start).item(), loss.kind).toBeCloseTo(stage(u0, ref, start).item(), 6);
      expect(Math.abs(whole(u0, later(ref), start).item() - whole(u0, ref, start).item()), loss.kind).toBeGreaterThan(
        1e-3,
      );
    }
    expect(() => risp.taskLoss(p, { kind: "states" }, { resolution: R }, T + 1)).toThrow(
      /shown frames must be between 1 and the 8 observed/,
    );
    // A temporal sampling (Fig. 6b): the first and last frames alone; a change to the frames between leaves it.
    const ends = [0, T - 1];
    const between = (x: NDArray) =>
      np.concatenate(
        [
          np.take(x, np.arange(0, 1), 0),
          np.add(np.take(x, np.arange(1, T - 1), 0), 0.3),
          np.take(x, np.arange(T - 1, T), 0),
        ],
        0,
      );
    const picked = (x: NDArray) => np.take(x, np.array(ends, { dtype: "int32" }), 0);
    const sampled = risp.taskLoss(p, { kind: "states" }, { resolution: R }, ends);
    expect(sampled(u, states, start).item()).toBeCloseTo(
      np.mean(np.abs(np.sub(picked(p.rollout(u, start).states), picked(states)))).item(),
      6,
    );
    expect(sampled(u, between(states), start).item()).toBeCloseTo(sampled(u, states, start).item(), 6);
    expect(() => risp.taskLoss(p, { kind: "states" }, { resolution: R }, [0, T])).toThrow(
      /indices of the 8 observed \(0 to 7\), at least one; got \[0, 8\]/,
    );
  });

  it("bad descriptions are clear errors", () => {
    const env = slidingBox();
    expect(() =>
      risp.trainingSet({ ...env, faces: Int32Array.from([0, 1, 99]) }, 16, [[0]], [env.body], makeRng(1), { noise: 0 }),
    ).toThrow(/faces use vertex 99/);
    expect(() => risp.trainingSet(env, 16, [[0]], [env.body.subarray(3)], makeRng(1), { noise: 0 })).toThrow(
      /has 69 numbers; its mesh has 24 vertices/,
    );
    expect(() => risp.samplePsi(makeRng(1), risp.DEFAULT_PSI.slice(1))).toThrow(/one range per parameter \(14/);
    expect(() => risp.rispProblem(env, "sysid", { ...slideScenario(env), upper: [0.1] })).toThrow(/empty box/);
  });
});

describe("sysid's descent for bounded unknowns and kinked losses", () => {
  /** |u − target| summed, with its sign gradient, counting evaluations. */
  const l1 = (target: number[], visited: number[][] = []): sysid.Objective => ({
    size: target.length,
    valueAndGrad: (u) => {
      const x = Array.from(u.dataSync());
      visited.push(x);
      return [
        f32(x.reduce((a, v, i) => a + Math.abs(v - target[i]!), 0)),
        f32(x.map((v, i) => Math.sign(v - target[i]!))),
      ];
    },
    value: (u) => f32(Array.from(u.dataSync()).reduce((a, v, i) => a + Math.abs(v - target[i]!), 0)),
    residual: () => {
      throw new Error("no residual");
    },
    values: async () => [],
    diagnose: async () => null,
    gradientCulprit: async () => "render",
  });

  it("sign steps settle an L1 kink without evaluating a point twice, keeping the lowest iterate", async () => {
    // From 0.5 towards 0.3137: the steps grow from 0.01 to cross the kink, then halve at each flip.
    const truth = 0.3137,
      visited: number[][] = [];
    const r = await sysid.signSteps(
      l1([truth], visited),
      [0.5],
      20,
      { step: 0.01, maxStep: 0.1 },
      { lower: [0], upper: [1] },
    );
    expect(visited).toHaveLength(20);
    expect(new Set(visited.map((x) => x[0])).size).toBe(20);
    expect(r.losses[0]).toBeCloseTo(0.5 - truth, 6);
    expect(r.loss).toBeCloseTo(Math.min(...visited.map((x) => Math.abs(x[0]! - truth))), 6);
    expect(Math.abs(r.u[0]! - truth)).toBeLessThan(2e-4);
  });

  // With the minimum outside the box, the estimate ends at its wall.
  it("a box keeps Adam's iterates inside; polish by sign steps lowers an L1 loss Adam leaves oscillating", async () => {
    const visited: number[][] = [];
    const d = await sysid.descend(l1([1.7, 0.42], visited), [0.5, 0.9], {
      optimizer: "adam",
      steps: 40,
      adam: { lr: 0.1, lrEnd: 0.01, schedule: "cosine", b1: 0.9 },
      box: { lower: [0, 0], upper: [1, 1] },
      progress: false,
    });
    expect(visited.every(([a, b]) => a! >= 0 && a! <= 1 && b! >= 0 && b! <= 1)).toBe(true);
    expect(d.u[0]).toBe(1);
    const polished = await sysid.polish(l1([1.7, 0.42]), d, {
      optimizer: "adam",
      steps: 40,
      polish: 20,
      polishBy: { step: 0.01, maxStep: 0.1 },
      box: { lower: [0, 0], upper: [1, 1] },
      progress: false,
    });
    expect(polished.finalLoss).toBeLessThanOrEqual(d.finalLoss);
    expect(Math.abs(polished.u[1]! - 0.42)).toBeLessThan(2e-3);
  });

  // The paper's optimiser: PyTorch's RMSprop (ν from 0, α 0.99, ε outside the root, heavy-ball momentum), written out
  // here in float64, then projected onto the box as every task descent is.
  it("RMSProp steps as PyTorch's, projected onto the box", async () => {
    const target = [1.7, 0.42, -0.3],
      lr = 3e-3,
      momentum = 0.5,
      steps = 25;
    const visited: number[][] = [];
    await sysid.descend(l1(target, visited), [0.5, 0.9, 0.1], {
      optimizer: "rmsprop",
      steps,
      rmsprop: { lr, momentum },
      box: { lower: [0, 0, 0], upper: [1, 1, 0.2] },
      progress: false,
    });
    let x = [0.5, 0.9, 0.1];
    const nu = [0, 0, 0],
      buf = [0, 0, 0];
    const expected = [x];
    for (let k = 0; k < steps; k++) {
      x = x.map((v, i) => {
        const g = Math.sign(v - target[i]!);
        nu[i] = 0.99 * nu[i]! + 0.01 * g * g;
        buf[i] = momentum * buf[i]! + g / (Math.sqrt(nu[i]!) + 1e-8);
        return Math.min(Math.max(v - lr * buf[i]!, 0), i === 2 ? 0.2 : 1);
      });
      expected.push(x);
    }
    expect(visited).toHaveLength(steps + 1);
    visited.forEach((v, k) => v.forEach((vi, i) => expect(vi).toBeCloseTo(expected[k]![i]!, 5)));
    // The first step is 10·lr (ν = 0.01·g² after one update), as in PyTorch.
    expect(visited[1]![0]! - visited[0]![0]!).toBeCloseTo(10 * lr, 5);
    await expect(sysid.descend(l1([0]), [0.5], { optimizer: "rmsprop", steps: 1, progress: false })).rejects.toThrow(
      /"rmsprop" needs its settings/,
    );
    await expect(
      sysid.descend(l1([0]), [0.5], {
        optimizer: "rmsprop",
        steps: 1,
        rmsprop: { lr: 1, momentum: 1 },
        progress: false,
      }),
    ).rejects.toThrow(/momentum must be in \[0, 1\), got 1/);
  });

  it("a start outside the box, or a box with L-BFGS, is a clear error", async () => {
    await expect(
      sysid.descend(l1([0]), [2], { optimizer: "adam", steps: 1, box: { lower: [0], upper: [1] }, progress: false }),
    ).rejects.toThrow(/outside the box \[0, 1\]/);
    await expect(
      sysid.descend(l1([0]), [0.5], { optimizer: "lbfgs", steps: 1, box: { lower: [0], upper: [1] }, progress: false }),
    ).rejects.toThrow(/box \(projected descent\) is for Adam or RMSProp/);
  });
});
