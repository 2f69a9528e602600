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
 * 4 rendering configurations drawn from other distributions (gradsim.risp: src/risp/target.ts). Two domains:
 *   --domain table     the configurations the tables and tasks use: their lighting and materials mostly lie inside
 *                      the training ranges, so the gap is mostly the renderer's;
 *   --domain held-out  training looks and test configurations disjoint in ψ (risp.HELD_OUT_TRAINING_PSI,
 *                      risp.sampleHeldOutConfig): every test configuration outside the training ranges in 5 of ψ's
 *                      parameters, by how much written per configuration (result.json `excess`).
 * Each trained row is also tested on the two gaps apart: SoftRas images under the test configurations (the ψ gap
 * alone) and traced images under looks drawn from the training distribution (the renderer's gap alone). Rows:
 *   average       the mean training state;
 *   random        a state drawn from the training distribution;
 *   ours-no-grad  domain randomisation alone (L_error, Eq. 8);
 *   ours          + the regulariser RISP trains with, ‖∂L_error/∂ψ‖ (Eq. 12);
 *   ours-exact    + the exact regulariser ‖∂N/∂I · ∂I/∂ψ‖_F (Eq. 10), which RISP approximated.
 * Error: the mean absolute error over the state's components per test image; mean ± std over
 * the 4 × n test images, as the paper's Table 1.
 *
 * Scaled to a 2-core CPU (the paper: ResNet-18, 100 epochs): 32² images, three stages of 16, 32
 * and 32 channels, 768 training images per environment, 12 epochs; Eq. 12 regularises every example of a minibatch
 * (one reverse pass each, and one more for its gradient), the exact Eq. 10 the first 2 of 16 (each costs |ψ| = 14
 * jvps).
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
  type Rng,
} from "gradsim/node";
import { fileRecordStore } from "gradsim/sysid/node";
import { runKey } from "./lib/experiment.js";
import { chosenNames, CliError, oneOf } from "./lib/flags.js";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { mean, std } from "./lib/stats.js";

const { predictorDir, targetImages, trainingSet, PSI_NAMES, RISP_ENVS } = risp;
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

/** The test configurations: the tables' (`risp.sampleTargetConfig`) or held out from training in ψ. */
export const RISP_STATE_DOMAINS = ["table", "held-out"] as const;
export type RispStateDomain = (typeof RISP_STATE_DOMAINS)[number];
const DOMAINS: Record<RispStateDomain, { psi: risp.PsiDistribution; sample: (rng: Rng) => TargetConfig }> = {
  table: { psi: risp.DEFAULT_PSI, sample: risp.sampleTargetConfig },
  "held-out": { psi: risp.HELD_OUT_TRAINING_PSI, sample: risp.sampleHeldOutConfig },
};

export const RISP_STATE_SETTINGS: Readonly<Record<"full" | "quick", RispStateSettings>> = {
  full: {
    resolution: 32,
    train: 768,
    testPerConfig: 50,
    epochs: 12,
    batch: 16,
    penalised: 16,
    penalisedExact: 2,
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
    penalised: 8,
    penalisedExact: 2,
    widths: [8, 8],
    lr: 3e-3,
    rasterizations: [ALL_RASTERIZATIONS[0]!, ALL_RASTERIZATIONS[5]!],
  },
};

/** In the order their networks are numbered (new environments go last, so earlier records keep their indices). */
const ENVS: readonly RispEnvName[] = ["quadrotor", "cube", "rod", "hand"];
const CONFIGS = 4;
export const RISP_ROWS = ["average", "random", "ours-no-grad", "ours", "ours-exact", "ours-paper-gamma"] as const;
export type RispRow = (typeof RISP_ROWS)[number];
/** The rows a network is trained for. */
export type NetworkRow = Exclude<RispRow, "average" | "random">;
/** The loss each network row trains with (`risp.predictorLoss`). */
const LOSS: Record<NetworkRow, TrainedRow> = {
  "ours-no-grad": "ours-no-grad",
  ours: "ours",
  "ours-exact": "ours-exact",
  "ours-paper-gamma": "ours",
};
/**
 * The network rows of each domain. The held-out split trains Eq. 12 at the paper's γ (`PAPER_GAMMA`) in place of the
 * exact Eq. 10 (no row of the paper; the tables' domain has it).
 */
export const NETWORK_ROWS: Record<RispStateDomain, readonly NetworkRow[]> = {
  table: ["ours-no-grad", "ours", "ours-exact"],
  "held-out": ["ours-no-grad", "ours", "ours-paper-gamma"],
};

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

/**
 * The paper's γ per environment (RISP App. B: 1 for the quadrotor, 20 the cube, 30 the rod, 100 the hand), weighting
 * the mean penalty of a minibatch's examples, as ours does (the paper's Eq. 12 sums over the data).
 */
export const PAPER_GAMMA: Record<RispEnvName, number> = { quadrotor: 1, cube: 20, rod: 30, hand: 100 };

export interface RowSummary {
  readonly mean: number;
  readonly std: number;
  readonly perConfig: readonly number[];
  readonly trainSeconds?: number;
  readonly finalLoss?: number;
}
/** A trained row's error on the two gaps apart. */
export interface GapSummary {
  /** SoftRas images under the test configurations: the ψ gap without the renderer's. */
  readonly psi: RowSummary;
  /** Traced images under looks drawn from the training distribution: the renderer's gap without ψ's. */
  readonly renderer: RowSummary;
}
export interface EnvResult {
  readonly states: readonly string[];
  /** The weak baselines and the domain's network rows (`NETWORK_ROWS`). */
  readonly rows: Partial<Record<RispRow, RowSummary>>;
  readonly gaps: Partial<Record<NetworkRow, GapSummary>>;
  /** The regulariser's weight of each network row (0: none). */
  readonly gamma: Partial<Record<NetworkRow, number>>;
  readonly targetConfigs: readonly TargetConfig[];
  /** Per test configuration, how far its ψ lies outside the training ranges, per parameter (`risp.psiExcess`). */
  readonly excess: readonly (readonly number[])[];
}
export interface RispStateResult {
  readonly domain: RispStateDomain;
  readonly settings: RispStateSettings;
  readonly psi: readonly string[];
  readonly envs: Partial<Record<RispEnvName, EnvResult>>;
  readonly table: string;
  readonly files: string[];
}

/** Per-image mean absolute error over the state components: predictions and truths [n, S]. */
export function imageErrors(predicted: ArrayLike<number>, truth: readonly number[][]): number[] {
  const S = truth[0]!.length;
  return truth.map((s, i) => s.reduce((acc, x, k) => acc + Math.abs(predicted[i * S + k]! - x), 0) / S);
}

interface TestSet {
  /** Traced under the test configurations (the table's), SoftRas under them (the ψ gap), traced under training looks
   * (the renderer's gap). */
  readonly images: Array;
  readonly psiGap: Array;
  readonly rendererGap: Array;
  readonly states: number[][];
  readonly config: number[];
  readonly configs: TargetConfig[];
}
type TestImages = "images" | "psiGap" | "rendererGap";

/**
 * The test states, the 4 target configurations (the paper: 800 images, 200 states under 4 configurations) and 4
 * looks from the training distribution as traced configurations (the renderer's gap); the latter drawn last, so the
 * states and configurations are those of runs before it.
 */
function testStates(env: RispEnv, cfg: RispStateSettings, seed: number, domain: RispStateDomain) {
  const rng = makeRng(seed);
  const { states, vertices } = env.sample(rng, cfg.testPerConfig);
  const configs = globalThis.Array.from({ length: CONFIGS }, () => DOMAINS[domain].sample(rng));
  const trainingLooks = globalThis.Array.from({ length: CONFIGS }, () =>
    risp.configOfPsi(risp.samplePsi(rng, DOMAINS[domain].psi)),
  );
  return { states, vertices, configs, trainingLooks };
}

/** The test images' layout: every state under every configuration, configuration after configuration. */
const overConfigs = (states: number[][]) => ({
  states: globalThis.Array.from({ length: CONFIGS }, () => states).flat(),
  config: globalThis.Array.from({ length: CONFIGS }, (_, k) => states.map(() => k)).flat(),
});

/** The test states rendered by the ray tracer and by SoftRas under each configuration, and traced under training
 * looks. */
function testSet(env: RispEnv, cfg: RispStateSettings, seed: number, domain: RispStateDomain): TestSet {
  const { states, vertices, configs, trainingLooks } = testStates(env, cfg, seed, domain);
  const traced = (cs: readonly TargetConfig[], offset: number) =>
    np.concatenate(
      cs.map((c, k) => targetImages(env, cfg.resolution, vertices, c, seed + offset + k)),
      0,
    );
  const soft = softLooks(cfg)[0]!;
  return {
    images: traced(configs, 0),
    psiGap: np.concatenate(
      configs.map((c) => risp.softConfigImages(env, cfg.resolution, vertices, c, soft)),
      0,
    ),
    rendererGap: traced(trainingLooks, CONFIGS),
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

/** Train one predictor row; returns the test errors per image of each test set. */
async function trainRow(
  ctx: ExperimentContext,
  env: RispEnv,
  row: NetworkRow,
  data: TrainingSet,
  test: TestSet,
  cfg: RispStateSettings,
): Promise<{ errors: Record<TestImages, number[]>; seconds: number; finalLoss: number }> {
  const r = await risp.trainPredictorToDisk(predictorDir(ctx.out, env.name, row), {
    cfg,
    row: LOSS[row],
    gamma: gammaOf(env.name, row),
    data,
    seed: ctx.flags.seed,
    label: `${env.name} ${row}`,
    progress: ctx.flags.json ? false : "auto",
  });
  const read = jit(vmap(r.predict));
  const errorsOn = (k: TestImages) => imageErrors(read(test[k]).dataSync(), test.states);
  return {
    errors: { images: errorsOn("images"), psiGap: errorsOn("psiGap"), rendererGap: errorsOn("rendererGap") },
    seconds: r.seconds,
    finalLoss: r.finalLoss,
  };
}

/** Training renders (first row) beside each target configuration's traced images. */
function writeLooks(out: string, env: RispEnvName, data: TrainingSet, test: TestSet, cfg: RispStateSettings): string {
  const shown = Math.min(6, cfg.testPerConfig);
  const zoom = (x: Array) => np.repeat(np.repeat(np.clip(x, 0, 1), 4, 0), 4, 1);
  const pick = (images: Array, start: number) =>
    globalThis.Array.from({ length: shown }, (_, i) => zoom(np.index(images, start + i)));
  const configRows = (images: Array, label: (c: number) => string) =>
    globalThis.Array.from({ length: CONFIGS }, (_, c) => ({
      label: label(c),
      images: pick(images, c * cfg.testPerConfig),
    }));
  const rows = [
    { label: "training (SoftRas, random psi)", images: pick(data.images, 0) },
    ...configRows(test.images, (c) => `target config ${c + 1} (traced)`),
    ...configRows(test.psiGap, (c) => `target config ${c + 1} (SoftRas)`),
    ...configRows(test.rendererGap, (c) => `training look ${c + 1} (traced)`),
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
  [150, 60, 200],
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
  const present = RISP_ROWS.filter((row) => names.some((e) => envs[e]!.rows[row]));
  const rows = present.map(
    (row) =>
      `| ${row} | ${names
        .map((e) => {
          const r = envs[e]!.rows[row],
            p = PAPER_TABLE1[e][row];
          const ours = r ? `${cell(r.mean, std(r.perConfig))} / ${r.std.toFixed(4)}` : "—";
          return `${ours} | ${p ? cell(p[0], p[1]) : "—"}`;
        })
        .join(" | ")} |`,
  );
  return [head, rule, ...rows].join("\n");
}

/**
 * The trained rows' error on the two gaps apart (mean ± configuration spread / image std, as `tableMarkdown`): SoftRas
 * images under the test configurations (ψ's gap alone) and traced images under training looks (the renderer's alone).
 */
export function gapsMarkdown(envs: Partial<Record<RispEnvName, EnvResult>>): string {
  const names = ENVS.filter((e) => envs[e]);
  const head = `| row | ${names.map((e) => `${e}: ψ gap (SoftRas) | ${e}: renderer gap (traced)`).join(" | ")} |`;
  const rule = `|---|${names.map(() => "---|---").join("|")}|`;
  const at = (r: RowSummary | undefined) => (r ? `${cell(r.mean, std(r.perConfig))} / ${r.std.toFixed(4)}` : "—");
  const present = RISP_ROWS.filter((row) => names.some((e) => envs[e]!.gaps[row as NetworkRow]));
  const rows = present.map((row) => {
    const gap = (e: RispEnvName) => envs[e]!.gaps[row as NetworkRow];
    return `| ${row} | ${names.map((e) => `${at(gap(e)?.psi)} | ${at(gap(e)?.renderer)}`).join(" | ")} |`;
  });
  return [head, rule, ...rows].join("\n");
}

/** Per environment, the least and largest excess outside the training ranges over its test configurations, per
 * parameter that any lies outside of (in units of the parameter's training range). */
export function excessMarkdown(envs: Partial<Record<RispEnvName, EnvResult>>): string {
  const names = ENVS.filter((e) => envs[e]);
  const outside = PSI_NAMES.map((_, i) => i).filter((i) => names.some((e) => envs[e]!.excess.some((x) => x[i]! > 0)));
  if (!outside.length) return "Every test configuration lies inside the training ranges of ψ.";
  const head = `| parameter | ${names.join(" | ")} |`;
  const rule = `|---|${names.map(() => "---").join("|")}|`;
  const rows = outside.map((i) => {
    const range = (e: RispEnvName) => {
      const xs = envs[e]!.excess.map((x) => x[i]!);
      return `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
    };
    return `| ${PSI_NAMES[i]} | ${names.map(range).join(" | ")} |`;
  });
  return [head, rule, ...rows].join("\n");
}

/**
 * Table 1 (`tableMarkdown`) and, for runs that measured them (all but those before the gaps were), the two gaps apart
 * (`gapsMarkdown`) and the test configurations' excess outside the training ranges (`excessMarkdown`).
 */
export function tablesMarkdown(envs: Partial<Record<RispEnvName, EnvResult>>): string {
  const measured = Object.values(envs).every((e) => e?.gaps && e.excess);
  return [
    tableMarkdown(envs),
    ...(measured
      ? [
          "",
          "The trained rows on the two gaps apart: SoftRas images under the test configurations (ψ's gap alone) and " +
            "traced images under looks drawn from the training distribution (the renderer's gap alone):",
          "",
          gapsMarkdown(envs),
          "",
          "How far the test configurations lie outside the training ranges of ψ (the least–largest over each " +
            "environment's 4, per parameter, in units of its training range):",
          "",
          excessMarkdown(envs),
        ]
      : []),
  ].join("\n");
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

function prepare(ctx: ExperimentContext, name: RispEnvName, cfg: RispStateSettings, domain: RispStateDomain): Prepared {
  const env = RISP_ENVS[name]();
  const seed = envSeed(ctx, name);
  const t0 = performance.now();
  const rng = makeRng(seed);
  const { states, vertices } = env.sample(rng, cfg.train);
  const data = trainingSet(env, cfg.resolution, states, vertices, rng, {
    noise: 0.03,
    rasterizations: softLooks(cfg),
    psi: DOMAINS[domain].psi,
    log: (k) => ctx.log(`[risp-state] ${name}: rendered ${k}/${cfg.train} training images with ∂I/∂ψ`),
  });
  const test = testSet(env, cfg, seed + 500, domain);
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
  readonly row: NetworkRow;
  readonly gamma?: number;
  /** Examples per minibatch the regulariser was applied to. */
  readonly penalised: number;
  /** The test errors per image: traced under the test configurations, and on the two gaps apart. */
  readonly errors: number[];
  readonly psiGap: number[];
  readonly rendererGap: number[];
  readonly trainSeconds: number;
  readonly finalLoss: number;
}
const gammaOf = (env: RispEnvName, row: NetworkRow): number =>
  row === "ours-no-grad" ? 0 : row === "ours-paper-gamma" ? PAPER_GAMMA[env] : GAMMA[env][row];
const penalisedOf = (cfg: RispStateSettings, row: NetworkRow): number =>
  LOSS[row] === "ours-no-grad" ? 0 : LOSS[row] === "ours" ? cfg.penalised : (cfg.penalisedExact ?? cfg.penalised);
/** The key of a run's records: the run's, its domain and its image side. */
export const storeKey = (ctx: ExperimentContext, domain: RispStateDomain, resolution: number): string =>
  `${runKey(ctx)} domain=${domain} resolution=${resolution}`;

/** A domain's units, numbered in this order (the shards take alternate ones: each gets every kind of row). */
const unitsOf = (domain: RispStateDomain) => ENVS.flatMap((env) => NETWORK_ROWS[domain].map((row) => ({ env, row })));

/** The rows of an environment whose trained rows are all done: the weak baselines are computed here. */
function envResult(
  ctx: ExperimentContext,
  name: RispEnvName,
  cfg: RispStateSettings,
  domain: RispStateDomain,
  units: readonly UnitRecord[],
  files: string[],
): EnvResult {
  const env = RISP_ENVS[name]();
  const seed = envSeed(ctx, name);
  const train = env.sample(makeRng(seed), cfg.train).states;
  const { states, configs } = testStates(env, cfg, seed + 500, domain);
  const test = overConfigs(states);
  // The weak baselines: the training mean, and a state drawn from the training distribution.
  const average = env.stateNames.map((_, k) => mean(train.map((s) => s[k]!)));
  const drawn = env.sample(makeRng(seed + 900), test.states.length).states;
  const errors: Partial<Record<RispRow, number[]>> = {
    average: imageErrors(
      test.states.flatMap(() => average),
      test.states,
    ),
    random: imageErrors(drawn.flat(), test.states),
    ...Object.fromEntries(units.map((u) => [u.row, u.errors])),
  };
  const shown = RISP_ROWS.filter((row) => errors[row]);
  const rows = Object.fromEntries(
    shown.map((row) => {
      const u = units.find((x) => x.row === row);
      return [row, summary(errors[row]!, test, u ? { trainSeconds: u.trainSeconds, finalLoss: u.finalLoss } : {})];
    }),
  ) as Partial<Record<RispRow, RowSummary>>;
  const gaps = Object.fromEntries(
    units.map((u) => [u.row, { psi: summary(u.psiGap, test), renderer: summary(u.rendererGap, test) }]),
  ) as Partial<Record<NetworkRow, GapSummary>>;
  const gapColumns = units.flatMap((u) => [
    { name: `${u.row} psi-gap`, at: (i: number) => u.psiGap[i]! },
    { name: `${u.row} renderer-gap`, at: (i: number) => u.rendererGap[i]! },
  ]);
  const csv = [
    ["image,config", ...shown, ...gapColumns.map((c) => c.name)].join(","),
    ...test.states.map((_, i) =>
      [
        i,
        test.config[i]! + 1,
        ...shown.map((r) => errors[r]![i]!.toFixed(6)),
        ...gapColumns.map((c) => c.at(i).toFixed(6)),
      ].join(","),
    ),
  ];
  writeAtomic(join(ctx.out, `errors-${name}.csv`), csv.join("\n") + "\n");
  // Each row's mean error per target configuration (a band: ± std over that configuration's images).
  writeLinePlot(
    join(ctx.out, `errors-${name}.png`),
    shown.map((row) => {
      const m = rows[row]!.perConfig,
        sd = perConfig(errors[row]!, test.config, std);
      return {
        label: row,
        x: m.map((_, c) => c + 1),
        y: [...m],
        color: ROW_COLOURS[RISP_ROWS.indexOf(row)],
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
  return {
    states: env.stateNames,
    rows,
    gaps,
    gamma: Object.fromEntries(units.map((u) => [u.row, gammaOf(name, u.row)])),
    targetConfigs: configs,
    excess: configs.map((c) => risp.psiExcess(risp.configPsi(c), DOMAINS[domain].psi)),
  };
}

async function run(ctx: ExperimentContext): Promise<RispStateResult> {
  const base = RISP_STATE_SETTINGS[ctx.flags.quick ? "quick" : "full"];
  const cfg: RispStateSettings = {
    ...base,
    epochs: ctx.flags.iters ?? base.epochs,
    train: ctx.flags.dataset ?? base.train,
    resolution: ctx.flags.resolution ?? base.resolution,
  };
  if (cfg.train < cfg.batch)
    throw new CliError(
      `--dataset (training images per environment) must be at least the batch size ${cfg.batch}, got ${cfg.train}.`,
    );
  const domain = oneOf("domain", ctx.flags.domain, RISP_STATE_DOMAINS, "table");
  const chosen = chosenNames("envs", ctx.flags.envs, ENVS) ?? ENVS;
  const shard = ctx.flags.shard;
  const store = fileRecordStore<UnitRecord>(ctx.out, "risp-state", storeKey(ctx, domain, cfg.resolution), { shard });
  // Without --shard over shards' records: a merge, refused while a shard's networks are untrained.
  if (!shard) {
    const mine = [...unitsOf(domain).entries()].filter(([, u]) => chosen.includes(u.env)).map(([i]) => i);
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
  const trained = NETWORK_ROWS[domain].length;
  for (const [index, u] of unitsOf(domain).entries()) {
    if (!chosen.includes(u.env)) continue;
    const kept = store.load(index);
    if (kept && ((kept.gamma ?? 0) !== gammaOf(u.env, u.row) || kept.penalised !== penalisedOf(cfg, u.row))) {
      throw new CliError(
        `${ctx.out}/risp-state-instances/ holds ${u.env} ${u.row} trained with γ = ${kept.gamma ?? 0} on ` +
          `${kept.penalised} examples per minibatch, not this version's ${gammaOf(u.env, u.row)} on ` +
          `${penalisedOf(cfg, u.row)}; ` +
          `delete that record (or use another --out) to retrain it.`,
      );
    }
    if (kept) {
      records.push(kept);
      continue;
    }
    if (shard && index % shard.count !== shard.index) continue;
    if (prepared?.name !== u.env) {
      prepared = prepare(ctx, u.env, cfg, domain);
      files.push(writeLooks(ctx.out, u.env, prepared.data, prepared.test, cfg));
    }
    const r = await trainRow(ctx, prepared.env, u.row, prepared.data, prepared.test, cfg);
    const record: UnitRecord = {
      index,
      env: u.env,
      row: u.row,
      gamma: gammaOf(u.env, u.row),
      penalised: penalisedOf(cfg, u.row),
      errors: r.errors.images,
      psiGap: r.errors.psiGap,
      rendererGap: r.errors.rendererGap,
      trainSeconds: Number(r.seconds.toFixed(1)),
      finalLoss: r.finalLoss,
    };
    store.save(record);
    records.push(record);
    ctx.log(
      `[risp-state] ${u.env} ${u.row}: test error ${cell(mean(r.errors.images), std(r.errors.images))} ` +
        `(${r.seconds.toFixed(0)} s of training)`,
    );
  }
  const envs: Partial<Record<RispEnvName, EnvResult>> = {};
  for (const name of chosen) {
    const units = records.filter((r) => r.env === name);
    if (units.length === trained) envs[name] = envResult(ctx, name, cfg, domain, units, files);
    else
      ctx.log(
        `[risp-state] ${name}: ${trained - units.length} of its ${trained} networks ` +
          `are trained by other shards; ` +
          `rerun without --shard once they are done to merge`,
      );
  }
  const done = ENVS.filter((e) => envs[e]);
  const table = tablesMarkdown(envs);
  const csv = [
    "environment,row,mean,std,paper_mean,paper_std,config1,config2,config3,config4",
    ...done.flatMap((e) =>
      RISP_ROWS.flatMap((row) => {
        const r = envs[e]!.rows[row],
          p = PAPER_TABLE1[e][row];
        return r ? [[e, row, r.mean, r.std, p?.[0] ?? "", p?.[1] ?? "", ...r.perConfig].join(",")] : [];
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
  return { domain, settings: cfg, psi: PSI_NAMES, envs, table, files };
}

export const experiment: Experiment<RispStateResult> = {
  name: "risp-state",
  description:
    "RISP Table 1: state estimation from images of another renderer under unseen lighting, materials and backgrounds " +
    "(quadrotor, cube, rod, hand; --envs for some): " +
    "average / random / domain randomisation / + Eq. 12 / + exact Eq. 10",
  takes: ["envs", "domain", "resolution"],
  run,
};

await mainIfEntry(experiment, import.meta.url);
