/**
 * RISP's environments and the `risp-state` experiment (RISP Table 1) in its quick mode: states
 * that encode what the meshes show, training images whose ∂I/∂ψ columns belong to the right
 * rendering parameters, ray-traced targets, and the table's rows from trained networks on disk.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRng } from "../src/core/host-rng.js";
import { init, models, np, random, render, sysid, type Array } from "../src/index.js";
import { networks, risp } from "../src/node.js";
import {
  experiment as rispState,
  PAPER_TABLE1,
  RISP_ROWS,
  RISP_STATE_SETTINGS,
  softLooks,
} from "../examples/risp-state.js";
import { mean } from "../examples/lib/stats.js";
import { cubeEnv, HAND, handEnv, quadrotorEnv, rigidPoseState, rodEnv, ROD } from "../examples/lib/risp-envs.js";
import { rispProblem } from "../examples/lib/risp-tasks.js";
import { configurationDraws } from "../examples/risp-tasks.js";
import { runExperiment } from "../examples/lib/run.js";
import { cli, outDir, readResult, runQuiet } from "./experiments-helpers.js";

// The library's own behaviour (∂I/∂ψ against central differences, the training looks, the targets) is tested on a
// sliding box in risp-library.test.ts.
const {
  backgroundLayers,
  faceAlbedo,
  hostLightDirection,
  plainBackground,
  predictorConfig,
  softImage,
  STANDARDISATION_FILE,
  targetImages,
} = risp;
const PSI_MIDDLE = risp.psiMiddle();
type SoftLook = risp.SoftLook;
type TargetConfig = risp.TargetConfig;

await init({ backend: "cpu" });

/** Vertices [V·3] → Array [V, 3]. */
const asArray = (v: Float64Array) => np.reshape(np.array(v, { dtype: "float32" }), [-1, 3]);

/** The motion samplers draw 4 distinct frames per rollout: no state of a rollout's 4 repeats another. */
function expectDistinctFramesPerRollout(states: readonly (readonly number[])[]) {
  for (let i = 0; i < states.length; i++) {
    for (let j = i + 1; j < states.length && Math.floor(j / 4) === Math.floor(i / 4); j++) {
      expect(
        states[i]!.some((x, k) => x !== states[j]![k]),
        `states ${i} and ${j}`,
      ).toBe(true);
    }
  }
}

describe("RISP environments", () => {
  it("a pose state (Eq. 18) determines the quadrotor's and the cube's vertices", () => {
    for (const env of [quadrotorEnv(), cubeEnv()]) {
      const { states, vertices } = env.sample(makeRng(3), 20);
      for (const [i, s] of states.entries()) {
        expect(s.length).toBe(9);
        for (let k = 0; k < 3; k++) expect(s[3 + k]! ** 2 + s[6 + k]! ** 2).toBeCloseTo(1, 12);
        const v = vertices[i]!,
          posed = env.pose!(s);
        v.forEach((x, j) => expect(posed[j]!).toBeCloseTo(x, 9));
      }
    }
  });

  it("cube states are frames of its drops: above the ground but for the soft contact's millimetres, some at the impact, and as high as system identification's drop reaches", () => {
    const { states, vertices } = cubeEnv().sample(makeRng(5), 192);
    expectDistinctFramesPerRollout(states);
    // A flat drop falls straight: a rollout's 4 frames share x, z and yaw, untilted.
    for (const [i, st] of states.entries()) {
      const first = states[i - (i % 4)]!;
      for (const k of [0, 2, 3, 6])
        expect(Math.abs(st[k]! - first[k]!), `state ${i}, component ${k}`).toBeLessThan(1e-3);
      expect(Math.abs(st[4]!) + Math.abs(st[5]!)).toBeLessThan(1e-3);
    }
    const lowest = vertices.map((v) => Math.min(...globalThis.Array.from(v).filter((_, k) => k % 3 === 1)));
    expect(Math.min(...lowest)).toBeGreaterThan(-0.005);
    expect(lowest.filter((y) => y < 0.01).length).toBeGreaterThan(3); // some frames at the impact
    // Up to the sysid reference's highest frame over its box (the release; then the stiffest bounce).
    const sysid = rispProblem("cube", "sysid"),
      start = np.array(sysid.start, { dtype: "float32" });
    const heights = [0, 1].flatMap((u) =>
      (sysid.rollout(np.array([u], { dtype: "float32" }), start).states.toList() as number[][]).map((s) => s[1]!),
    );
    expect(Math.max(...states.map((s) => s[1]!))).toBeGreaterThan(Math.max(...heights));
  }, 120_000);

  it("a quadrotor rollout of models.rigid maps to pose states whose vertices are the simulated body's", () => {
    const env = quadrotorEnv();
    const { quad, state } = models.rigid.quadrotor({ position: [0.1, 1, -0.1], angularVelocity: [0.4, 1.2, -0.7] });
    // Uneven thrusts: it rolls, pitches and yaws as it climbs.
    const thrusts = np.array(
      globalThis.Array.from({ length: 20 }, () => [3.2, 2.2, 2.6, 2.0]),
      { dtype: "float32" },
    );
    const s = models.rigid.simulateQuadrotor(quad, state, { dt: 1 / 60, frames: 20, controls: thrusts });
    const x = s.x.dataSync(),
      q = s.q.dataSync();
    const body = env.pose!([0, 0, 0, 0, 0, 0, 1, 1, 1]);
    for (const t of [0, 10, 19]) {
      const pose = rigidPoseState(
        [x[3 * t]!, x[3 * t + 1]!, x[3 * t + 2]!],
        [q[4 * t]!, q[4 * t + 1]!, q[4 * t + 2]!, q[4 * t + 3]!],
      );
      const [qx, qy, qz, qw] = [q[4 * t]!, q[4 * t + 1]!, q[4 * t + 2]!, q[4 * t + 3]!];
      const posed = env.pose!(pose);
      for (let j = 0; j < body.length; j += 3) {
        // v' = v + 2w(q×v) + 2q×(q×v), then translate.
        const v = [body[j]!, body[j + 1]!, body[j + 2]!];
        const c1 = [qy * v[2]! - qz * v[1]!, qz * v[0]! - qx * v[2]!, qx * v[1]! - qy * v[0]!];
        const c2 = [qy * c1[2]! - qz * c1[1]!, qz * c1[0]! - qx * c1[2]!, qx * c1[1]! - qy * c1[0]!];
        for (let d = 0; d < 3; d++)
          expect(posed[j + d]!).toBeCloseTo(x[3 * t + d]! + v[d]! + 2 * qw * c1[d]! + 2 * c2[d]!, 4);
      }
    }
    // It did roll.
    expect(Math.abs(rigidPoseState([0, 0, 0], [q[76]!, q[77]!, q[78]!, q[79]!])[5]!)).toBeGreaterThan(0.05);
  });

  it("rod states are the spine sensors' vertical displacements in FEM rollouts: ends fixed, sag under gravity, bent by the central force", () => {
    const env = rodEnv();
    const { states, vertices } = env.sample(makeRng(5), 40);
    expect(env.stateNames.length).toBe(10);
    const V = vertices[0]!.length / 3;
    for (const [i, s] of states.entries()) {
      const v = vertices[i]!;
      // Sensors are on the spine (y = ROD.height at rest): each state component is one vertex's y − height.
      const ys = globalThis.Array.from({ length: V }, (_, j) => v[3 * j + 1]! - ROD.height);
      for (const x of s) expect(ys.some((y) => Math.abs(y - x) < 1e-12)).toBe(true);
      // The fixed ends stay where they were.
      for (let j = 0; j < V; j++)
        if (Math.abs(Math.abs(v[3 * j]!) - ROD.length / 2) < 1e-9)
          expect(Math.abs(v[3 * j + 1]! - ROD.height) <= ROD.thickness / 2 + 1e-6).toBe(true);
      // Symmetric loads: the sensor profile is nearly mirror-symmetric.
      for (let k = 0; k < 5; k++) expect(Math.abs(s[k]! - s[9 - k]!)).toBeLessThan(0.01 + 0.05 * Math.abs(s[k]!));
    }
    expectDistinctFramesPerRollout(states);
    const centre = states.map((s) => (s[4]! + s[5]!) / 2);
    expect(Math.min(...centre)).toBeLessThan(-0.05);
    expect(Math.max(...centre) - Math.min(...centre)).toBeGreaterThan(0.05);
  }, 120_000);

  it("quadrotor states are frames of its motions: posed by the states, and covering system identification's climbs at both ends of the mass box", () => {
    const env = quadrotorEnv();
    const { states, vertices } = env.sample(makeRng(5), 192);
    expectDistinctFramesPerRollout(states);
    for (const i of [0, 77, 191]) {
      const posed = env.pose!(states[i]!);
      expect(Math.max(...vertices[i]!.map((x, k) => Math.abs(x - posed[k]!)))).toBeLessThan(1e-5);
    }
    // The lightest quadrotor of the sysid task climbs to 1.47 m and the heaviest sinks to 0.77 m
    // (independent poses with y in [0.8, 1.2] cover neither); the samples reach past both.
    const sysid = rispProblem("quadrotor", "sysid"),
      start = np.array(sysid.start, { dtype: "float32" });
    const heights = [0, 1].flatMap((u) =>
      (sysid.rollout(np.array([u], { dtype: "float32" }), start).states.toList() as number[][]).map((s) => s[1]!),
    );
    const y = states.map((s) => s[1]!);
    expect(Math.max(...y)).toBeGreaterThan(Math.max(...heights) - 0.05);
    expect(Math.min(...y)).toBeLessThan(Math.min(...heights));
    // Upright-ish and turned as the tasks' starts (0.3 ± 0.3 rad): no pose flipped over.
    expect(Math.min(...states.map((s) => s[7]! * s[8]!))).toBeGreaterThan(0.5);
  }, 120_000);

  it("hand states are frames of its motions: the vertices are the mesh posed by the angles, and a finger's joints bend together", () => {
    const env = handEnv(),
      J = models.articulated.HAND_JOINTS;
    const { states, vertices } = env.sample(makeRng(5), 96);
    expectDistinctFramesPerRollout(states);
    const { hand } = models.articulated.hand({ dtype: "float64" });
    const mesh = models.articulated.handMesh(hand);
    for (const i of [0, 37, 95]) {
      const posed = mesh.vertices(np.array(states[i]!, { dtype: "float64" })).dataSync();
      expect(Math.max(...vertices[i]!.map((x, k) => Math.abs(x - posed[k]!)))).toBeLessThan(1e-9);
    }
    // A finger's outer two joints (shared stiffness and torque) are correlated over the samples
    // (0.69–0.84 here); independent random angles would give ~0.
    const corr = (a: number, b: number) => {
      const x = states.map((s) => s[a]!),
        y = states.map((s) => s[b]!),
        mx = x.reduce((p, q) => p + q) / x.length,
        my = y.reduce((p, q) => p + q) / y.length;
      const sxy = x.reduce((p, q, k) => p + (q - mx) * (y[k]! - my), 0),
        sxx = x.reduce((p, q) => p + (q - mx) ** 2, 0),
        syy = y.reduce((p, q) => p + (q - my) ** 2, 0);
      return sxy / Math.sqrt(sxx * syy);
    };
    for (let f = 0; f < 4; f++) expect(corr(3 * f + 1, 3 * f + 2), `finger ${f + 1}`).toBeGreaterThan(0.5);
    // They move: the fingers swing across tenths of a radian, beyond the starts' ±HAND.start.
    const all = states.flat();
    expect(all.every(Number.isFinite)).toBe(true);
    expect(states.length * J).toBe(all.length);
    expect(Math.max(...all.map(Math.abs))).toBeGreaterThan(HAND.start + 0.2);
  }, 120_000);

  it("reverseContrast draws the quadrotor brighter than the ground behind it, where our frames (ψ's middle, plain ground) and the table's configurations draw it darker", () => {
    const env = quadrotorEnv(),
      R = 32,
      vertices = rispProblem("quadrotor", "sysid").reference.vertices.slice(0, 1);
    // Which pixels the body covers (the tracer's coverage does not depend on the look), and the scene without it (sunk
    // below the ground).
    const covered = render.traceVideo(
      { frames: vertices, faces: env.faces, albedo: faceAlbedo(env, [1, 1, 1]) },
      { camera: sysid.hostCamera(env.camera, R, R), width: R, height: R, light: [0, 1, 0], samples: 3 },
    ).masks;
    const sunk = vertices.map((v) => v.map((x, i) => (i % 3 === 1 ? x - 50 : x)));
    const body = [...covered.keys()].filter((p) => covered[p]! > 0.95);
    expect(body.length).toBeGreaterThan(10);
    // Mean over the body's pixels and channels of the image with it minus the image without it.
    const contrast = (withBody: Float32Array, without: Float32Array) =>
      mean(body.flatMap((p) => [0, 1, 2].map((c) => withBody[3 * p + c]! - without[3 * p + c]!)));
    const ours = (v: readonly Float64Array[]) =>
      softImage(
        env,
        R,
        asArray(v[0]!),
        np.array(PSI_MIDDLE, { dtype: "float32" }),
        plainBackground(env, R),
      ).dataSync() as Float32Array;
    expect(contrast(ours(vertices), ours(sunk))).toBeLessThan(-0.05);
    // Table 2's four quadrotor configurations, and the same with the contrast reversed (risp-tasks --domain
    // reversed-contrast).
    const problem = rispProblem("quadrotor", "sysid");
    for (let k = 0; k < 4; k++) {
      const table = configurationDraws(problem, 0, k, "table"),
        reversed = configurationDraws(problem, 0, k, "reversed-contrast");
      const traced = (c: TargetConfig, v: readonly Float64Array[]) =>
        targetImages(env, R, v, c, table.seed).dataSync() as Float32Array;
      expect(
        contrast(traced(table.target, vertices), traced(table.target, sunk)),
        `table config ${k + 1}`,
      ).toBeLessThan(0);
      expect(
        contrast(traced(reversed.target, vertices), traced(reversed.target, sunk)),
        `reversed config ${k + 1}`,
      ).toBeGreaterThan(0.1);
      // Only the body's albedo, the light's intensity and the ground's level change; the guesses and starts stay.
      expect({
        ...reversed.target,
        albedo: table.target.albedo,
        intensity: table.target.intensity,
        groundLevel: undefined,
      }).toEqual({ ...table.target, groundLevel: undefined });
      expect(reversed.guess).toEqual(table.guess);
      expect(reversed.start).toEqual(table.start);
    }
  });

  it("faceted SoftRas with sharp silhouettes draws the rod as the ray tracer does, and the training images are drawn from both rasterizations", () => {
    const env = rodEnv(),
      R = 32,
      { vertices } = env.sample(makeRng(4242), 2);
    // One look in both renderers: ψ's middle over a plain ground (shadowed in both), no noise.
    const psi = PSI_MIDDLE,
      light = hostLightDirection(psi[1]!, psi[2]!);
    const colour = (k: number) => [psi[k]!, psi[k + 1]!, psi[k + 2]!] as const;
    const traced = render.traceVideo(
      { frames: vertices, faces: env.faces, albedo: faceAlbedo(env, colour(4)), specular: psi[7]!, shininess: 20 },
      {
        camera: sysid.hostCamera(env.camera, R, R),
        width: R,
        height: R,
        light,
        intensity: psi[3]!,
        ambient: psi[0]!,
        groundY: env.groundY,
        groundColor: () => colour(11),
        sky: colour(8),
        samples: 3,
        noise: 0,
      },
    ).images;
    const distance = (look: SoftLook) =>
      mean(
        vertices.map((v, i) => {
          const background = backgroundLayers(env, R, { vertices: v, light, texture: () => [1, 1, 1] });
          const image = softImage(env, R, asArray(v), np.array(psi, { dtype: "float32" }), background, look).dataSync();
          return mean(globalThis.Array.from(image, (x, q) => Math.abs(x - traced[i * R * R * 3 + q]!)));
        }),
      );
    // Measured: 0.0117 and 0.0041 (smooth at 0.1 of the softness 0.0071, faceted at the default 0.0083).
    const [smooth, sharp] = [distance({}), distance({ faceted: true, sigma: 0.1 * sysid.sigmaFor(R) })];
    expect(sharp).toBeLessThan(smooth / 2);
    for (const settings of [RISP_STATE_SETTINGS.full, RISP_STATE_SETTINGS.quick]) {
      const looks = softLooks({ ...settings, resolution: R });
      expect(looks).toContainEqual({ faceted: false, sigma: sysid.sigmaFor(R) });
      expect(looks).toContainEqual({ faceted: true, sigma: 0.1 * sysid.sigmaFor(R) });
    }
  }, 60_000);
});

describe("risp-state (quick)", () => {
  it("trains the three predictors per environment (their training losses fall), writes the table, networks and pictures, resumes, and trains only the environments --envs names", async () => {
    const out = outDir("risp-state-quick");
    const quiet = async (args: readonly string[]) => (await runQuiet(rispState, args, out)).code;
    // The cube alone first: its networks only, and a result that holds it alone.
    expect(await quiet(["--envs", "cube"])).toBe(0);
    expect(Object.keys(readResult(out).envs)).toEqual(["cube"]);
    for (const env of ["quadrotor", "rod", "hand"]) expect(existsSync(join(out, env)), env).toBe(false);
    const cubeNet = statSync(join(out, "cube", "ours", "params.gsp")).mtimeMs;
    // Then every environment: the cube's networks are reused, the others trained.
    expect(await quiet([])).toBe(0);
    expect(statSync(join(out, "cube", "ours", "params.gsp")).mtimeMs).toBe(cubeNet);
    const r = readResult(out);
    const cfg = RISP_STATE_SETTINGS.quick;
    for (const env of ["quadrotor", "cube", "rod", "hand"] as const) {
      const e = r.envs[env];
      expect(Object.keys(e.rows)).toEqual([...RISP_ROWS]);
      for (const row of RISP_ROWS) {
        expect(Number.isFinite(e.rows[row].mean), `${env} ${row}`).toBe(true);
        expect(e.rows[row].perConfig.length).toBe(4);
      }
      // Trained on a few dozen images for a few epochs, every predictor's training loss fell (the
      // last epoch's minibatches against the first's). Whether it then reads 16 traced test images
      // better than a random state is a property of the draw (the cube's drops: 0.097 against 0.081).
      const steps = cfg.train / cfg.batch;
      for (const row of ["ours-no-grad", "ours", "ours-exact"] as const) {
        const loss = readFileSync(join(out, env, row, "loss.csv"), "utf8")
          .trim()
          .split("\n")
          .slice(1)
          .map((l) => Number(l.split(",")[1]));
        const epochMean = (k: number) => mean(loss.slice(k * steps, (k + 1) * steps));
        expect(loss.length).toBe(cfg.epochs * steps);
        expect(epochMean(cfg.epochs - 1), `${env} ${row}`).toBeLessThan(0.9 * epochMean(0));
      }
      const csv = readFileSync(join(out, `errors-${env}.csv`), "utf8")
        .trim()
        .split("\n");
      expect(csv.length).toBe(1 + 4 * cfg.testPerConfig);
      for (const f of [`looks-${env}.png`, `errors-${env}.png`, `${env}/ours-exact/loss.png`, `${env}/ours/loss.csv`])
        expect(existsSync(join(out, f)), f).toBe(true);
      // The saved network loads into the predictor's shape.
      const net = predictorConfig(cfg, e.states.length);
      const p = networks.loadParams(join(out, env, "ours", "params.gsp"), networks.initPredictor(random.key(0), net));
      const y = networks.predictor(p, net, np.zeros([cfg.resolution, cfg.resolution, 3]) as Array);
      expect(y.shape).toEqual([e.states.length]);
      // Beside it, the standardisation that maps its outputs to states (risp-tasks' ours-read reads with it).
      const stats = JSON.parse(readFileSync(join(out, env, "ours", STANDARDISATION_FILE), "utf8")) as {
        mu: number[];
        scale: number[];
      };
      expect(stats.mu).toHaveLength(e.states.length);
      expect(stats.scale.every((x) => x > 0)).toBe(true);
    }
    // The quadrotor's: its training states' mean and spread (the states redrawn from its seed, 0).
    const train = quadrotorEnv().sample(makeRng(0), cfg.train).states;
    const quadrotorStats = JSON.parse(readFileSync(join(out, "quadrotor", "ours", STANDARDISATION_FILE), "utf8")) as {
      mu: number[];
      scale: number[];
    };
    quadrotorStats.mu.forEach((m, k) => expect(m, `mean of state ${k}`).toBeCloseTo(mean(train.map((x) => x[k]!)), 5));
    expect(r.table).toContain(
      `| ${PAPER_TABLE1.quadrotor.ours![0].toFixed(4)} ± ${PAPER_TABLE1.quadrotor.ours![1].toFixed(4)} |`,
    );
    // A rerun into the same directory trains nothing (the networks on disk are untouched) and gives the same table.
    const saved = statSync(join(out, "rod", "ours", "params.gsp")).mtimeMs;
    expect(await quiet([])).toBe(0);
    expect(statSync(join(out, "rod", "ours", "params.gsp")).mtimeMs).toBe(saved);
    expect(readResult(out).table).toBe(r.table);
    // A record trained with another regulariser weight is never mixed in.
    const file = join(out, "risp-state-instances", "00001.json");
    const stored = JSON.parse(readFileSync(file, "utf8"));
    stored.record.gamma = 123;
    writeFileSync(file, JSON.stringify(stored));
    const stderr = process.stderr.write;
    let said = "";
    process.stderr.write = ((m: string) => {
      said += m;
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(await runExperiment(rispState, ["--backend", "cpu", "--quick", "--out", out])).toBe(2);
    } finally {
      process.stderr.write = stderr;
    }
    expect(said).toMatch(/quadrotor ours trained with γ = 123/);
  }, 300_000);

  it("too few training images for a minibatch, or an unknown environment, is a clear error", async () => {
    const { code } = await runQuiet(rispState, ["--dataset", "4"]);
    expect(code).toBe(2);
    const r = cli(["risp-state", "--envs", "rod,boat", "--out", outDir("risp-state-bad-envs")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `gradsim risp-state: --envs takes quadrotor, cube, rod, hand (comma-separated), got "boat".`,
    );
  });
});
