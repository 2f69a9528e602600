/**
 * RISP's environments as the experiments draw them, and the `risp-state` experiment (RISP Table 1)
 * in its quick mode: training images whose ∂I/∂ψ columns belong to the right rendering parameters,
 * ray-traced targets, and the table's rows from trained networks on disk. The environments' own
 * states and samplers (risp.RISP_ENVS) are tested in risp-scenes.test.ts.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRng } from "../src/core/host-rng.js";
import { init, np, random, render, sysid, type Array } from "../src/index.js";
import { networks, risp } from "../src/node.js";
import {
  experiment as rispState,
  NETWORK_ROWS,
  PAPER_TABLE1,
  RISP_ROWS,
  RISP_STATE_SETTINGS,
  softLooks,
} from "../examples/risp-state.js";
import { DATA_EFFICIENCY_SETTINGS, experiment as rispDataEfficiency } from "../examples/risp-data-efficiency.js";
import { mean, std } from "../examples/lib/stats.js";
import { configurationDraws } from "../examples/risp-tasks.js";
import { runExperiment } from "../examples/lib/run.js";
import { cli, outDir, readResult, runQuiet } from "./experiments-helpers.js";

// The library's own behaviour (∂I/∂ψ against central differences, the training looks, the targets) is tested on a
// sliding box in risp-library.test.ts.
const {
  paperProblem: rispProblem,
  quadrotorEnv,
  rodEnv,
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

describe("RISP environments", () => {
  // Our frames (ψ's middle, plain ground) and the table's configurations draw it darker.
  it("reverseContrast draws the quadrotor brighter than the ground behind it, where our frames draw it darker", () => {
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

  // The training images are drawn from both rasterizations.
  it("faceted SoftRas with sharp silhouettes draws the rod as the ray tracer does; training images use both", () => {
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
  // Their training losses fall; the outputs: the table, networks and pictures; --envs picks the environments.
  it("trains the three predictors per environment, writes its outputs, resumes, and heeds --envs", async () => {
    const out = outDir("risp-state-quick");
    // The held-out domain: the table's path with the split's training looks and test configurations.
    const quiet = async (args: readonly string[]) =>
      (await runQuiet(rispState, ["--domain", "held-out", ...args], out)).code;
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
      // The held-out split trains Eq. 12 at the paper's γ in place of the exact Eq. 10.
      const rows = ["average", "random", "ours-no-grad", "ours", "ours-paper-gamma"] as const;
      expect(Object.keys(e.rows)).toEqual(rows);
      expect(rows.every((row) => RISP_ROWS.includes(row))).toBe(true);
      for (const row of rows) {
        expect(Number.isFinite(e.rows[row].mean), `${env} ${row}`).toBe(true);
        expect(e.rows[row].perConfig.length).toBe(4);
      }
      // The two gaps apart, per trained row; every test configuration outside the training ranges (5 parameters).
      for (const row of NETWORK_ROWS["held-out"])
        for (const gap of ["psi", "renderer"] as const) {
          expect(e.gaps[row][gap].perConfig.length, `${env} ${row} ${gap}`).toBe(4);
          expect(Number.isFinite(e.gaps[row][gap].mean), `${env} ${row} ${gap}`).toBe(true);
        }
      // (ambient, the light's azimuth and elevation, the specular, and an albedo channel: ψ's entries 0–2, 7, 4–6).
      for (const x of e.excess as number[][])
        expect(
          [x[0], x[1], x[2], x[7], Math.max(x[4]!, x[5]!, x[6]!)].every((v) => v! > 0),
          `${x}`,
        ).toBe(true);
      // Trained on a few dozen images for a few epochs, every predictor's training loss fell (the
      // last epoch's minibatches against the first's). Whether it then reads 16 traced test images
      // better than a random state is a property of the draw (the cube's drops: 0.097 against 0.081).
      const steps = cfg.train / cfg.batch;
      for (const row of NETWORK_ROWS["held-out"]) {
        const loss = readFileSync(join(out, env, row, "loss.csv"), "utf8")
          .trim()
          .split("\n")
          .slice(1)
          .map((l) => Number(l.split(",")[1]));
        const epochMean = (k: number) => mean(loss.slice(k * steps, (k + 1) * steps));
        expect(loss.length).toBe(cfg.epochs * steps);
        expect(loss.every(Number.isFinite)).toBe(true);
        // At the paper's γ (up to 100) the ramped penalty may outgrow the error's fall.
        if (row !== "ours-paper-gamma")
          expect(epochMean(cfg.epochs - 1), `${env} ${row}`).toBeLessThan(0.9 * epochMean(0));
      }
      const csv = readFileSync(join(out, `errors-${env}.csv`), "utf8")
        .trim()
        .split("\n");
      expect(csv.length).toBe(1 + 4 * cfg.testPerConfig);
      expect(csv[0]).toBe(
        "image,config,average,random,ours-no-grad,ours,ours-paper-gamma," +
          "ours-no-grad psi-gap,ours-no-grad renderer-gap,ours psi-gap,ours renderer-gap," +
          "ours-paper-gamma psi-gap,ours-paper-gamma renderer-gap",
      );
      for (const f of [
        `looks-${env}.png`,
        `errors-${env}.png`,
        `${env}/ours-paper-gamma/loss.png`,
        `${env}/ours/loss.csv`,
      ])
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
    // Ours: mean ± the spread over the 4 configurations (the paper's: none for the average, which ignores the image,
    // the test states being the same under every configuration) / the std over the images.
    expect(r.table).toMatch(/^\| average \| \d\.\d{4} ± 0\.0000 \/ 0\.\d{4} \|/m);
    const ours = r.envs.quadrotor.rows.ours as { mean: number; std: number; perConfig: number[] };
    expect(r.table).toContain(
      `| ${ours.mean.toFixed(4)} ± ${std(ours.perConfig).toFixed(4)} / ${ours.std.toFixed(4)} | ` +
        `${PAPER_TABLE1.quadrotor.ours![0].toFixed(4)}`,
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
      expect(
        await runExperiment(rispState, ["--backend", "cpu", "--quick", "--domain", "held-out", "--out", out]),
      ).toBe(2);
    } finally {
      process.stderr.write = stderr;
    }
    expect(said).toMatch(/quadrotor ours trained with γ = 123 on 8 examples per minibatch/);
  }, 300_000);

  it("too few images, an unknown environment or domain are clear errors; --resolution sets the side", async () => {
    const { code } = await runQuiet(rispState, ["--dataset", "4"]);
    expect(code).toBe(2);
    const r = cli(["risp-state", "--envs", "rod,boat", "--out", outDir("risp-state-bad-envs")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `gradsim risp-state: --envs takes quadrotor, cube, rod, hand (comma-separated), got "boat".`,
    );
    // --resolution: another image side (its networks read images of that side); refused by other experiments.
    const small = outDir("risp-state-resolution");
    expect((await runQuiet(rispState, ["--envs", "rod", "--resolution", "8", "--iters", "1"], small)).code).toBe(0);
    const rod = readResult(small);
    expect(rod.settings.resolution).toBe(8);
    const net8 = predictorConfig(rod.settings, rod.envs.rod.states.length);
    const p8 = networks.loadParams(
      join(small, "rod", "ours", "params.gsp"),
      networks.initPredictor(random.key(0), net8),
    );
    expect(networks.predictor(p8, net8, np.zeros([8, 8, 3]) as Array).shape).toEqual([rod.envs.rod.states.length]);
    const other = cli(["pendulum", "--resolution", "64"]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("only risp-state takes --resolution");
    const d = cli(["risp-state", "--domain", "reversed-contrast", "--out", outDir("risp-state-bad-domain")]);
    expect(d.code).toBe(2);
    expect(d.stderr).toContain(`--domain must be one of table, held-out, got "reversed-contrast".`);
  });
});

describe("risp-data-efficiency (quick)", () => {
  it("trains ours and ours-no-grad per configuration count, testing every epoch; curves and a figure", async () => {
    const out = outDir("risp-data-efficiency-quick");
    expect((await runQuiet(rispDataEfficiency, [], out)).code).toBe(0);
    const r = readResult(out);
    const s = DATA_EFFICIENCY_SETTINGS.quick;
    expect(r.curves.map((c: { count: unknown; row: string }) => `${c.count} ${c.row}`)).toEqual(
      s.counts.flatMap((c) => [`${c} ours-no-grad`, `${c} ours`]),
    );
    for (const c of r.curves) {
      expect(c.testError).toHaveLength(s.training.epochs);
      expect(c.trainLoss).toHaveLength(s.training.epochs);
      expect([...c.testError, ...c.trainLoss].every((v: number) => Number.isFinite(v) && v > 0)).toBe(true);
    }
    // The table: each count's last-epoch errors and their ratio.
    const one = (row: string) => r.curves.find((c: { count: unknown; row: string }) => c.count === 1 && c.row === row);
    const [a, b] = [one("ours-no-grad").testError.at(-1), one("ours").testError.at(-1)];
    expect(r.table).toContain(`| 1 | ${a.toFixed(4)} | ${b.toFixed(4)} | ${(b / a).toFixed(2)} |`);
    const csv = readFileSync(join(out, "curves.csv"), "utf8").trim().split("\n");
    expect(csv).toHaveLength(1 + r.curves.length * s.training.epochs);
    for (const f of ["fig6a.png", "table.md"]) expect(existsSync(join(out, f)), f).toBe(true);
  }, 300_000);
});
