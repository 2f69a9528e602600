/**
 * gradSim's ConvLSTM baseline (Tables 1–2; Xu et al. 2019b): a network trained on rendered
 * videos of random scenes to regress the physical parameters directly, with no simulator at test
 * time. One regressor per table (networks.convLstm: a strided convolution per frame, a ConvLSTM
 * cell over the frames, a linear head on the last hidden map), trained on videos of scenes drawn
 * from the same distribution as the table's objects but from their own random stream, to predict
 * the standardised logarithms of the unknowns (L1); then applied to the table's test objects — the
 * same instances `rigid-mass` and `rigid-contact` fit with `--dataset N` at the same seed.
 *
 * Scaled to a 2-core CPU: every 4th frame of the 64² videos, halved to 32², 8 feature and 8 hidden
 * channels (the paper does not give its network's size or training set).
 *
 *   npm run gradsim -- convlstm --dataset 10     # test on the first 10 objects of each table
 *   npm run gradsim -- convlstm --quick          # a few training videos (the test)
 *   npm run gradsim -- convlstm --procedure paper --dataset 200   # the paper's 800 videos and 100 epochs
 *
 * Writes result.json (per table: per-instance errors, their means), and per table <table>/ with
 * the network (params.gsp) and its loss curve (loss.csv, loss.png). `npm run reproduce` puts the
 * errors in the ConvLSTM rows of Tables 1–2, averaged over the objects those tables' runs fitted.
 */
import { join } from "node:path";
import { networks, jit, np, optim, random, sysid, vmap, type Array, makeRng } from "gradsim/node";
import { massBenchmark } from "./rigid-mass.js";
import { contactBenchmark } from "./rigid-contact.js";
import { CliError, oneOf } from "./lib/flags.js";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { mean, std } from "./lib/stats.js";

export interface ConvLstmSettings {
  /** Training videos per table, test objects (the first of the table's draws), every how many frames, training. */
  readonly train: number;
  readonly instances: number;
  readonly frameStride: number;
  readonly epochs: number;
  readonly batch: number;
  readonly lr: number;
}

export const CONVLSTM_SETTINGS: Readonly<Record<"full" | "quick" | "paper", ConvLstmSettings>> = {
  full: { train: 160, instances: 10, frameStride: 4, epochs: 15, batch: 8, lr: 3e-3 },
  quick: { train: 12, instances: 2, frameStride: 6, epochs: 2, batch: 4, lr: 3e-3 },
  // The paper's data and epochs (App. G: 800 training objects; App. H.2: 100 epochs); our network and optimiser.
  paper: { train: 800, instances: 10, frameStride: 4, epochs: 100, batch: 8, lr: 3e-3 },
};
/**
 * How much it trains on (--procedure): ours (160 videos, 15 epochs), or the paper's data and epochs (800 videos, 100
 * epochs), the features still learned from scratch.
 */
export const CONVLSTM_PROCEDURES = ["ours", "paper"] as const;

const TABLES = { "rigid-mass": massBenchmark, "rigid-contact": contactBenchmark } as const;
export type ConvLstmTable = keyof typeof TABLES;

export interface ConvLstmInstance {
  readonly index: number;
  readonly describe: string;
  readonly estimate: sysid.Values;
  readonly relMae: Record<string, number>;
  readonly meanAbsError: Record<string, number>;
}
export interface ConvLstmTableResult {
  readonly train: number;
  readonly trainSeconds: number;
  readonly finalLoss: number;
  /** Means over `instances`. */
  readonly relMae: Record<string, number>;
  readonly meanAbsError: Record<string, number>;
  readonly instances: readonly ConvLstmInstance[];
}
export interface ConvLstmResult {
  readonly tables: Record<ConvLstmTable, ConvLstmTableResult>;
  readonly settings: ConvLstmSettings;
}

type Task = ReturnType<typeof sysid.rigidDatasetTask>;
type Draw = ReturnType<Task["sample"]>;

/** The network's input: every `stride`-th frame of the rendered video [T, H, W, C], halved in size by 2×2 averages. */
function clip(task: Task, draw: Draw, stride: number): Array {
  const unknowns = task.unknowns.map((k) =>
    draw.priorRanges?.[k.name] ? { ...k, prior: draw.priorRanges[k.name]! } : k,
  );
  const video = sysid.observe(draw.problem(), sysid.paramsOf(unknowns, draw.truth)).video as Array;
  const [T, H, W, C] = video.shape as [number, number, number, number];
  const frames = np.take(video, np.arange(0, T, stride, { dtype: "int32" }), 0);
  return np.mean(np.reshape(frames, [-1, H / 2, 2, W / 2, 2, C]), [2, 4]);
}

async function runTable(
  ctx: ExperimentContext,
  name: ConvLstmTable,
  cfg: ConvLstmSettings,
  instances: number,
): Promise<ConvLstmTableResult> {
  const task = sysid.rigidDatasetTask(TABLES[name](ctx.flags.quick), { progress: false });
  const layout = new sysid.Layout(task.unknowns);
  const logOf = (d: Draw) => layout.flat(d.truth, "a truth").map(Math.log);
  // Training scenes from their own stream (rigid-mass and rigid-contact draw test objects from makeRng(seed) and the
  // average baseline's set from seed + 1,000,003).
  const trainRng = makeRng(ctx.flags.seed + 2_000_003);
  const clips: Array[] = [],
    targets: number[][] = [];
  for (let i = 0; i < cfg.train; i++) {
    const d = task.sample(trainRng);
    clips.push(clip(task, d, cfg.frameStride));
    targets.push(logOf(d));
    if ((i + 1) % 20 === 0 || i + 1 === cfg.train)
      ctx.log(`[convlstm] ${name}: rendered ${i + 1}/${cfg.train} training videos`);
  }
  const K = layout.size;
  const centre = globalThis.Array.from({ length: K }, (_, k) => mean(targets.map((t) => t[k]!)));
  const spread = globalThis.Array.from({ length: K }, (_, k) => Math.max(1e-6, std(targets.map((t) => t[k]!))));
  const standardised = np.array(
    targets.map((t) => t.map((x, k) => (x - centre[k]!) / spread[k]!)),
    { dtype: "float32" },
  );
  const videos = np.stack(clips, 0);
  const net: networks.ConvLstmConfig = {
    frame: videos.shape.slice(2) as unknown as [number, number, number],
    outputs: K,
  };
  const steps = cfg.epochs * Math.floor(cfg.train / cfg.batch);
  const loss = (p: networks.ConvLstmParams, b: { videos: Array; targets: Array }) =>
    np.mean(np.abs(np.sub(vmap((v: Array) => networks.convLstm(p, net, v))(b.videos), b.targets)));
  const r = await networks.trainToDisk(join(ctx.out, name), {
    params: networks.initConvLstm(random.key(ctx.flags.seed + 17), net),
    loss,
    data: { videos, targets: standardised },
    batchSize: cfg.batch,
    epochs: cfg.epochs,
    optimizer: optim.adam(optim.cosineDecay({ initValue: cfg.lr, decaySteps: steps, alpha: 0.05 })),
    seed: ctx.flags.seed,
    progress: ctx.flags.json ? false : "auto",
    label: `convlstm ${name}`,
  });
  // The table's test objects: the same draws, in the same order, as the dataset runs at this seed.
  const predict = jit((v: Array) => networks.convLstm(r.params, net, v));
  const testRng = makeRng(ctx.flags.seed);
  const cols = sysid.columnIndices(task.columns, layout);
  const results: ConvLstmInstance[] = [];
  for (let i = 0; i < instances; i++) {
    const d = task.sample(testRng);
    const z = predict(clip(task, d, cfg.frameStride)).dataSync();
    const flat = globalThis.Array.from(z, (x, k) => Math.exp(centre[k]! + spread[k]! * x));
    const truth = layout.flat(d.truth, "a truth");
    const errors = (metric: typeof sysid.relMae) =>
      Object.fromEntries(Object.entries(cols).map(([c, idx]) => [c, metric(flat, truth, idx)]));
    results.push({
      index: i,
      describe: d.describe,
      estimate: Object.fromEntries(layout.names.map((n, k) => [n, flat[k]!])) /* the tables' unknowns are scalars */,
      relMae: errors(sysid.relMae),
      meanAbsError: errors(sysid.meanAbsError),
    });
  }
  const average = (pick: (x: ConvLstmInstance) => Record<string, number>) =>
    Object.fromEntries(Object.keys(cols).map((c) => [c, mean(results.map((x) => pick(x)[c]!))]));
  const out = {
    train: cfg.train,
    trainSeconds: Number(r.seconds.toFixed(1)),
    finalLoss: r.epochLosses[r.epochLosses.length - 1]!,
    relMae: average((x) => x.relMae),
    meanAbsError: average((x) => x.meanAbsError),
    instances: results,
  };
  ctx.log(`[convlstm] ${name}: relative MAE over ${instances} test objects: ${sysid.fmtErrors(out.relMae)}`);
  return out;
}

async function run(ctx: ExperimentContext): Promise<ConvLstmResult> {
  const paper = oneOf("procedure", ctx.flags.procedure, CONVLSTM_PROCEDURES, "ours") === "paper";
  if (paper && ctx.flags.quick) throw new CliError("convlstm: --procedure paper trains at full size; drop --quick.");
  const cfg = CONVLSTM_SETTINGS[ctx.flags.quick ? "quick" : paper ? "paper" : "full"];
  const epochs = ctx.flags.iters ?? cfg.epochs;
  const instances = ctx.flags.dataset ?? cfg.instances;
  const settings = { ...cfg, epochs };
  const tables = {} as Record<ConvLstmTable, ConvLstmTableResult>;
  for (const name of Object.keys(TABLES) as ConvLstmTable[])
    tables[name] = await runTable(ctx, name, settings, instances);
  return { tables, settings: { ...settings, instances } };
}

export const experiment: Experiment<ConvLstmResult> = {
  name: "convlstm",
  description:
    "gradSim's ConvLSTM baseline (Tables 1–2): a recurrent conv net trained on rendered videos of random objects " +
    "regresses mass (and contact parameters) directly; " +
    "tested on the tables' objects (--dataset N: the first N); --procedure paper: the paper's 800 training videos " +
    "and 100 epochs",
  takes: ["procedure"],
  run,
};

await mainIfEntry(experiment, import.meta.url);
