/**
 * The two shapes every system-identification experiment takes, on top of `sysid`:
 *  - one scene: estimate its unknowns from its synthetic video, write what people look at
 *    (videos, labelled frame strip, loss curve) and return the errors;
 *  - a dataset (the paper's table protocol): every row on every instance, records kept on disk
 *    per instance (resumable, shardable), summarised per row and column.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { jit, sysid } from "gradsim";
import { fileRecordStore, writeComparison, writeLossCurves, type DisplayOptions } from "gradsim/sysid/node";
import { codeVersion, settingsHash } from "./code-version.js";
import type { ExperimentContext } from "./run.js";

export interface SceneFit<S> {
  /** Sub-directory of --out for the files (null: --out itself) and the progress label. */
  readonly name: string | null;
  readonly label: string;
  readonly describe: string;
  readonly problem: sysid.Problem<S>;
  readonly unknowns: readonly sysid.Unknown[];
  /** Error columns (default: one per unknown). */
  readonly columns?: sysid.DatasetTask<S>["columns"];
  readonly truth: sysid.Values;
  readonly initial: sysid.Values;
  readonly settings: sysid.EstimateSettings;
  readonly fps: number;
  readonly display?: DisplayOptions;
  /** What the loss is, with units, for the loss plot's axis. */
  readonly lossLabel: string;
}

export interface SceneFitResult {
  readonly task: string;
  readonly describe: string;
  readonly method: sysid.Method;
  /** The fitted unknowns with their units. */
  readonly unknowns: sysid.EstimateResult["unknowns"];
  /** Values (left out for problems with more than 8 scalars). */
  readonly truth?: sysid.Values;
  readonly initial?: sysid.Values;
  readonly estimate?: sysid.Values;
  readonly initialRelMae: sysid.ColumnErrors;
  readonly relMae: sysid.ColumnErrors;
  readonly iterations: number;
  readonly polishSteps: number;
  readonly fitSeconds: number;
  readonly initialLoss: number;
  readonly finalLoss: number;
  readonly files: string[];
}

/** Estimate one synthetic scene's unknowns from its video (gradsim) and write the report files. */
export async function fitScene<S>(
  ctx: ExperimentContext,
  o: SceneFit<S>,
): Promise<SceneFitResult & { estimateValues: sysid.Values; result: sysid.EstimateResult }> {
  const dir = o.name ? join(ctx.out, o.name) : ctx.out;
  mkdirSync(dir, { recursive: true });
  ctx.log(`[${o.label}] ${o.describe}`);
  const observed = sysid.observe(o.problem, sysid.paramsOf(o.unknowns, o.truth));
  const r = await sysid.estimate({
    frames: o.problem.frames,
    simulate: o.problem.simulate.bind(o.problem),
    render: o.problem.render?.bind(o.problem),
    measure: o.problem.measure?.bind(o.problem),
    observed,
    unknowns: o.unknowns,
    initial: o.initial,
    method: "pixels",
    settings: { ...o.settings, label: o.label, progress: ctx.flags.json ? false : "auto" },
    log: ctx.log,
  });
  const layout = new sysid.Layout(o.unknowns);
  const cols = sysid.columnIndices(o.columns, layout);
  const truth = layout.flat(o.truth);
  const errors = (v: sysid.Values) =>
    Object.fromEntries(Object.entries(cols).map(([c, idx]) => [c, sysid.relMae(layout.flat(v), truth, idx)]));
  const initialRelMae = errors(o.initial),
    relMae = errors(r.estimate);
  ctx.log(
    `[${o.label}] rel. MAE: initial ${sysid.fmtErrors(initialRelMae)} → estimate ${sysid.fmtErrors(relMae)} ` +
      `(${r.steps} steps` +
      `${r.polishSteps ? ` + ${r.polishSteps} Levenberg–Marquardt` : ""}` +
      `, ${r.seconds.toFixed(1)} s)`,
  );
  // Every frame of the target, the estimate and the initial guess, for people to look at.
  const video = sysid.compileRender((s: S) => o.problem.render!(s));
  const states = jit((p: sysid.Params) => o.problem.simulate(p, o.problem.frames));
  const videoOf = (v: sysid.Values) => video(states(sysid.paramsOf(o.unknowns, v)) as S);
  const { files } = await writeComparison(
    dir,
    { truth: observed.video!, estimate: videoOf(r.estimate), initial: videoOf(o.initial) },
    o.fps,
    o.display,
  );
  const curves = writeLossCurves(dir, r.losses, r.gradNorms, {
    title: `${o.label}: ${sysid.formatValues(layout, r.estimate)}`,
    loss: o.lossLabel,
  });
  const small = layout.size <= 8;
  return {
    task: o.label,
    describe: o.describe,
    method: r.method,
    unknowns: r.unknowns,
    ...(small ? { truth: o.truth, initial: o.initial, estimate: r.estimate } : {}),
    initialRelMae,
    relMae,
    iterations: r.steps,
    polishSteps: r.polishSteps,
    fitSeconds: Number(r.seconds.toFixed(2)),
    initialLoss: r.losses[0]!,
    finalLoss: r.finalLoss,
    files: [...files, ...curves].map((f) => (o.name ? join(o.name, f) : f)),
    estimateValues: r.estimate,
    result: r,
  };
}

/** Drop the in-memory extras of `fitScene` before writing result.json. */
export const sceneRecord = ({
  estimateValues: _e,
  result: _r,
  ...rest
}: SceneFitResult & { estimateValues?: unknown; result?: unknown }): SceneFitResult => rest;

/**
 * The key of a dataset run: records written by a run with another key are never mixed in. It
 * holds the code version (codeVersion: the package version and a hash of the sources, so records
 * of older code with other defaults are refused) and the flags that change results. `perInstance`:
 * an instance's record does not depend on the dataset's size (sysid.runDataset draws instance i the
 * same in a run of any size ≥ i + 1), so a larger run keeps a smaller one's records.
 */
export const runKey = (ctx: ExperimentContext, o: { perInstance?: boolean } = {}): string =>
  `${ctx.experiment} code=${codeVersion()} seed=${ctx.flags.seed}` +
  `${o.perInstance ? "" : ` dataset=${ctx.flags.dataset}`} ` +
  `quick=${ctx.flags.quick} iters=${ctx.flags.iters ?? "default"} backend=${ctx.backend}`;

/** The table protocol for one task, this process's shard, records kept per instance under --out (resumable). */
export function runDatasetTask<S>(ctx: ExperimentContext, task: sysid.DatasetTask<S>): Promise<sysid.DatasetResult> {
  if (!ctx.flags.dataset) throw new Error(`internal: ${task.name} run without --dataset.`);
  // The task's resolved settings (unknowns, priors, columns, every row's method and settings) are part of the key.
  const settings = settingsHash({
    unknowns: task.unknowns,
    columns: task.columns ?? null,
    trainSize: task.trainSize,
    methods: task.methods(0, ctx.flags.seed),
  });
  return sysid.runDataset(task, {
    instances: ctx.flags.dataset,
    seed: ctx.flags.seed,
    shard: ctx.flags.shard,
    store: fileRecordStore(ctx.out, task.name, `${runKey(ctx, { perInstance: true })} settings=${settings}`, {
      shard: ctx.flags.shard,
    }),
    log: ctx.log,
  });
}

/** Progress mode of the fits: silent with --json. */
export const progressOf = (ctx: ExperimentContext): false | "auto" => (ctx.flags.json ? false : "auto");
