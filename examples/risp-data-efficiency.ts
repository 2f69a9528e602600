/**
 * RISP Fig. 6a (RISP, ICLR 2022, App. D): does the rendering-gradient regulariser get more out of few rendering
 * configurations? The quadrotor's predictors, ours-no-grad and ours (Eq. 12 on every example, γ of Table 1), trained
 * on Table 1's training states drawn under 1 or 10 rendering configurations (ψ and ground texture each, fixed) or a
 * fresh one per image, and tested after every epoch on traced images of other states under unseen configurations —
 * those of Table 1's held-out split (risp.sampleHeldOutConfig: outside the training ranges of ψ,
 * risp.HELD_OUT_TRAINING_PSI, in 5 parameters).
 *
 * The paper: 100 epochs, 200 test states under 10 configurations; "all solid lines [ours] reach a lower state
 * estimation loss than their dashed counterparts". Here: Table 1's scale (32², 768 training images, 12 epochs) and
 * 50 test states under 10 configurations.
 *
 *   npm run gradsim -- risp-data-efficiency           # about 20 min on a core
 *   npm run gradsim -- risp-data-efficiency --quick   # 16², a few dozen images (the test)
 *
 * Writes result.json, curves.csv (test error and training loss per epoch), fig6a.png (test error per epoch) and
 * table.md (the last epoch's test error per row).
 */
import { join } from "node:path";
import { makeRng, np, risp, writeAtomic, writeLinePlot, type Array } from "gradsim/node";
import { imageErrors, GAMMA, RISP_STATE_SETTINGS, softLooks, type RispStateSettings } from "./risp-state.js";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { mean } from "./lib/stats.js";

/** How many rendering configurations the training images are drawn under: a number, or a fresh one per image. */
export type ConfigurationCount = number | "each";
type Row = "ours-no-grad" | "ours";
const ROWS: readonly Row[] = ["ours-no-grad", "ours"];

export interface DataEfficiencySettings {
  readonly training: RispStateSettings;
  readonly counts: readonly ConfigurationCount[];
  readonly testStates: number;
  readonly testConfigs: number;
}

export const DATA_EFFICIENCY_SETTINGS: Readonly<Record<"full" | "quick", DataEfficiencySettings>> = {
  full: { training: RISP_STATE_SETTINGS.full, counts: [1, 10, "each"], testStates: 50, testConfigs: 10 },
  quick: { training: RISP_STATE_SETTINGS.quick, counts: [1, "each"], testStates: 4, testConfigs: 2 },
};

export interface CurveResult {
  readonly count: ConfigurationCount;
  readonly row: Row;
  /** Mean test error after each epoch, and the training loss of each epoch. */
  readonly testError: number[];
  readonly trainLoss: number[];
  readonly seconds: number;
}

export interface DataEfficiencyResult {
  readonly settings: DataEfficiencySettings;
  readonly curves: CurveResult[];
  readonly table: string;
  readonly files: string[];
}

const countLabel = (c: ConfigurationCount) => (c === "each" ? "one per image" : `${c}`);
const underCount = (c: ConfigurationCount) =>
  c === "each" ? "a configuration per image" : `${c} configuration${c === 1 ? "" : "s"}`;

/** The last epoch's test error per configuration count: ours-no-grad, ours, and their ratio. */
export function dataEfficiencyMarkdown(curves: readonly CurveResult[]): string {
  const last = (c: ConfigurationCount, row: Row) =>
    curves.find((x) => x.count === c && x.row === row)!.testError.at(-1)!;
  const counts = [...new Set(curves.map((x) => x.count))];
  return [
    "| training configurations | ours-no-grad | ours | ours / ours-no-grad |",
    "|---|---|---|---|",
    ...counts.map(
      (c) =>
        `| ${countLabel(c)} | ${last(c, "ours-no-grad").toFixed(4)} | ${last(c, "ours").toFixed(4)} | ` +
        `${(last(c, "ours") / last(c, "ours-no-grad")).toFixed(2)} |`,
    ),
  ].join("\n");
}

const COLOURS: Record<string, readonly [number, number, number]> = {
  "1": [60, 170, 80],
  "10": [230, 140, 40],
  each: [210, 60, 60],
};
/** ours-no-grad drawn in a lighter shade of its count's colour. */
const shade = (c: readonly [number, number, number], row: Row) =>
  (row === "ours" ? c : c.map((v) => Math.round(v + 0.55 * (255 - v)))) as [number, number, number];

async function run(ctx: ExperimentContext): Promise<DataEfficiencyResult> {
  const base = DATA_EFFICIENCY_SETTINGS[ctx.flags.quick ? "quick" : "full"];
  const s: DataEfficiencySettings = {
    ...base,
    training: { ...base.training, epochs: ctx.flags.iters ?? base.training.epochs },
  };
  const cfg = s.training,
    env = risp.RISP_ENVS.quadrotor(),
    seed = ctx.flags.seed * 1000;
  const rng = makeRng(seed);
  const { states, vertices } = env.sample(rng, cfg.train);
  // The test: other states under unseen configurations (traced), configuration after configuration.
  const testRng = makeRng(seed + 500);
  const test = env.sample(testRng, s.testStates);
  const testConfigs = globalThis.Array.from({ length: s.testConfigs }, () => risp.sampleHeldOutConfig(testRng));
  const testImages = np.concatenate(
    testConfigs.map((c, k) => risp.targetImages(env, cfg.resolution, test.vertices, c, seed + 600 + k)),
    0,
  );
  const truth = testConfigs.flatMap(() => test.states);
  ctx.log(`[risp-data-efficiency] ${truth.length} traced test images (${s.testConfigs} unseen configurations)`);
  const curves: CurveResult[] = [];
  for (const count of s.counts) {
    const drawRng = makeRng(seed + 700);
    const configurations =
      count === "each"
        ? undefined
        : globalThis.Array.from({ length: count }, () =>
            risp.sampleTrainingConfiguration(drawRng, risp.HELD_OUT_TRAINING_PSI),
          );
    const data = risp.trainingSet(env, cfg.resolution, states, vertices, makeRng(seed + 800), {
      noise: 0.03,
      rasterizations: softLooks(cfg),
      psi: risp.HELD_OUT_TRAINING_PSI,
      ...(configurations ? { configurations } : {}),
    });
    ctx.log(`[risp-data-efficiency] ${cfg.train} training images under ${underCount(count)}`);
    for (const row of ROWS) {
      const testError: number[] = [];
      const r = await risp.trainPredictor({
        cfg,
        row,
        gamma: row === "ours" ? GAMMA.quadrotor.ours : 0,
        data,
        seed: ctx.flags.seed,
        label: `${underCount(count)}, ${row}`,
        progress: ctx.flags.json ? false : "auto",
        onEpoch: (_, read: (images: Array) => Array) => {
          testError.push(mean(imageErrors(read(testImages).dataSync(), truth)));
        },
      });
      const curve = { count, row, testError, trainLoss: [...r.epochLosses], seconds: Number(r.seconds.toFixed(1)) };
      curves.push(curve);
      ctx.log(
        `[risp-data-efficiency] ${underCount(count)}, ${row}: test error per epoch ` +
          testError.map((e) => e.toFixed(4)).join(" "),
      );
    }
  }
  const files = ["curves.csv", "fig6a.png", "table.md"];
  writeAtomic(
    join(ctx.out, "curves.csv"),
    [
      "configurations,row,epoch,test_error,train_loss",
      ...curves.flatMap((c) => c.testError.map((e, k) => [c.count, c.row, k + 1, e, c.trainLoss[k]].join(","))),
    ].join("\n") + "\n",
  );
  writeLinePlot(
    join(ctx.out, "fig6a.png"),
    curves.map((c) => ({
      label: `${countLabel(c.count)}, ${c.row}`,
      x: c.testError.map((_, k) => k + 1),
      y: c.testError,
      color: shade(COLOURS[String(c.count)] ?? [90, 90, 200], c.row),
    })),
    {
      title: "quadrotor: state error on traced images under unseen configurations, per epoch",
      xLabel: "epoch",
      yLabel: "mean abs. state error per image",
    },
  );
  const table = dataEfficiencyMarkdown(curves);
  writeAtomic(join(ctx.out, "table.md"), table + "\n");
  ctx.log(`\nRISP Fig. 6a (the last epoch's test error):\n${table}`);
  return { settings: s, curves, table, files };
}

export const experiment: Experiment<DataEfficiencyResult> = {
  name: "risp-data-efficiency",
  description:
    "RISP Fig. 6a: the quadrotor's predictors (ours-no-grad, ours) trained under 1, 10 or a fresh rendering " +
    "configuration per image, tested per epoch on traced images under configurations held out in ψ",
  run,
};

await mainIfEntry(experiment, import.meta.url);
