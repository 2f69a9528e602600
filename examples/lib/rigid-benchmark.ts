/**
 * The Table 1 / Table 2 protocol: over a dataset of random rigid scenes, estimate the unknowns
 * with gradsim (image loss, gradient descent) and with the paper's baselines, and report the
 * mean absolute and absolute relative errors per unknown.
 *
 * Baselines (paper §4.1.1, appendix H):
 *  - average: always predicts the mean true value of a separately drawn "training" set;
 *  - random: a random value from the dataset's distribution;
 *  - diffphysics: the same optimiser on 3-D vertex trajectories (privileged supervision);
 *  - reinforce: the same optimiser on score-function gradient estimates through the same
 *    simulator and renderer (black box).
 */
import type { ExperimentContext } from "./run.js";
import { makeRng, type Rng } from "../../src/core/host-rng.js";
import { buildScene, type RigidSceneSpec } from "./rigid-scene.js";
import { fitFromStates, fitFromVideo, imageProblem, statesStage, trueValues, videoStage, type FitSettings, type Unknown, type Values } from "./rigid-fit.js";
import { fmtValues as fmt, horizonCurriculum, type CurriculumSettings, type CurriculumStage, type PriorRanges } from "./horizon-curriculum.js";
import { reinforce, REINFORCE_DEFAULTS } from "./reinforce.js";
import { datasetRecords } from "./dataset-workers.js";

export const METHODS = ["average", "random", "diffphysics", "reinforce", "gradsim"] as const;
export type Method = (typeof METHODS)[number];

export interface BenchmarkConfig {
  readonly name: string;
  readonly unknowns: readonly Unknown[];
  /**
   * A random scene, the gradient methods' starting point, a random draw from the prior (the
   * "random" baseline), and the prior's ranges (for the curriculum's restarts).
   */
  sample(rng: Rng): { spec: RigidSceneSpec; initial: Values; prior: Values; ranges: PriorRanges };
  readonly fit: Omit<FitSettings, "label" | "progress" | "lossCurvePng" | "lossCurveCsv">;
  /**
   * Both gradient methods (video and 3-D supervision) first fit growing prefixes of the video
   * with restarts (horizon-curriculum.ts), then the whole video from there.
   */
  readonly curriculum?: CurriculumSettings;
  readonly reinforceSteps: number;
  /** Size of the separately drawn set whose mean the "average" baseline predicts. */
  readonly trainSize: number;
}

export interface ObjectRecord {
  readonly index: number;
  readonly shape: string;
  readonly truth: Values;
  readonly initial: Values;
  readonly estimates: Record<Method, Values>;
  readonly seconds: Partial<Record<Method, number>>;
  /** With a curriculum: where it left each gradient method, the start of its fit on the whole video. */
  readonly curriculumEstimates?: Partial<Record<Method, Values>>;
}

export interface MethodSummary {
  readonly meanAbsError: Values;
  readonly meanRelError: Values;
  readonly seconds: number;
}

export interface BenchmarkResult {
  readonly mode: "dataset";
  readonly dataset: number;
  readonly unknowns: readonly Unknown[];
  readonly methods: Record<Method, MethodSummary>;
  readonly objects: ObjectRecord[];
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

export async function runRigidBenchmark(ctx: ExperimentContext, cfg: BenchmarkConfig): Promise<BenchmarkResult> {
  const n = ctx.flags.dataset!;
  const steps = ctx.flags.iters ?? cfg.fit.steps;
  // The "training" draw for the average baseline uses its own stream, so it never overlaps the test scenes.
  const trainRng = makeRng(ctx.flags.seed + 1_000_003);
  const train = globalThis.Array.from({ length: cfg.trainSize }, () => cfg.sample(trainRng).spec);
  const average: Values = Object.fromEntries(cfg.unknowns.map((k) => [k, mean(train.map((s) => trueValues(s, [k])[k]!))]));

  const rng = makeRng(ctx.flags.seed);
  // Drawn in order from one stream, whichever instances this process fits.
  const draws = globalThis.Array.from({ length: n }, () => cfg.sample(rng));
  const fitObject = async (i: number): Promise<ObjectRecord> => {
    const { spec, initial, prior, ranges } = draws[i]!;
    const scene = buildScene(spec);
    const truth = trueValues(spec, cfg.unknowns);
    ctx.log(`[${i + 1}/${n}] ${spec.shape} ${spec.scale.map((x) => x.toFixed(2)).join("×")}, truth ${fmt(truth)}, initial ${fmt(initial)}`);
    const settings = (label: string): FitSettings => ({ ...cfg.fit, steps, label: `${cfg.name} ${i + 1}/${n} ${label}`, progress: ctx.flags.json ? false : "auto" });
    const seconds: Partial<Record<Method, number>> = {};
    const timed = async <T>(m: Method, f: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const r = await f();
      seconds[m] = Number(((performance.now() - t0) / 1000).toFixed(2));
      return r;
    };
    // The same restarts for both methods: one seed per object.
    const curriculumEstimates: Partial<Record<Method, Values>> = {};
    const startFor = async (m: Method, stage: (frames: number) => CurriculumStage | Promise<CurriculumStage>): Promise<Values> => {
      if (!cfg.curriculum) return initial;
      return (curriculumEstimates[m] = await horizonCurriculum(initial, ranges, spec.frames, cfg.curriculum, stage, makeRng(ctx.flags.seed * 104_729 + i), ctx.log));
    };
    const problem = await imageProblem(scene, cfg.fit, ctx.backend, initial);
    const gradsim = await timed("gradsim", async () => {
      const s = settings("gradsim");
      const start = await startFor("gradsim", (n) => videoStage(spec, n, initial, { ...s, ...cfg.curriculum! }, ctx.backend));
      return fitFromVideo(problem, start, cfg.curriculum ? { ...s, lr: cfg.curriculum.finalLr } : s, ctx.backend);
    });
    const diff = await timed("diffphysics", async () => {
      const s = settings("diffphysics");
      const start = await startFor("diffphysics", (n) => statesStage(spec, n, cfg.unknowns, { ...s, ...cfg.curriculum! }));
      return fitFromStates(scene, start, s);
    });
    const rf = await timed("reinforce", () => reinforce(problem, initial, {
      ...REINFORCE_DEFAULTS, steps: cfg.reinforceSteps, lr: cfg.fit.lr, lrEnd: cfg.fit.lrEnd,
      label: `${cfg.name} ${i + 1}/${n} reinforce`, progress: ctx.flags.json ? false : "auto",
    }, ctx.backend, makeRng(ctx.flags.seed * 7919 + i)));
    const record: ObjectRecord = {
      index: i, shape: spec.shape, truth, initial,
      estimates: { average, random: prior, diffphysics: diff, reinforce: rf.estimate, gradsim: gradsim.estimate },
      seconds, ...(cfg.curriculum ? { curriculumEstimates } : {}),
    };
    ctx.log(`  gradsim ${fmt(record.estimates.gradsim)} (rel. error ${fmt(relErrors(record, "gradsim"))}), diffphysics ${fmt(record.estimates.diffphysics)}, reinforce ${fmt(record.estimates.reinforce)}`);
    return record;
  };
  const objects = await datasetRecords(ctx, "objects.json", n, fitObject);
  const methods = Object.fromEntries(METHODS.map((m) => [m, summarise(objects, m, cfg.unknowns)])) as Record<Method, MethodSummary>;
  return { mode: "dataset", dataset: n, unknowns: cfg.unknowns, methods, objects };
}

const relErrors = (o: ObjectRecord, m: Method): Values =>
  Object.fromEntries(Object.keys(o.truth).map((k) => [k, Math.abs(o.estimates[m][k as Unknown]! - o.truth[k as Unknown]!) / Math.abs(o.truth[k as Unknown]!)]));

function summarise(objects: readonly ObjectRecord[], m: Method, unknowns: readonly Unknown[]): MethodSummary {
  const abs = (o: ObjectRecord, k: Unknown) => Math.abs(o.estimates[m][k]! - o.truth[k]!);
  return {
    meanAbsError: Object.fromEntries(unknowns.map((k) => [k, mean(objects.map((o) => abs(o, k)))])),
    meanRelError: Object.fromEntries(unknowns.map((k) => [k, mean(objects.map((o) => abs(o, k) / Math.abs(o.truth[k]!)))])),
    seconds: mean(objects.map((o) => o.seconds[m] ?? 0)),
  };
}
