/**
 * The paper's table protocol (gradSim Tables 1–3): over a dataset of random instances, estimate
 * the unknowns with several methods on the same instances, same initial guesses, and report per
 * table column the relative mean absolute error (Σ|x̂ − x| / Σ|x| over the column's scalars; for
 * one scalar, the usual |x̂ − x|/|x|) and the mean absolute error, averaged over instances.
 *
 * Baselines that need no fit: "average" (the mean truth of a separately drawn training set) and
 * "random" (a draw from the dataset's distribution). Fitted rows are whatever the task names —
 * e.g. gradsim (pixels), diffphysics (3-D states), reinforce.
 *
 * Instances are independent: an instance's draw depends only on the seed and its index, so the
 * records of a sharded run (instances i with i mod N = k, in any number of processes or
 * machines) are the ones one process writes. A `RecordStore` persists each record as it is
 * finished, so an interrupted run resumes where it stopped.
 */
import { makeRng, type Rng } from "../core/host-rng.js";
import { InputFileError } from "../io/input-file-error.js";
import { jit } from "../transforms/index.js";
import { estimate, paramsOf, type EstimateSettings, type Method } from "./estimate.js";
import { compileRender, type Observed, type Problem } from "./objective.js";
import { Layout, type Params, type Unknown, type Values } from "./unknowns.js";

/** One random instance. */
export interface Draw<S> {
  readonly truth: Values;
  /** The gradient methods' starting point. */
  readonly initial: Values;
  /** The "random" baseline: an independent draw from the dataset's distribution. */
  readonly prior: Values;
  /** Per-instance prior ranges (e.g. a mass range scaled by the object's volume); override the unknowns' own. */
  readonly priorRanges?: Readonly<Record<string, readonly [number, number]>>;
  readonly describe: string;
  /** The instance's problem (built lazily: the "average" baseline's training draws never need it). */
  problem(): Problem<S>;
}

export interface MethodRun {
  readonly method: Method;
  readonly settings: EstimateSettings;
}

export interface DatasetTask<S> {
  readonly name: string;
  readonly unknowns: readonly Unknown[];
  /** Table columns → the unknown (and which of its scalars) each averages over. Default: one column per unknown. */
  readonly columns?: Readonly<Record<string, { readonly unknown: string; readonly indices?: readonly number[] }>>;
  sample(rng: Rng): Draw<S>;
  /** The fitted rows for instance `index` of a run with `seed` (seeds of restarts and samples may depend on both). */
  methods(index: number, seed: number): Readonly<Record<string, MethodRun>>;
  /** Size of the separately drawn set whose mean the "average" baseline predicts. */
  readonly trainSize: number;
}

export type ColumnErrors = Record<string, number>;

export interface InstanceRecord {
  readonly index: number;
  readonly describe: string;
  readonly truth?: Values;
  readonly initial?: Values;
  /** Estimates per row (left out for problems with more than 8 scalars). */
  readonly estimates?: Record<string, Values>;
  readonly initialRelMae: ColumnErrors;
  readonly relMae: Record<string, ColumnErrors>;
  readonly meanAbsError: Record<string, ColumnErrors>;
  readonly iterations: Record<string, number>;
  readonly polishSteps?: Record<string, number>;
  readonly seconds: Record<string, number>;
  /** Where a curriculum left each row (the start of its fit on the whole video). */
  readonly curriculumEstimates?: Record<string, Values>;
  /** Descents kept after a scan (settings.scan) per row: how often a scan led out of a local minimum. */
  readonly scanEscapes?: Record<string, number>;
}

export interface RowSummary {
  /** Means over instances of each column's relative MAE and MAE (null: the row was not run). */
  readonly relMae: ColumnErrors | null;
  readonly meanAbsError: ColumnErrors | null;
  readonly seconds: number;
}

export interface DatasetResult {
  readonly task: string;
  readonly instances: number;
  readonly unknowns: readonly { readonly name: string; readonly unit?: string }[];
  readonly columns: readonly string[];
  readonly rows: Record<string, RowSummary>;
  readonly records: InstanceRecord[];
}

/** Per-instance records kept somewhere (a directory: sysid/node's fileRecordStore); any record type with an index. */
export interface RecordStore<R extends { readonly index: number } = InstanceRecord> {
  load(index: number): R | null;
  save(record: R): void;
  /** The shard ("K/N") that wrote instance `index`'s record; null: an unsharded run (or no record). */
  origin?(index: number): string | null;
  /** Where instance `index`'s record is kept (a path), for messages. */
  where?(index: number): string;
}

/**
 * Check a kept record against what this run's records hold: every row's relative MAE and MAE for
 * every column as finite numbers, and its seconds. A record edited by hand, truncated, or written
 * by other code would otherwise be averaged silently (a missing row over fewer instances, null as
 * 0, a string as NaN).
 */
export function validateRecord(
  r: unknown,
  index: number,
  rowNames: readonly string[],
  columns: readonly string[],
  where: string,
): InstanceRecord {
  const bad = (why: string) =>
    new InputFileError(
      where,
      `dataset: ${where} (instance ${index}) ${why}; it was not ` +
        `written by this run's code: delete it to refit that instance.`,
    );
  const isObject = (x: unknown): x is Record<string, unknown> =>
    !!x && typeof x === "object" && !globalThis.Array.isArray(x);
  if (!isObject(r)) throw bad("is not a record");
  if (r.index !== index) throw bad(`holds instance ${JSON.stringify(r.index)}`);
  if (typeof r.describe !== "string") throw bad("has no description");
  const table = (field: string, rows: readonly string[]) => {
    const t = r[field];
    if (!isObject(t)) throw bad(`has no ${field}`);
    for (const row of rows) {
      const e = t[row];
      if (!isObject(e)) throw bad(`has no ${field} for the row "${row}"`);
      for (const c of columns)
        if (typeof e[c] !== "number" || !Number.isFinite(e[c]))
          throw bad(`has ${field}.${row}.${c} = ${JSON.stringify(e[c])}, not a finite number`);
    }
  };
  table("relMae", rowNames);
  table("meanAbsError", rowNames);
  const seconds = r.seconds;
  if (!isObject(seconds)) throw bad("has no seconds");
  for (const [row, v] of Object.entries(seconds))
    if (typeof v !== "number" || !Number.isFinite(v))
      throw bad(`has seconds.${row} = ${JSON.stringify(v)}, not a finite number`);
  if (!isObject(r.initialRelMae)) throw bad("has no initialRelMae");
  return r as unknown as InstanceRecord;
}

export interface DatasetOptions {
  readonly instances: number;
  readonly seed: number;
  /** Fit only the instances i with i mod count = index. */
  readonly shard?: { readonly index: number; readonly count: number } | null;
  readonly store?: RecordStore | null;
  readonly log?: (line: string) => void;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/**
 * Relative mean absolute error: Σ|x̂ − x| / Σ|x| over `idx`. For one scalar this is the usual
 * |x̂ − x|/|x|; for per-particle vectors it does not blow up on entries near zero (velocity
 * components), and for positive masses of similar size it is close to the mean of |x̂ − x|/x.
 */
export function relMae(estimate: readonly number[], truth: readonly number[], idx: readonly number[]): number {
  const num = idx.reduce((s, i) => s + Math.abs(estimate[i]! - truth[i]!), 0);
  const den = idx.reduce((s, i) => s + Math.abs(truth[i]!), 0);
  return num / den;
}

/** Mean absolute error over the entries `idx`. */
export function meanAbsError(estimate: readonly number[], truth: readonly number[], idx: readonly number[]): number {
  return idx.reduce((s, i) => s + Math.abs(estimate[i]! - truth[i]!), 0) / Math.max(1, idx.length);
}

/**
 * The fitted rows of a gradSim Table 3 task (`DatasetTask.methods`): gradsim (pixels) and
 * DiffPhysics (states) with the same settings, REINFORCE (the paper's Table 5 settings at `reinforceLr`)
 * unless its steps are 0.
 */
export function table3Rows(
  fit: EstimateSettings,
  reinforceSteps: number,
  reinforceLr: number,
): DatasetTask<unknown>["methods"] {
  return (i, seed) => ({
    gradsim: { method: "pixels", settings: fit },
    diffphysics: { method: "states", settings: fit },
    ...(reinforceSteps > 0
      ? {
          // Adam with a cosine decay to 1% of the rate (β1 0.9), 5 samples of noise 0.05 per step (paper Table 5).
          reinforce: {
            method: "reinforce" as const,
            settings: {
              optimizer: "adam" as const,
              steps: reinforceSteps,
              adam: { lr: reinforceLr, lrEnd: reinforceLr / 100, schedule: "cosine" as const, b1: 0.9 },
              seed: seed * 7919 + i,
              progress: fit.progress,
            },
          },
        }
      : {}),
  });
}

/** Column name → indices into the flat layout. */
export function columnIndices(columns: DatasetTask<unknown>["columns"], layout: Layout): Record<string, number[]> {
  if (!columns) return Object.fromEntries(layout.names.map((n) => [n, layout.indicesOf(n)]));
  return Object.fromEntries(
    Object.entries(columns).map(([c, { unknown, indices }]) => {
      const all = layout.indicesOf(unknown);
      return [
        c,
        indices
          ? indices.map((i) => {
              if (!(i >= 0 && i < all.length))
                throw new Error(`sysid: column "${c}" picks scalar ${i} of "${unknown}", which has ${all.length}.`);
              return all[i]!;
            })
          : all,
      ];
    }),
  );
}

/** Column errors of an estimate against the truth. */
function errors(
  cols: Record<string, number[]>,
  est: readonly number[],
  truth: readonly number[],
  metric: typeof relMae,
): ColumnErrors {
  return Object.fromEntries(Object.entries(cols).map(([c, idx]) => [c, metric(est, truth, idx)]));
}

/**
 * The observations of a synthetic problem, simulated (and rendered, unless `needVideo` is false) from the true
 * parameters.
 */
export function observe<S>(problem: Problem<S>, truth: Params, needVideo = true): Observed<S> {
  const states = jit((p: Params) => problem.simulate(p, problem.frames))(truth) as S;
  if (!needVideo) return { states };
  if (!problem.render) throw new Error("sysid: a pixels or reinforce row needs problem.render.");
  return { states, video: compileRender((s: S) => problem.render!(s))(states) };
}

/** Fit every row on one instance. */
export async function fitInstance<S>(
  task: DatasetTask<S>,
  draw: Draw<S>,
  index: number,
  seed: number,
  average: readonly number[],
  log: (line: string) => void,
): Promise<InstanceRecord> {
  const unknowns = task.unknowns.map((k) =>
    draw.priorRanges?.[k.name] ? { ...k, prior: draw.priorRanges[k.name] } : k,
  );
  const layout = new Layout(unknowns);
  const cols = columnIndices(task.columns, layout);
  const truth = layout.flat(draw.truth, "the truth");
  const problem = draw.problem();
  const rows = task.methods(index, seed);
  const needVideo = Object.values(rows).some((r) => r.method !== "states");
  const observed = observe(problem, paramsOf(unknowns, draw.truth), needVideo);
  const flatEstimates: Record<string, number[]> = {
    average: [...average],
    random: layout.flat(draw.prior, "the random draw"),
  };
  const estimates: Record<string, Values> = { random: draw.prior };
  const seconds: Record<string, number> = {},
    iterations: Record<string, number> = {},
    polishSteps: Record<string, number> = {};
  const curriculumEstimates: Record<string, Values> = {},
    scanEscapes: Record<string, number> = {};
  for (const [row, run] of Object.entries(rows)) {
    log(`  ${task.name} ${index}: ${row} (${run.method})`);
    const r = await estimate({
      frames: problem.frames,
      render: problem.render?.bind(problem),
      measure: problem.measure?.bind(problem),
      simulate: problem.simulate.bind(problem),
      observed,
      unknowns,
      initial: draw.initial,
      method: run.method,
      settings: run.settings,
      log,
    });
    estimates[row] = r.estimate;
    flatEstimates[row] = layout.flat(r.estimate);
    seconds[row] = Number(r.seconds.toFixed(2));
    iterations[row] = r.steps;
    if (r.polishSteps) polishSteps[row] = r.polishSteps;
    if (r.curriculum?.length) curriculumEstimates[row] = r.curriculum.at(-1)!.estimate;
    if (r.scans) scanEscapes[row] = r.scans.filter((x) => x.kept).length;
  }
  const names = Object.keys(flatEstimates);
  const small = layout.size <= 8;
  return {
    index,
    describe: draw.describe,
    ...(small ? { truth: draw.truth, initial: draw.initial, estimates } : {}),
    initialRelMae: errors(cols, layout.flat(draw.initial), truth, relMae),
    relMae: Object.fromEntries(names.map((m) => [m, errors(cols, flatEstimates[m]!, truth, relMae)])),
    meanAbsError: Object.fromEntries(names.map((m) => [m, errors(cols, flatEstimates[m]!, truth, meanAbsError)])),
    iterations,
    ...(Object.keys(polishSteps).length ? { polishSteps } : {}),
    seconds,
    ...(Object.keys(curriculumEstimates).length ? { curriculumEstimates } : {}),
    ...(Object.keys(scanEscapes).length ? { scanEscapes } : {}),
  };
}

/** Summaries per row over the records (rows absent from every record are null). */
export function summarise(
  records: readonly InstanceRecord[],
  rowNames: readonly string[],
  columns: readonly string[],
): Record<string, RowSummary> {
  return Object.fromEntries(
    rowNames.map((m) => {
      const rs = records.filter((r) => r.relMae[m]);
      if (!rs.length) return [m, { relMae: null, meanAbsError: null, seconds: 0 }];
      const avg = (pick: (r: InstanceRecord) => ColumnErrors): ColumnErrors =>
        Object.fromEntries(columns.map((c) => [c, mean(rs.map((r) => pick(r)[c]!))]));
      return [
        m,
        {
          relMae: avg((r) => r.relMae[m]!),
          meanAbsError: avg((r) => r.meanAbsError[m]!),
          seconds: Number(mean(rs.map((r) => r.seconds[m] ?? 0)).toFixed(2)),
        },
      ];
    }),
  );
}

/** Run the protocol over `instances` draws (this shard's, resuming from the store). */
export async function runDataset<S>(task: DatasetTask<S>, o: DatasetOptions): Promise<DatasetResult> {
  const log = o.log ?? (() => {});
  const n = o.instances;
  if (!(Number.isInteger(n) && n >= 1))
    throw new Error(`sysid: a dataset needs a positive whole number of instances, got ${n}.`);
  const layout = new Layout(task.unknowns);
  // The "training" draw for the average baseline has its own stream, so it never overlaps the test instances.
  const trainRng = makeRng(o.seed + 1_000_003);
  const train = globalThis.Array.from({ length: task.trainSize }, () =>
    layout.flat(task.sample(trainRng).truth, "a training draw"),
  );
  const average = train[0]!.map((_, i) => mean(train.map((t) => t[i]!)));
  const rng = makeRng(o.seed);
  // Drawn in order from one stream, whichever instances this process fits.
  const draws = globalThis.Array.from({ length: n }, () => task.sample(rng));
  const owned = draws.map((_, i) => i).filter((i) => !o.shard || i % o.shard.count === o.shard.index);
  const columns = Object.keys(columnIndices(task.columns, layout));
  const rowNames = ["average", "random", ...Object.keys(task.methods(0, o.seed))];
  const where = (i: number) => o.store?.where?.(i) ?? `the kept record of instance ${i}`;
  const kept = new Map<number, InstanceRecord>();
  for (const i of owned) {
    const r = o.store?.load(i) ?? null;
    if (!r) continue;
    const record = validateRecord(
      r,
      i,
      ["average", "random", ...Object.keys(task.methods(i, o.seed))],
      columns,
      where(i),
    );
    // A store may keep a run's records across dataset sizes: the draw must be the record's.
    if (record.describe !== draws[i]!.describe)
      throw new InputFileError(
        where(i),
        `dataset: ${where(i)} (instance ${i}) describes "${record.describe}", but this run draws ` +
          `"${draws[i]!.describe}": it was written by another run; delete it to refit that instance.`,
      );
    kept.set(i, record);
  }
  if (!o.shard)
    refuseIncompleteMerge(
      task.name,
      owned.filter((i) => !kept.has(i)),
      [...kept.keys()].map((i) => o.store?.origin?.(i) ?? null),
    );
  const records: InstanceRecord[] = [];
  for (const i of owned) {
    const k = kept.get(i);
    if (k) {
      records.push(k);
      log(`[${task.name} ${i + 1}/${n}] finished earlier: ${draws[i]!.describe}`);
      continue;
    }
    log(`[${task.name} ${i + 1}/${n}] ${draws[i]!.describe}`);
    const r = await fitInstance(task, draws[i]!, i, o.seed, average, log);
    o.store?.save(r);
    log(
      `[${task.name} ${i + 1}/${n}] rel. MAE: initial ${fmtErrors(r.initialRelMae)}; ${Object.entries(r.relMae)
        .map(([m, e]) => `${m} ${fmtErrors(e)}`)
        .join("; ")}`,
    );
    records.push(r);
  }
  return {
    task: task.name,
    instances: n,
    unknowns: task.unknowns.map((k) => ({ name: k.name, ...(k.unit ? { unit: k.unit } : {}) })),
    columns,
    rows: summarise(records, rowNames, columns),
    records,
  };
}

/**
 * A run without --shard over kept records some of which shards wrote is a merge: an instance
 * without a record belongs to a shard that has not finished, and fitting it here, in one process,
 * would silently undo the split. Refused, naming the missing instances and their shards.
 */
export function refuseIncompleteMerge(
  task: string,
  missing: readonly number[],
  origins: readonly (string | null)[],
): void {
  const counts = [...new Set(origins.filter((x): x is string => x !== null).map((x) => Number(x.split("/")[1])))];
  if (!missing.length || !counts.length) return;
  const shards = [...new Set(missing.flatMap((i) => counts.map((c) => `${i % c}/${c}`)))];
  throw new IncompleteMergeError(
    `${task}: merging the shards' records, but instance${missing.length > 1 ? "s" : ""} ` +
      `${missing.slice(0, 10).join(", ")}${missing.length > 10 ? ", …" : ""} ` +
      `(of shard${shards.length > 1 ? "s" : ""} ${shards.join(", ")}) ha${missing.length > 1 ? "ve" : "s"} ` +
      `no record: run ${shards.length > 1 ? "those shards" : "that shard"} ` +
      `to the end (the same command with --shard K/N), then merge again. ` +
      "To fit them in this process instead, delete the shards' records.",
  );
}

/** A merge run found a shard's instances unfinished (see refuseIncompleteMerge). */
export class IncompleteMergeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IncompleteMergeError";
  }
}

export const fmtErrors = (e: ColumnErrors): string =>
  Object.entries(e)
    .map(([k, v]) => `${k} ${v.toExponential(2)}`)
    .join(", ");
