/**
 * The Table 3 protocol for the non-rigid experiments: over N random instances, estimate the
 * unknowns with gradsim (video) and the paper's baselines, and report the relative mean absolute
 * error (and the mean absolute error) per table column.
 *
 *  - average: always predicts the mean true value of a separately drawn "training" set;
 *  - random: a random draw from the dataset's distribution;
 *  - diffphysics: the same optimiser on 3-D states (privileged supervision);
 *  - reinforce: score-function gradient estimates through the same simulator and renderer
 *    (skipped when a task sets `reinforceSteps: 0`, e.g. for hundreds of unknowns);
 *  - gradsim: the same optimiser on the pixelwise MSE of the video.
 */
import { jit, np, type Array } from "../../src/index.js";
import { fitStates, fitVideo, meanAbsError, relMae, type EstimationProblem, type FitOutcome, type FitSettings } from "./estimation.js";
import type { ExperimentContext } from "./run.js";
import { makeRng, type Rng } from "../../src/core/host-rng.js";
import { scoreFunctionFit, SCORE_FUNCTION_DEFAULTS } from "./score-function.js";
import { datasetRecords } from "./dataset-workers.js";

export const METHODS = ["average", "random", "reinforce", "diffphysics", "gradsim"] as const;
export type Method = (typeof METHODS)[number];

/** One random instance: true values, the gradient methods' start, a prior draw, and its scene. */
export interface InstanceDraw {
  readonly truth: number[];
  readonly initial: number[];
  /** The "random" baseline: an independent draw from the dataset's distribution. */
  readonly prior: number[];
  readonly describe: string;
  /** Build the scene (kept lazy: the "average" baseline's training draws never need it). */
  build(): EstimationProblem;
}

export interface EstimationTask {
  readonly name: string;
  /** Table columns → indices of the unknowns they average over. */
  readonly columns: Readonly<Record<string, readonly number[]>>;
  sample(rng: Rng): InstanceDraw;
  readonly fit: Omit<FitSettings, "progress" | "lossCurvePng" | "lossCurveCsv">;
  /** Score-function steps per instance (0: the baseline is not run for this task). */
  readonly reinforceSteps: number;
  readonly reinforceLr: number;
  /** Size of the separately drawn set whose mean the "average" baseline predicts. */
  readonly trainSize: number;
}

export type ColumnErrors = Record<string, number>;

export interface MethodSummary {
  /** Mean over instances of each column's relative MAE (null: method not run). */
  readonly relMae: ColumnErrors | null;
  readonly meanAbsError: ColumnErrors | null;
  readonly seconds: number;
}

export interface InstanceRecord {
  readonly index: number;
  readonly describe: string;
  readonly initialRelMae: ColumnErrors;
  readonly relMae: Partial<Record<Method, ColumnErrors>>;
  readonly meanAbsError: Partial<Record<Method, ColumnErrors>>;
  readonly iterations: Partial<Record<Method, number>>;
  /** Levenberg–Marquardt steps after the gradient steps, for tasks that polish (FitSettings.polish). */
  readonly polishSteps?: Partial<Record<Method, number>>;
  readonly seconds: Partial<Record<Method, number>>;
  /** Full vectors for small problems (≤ 8 unknowns); per-particle vectors are left out. */
  readonly truth?: number[];
  readonly estimates?: Partial<Record<Method, number[]>>;
}

export interface TaskDatasetResult {
  readonly task: string;
  readonly instances: number;
  readonly methods: Record<Method, MethodSummary>;
  readonly records: InstanceRecord[];
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

export function columnErrors(task: EstimationTask, estimate: readonly number[], truth: readonly number[], metric: typeof relMae): ColumnErrors {
  return Object.fromEntries(Object.entries(task.columns).map(([c, idx]) => [c, metric(estimate, truth, idx)]));
}

export interface MethodRun {
  readonly outcome: FitOutcome;
  readonly method: Method;
}

/** Run every method on one instance; `target`/`targetStates` are rendered/simulated from the truth. */
export async function runInstance(ctx: ExperimentContext, task: EstimationTask, draw: InstanceDraw, problem: EstimationProblem, rng: Rng,
  opts: { steps: number; reinforce: boolean; label: string }): Promise<{ target: Array; runs: MethodRun[] }> {
  const truth = draw.truth;
  const target = jit((x: Array) => problem.video(x))(f32(truth));
  const targetStates = jit((x: Array) => problem.states(x))(f32(truth));
  const progress = ctx.flags.json ? false : "auto";
  const settings: FitSettings = { ...task.fit, steps: opts.steps, progress };
  const runs: MethodRun[] = [];
  ctx.log(`${opts.label}: gradsim (video)`);
  runs.push({ method: "gradsim", outcome: await fitVideo(problem, target, draw.initial, settings) });
  ctx.log(`${opts.label}: diffphysics (3-D states)`);
  runs.push({ method: "diffphysics", outcome: await fitStates(problem, targetStates, draw.initial, settings) });
  if (opts.reinforce && task.reinforceSteps > 0) {
    ctx.log(`${opts.label}: reinforce (score function, ${task.reinforceSteps} steps × ${SCORE_FUNCTION_DEFAULTS.samples} samples)`);
    runs.push({ method: "reinforce", outcome: await scoreFunctionFit(problem, target, draw.initial, { ...SCORE_FUNCTION_DEFAULTS, steps: task.reinforceSteps, lr: task.reinforceLr, label: `${opts.label} reinforce`, progress }, rng) });
  }
  return { target, runs };
}

const f32 = (x: readonly number[]) => np.array([...x], { dtype: "float32" });

/** The dataset protocol for one task. */
export async function runTaskDataset(ctx: ExperimentContext, task: EstimationTask, n: number, steps: number): Promise<TaskDatasetResult> {
  // The "training" draw for the average baseline has its own stream, so it never overlaps the test instances.
  const trainRng = makeRng(ctx.flags.seed + 1_000_003);
  const train = globalThis.Array.from({ length: task.trainSize }, () => task.sample(trainRng).truth);
  const average = train[0]!.map((_, i) => mean(train.map((t) => t[i]!)));
  const rng = makeRng(ctx.flags.seed);
  // Drawn in order from one stream, whichever instances this process fits.
  const draws = globalThis.Array.from({ length: n }, () => task.sample(rng));
  const fitInstance = async (i: number): Promise<InstanceRecord> => {
    const draw = draws[i]!;
    const label = `${task.name} ${i + 1}/${n}`;
    ctx.log(`[${label}] ${draw.describe}`);
    const problem = draw.build();
    const { runs } = await runInstance(ctx, task, draw, problem, makeRng(ctx.flags.seed * 7919 + i), { steps, reinforce: true, label });
    const estimates: Partial<Record<Method, number[]>> = { average, random: draw.prior };
    const seconds: Partial<Record<Method, number>> = {}, iterations: Partial<Record<Method, number>> = {}, polishSteps: Partial<Record<Method, number>> = {};
    for (const r of runs) {
      estimates[r.method] = r.outcome.estimate; seconds[r.method] = Number(r.outcome.seconds.toFixed(2)); iterations[r.method] = r.outcome.steps;
      if (r.outcome.polishSteps > 0) polishSteps[r.method] = r.outcome.polishSteps;
    }
    const ran = METHODS.filter((m) => estimates[m]);
    const errors = (metric: typeof relMae) => Object.fromEntries(ran.map((m) => [m, columnErrors(task, estimates[m]!, draw.truth, metric)]));
    const record: InstanceRecord = {
      index: i, describe: draw.describe, initialRelMae: columnErrors(task, draw.initial, draw.truth, relMae),
      relMae: errors(relMae), meanAbsError: errors(meanAbsError), iterations, ...(Object.keys(polishSteps).length ? { polishSteps } : {}), seconds,
      ...(draw.truth.length <= 8 ? { truth: draw.truth, estimates } : {}),
    };
    ctx.log(`[${label}] rel. MAE: initial ${fmt(record.initialRelMae)}; ` + ran.map((m) => `${m} ${fmt(record.relMae[m]!)}`).join("; "));
    return record;
  };
  const records = await datasetRecords(ctx, `${task.name}-instances.json`, n, fitInstance);
  const summary = (m: Method): MethodSummary => {
    const rs = records.filter((r) => r.relMae[m]);
    if (!rs.length) return { relMae: null, meanAbsError: null, seconds: 0 };
    const avg = (pick: (r: InstanceRecord) => ColumnErrors): ColumnErrors =>
      Object.fromEntries(Object.keys(task.columns).map((c) => [c, mean(rs.map((r) => pick(r)[c]!))]));
    return { relMae: avg((r) => r.relMae[m]!), meanAbsError: avg((r) => r.meanAbsError[m]!), seconds: Number(mean(rs.map((r) => r.seconds[m] ?? 0)).toFixed(2)) };
  };
  return { task: task.name, instances: n, methods: Object.fromEntries(METHODS.map((m) => [m, summary(m)])) as Record<Method, MethodSummary>, records };
}

export const fmt = (e: ColumnErrors): string => Object.entries(e).map(([k, v]) => `${k} ${v.toExponential(2)}`).join(", ");
