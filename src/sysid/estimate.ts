/**
 * `sysid.estimate`: system identification in one call.
 *
 *   const r = await sysid.estimate({
 *     simulate: (p, frames) => rollout(p.mass, frames),        // per-frame states
 *     render: (states) => video(states),                        // frames [K, H, W, C]
 *     frames: 60, observed: { video },
 *     unknowns: [{ name: "mass", transform: "log", unit: "kg", prior: [0.5, 5] }],
 *     initial: { mass: 1.5 }, method: "pixels",
 *     settings: { optimizer: "adam", steps: 60, adam: { lr: 0.2, lrEnd: 1e-4 }, refine: 10 },
 *   });
 *   r.estimate.mass; r.losses; r.seconds;
 *
 * Methods: "pixels" (gradsim: the pixelwise MSE between render(simulate(θ)) and the video),
 * "states" (3-D supervision: the MSE of simulated against observed states — the paper's
 * DiffPhysics baseline), "reinforce" (score-function estimates of the pixel loss's gradient: the
 * black-box baseline). Strategies are options: starting points scored by the loss (`starts`,
 * `restarts` drawn from the prior, `finalists`), a curriculum over the video's length,
 * Adam then L-BFGS (`refine`), Levenberg–Marquardt polishing (`polish`), a preconditioner.
 */
import type { Array } from "../core/array.js";
import { makeRng } from "../core/host-rng.js";
import { np } from "../core/np/index.js";
import type { ProgressMode } from "../optim/index.js";
import { horizonCurriculum, distinctBest, type CurriculumSettings, type StageRecord } from "./curriculum.js";
import { adamOptimizer, descend, polish, type Descent, type DescentSettings } from "./descend.js";
import type { FrameSelection } from "./losses.js";
import {
  buildObjective,
  type GradientMode,
  type LossKind,
  type Objective,
  type Observed,
  type Problem,
} from "./objective.js";
import { REINFORCE_DEFAULTS, scoreFunctionDescent } from "./reinforce.js";
import { scanAndDescend, type ScanRound, type ScanSettings } from "./scan.js";
import { formatValues, Layout, type Params, type Unknown, type Values } from "./unknowns.js";

export type Method = "pixels" | "states" | "reinforce";

/** One evaluated iterate of the final descent, in physical units. */
export interface EstimateStep {
  readonly label: string;
  readonly step: number;
  readonly loss: number;
  readonly estimate: Values;
}

export interface EstimateSettings extends Omit<DescentSettings, "onStep"> {
  /** Called at every evaluated iterate of the final descent (awaited), e.g. to draw live progress. */
  readonly onStep?: (info: EstimateStep) => void | Promise<void>;
  /** Frames the image loss compares (default every frame). */
  readonly frames?: FrameSelection;
  /** Image-pyramid levels of the image loss (default 1). */
  readonly pyramid?: number;
  readonly gradient?: GradientMode;
  /** Other starting points: scored by the loss with the initial guess, the fit starts from the best. */
  readonly starts?: readonly Values[];
  /**
   * This many more starting points spread over the prior (scored with the others): a Latin hypercube, log-uniform for
   * "log" unknowns (`Layout.drawStarts`).
   */
  readonly restarts?: number;
  /** Descend from this many of the best-scoring starts and keep the lowest final loss (default 1). */
  readonly finalists?: number;
  /**
   * Also descend from the initial guess (after a curriculum: its estimate) when it is not among
   * the finalists, keeping the lowest final loss: a start that scores better need not lie in the
   * truth's basin.
   */
  readonly descendFromInitial?: boolean;
  /**
   * After the descent, scan each scalar unknown over `points` values across its prior (the others
   * at the estimate) and descend again from a grid point that scores lower (see scan.ts).
   */
  readonly scan?: ScanSettings;
  /** Fit growing prefixes of the video first (see curriculum.ts). */
  readonly curriculum?: CurriculumSettings;
  /** REINFORCE: samples per step and sampling noise in unconstrained units (defaults: paper Table 5). */
  readonly reinforce?: { readonly samples?: number; readonly sigma?: number };
  /** Seed of restarts, curricula and score-function samples (default 0). */
  readonly seed?: number;
}

/**
 * What `estimate` fits. N is the unknowns' names: with them written as literals in `unknowns`,
 * `simulate`'s `params`, `initial` and `prior` are checked against them by `tsc`.
 */
export interface EstimateSpec<S, N extends string = string> extends Problem<S, N> {
  readonly observed: Observed<S>;
  readonly unknowns: readonly Unknown<N>[];
  /** Prior ranges by unknown name (override the unknowns' own `prior`). */
  readonly prior?: Readonly<Partial<Record<N, readonly [number, number]>>>;
  /** The initial guess (physical values). */
  readonly initial: Values<N>;
  readonly method: Method;
  readonly settings: EstimateSettings;
  /** Progress lines (default: stderr unless settings.progress is false). */
  readonly log?: (line: string) => void;
}

/** The final descent's record (without its unconstrained vector), and what it estimated from where. */
export interface EstimateResult extends Omit<Descent, "u"> {
  readonly method: Method;
  /** The fitted unknowns: name, unit and transform. */
  readonly unknowns: readonly {
    readonly name: string;
    readonly unit?: string;
    readonly transform: Unknown["transform"];
  }[];
  readonly estimate: Values;
  readonly initial: Values;
  /** Where the final descent started (after restarts or a curriculum; a scan point when a scan's descent was kept). */
  readonly start: Values;
  /**
   * The loss at the start and after each step (all phases of the final descent; REINFORCE: the mean sample loss per
   * step).
   */
  readonly losses: number[];
  /** Seconds of the whole estimate (scoring starts, a curriculum and every descent). */
  readonly seconds: number;
  readonly curriculum?: readonly StageRecord[];
  /** What the scans after the descent found (settings.scan). */
  readonly scans?: readonly ScanRound[];
}

/** Progress lines go to the console's error stream (stderr in Node) unless progress is off. */
const defaultLog = (progress: ProgressMode | undefined) => (line: string) => {
  if (progress !== false) console.error(line);
};

export async function estimate<S, const N extends string = string>(spec: EstimateSpec<S, N>): Promise<EstimateResult>;
export async function estimate<S>(spec: EstimateSpec<S>): Promise<EstimateResult> {
  const t0 = performance.now();
  const s = spec.settings;
  const unknowns = spec.unknowns.map((k) => (spec.prior?.[k.name] ? { ...k, prior: spec.prior[k.name] } : k));
  const extra = Object.keys(spec.prior ?? {}).filter((n) => !unknowns.some((k) => k.name === n));
  if (extra.length)
    throw new Error(
      `sysid: prior given for ${extra.join(", ")}, ` +
        `which ${extra.length > 1 ? "are not unknowns" : "is not an unknown"} ` +
        `(unknowns: ${unknowns.map((k) => k.name).join(", ")}).`,
    );
  if (!["pixels", "states", "reinforce"].includes(spec.method))
    throw new Error(`sysid: unknown method ${JSON.stringify(spec.method)}; use "pixels", "states" or "reinforce".`);
  const layout = new Layout(unknowns);
  const u0 = layout.toU(spec.initial, "the initial guess");
  const log = spec.log ?? defaultLog(s.progress);
  const rng = makeRng(s.seed ?? 0);
  const kind: LossKind = spec.method === "states" ? "states" : "pixels";
  const objective = (horizon?: number, frames?: FrameSelection): Objective =>
    buildObjective(spec, spec.observed, layout, {
      kind,
      frames: frames ?? s.frames,
      pyramid: s.pyramid,
      horizon,
      gradient: s.gradient,
    });
  const described = unknowns.map((k) => ({
    name: k.name,
    ...(k.unit ? { unit: k.unit } : {}),
    transform: k.transform ?? "identity",
  }));
  const label = s.label ?? spec.method;

  if (spec.method === "reinforce") {
    const o = objective();
    const r = s.reinforce ?? {};
    const run = await scoreFunctionDescent(
      (us) => o.values(us),
      u0,
      adamOptimizer(s.adam ?? { lr: 0.05 }, s.steps),
      {
        samples: r.samples ?? REINFORCE_DEFAULTS.samples,
        sigma: r.sigma ?? REINFORCE_DEFAULTS.sigma,
        steps: s.steps,
        label,
        progress: s.progress ?? "auto",
      },
      rng,
    );
    const finalLoss = (await o.values([run.mean]))[0]!;
    return {
      method: spec.method,
      unknowns: described,
      estimate: layout.fromU(run.mean),
      initial: spec.initial,
      start: spec.initial,
      finalLoss,
      losses: [...run.losses, finalLoss],
      gradNorms: [],
      steps: s.steps,
      polishSteps: 0,
      seconds: (performance.now() - t0) / 1000,
      stopReason: "steps",
    };
  }

  // A curriculum over the video's length leaves the final descent inside the truth's basin.
  let start = spec.initial;
  let stages: StageRecord[] | undefined;
  const { onStep, ...rest } = s;
  const base: DescentSettings = {
    ...rest,
    ...(onStep
      ? { onStep: (i) => onStep({ label: i.label, step: i.step, loss: i.loss, estimate: layout.fromU(i.u) }) }
      : {}),
  };
  let final = base;
  if (s.curriculum) {
    const c = s.curriculum;
    const stageSettings = (n: number, continuing: boolean): DescentSettings => ({
      ...base,
      steps: c.stageSteps,
      refine: c.stageRefine,
      polish: 0,
      label: `${label} (${n} frames)`,
      ...(continuing && s.adam ? { adam: { ...s.adam, lr: c.finalLr } } : {}),
    });
    const run = await horizonCurriculum(
      layout,
      spec.initial,
      spec.frames,
      c,
      (n) => {
        const o = objective(n, "every");
        return {
          losses: (cs) => o.values(cs.map((v) => layout.toU(v, "a curriculum candidate"))),
          fit: async (from, continuing) => {
            const d = await descend(o, layout.toU(from, "a curriculum start"), stageSettings(n, continuing));
            return { estimate: layout.fromU(d.u), loss: d.finalLoss };
          },
        };
      },
      rng,
      log,
    );
    start = run.estimate;
    stages = run.stages;
    if (s.adam) final = { ...base, adam: { ...s.adam, lr: c.finalLr } };
  }

  const o = objective();
  const candidates: Values[] = [start, ...(s.starts ?? [])];
  if (s.restarts) candidates.push(...layout.drawStarts(rng, s.restarts));
  let order = [0];
  if (candidates.length > 1) {
    const scores = await o.values(candidates.map((c, i) => layout.toU(c, i === 0 ? "the start" : `start ${i}`)));
    order = distinctBest(candidates, scores, s.finalists ?? 1);
    if (s.descendFromInitial && !order.includes(0)) order.push(0);
    const starts = order
      .map((c) => `${c === 0 ? "the initial guess" : `start ${c}`} (loss ${scores[c]!.toExponential(2)})`)
      .join(", ");
    log(`  ${label}: scored ${candidates.length} starting points; descending from ${starts}`);
  }
  // Only the final fit is polished (the polish is the costly part of a fit): the best of several
  // descents, after any scan.
  const gradientOnly = order.length > 1 || s.scan ? { ...final, polish: 0 } : final;
  let best: { d: Descent; from: Values } | undefined;
  for (const c of order) {
    const d = await descend(o, layout.toU(candidates[c]!, c === 0 ? "the start" : `start ${c}`), gradientOnly);
    if (!best || d.finalLoss < best.d.finalLoss) best = { d, from: candidates[c]! };
  }
  let scans: ScanRound[] | undefined;
  if (s.scan) ({ rounds: scans, ...best } = await scanAndDescend(o, layout, best!, gradientOnly, s.scan, log));
  if (gradientOnly !== final) best = { ...best!, d: await polish(o, best!.d, final) };
  const { d, from } = best!;
  const result = layout.fromU(d.u);
  log(
    `  ${label}: ${formatValues(layout, result)} (loss ${d.finalLoss.toExponential(3)}, ${d.steps} ` +
      `steps${d.polishSteps ? ` + ${d.polishSteps} Levenberg–Marquardt` : ""})`,
  );
  return {
    method: spec.method,
    unknowns: described,
    estimate: result,
    initial: spec.initial,
    start: from,
    finalLoss: d.finalLoss,
    losses: d.losses,
    gradNorms: d.gradNorms,
    steps: d.steps,
    polishSteps: d.polishSteps,
    seconds: (performance.now() - t0) / 1000,
    stopReason: d.stopReason,
    ...(stages ? { curriculum: stages } : {}),
    ...(scans ? { scans } : {}),
  };
}

/**
 * The parameters for host values through the layout's own transforms (what the estimator
 * differentiates), e.g. to render the video of an estimate.
 */
export function paramsOf(unknowns: readonly Unknown[], values: Values): Params {
  const layout = new Layout(unknowns);
  return layout.params(np.array(layout.toU(values), { dtype: "float32" }) as Array);
}
