/**
 * RISP Table 1 (RISP, ICLR 2022, §4.2): state estimation across rendering domains.
 *
 * For each environment (quadrotor, cube, rod, hand: risp.RISP_ENVS, src/risp/scenes/envs.ts) a
 * state predictor N(image) → state (networks.predictor, a small ResNet with swish and group norm)
 * is trained on SoftRas images under random rendering parameters ψ (light direction and intensity, ambient,
 * albedo, specular, sky and ground colours) over random procedural grounds (blotches, checkers,
 * stripes) that the object shadows along ψ's light, with sensor noise, each drawn by one of six
 * rasterizations (smooth or faceted, silhouettes soft to sharp: `softLooks`), and tested on
 * ray-traced images (shadows on a wood or checker ground, highlights, supersampling, noise) under
 * 4 rendering configurations drawn from other distributions (gradsim.risp: src/risp/target.ts). Rows:
 *   average       the mean training state;
 *   random        a state drawn from the training distribution;
 *   ours-no-grad  domain randomisation alone (L_error, Eq. 8);
 *   ours          + the regulariser RISP trains with, ‖∂L_error/∂ψ‖ (Eq. 12);
 *   ours-exact    + the exact regulariser ‖∂N/∂I · ∂I/∂ψ‖_F (Eq. 10), which RISP approximated.
 * Error: the mean absolute error over the state's components per test image; mean ± std over
 * the 4 × n test images, as the paper's Table 1.
 *
 * Scaled to a 2-core CPU (the paper: ResNet-18, 100 epochs): 32² images, three stages of 16, 32
 * and 32 channels, 768 training images per environment, 12 epochs, and the regulariser on the
 * first `penalised` examples of each minibatch (each costs about |ψ| = 14 extra forward passes).
 *
 *   npm run gradsim -- risp-state            # the four environments
 *   npm run gradsim -- risp-state --envs rod,hand  # some of them
 *   npm run gradsim -- risp-state --quick    # 16² images, a few dozen training images (the test)
 *
 * Writes result.json, table.md, table.csv, per environment looks-<env>.png (training renders
 * beside the 4 target configurations), errors-<env>.csv (every test image's error per row),
 * errors-<env>.png (each row's error per configuration) and
 * per trained row <env>/<row>/ with the network (params.gsp) and its loss curve (loss.csv/.png).
 */
import { join } from "node:path";
import {
  writeAtomic,
  writeLinePlot,
  writePng,
  jit,
  np,
  risp,
  sysid,
  vmap,
  type Array,
  makeRng,
  labelledGrid,
} from "gradsim/node";
import { fileRecordStore } from "gradsim/sysid/node";
import { runKey } from "./lib/experiment.js";
import { chosenNames, CliError } from "./lib/flags.js";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { mean, std } from "./lib/stats.js";

const { predictorDir, sampleTargetConfig, targetImages, trainingSet, PSI_NAMES, RISP_ENVS, TRAINED_ROWS } = risp;
type RispEnv = risp.RispPaperEnv;
type RispEnvName = risp.RispEnvName;
type SoftLook = risp.SoftLook;
type TargetConfig = risp.TargetConfig;
type TrainingSet = risp.TrainingSet;
type PredictorTraining = risp.PredictorTraining;
type TrainedRow = risp.TrainedRow;

/**
 * How SoftRas draws a training image (`SoftLook`): faceted or smooth, at a factor of the default silhouette softness.
 */
export interface Rasterization {
  readonly faceted: boolean;
  readonly softness: number;
}

/**
 * The rasterizations a training image is drawn from (one per chunk of 16): SoftRas' smooth
 * shading and faceted (flat faces in their corners' mean colour, as the ray tracer shades), each
 * at 1, 0.3 and 0.1 of the default silhouette softness — the renderer itself randomised. SoftRas'
 * soft silhouettes overlap and fatten a thin body (the rod by ~1 px); the tracer's are sharp. At
 * one look, faceted SoftRas at 0.1 of the softness is nearly 3× nearer the tracer's image than the
 * default; the rod's unregularised predictor trained on the default alone read traced test images
 * 0.0288 m off, trained on these 0.0097.
 */
const ALL_RASTERIZATIONS: readonly Rasterization[] = [false, true].flatMap((faceted) =>
  [1, 0.3, 0.1].map((softness) => ({ faceted, softness })),
);

export interface RispStateSettings extends PredictorTraining {
  readonly train: number;
  /** Test states, each rendered under the 4 target configurations. */
  readonly testPerConfig: number;
  /** The rasterizations the training images are drawn from (`softLooks`). */
  readonly rasterizations: readonly Rasterization[];
}

export const RISP_STATE_SETTINGS: Readonly<Record<"full" | "quick", RispStateSettings>> = {
  full: {
    resolution: 32,
    train: 768,
    testPerConfig: 50,
    epochs: 12,
    batch: 16,
    penalised: 2,
    widths: [16, 32, 32],
    lr: 3e-3,
    rasterizations: ALL_RASTERIZATIONS,
  },
  // Two rasterizations, the extremes: each one compiles its own renderer.
  quick: {
    resolution: 16,
    train: 64,
    testPerConfig: 4,
    epochs: 3,
    batch: 8,
    penalised: 2,
    widths: [8, 8],
    lr: 3e-3,
    rasterizations: [ALL_RASTERIZATIONS[0]!, ALL_RASTERIZATIONS[5]!],
  },
};

/** In the order their networks are numbered (new environments go last, so earlier records keep their indices). */
const ENVS: readonly RispEnvName[] = ["quadrotor", "cube", "rod", "hand"];
const CONFIGS = 4;
export const RISP_ROWS = ["average", "random", "ours-no-grad", "ours", "ours-exact"] as const;
export type RispRow = (typeof RISP_ROWS)[number];

/** RISP Table 1 (mean, std); the paper has no Eq. 10 row. */
export const PAPER_TABLE1: Record<RispEnvName, Partial<Record<RispRow, readonly [number, number]>>> = {
  quadrotor: {
    average: [0.5994, 0],
    random: [0.9661, 0.7548],
    "ours-no-grad": [0.3114, 0.3191],
    ours: [0.1505, 0.1163],
  },
  cube: { average: [0.592, 0], random: [0.9655, 0.8119], "ours-no-grad": [0.2805, 0.3199], ours: [0.1642, 0.1887] },
  rod: { average: [0.9792, 0], random: [1.273, 0.7197], "ours-no-grad": [0.0201, 0.0087], ours: [0.0194, 0.0048] },
  hand: { average: [0.2605, 0], random: [0.8323, 0.5705], "ours-no-grad": [0.1155, 0.0505], ours: [0.0974, 0.0255] },
};

/**
 * Regulariser weights γ (ramped up linearly over the first half of training, as RISP ramps its
 * weight to avoid early collapse), chosen so that at the unregularised network's solution γ times
 * the penalty is about a third of the state error (measured on the quadrotor: training error 0.10,
 * Eq. 12 penalty 0.28, Eq. 10 penalty 2.6). Ten times more for Eq. 12 (γ = 1, the paper's
 * quadrotor value) collapsed the network to a constant prediction: training error 0.20, the
 * average's, with the penalty at 1e-3. The paper's (1, 20, 30) belong to its units and networks.
 */
export const GAMMA: Record<RispEnvName, Record<"ours" | "ours-exact", number>> = {
  quadrotor: { ours: 0.1, "ours-exact": 0.01 },
  cube: { ours: 0.1, "ours-exact": 0.01 },
  rod: { ours: 0.1, "ours-exact": 0.01 },
  hand: { ours: 0.1, "ours-exact": 0.01 },
};

export interface RowSummary {
  readonly mean: number;
  readonly std: number;
  readonly perConfig: readonly number[];
  readonly trainSeconds?: number;
  readonly finalLoss?: number;
}
export interface EnvResult {
  readonly states: readonly string[];
  readonly rows: Record<RispRow, RowSummary>;
  readonly gamma: Record<"ours" | "ours-exact", number>;
  readonly targetConfigs: readonly TargetConfig[];
}
export interface RispStateResult {
  readonly settings: RispStateSettings;
  readonly psi: readonly string[];
  readonly envs: Partial<Record<RispEnvName, EnvResult>>;
  readonly table: string;
  readonly files: string[];
}

/** Per-image mean absolute error over the state components: predictions and truths [n, S]. */
function imageErrors(predicted: ArrayLike<number>, truth: readonly number[][]): number[] {
  const S = truth[0]!.length;
  return truth.map((s, i) => s.reduce((acc, x, k) => acc + Math.abs(predicted[i * S + k]! - x), 0) / S);
}

interface TestSet {
  readonly images: Array;
  readonly states: number[][];
  readonly config: number[];
  readonly configs: TargetConfig[];
}

/** The test states and the 4 target configurations (the paper: 800 images, 200 states under 4 configurations). */
function testStates(env: RispEnv, cfg: RispStateSettings, seed: number) {
  const rng = makeRng(seed);
  const { states, vertices } = env.sample(rng, cfg.testPerConfig);
  return { states, vertices, configs: globalThis.Array.from({ length: CONFIGS }, () => sampleTargetConfig(rng)) };
}

/** The test images' layout: every state under every configuration, configuration after configuration. */
const overConfigs = (states: number[][]) => ({
  states: globalThis.Array.from({ length: CONFIGS }, () => states).flat(),
  config: globalThis.Array.from({ length: CONFIGS }, (_, k) => states.map(() => k)).flat(),
});

/** The test states rendered by the ray tracer under each configuration. */
function testSet(env: RispEnv, cfg: RispStateSettings, seed: number): TestSet {
  const { states, vertices, configs } = testStates(env, cfg, seed);
  return {
    images: np.concatenate(
      configs.map((c, k) => targetImages(env, cfg.resolution, vertices, c, seed + k)),
      0,
    ),
    ...overConfigs(states),
    configs,
  };
}

/** f of each configuration's per-image errors. */
const perConfig = (errors: readonly number[], config: readonly number[], f: (xs: number[]) => number): number[] =>
  globalThis.Array.from({ length: CONFIGS }, (_, c) => f(errors.filter((_, i) => config[i] === c)));

function summary(
  errors: readonly number[],
  test: { readonly config: readonly number[] },
  extra: Partial<RowSummary> = {},
): RowSummary {
  return { mean: mean(errors), std: std(errors), perConfig: perConfig(errors, test.config, mean), ...extra };
}

/** Train one predictor row; returns the test errors per image. */
async function trainRow(
  ctx: ExperimentContext,
  env: RispEnv,
  row: TrainedRow,
  data: TrainingSet,
  test: TestSet,
  cfg: RispStateSettings,
): Promise<{ errors: number[]; seconds: number; finalLoss: number }> {
  const r = await risp.trainPredictorToDisk(predictorDir(ctx.out, env.name, row), {
    cfg,
    row,
    gamma: gammaOf(env.name, row),
    data,
    seed: ctx.flags.seed,
    label: `${env.name} ${row}`,
    progress: ctx.flags.json ? false : "auto",
  });
  const predicted = jit(vmap(r.predict))(test.images).dataSync();
  return { errors: imageErrors(predicted, test.states), seconds: r.seconds, finalLoss: r.finalLoss };
}

/** Training renders (first row) beside each target configuration's traced images. */
function writeLooks(out: string, env: RispEnvName, data: TrainingSet, test: TestSet, cfg: RispStateSettings): string {
  const shown = Math.min(6, cfg.testPerConfig);
  const zoom = (x: Array) => np.repeat(np.repeat(np.clip(x, 0, 1), 4, 0), 4, 1);
  const pick = (images: Array, start: number) =>
    globalThis.Array.from({ length: shown }, (_, i) => zoom(np.index(images, start + i)));
  const rows = [
    { label: "training (SoftRas, random psi)", images: pick(data.images, 0) },
    ...globalThis.Array.from({ length: CONFIGS }, (_, c) => ({
      label: `target config ${c + 1} (traced)`,
      images: pick(test.images, c * cfg.testPerConfig),
    })),
  ];
  const file = `looks-${env}.png`;
  writePng(
    join(out, file),
    labelledGrid(
      rows,
      globalThis.Array.from({ length: shown }, (_, i) => `${i + 1}`),
    ),
  );
  return file;
}

const ROW_COLOURS: readonly (readonly [number, number, number])[] = [
  [150, 150, 150],
  [200, 160, 60],
  [220, 90, 60],
  [60, 120, 220],
  [40, 170, 90],
];

const cell = (m: number, s: number) => `${m.toFixed(4)} ± ${s.toFixed(4)}`;

/**
 * RISP Table 1, ours beside the paper's. The paper's ± is the spread over its 4 rendering configurations (its
 * average row, whose prediction ignores the image, has none: the same states under every configuration); ours gives
 * that spread — the std of the 4 configurations' mean errors — and after a slash the std over the test images.
 */
export function tableMarkdown(envs: Partial<Record<RispEnvName, EnvResult>>): string {
  const names = ENVS.filter((e) => envs[e]);
  const head = `| row | ${names.map((e) => `${e} (ours) | ${e} (paper)`).join(" | ")} |`;
  const rule = `|---|${names.map(() => "---|---").join("|")}|`;
  const rows = RISP_ROWS.map(
    (row) =>
      `| ${row} | ${names
        .map((e) => {
          const r = envs[e]!.rows[row],
            p = PAPER_TABLE1[e][row];
          return `${cell(r.mean, std(r.perConfig))} / ${r.std.toFixed(4)} | ${p ? cell(p[0], p[1]) : "—"}`;
        })
        .join(" | ")} |`,
  );
  return [head, rule, ...rows].join("\n");
}

export const softLooks = (cfg: Pick<RispStateSettings, "resolution" | "rasterizations">): SoftLook[] =>
  cfg.rasterizations.map((r) => ({ faceted: r.faceted, sigma: r.softness * sysid.sigmaFor(cfg.resolution) }));

/** One environment's training set and traced test set (deterministic in the seed: every shard makes the same). */
interface Prepared {
  readonly name: RispEnvName;
  readonly env: RispEnv;
  readonly data: TrainingSet;
  readonly test: TestSet;
}

const envSeed = (ctx: ExperimentContext, name: RispEnvName) => ctx.flags.seed * 1000 + ENVS.indexOf(name);

function prepare(ctx: ExperimentContext, name: RispEnvName, cfg: RispStateSettings): Prepared {
  const env = RISP_ENVS[name]();
  const seed = envSeed(ctx, name);
  const t0 = performance.now();
  const rng = makeRng(seed);
  const { states, vertices } = env.sample(rng, cfg.train);
  const data = trainingSet(env, cfg.resolution, states, vertices, rng, {
    noise: 0.03,
    rasterizations: softLooks(cfg),
    log: (k) => ctx.log(`[risp-state] ${name}: rendered ${k}/${cfg.train} training images with ∂I/∂ψ`),
  });
  const test = testSet(env, cfg, seed + 500);
  ctx.log(
    `[risp-state] ${name}: ${cfg.train} training images and ${test.states.length} traced test images ` +
      `(${CONFIGS} configurations) in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  return { name, env, data, test };
}

/** One trained row of one environment: the unit of work (and of --shard). */
interface UnitRecord {
  readonly index: number;
  readonly env: RispEnvName;
  readonly row: TrainedRow;
  readonly gamma?: number;
  readonly errors: number[];
  readonly trainSeconds: number;
  readonly finalLoss: number;
}
const gammaOf = (env: RispEnvName, row: TrainedRow): number => (row === "ours-no-grad" ? 0 : GAMMA[env][row]);
const UNITS = ENVS.flatMap((env) => TRAINED_ROWS.map((row) => ({ env, row })));

/** The rows of an environment whose trained rows are all done: the weak baselines are computed here. */
function envResult(
  ctx: ExperimentContext,
  name: RispEnvName,
  cfg: RispStateSettings,
  units: readonly UnitRecord[],
  files: string[],
): EnvResult {
  const env = RISP_ENVS[name]();
  const seed = envSeed(ctx, name);
  const train = env.sample(makeRng(seed), cfg.train).states;
  const { states, configs } = testStates(env, cfg, seed + 500);
  const test = overConfigs(states);
  // The weak baselines: the training mean, and a state drawn from the training distribution.
  const average = env.stateNames.map((_, k) => mean(train.map((s) => s[k]!)));
  const drawn = env.sample(makeRng(seed + 900), test.states.length).states;
  const errors: Record<RispRow, number[]> = {
    average: imageErrors(
      test.states.flatMap(() => average),
      test.states,
    ),
    random: imageErrors(drawn.flat(), test.states),
    ...(Object.fromEntries(units.map((u) => [u.row, u.errors])) as Record<TrainedRow, number[]>),
  };
  const rows = Object.fromEntries(
    RISP_ROWS.map((row) => {
      const u = units.find((x) => x.row === row);
      return [row, summary(errors[row], test, u ? { trainSeconds: u.trainSeconds, finalLoss: u.finalLoss } : {})];
    }),
  ) as Record<RispRow, RowSummary>;
  const csv = [
    "image,config," + RISP_ROWS.join(","),
    ...test.states.map((_, i) => [i, test.config[i]! + 1, ...RISP_ROWS.map((r) => errors[r][i]!.toFixed(6))].join(",")),
  ];
  writeAtomic(join(ctx.out, `errors-${name}.csv`), csv.join("\n") + "\n");
  // Each row's mean error per target configuration (a band: ± std over that configuration's images).
  writeLinePlot(
    join(ctx.out, `errors-${name}.png`),
    RISP_ROWS.map((row, k) => {
      const m = rows[row].perConfig,
        sd = perConfig(errors[row], test.config, std);
      return {
        label: row,
        x: m.map((_, c) => c + 1),
        y: [...m],
        color: ROW_COLOURS[k],
        band: { lower: m.map((v, c) => v - sd[c]!), upper: m.map((v, c) => v + sd[c]!) },
      };
    }),
    {
      title: `${name}: state error on traced images, per target configuration`,
      xLabel: "target rendering configuration",
      yLabel: "mean abs. state error per image",
    },
  );
  files.push(`errors-${name}.csv`, `errors-${name}.png`);
  return { states: env.stateNames, rows, gamma: GAMMA[name], targetConfigs: configs };
}

async function run(ctx: ExperimentContext): Promise<RispStateResult> {
  const base = RISP_STATE_SETTINGS[ctx.flags.quick ? "quick" : "full"];
  const cfg: RispStateSettings = {
    ...base,
    epochs: ctx.flags.iters ?? base.epochs,
    train: ctx.flags.dataset ?? base.train,
  };
  if (cfg.train < cfg.batch)
    throw new CliError(
      `--dataset (training images per environment) must be at least the batch size ${cfg.batch}, got ${cfg.train}.`,
    );
  const chosen = chosenNames("envs", ctx.flags.envs, ENVS) ?? ENVS;
  const shard = ctx.flags.shard;
  const store = fileRecordStore<UnitRecord>(ctx.out, "risp-state", runKey(ctx), { shard });
  // Without --shard over shards' records: a merge, refused while a shard's networks are untrained.
  if (!shard) {
    const mine = [...UNITS.entries()].filter(([, u]) => chosen.includes(u.env)).map(([i]) => i);
    const present = mine.filter((i) => store.load(i) !== null);
    sysid.refuseIncompleteMerge(
      "risp-state",
      mine.filter((i) => !present.includes(i)),
      present.map((i) => store.origin!(i)),
    );
  }
  const records: UnitRecord[] = [];
  const files: string[] = [];
  let prepared: Prepared | null = null;
  for (const [index, u] of UNITS.entries()) {
    if (!chosen.includes(u.env)) continue;
    const kept = store.load(index);
    if (kept && (kept.gamma ?? 0) !== gammaOf(u.env, u.row)) {
      throw new CliError(
        `${ctx.out}/risp-state-instances/ holds ${u.env} ${u.row} trained with γ = ${kept.gamma ?? 0}, ` +
          `not this version's ${gammaOf(u.env, u.row)}; ` +
          `delete that record (or use another --out) to retrain it.`,
      );
    }
    if (kept) {
      records.push(kept);
      continue;
    }
    if (shard && index % shard.count !== shard.index) continue;
    if (prepared?.name !== u.env) {
      prepared = prepare(ctx, u.env, cfg);
      files.push(writeLooks(ctx.out, u.env, prepared.data, prepared.test, cfg));
    }
    const r = await trainRow(ctx, prepared.env, u.row, prepared.data, prepared.test, cfg);
    const record: UnitRecord = {
      index,
      env: u.env,
      row: u.row,
      gamma: gammaOf(u.env, u.row),
      errors: r.errors,
      trainSeconds: Number(r.seconds.toFixed(1)),
      finalLoss: r.finalLoss,
    };
    store.save(record);
    records.push(record);
    ctx.log(
      `[risp-state] ${u.env} ${u.row}: test error ${cell(mean(r.errors), std(r.errors))} ` +
        `(${r.seconds.toFixed(0)} s of training)`,
    );
  }
  const envs: Partial<Record<RispEnvName, EnvResult>> = {};
  for (const name of chosen) {
    const units = records.filter((r) => r.env === name);
    if (units.length === TRAINED_ROWS.length) envs[name] = envResult(ctx, name, cfg, units, files);
    else
      ctx.log(
        `[risp-state] ${name}: ${TRAINED_ROWS.length - units.length} of its ${TRAINED_ROWS.length} networks ` +
          `are trained by other shards; ` +
          `rerun without --shard once they are done to merge`,
      );
  }
  const done = ENVS.filter((e) => envs[e]);
  const table = tableMarkdown(envs);
  const csv = [
    "environment,row,mean,std,paper_mean,paper_std,config1,config2,config3,config4",
    ...done.flatMap((e) =>
      RISP_ROWS.map((row) => {
        const r = envs[e]!.rows[row],
          p = PAPER_TABLE1[e][row];
        return [e, row, r.mean, r.std, p?.[0] ?? "", p?.[1] ?? "", ...r.perConfig].join(",");
      }),
    ),
  ];
  // A shard's part is never written where the merged table goes (its records are on disk; its summary in its own result
  // file).
  if (!shard) {
    writeAtomic(join(ctx.out, "table.md"), table + "\n");
    writeAtomic(join(ctx.out, "table.csv"), csv.join("\n") + "\n");
    files.push("table.md", "table.csv");
  }
  ctx.log(`\nRISP Table 1 (state error on traced images under ${CONFIGS} unseen rendering configurations):\n${table}`);
  return { settings: cfg, psi: PSI_NAMES, envs, table, files };
}

export const experiment: Experiment<RispStateResult> = {
  name: "risp-state",
  description:
    "RISP Table 1: state estimation from images of another renderer under unseen lighting, materials and backgrounds " +
    "(quadrotor, cube, rod, hand; --envs for some): " +
    "average / random / domain randomisation / + Eq. 12 / + exact Eq. 10",
  takes: ["envs"],
  run,
};

await mainIfEntry(experiment, import.meta.url);
