/**
 * RISP's downstream tasks (§4.3–4.4, Appendix C.1) as sysid objectives: system identification
 * (a parameter from a video with known actions), imitation (the actions of a video) and control
 * (actions that reach the state one image shows), each a differentiable map from unknowns u in a
 * box to a rollout, compared with a reference by one of four losses — states (the oracle, or
 * states a predictor read from the reference), pixels (∇Sim's MSE, Eq. 4), features (a perceptual
 * loss) or a predictor's reading of our frames and the reference's (Eq. 6, fitting our frames'
 * look ψ with the unknowns). `fitTask` descends them with sysid's descent (projected Adam),
 * curriculum, scan and polish; `fitTaskAsPaper` by the paper's RMSProp, then the same scan and polish.
 */
import type { Array } from "../core/array.js";
import { makeRng, type Rng } from "../core/host-rng.js";
import { np } from "../core/np/index.js";
import { jit, valueAndGrad, vmap } from "../transforms/index.js";
import { horizonCurriculum } from "../sysid/curriculum.js";
import { descend, polish, type Descent, type DescentSettings } from "../sysid/descend.js";
import type { Objective } from "../sysid/objective.js";
import { scanAndDescend, type ScanRound } from "../sysid/scan.js";
import { Layout, type Unknown } from "../sysid/unknowns.js";
import { checkPosed, type RispEnv } from "./env.js";
import { plainBackground, softImage } from "./looks.js";
import { DEFAULT_PSI, PSI_NAMES, psiMiddle, psiOfUnit, type PsiDistribution } from "./psi.js";

export type RispTask = "sysid" | "imitation" | "control";
export const RISP_TASK_NAMES: readonly RispTask[] = ["sysid", "imitation", "control"];

/** States [T, S] (the predictor's state) and vertices [T, V, 3] of a rollout. */
export interface Rollout {
  readonly states: Array;
  readonly vertices: Array;
}

/** A system's dynamics with one task's unknowns plugged in: what a user writes per task. */
export interface RispScenario {
  /** What each unknown is (distinct names), and its box. */
  readonly unknowns: readonly string[];
  readonly lower: readonly number[];
  readonly upper: readonly number[];
  /** The unknowns of the reference motion. */
  readonly truth: readonly number[];
  /** Rollout frames the reference video shows (control shows the last only). */
  readonly frames: readonly number[];
  /** A random initial guess in the box. */
  readonly guess: (rng: Rng) => number[];
  /** The rollout (float32, differentiable in u) of the unknowns u [D] from a start. */
  readonly rollout: (u: Array, start: Array) => Rollout;
  /** The reference's start. */
  readonly start: readonly number[];
  /** A random start for the control task (default: the reference's). */
  readonly randomStart?: (rng: Rng) => readonly number[];
  /**
   * The error the tables report for an estimate: a parameter error (default: the L1 state discrepancy per observed
   * frame).
   */
  readonly parameterError?: (u: readonly number[]) => number;
  readonly errorName?: string;
  /**
   * Whether the unknowns are actions at knots in time, each acting only on the frames after it (imitation's curriculum
   * fits the video's prefixes for these).
   */
  readonly timedActions?: boolean;
}

export interface RispProblem<E extends RispEnv = RispEnv> {
  readonly env: E;
  readonly task: RispTask;
  readonly unknowns: readonly string[];
  readonly lower: readonly number[];
  readonly upper: readonly number[];
  readonly truth: readonly number[];
  /** The middle of the box: the "average" row of Tables 3–4. */
  readonly middle: readonly number[];
  /** Rollout frames the reference shows. */
  readonly observed: readonly number[];
  readonly start: readonly number[];
  randomStart(rng: Rng): readonly number[];
  /** States and vertices at the observed frames, of the unknowns [D] from a start (compiled). */
  rollout(u: Array, start: Array): Rollout;
  /** The reference's states and vertices at the observed frames. */
  readonly reference: { readonly states: number[][]; readonly vertices: Float64Array[] };
  guess(rng: Rng): number[];
  /**
   * What the table reports for an estimate from a start: the parameter error (sysid) or the state discrepancy
   * (imitation, control).
   */
  error(u: readonly number[], start: readonly number[]): number;
  readonly errorName: string;
  readonly timedActions: boolean;
}

const rows = (x: Array): number[][] => {
  const d = x.dataSync(),
    n = x.shape[0]!,
    k = d.length / n;
  return globalThis.Array.from({ length: n }, (_, i) => globalThis.Array.from(d.subarray(i * k, (i + 1) * k)));
};

/**
 * The problem of `task` for a scenario of `env`. Control: the reference is the scenario's last
 * frame, and each run starts from `randomStart`.
 */
export function rispProblem<E extends RispEnv>(env: E, task: RispTask, sc: RispScenario): RispProblem<E> {
  if (!RISP_TASK_NAMES.includes(task))
    throw new Error(`risp: the task is one of ${RISP_TASK_NAMES.join(", ")}, got "${task}".`);
  const D = sc.unknowns.length;
  if (!D || sc.lower.length !== D || sc.upper.length !== D || sc.truth.length !== D)
    throw new Error(
      `risp: ${env.name}'s ${task} scenario needs one lower bound, upper bound and true value per unknown ` +
        `(${D} unknowns; ${sc.lower.length}, ${sc.upper.length}, ${sc.truth.length} given).`,
    );
  if (new Set(sc.unknowns).size !== D)
    throw new Error(`risp: ${env.name}'s ${task} unknowns need distinct names: ${sc.unknowns.join(", ")}.`);
  sc.lower.forEach((lo, i) => {
    if (!(lo < sc.upper[i]!))
      throw new Error(`risp: unknown "${sc.unknowns[i]}" has an empty box [${lo}, ${sc.upper[i]}].`);
  });
  if (!sc.frames.length) throw new Error(`risp: ${env.name}'s ${task} scenario shows no frames.`);
  const observed = task === "control" ? [sc.frames.at(-1)!] : [...sc.frames];
  const at = np.array(observed, { dtype: "int32" });
  const rollout = jit((u: Array, start: Array) => {
    const r = sc.rollout(u, start);
    return { states: np.take(r.states, at, 0), vertices: np.take(r.vertices, at, 0) };
  });
  const f32 = (x: readonly number[]) => np.array([...x], { dtype: "float32" });
  const run = (u: readonly number[], start: readonly number[]) => rollout(f32(u), f32(start)) as Rollout;
  const ref = run(sc.truth, sc.start);
  const reference = {
    states: rows(ref.states),
    vertices: rows(np.reshape(ref.vertices, [observed.length, -1])).map((v) => Float64Array.from(v)),
  };
  if (!reference.vertices.every((v) => v.every(Number.isFinite)))
    throw new Error(`risp: the ${env.name}'s ${task} reference rollout is not finite.`);
  checkPosed(env, reference.vertices, "reference frame");
  const discrepancy = (u: readonly number[], start: readonly number[]) => {
    const s = rows(run(u, start).states);
    // L1 over the state's components, averaged over the observed frames.
    return (
      s.reduce((acc, st, t) => acc + st.reduce((a, x, k) => a + Math.abs(x - reference.states[t]![k]!), 0), 0) /
      s.length
    );
  };
  return {
    env,
    task,
    unknowns: sc.unknowns,
    lower: sc.lower,
    upper: sc.upper,
    truth: sc.truth,
    middle: sc.lower.map((lo, i) => (lo + sc.upper[i]!) / 2),
    observed,
    start: sc.start,
    randomStart: (rng) => (task === "control" && sc.randomStart ? sc.randomStart(rng) : [...sc.start]),
    rollout: (u, start) => rollout(u, start) as Rollout,
    reference,
    guess: sc.guess,
    error: sc.parameterError ?? discrepancy,
    errorName:
      sc.errorName ?? (task === "control" ? "L1 state error at the last frame" : "L1 state discrepancy per frame"),
    timedActions: sc.timedActions ?? false,
  };
}

/**
 * How the tasks compare a rollout with the reference:
 *   states     L1 between our simulated states and reference states [T, S] (true ones: the oracle; or read from the
 *              reference's images by a predictor);
 *   pixels     MSE between our frames and the reference's images [T, R, R, 3] (∇Sim, RISP Eq. 4);
 *   features   Σ over `features`' maps of their MSE, each divided by the reference map's energy (a perceptual loss);
 *   predictor  L1 between what `read` reads from our frames and from the reference's (RISP Eq. 6): u ends with our
 *              frames' look w ∈ [0, 1]^14 (`psiOfUnit`), fitted with the unknowns.
 */
export type TaskLoss =
  | { readonly kind: "states" }
  | { readonly kind: "pixels" }
  | { readonly kind: "features"; readonly features: (image: Array) => Array[] }
  | { readonly kind: "predictor"; readonly read: (image: Array) => Array };

/** How our own frames are drawn: SoftRas on a plain ground, under ψ's middle (or the fitted look). */
export interface TaskRendering {
  readonly resolution: number;
  /** SoftRas' depth temperature (default sysid.softFrame's). */
  readonly gamma?: number;
  /** ψ's distribution: its middle lights our frames, its ranges bound the fitted look (default `DEFAULT_PSI`). */
  readonly psi?: PsiDistribution;
}

/** The loss of u [D] (plus the look for "predictor"), the reference and the start. */
export type TaskLossFn = (u: Array, reference: Array, start: Array) => Array;

/** Whether a loss fits our frames' look with the unknowns (u then has 14 more entries). */
export const fitsLook = (loss: TaskLoss): boolean => loss.kind === "predictor";

/**
 * The loss function of `loss` on the first `shown` observed frames (imitation's curriculum; default all), or on the
 * observed frames of the indices `shown` lists (a temporal sampling: RISP Fig. 6b).
 */
export function taskLoss(
  problem: RispProblem,
  loss: TaskLoss,
  rendering: TaskRendering,
  shown: number | readonly number[] = problem.observed.length,
): TaskLossFn {
  const { env } = problem,
    R = rendering.resolution,
    psi = rendering.psi ?? DEFAULT_PSI,
    T = problem.observed.length;
  if (typeof shown === "number" && !(Number.isInteger(shown) && shown >= 1 && shown <= T))
    throw new Error(`risp: shown frames must be between 1 and the ${T} observed, got ${shown}.`);
  if (typeof shown !== "number" && !(shown.length >= 1 && shown.every((i) => Number.isInteger(i) && i >= 0 && i < T)))
    throw new Error(
      `risp: the frames a loss compares are indices of the ${T} observed (0 to ${T - 1}), at least one; ` +
        `got [${shown.join(", ")}].`,
    );
  const middle = np.array(psiMiddle(psi), { dtype: "float32" });
  const background = loss.kind === "states" ? null : plainBackground(env, R);
  // The frames compared; all of them in order: the arrays as they are.
  const indices = typeof shown === "number" ? globalThis.Array.from({ length: shown }, (_, i) => i) : [...shown];
  const head = (x: Array) =>
    indices.length === T && indices.every((v, i) => v === i) ? x : np.take(x, np.array(indices, { dtype: "int32" }), 0);
  const look = rendering.gamma ? { gamma: rendering.gamma } : {};
  const frames = (u: Array, start: Array, p = middle) =>
    vmap((v: Array) => softImage(env, R, v, p, background!, look))(head(problem.rollout(u, start).vertices));
  const l1 = (a: Array, b: Array) => np.mean(np.abs(np.sub(a, b)));
  switch (loss.kind) {
    case "states":
      return (u, states, start) => l1(head(problem.rollout(u, start).states), head(states));
    case "pixels":
      return (u, ref, start) => np.mean(np.square(np.sub(frames(u, start), head(ref))));
    case "features": {
      const features = vmap(loss.features);
      return (u, ref, start) => {
        const [ours, theirs] = [features(frames(u, start)) as Array[], features(head(ref)) as Array[]];
        return ours
          .map((f, s) =>
            np.div(np.mean(np.square(np.sub(f, theirs[s]!))), np.add(np.mean(np.square(theirs[s]!)), 1e-8)),
          )
          .reduce((a, b) => np.add(a, b));
      };
    }
    case "predictor": {
      const N = vmap(loss.read);
      const D = problem.unknowns.length,
        unknowns = np.arange(0, D),
        lookAt = np.arange(D, D + PSI_NAMES.length);
      return (u, ref, start) =>
        l1(N(frames(np.take(u, unknowns, 0), start, psiOfUnit(np.take(u, lookAt, 0), psi))), N(head(ref)));
    }
  }
}

/**
 * A task loss compiled once (its value, and its value and gradient), to bind to one reference and start after another.
 */
export interface CompiledTaskLoss {
  readonly value: (u: Array, reference: Array, start: Array) => Array;
  readonly valueAndGrad: (u: Array, reference: Array, start: Array) => [Array, Array];
}
export const compileTaskLoss = (f: TaskLossFn): CompiledTaskLoss => {
  const value = jit(f) as CompiledTaskLoss["value"],
    vg = jit(valueAndGrad(f)) as CompiledTaskLoss["valueAndGrad"];
  return { value, valueAndGrad: vg };
};

/** The sysid objective of a compiled task loss against one reference and start (u of `size` entries). */
export function taskObjective(loss: CompiledTaskLoss, reference: Array, start: Array, size: number): Objective {
  const notResidual = () => {
    throw new Error("risp: a task's loss is not a sum of squares; polish it by sign steps, not Levenberg–Marquardt.");
  };
  return {
    size,
    valueAndGrad: (u) => loss.valueAndGrad(u, reference, start),
    value: (u) => loss.value(u, reference, start),
    residual: notResidual,
    values: async (us) => {
      const out: number[] = [];
      for (const u of us)
        out.push((await loss.value(np.array([...u], { dtype: "float32" }), reference, start).data())[0]!);
      return out;
    },
    diagnose: async () => null,
    gradientCulprit: async () => "render",
  };
}

export interface TaskFitSettings {
  /** Adam steps of each descent (projected onto the box; cosine-decayed from lr to lr/10). */
  readonly iterations: number;
  readonly lr: number;
  /** The scan after the descent: grid points per unknown across its box. */
  readonly scanPoints: number;
  /** The last sign steps (from lr/10, at most lr). */
  readonly polishSteps: number;
  /** Imitation's curriculum for actions in time: descents on this many growing prefixes of the video. */
  readonly imitationStages: number;
}

/**
 * How many of the video's T frames each descent compares: for imitation of actions in time, the
 * first ⌈T·j/S⌉ at stage j of S (an action acts only on the frames after it; fitted against the
 * whole video at once, the late frames — where a wrong guess has carried the body far off — pull
 * the early actions anywhere); otherwise the whole video once.
 */
export function stagePrefixes(problem: RispProblem, s: Pick<TaskFitSettings, "imitationStages">): number[] {
  const T = problem.observed.length,
    S = problem.task === "imitation" && problem.timedActions ? s.imitationStages : 1;
  if (!(Number.isInteger(S) && S >= 1)) throw new Error(`risp: imitationStages must be a whole number ≥ 1, got ${S}.`);
  return globalThis.Array.from({ length: S }, (_, j) => Math.ceil((T * (j + 1)) / S));
}

/**
 * The layout of a task's u: one scalar unknown per scenario unknown, within its box, then (predictor losses) the
 * look w ∈ [0, 1]^14.
 */
export function taskLayout(problem: RispProblem, loss: TaskLoss): Layout {
  const scalars: Unknown[] = problem.unknowns.map((name, i) => ({
    name,
    prior: [problem.lower[i]!, problem.upper[i]!] as const,
  }));
  return new Layout(
    fitsLook(loss)
      ? [...scalars, { name: "look w (ψ's position in its training ranges)", size: PSI_NAMES.length, prior: [0, 1] }]
      : scalars,
  );
}

/**
 * The descent settings of a task fit: projected Adam in the layout's box, cosine-decayed from lr to lr/10, then sign
 * steps.
 */
export function taskDescent(layout: Layout, s: TaskFitSettings, label = "risp"): DescentSettings {
  const lower = layout.unknowns.flatMap((k) => globalThis.Array.from({ length: k.size ?? 1 }, () => k.prior![0]));
  const upper = layout.unknowns.flatMap((k) => globalThis.Array.from({ length: k.size ?? 1 }, () => k.prior![1]));
  return {
    optimizer: "adam",
    steps: s.iterations,
    adam: { lr: s.lr, lrEnd: s.lr / 10, schedule: "cosine", b1: 0.9 },
    box: { lower, upper },
    polish: s.polishSteps,
    polishBy: { step: s.lr / 10, maxStep: s.lr },
    progress: false,
    label,
  };
}

/** What the scan and the polish made of a descent's end. */
export interface ScannedFit {
  /** The estimate of the unknowns, and the fitted look (predictor losses). */
  readonly estimate: number[];
  readonly look?: number[];
  /** The scan (with every grid point's loss). */
  readonly scan: ScanRound;
  readonly polish: { readonly before: number; readonly after: number };
  readonly descent: Descent;
}

export interface TaskFit extends ScannedFit {
  /** The losses of the first descent (every curriculum stage's, in order). */
  readonly losses: number[];
  /** The unknowns at the first descent's end, before the scan (the scan's and polish's effect is the difference). */
  readonly descended: number[];
}

/**
 * The RISP paper's procedure for its tasks (Appendix C.1): RMSProp, learning rate 3e-3, momentum 0.5, 100 iterations
 * — on the whole video, without a curriculum, scan or polish. Projected onto the unknowns' box, and keeping the lowest
 * iterate seen, like every descent here.
 */
export const PAPER_TASK_PROCEDURE = { lr: 3e-3, momentum: 0.5, iterations: 100 } as const;

export interface PaperTaskFit {
  /** The unknowns (and look) after the paper's descent alone, and its losses. */
  readonly estimate: number[];
  readonly look?: number[];
  readonly losses: number[];
  /** Then our scan and polish (`s`'s) from its end: the scan's effect, from the same descent. */
  readonly scanned: ScannedFit;
}

const splitU = (u: readonly number[], D: number) => ({
  estimate: u.slice(0, D),
  ...(u.length > D ? { look: u.slice(D) } : {}),
});

/** The scan across each unknown's box from a descent's end, a descent from a lower grid point, then the polish. */
async function scanAndPolish(
  problem: RispProblem,
  layout: Layout,
  whole: Objective,
  first: Descent,
  /** Where `first` started. */
  from: readonly number[],
  s: TaskFitSettings,
  log: (line: string) => void,
): Promise<ScannedFit> {
  const settings = taskDescent(layout, s);
  const scanned = await scanAndDescend(
    whole,
    layout,
    { d: first, from: layout.fromU([...from]) },
    { ...settings, polish: 0 },
    { points: s.scanPoints, recordScores: true },
    (line) => log(line.trim()),
  );
  const polished = await polish(whole, scanned.d, settings);
  return {
    ...splitU(polished.u, problem.unknowns.length),
    scan: scanned.rounds[0]!,
    polish: { before: scanned.d.finalLoss, after: polished.finalLoss },
    descent: polished,
  };
}

/**
 * Fit one run of a task by the paper's procedure (PAPER_TASK_PROCEDURE) from `guess` on the whole video's loss, then
 * continue with our scan and polish (`s`) from where it ended.
 */
export async function fitTaskAsPaper(
  problem: RispProblem,
  layout: Layout,
  whole: CompiledTaskLoss,
  reference: Array,
  start: Array,
  guess: readonly number[],
  s: TaskFitSettings,
  log: (line: string) => void = () => {},
): Promise<PaperTaskFit> {
  const objective = taskObjective(whole, reference, start, layout.size);
  const { box } = taskDescent(layout, s);
  const d = await descend(objective, guess, {
    optimizer: "rmsprop",
    steps: PAPER_TASK_PROCEDURE.iterations,
    rmsprop: { lr: PAPER_TASK_PROCEDURE.lr, momentum: PAPER_TASK_PROCEDURE.momentum },
    box,
    progress: false,
    label: "risp (paper's procedure)",
  });
  log(`the paper's RMSProp descent ended at loss ${d.finalLoss.toPrecision(3)}`);
  return {
    ...splitU(d.u, problem.unknowns.length),
    losses: d.losses,
    scanned: await scanAndPolish(problem, layout, objective, d, guess, s, log),
  };
}

/**
 * Fit one run of a task: from `guess` (u, with the look for predictor losses), descents on the
 * curriculum's prefixes (`stages[j]` the loss on prefix `stagePrefixes(problem)[j]`, the last the
 * whole video; sysid.horizonCurriculum), the scan across each unknown's box with a descent from a
 * lower grid point (sysid.scanAndDescend), and the sign-step polish (sysid.polish).
 */
export async function fitTask(
  problem: RispProblem,
  layout: Layout,
  stages: readonly CompiledTaskLoss[],
  reference: Array,
  start: Array,
  guess: readonly number[],
  s: TaskFitSettings,
  log: (line: string) => void = () => {},
): Promise<TaskFit> {
  const prefixes = stagePrefixes(problem, s),
    T = problem.observed.length;
  if (stages.length !== prefixes.length)
    throw new Error(
      `risp: ${prefixes.length} curriculum stages (${prefixes.join(", ")} frames) ` +
        `need as many losses, got ${stages.length}.`,
    );
  const settings = taskDescent(layout, s),
    gradient = { ...settings, polish: 0 };
  const objective = (j: number) => taskObjective(stages[j]!, reference, start, layout.size);
  const losses: number[] = [];
  const descendOn = async (j: number, from: readonly number[]) => {
    const d = await descend(objective(j), from, gradient);
    losses.push(...d.losses);
    log(
      `descent ${j + 1}/${stages.length}${stages.length > 1 ? ` (the first ${prefixes[j]} of ${T} frames)` : ""}` +
        ` ended at loss ${d.finalLoss.toPrecision(3)}`,
    );
    return d;
  };
  // Growing prefixes, each stage from the last one's estimate (no redrawn candidates).
  const { estimate } = await horizonCurriculum(
    layout,
    layout.fromU([...guess]),
    T,
    { horizons: prefixes.slice(0, -1).map((n) => n / T), candidates: 0, stageSteps: s.iterations, finalLr: s.lr },
    (n) => {
      const j = prefixes.indexOf(n);
      if (j < 0)
        throw new Error(
          `risp: the curriculum's prefixes (${prefixes.join(", ")} of ${T} frames) ` +
            `must be distinct and at least 2 frames; use fewer imitationStages.`,
        );
      return {
        losses: (cs) => objective(j).values(cs.map((c) => layout.toU(c))),
        fit: async (from) => {
          const d = await descendOn(j, layout.toU(from));
          return { estimate: layout.fromU(d.u), loss: d.finalLoss };
        },
      };
    },
    makeRng(0),
  );
  const from = layout.toU(estimate);
  const first = await descendOn(stages.length - 1, from);
  return {
    ...(await scanAndPolish(problem, layout, objective(stages.length - 1), first, from, s, log)),
    losses,
    descended: first.u.slice(0, problem.unknowns.length),
  };
}
