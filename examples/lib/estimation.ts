/**
 * Parameter estimation for the non-rigid experiments: a flat vector of unknowns x (physical
 * values, e.g. Lamé parameters, per-particle masses or velocities, pendulum lengths) is
 * recovered by gradient-based optimisation of
 *   - the pixelwise MSE between render(simulate(x)) and the ground-truth video (gradsim), or
 *   - the MSE between simulated and true 3-D states (the paper's "DiffPhysics" baseline, which
 *     gets privileged 3-D supervision),
 * with the same optimiser (L-BFGS with a backtracking line search, or Adam), one jitted
 * value-and-gradient per step.
 *
 * Positive quantities are optimised in log space (steps are relative changes, and they stay
 * positive); the others as they are.
 */
import { jit, np, optim, valueAndGrad, type Array } from "../../src/index.js";

export interface EstimationProblem {
  /** Which unknowns are positive scale parameters (optimised as log x): one flag per entry of x. */
  readonly logScale: readonly boolean[];
  /** Frames [T, H, W, 4] for unknowns x [n] (physical values). */
  video(x: Array): Array;
  /** 3-D states [T, ...] (positions) for unknowns x: what DiffPhysics is supervised with. */
  states(x: Array): Array;
  /** A change of variables for the gradient methods (see `Preconditioner`). */
  readonly precondition?: Preconditioner;
}

/**
 * The gradient methods optimise w with u = P·w (u: the unconstrained unknowns, taken as rows
 * [N, C] so P [N, N] acts per component), starting from w0 = P⁻¹·u0. Every u is still
 * reachable; only the geometry of the search changes. See `smoothingPreconditioner`.
 */
export interface Preconditioner {
  readonly matrix: Array;
  readonly inverse: Array;
}

export interface FitSettings {
  /** L-BFGS with a backtracking line search (few smooth unknowns), or Adam. */
  readonly optimizer: "lbfgs" | "adam";
  readonly steps: number;
  /**
   * Levenberg–Marquardt iterations on the residuals after the gradient steps (optim.levenbergMarquardt;
   * default 0). For fits the gradient method leaves short of the loss's precision (the cloth).
   */
  readonly polish?: number;
  /**
   * Other starting points (physical values). The loss is evaluated at each and at the initial
   * guess, and the fit starts from the lowest: a cheap global step for a few unknowns whose loss
   * has other basins (the beam's μ, λ).
   */
  readonly starts?: readonly (readonly number[])[];
  /** Adam's learning rate (cosine-decayed to 1% over the run); ignored by L-BFGS. */
  readonly lr?: number;
  readonly progress: optim.ProgressMode;
  /** Progress label. */
  readonly label?: string;
  readonly lossCurvePng?: string;
  readonly lossCurveCsv?: string;
}

export interface FitOutcome {
  /** Physical estimate x̂ (host numbers). */
  readonly estimate: number[];
  readonly losses: number[];
  readonly steps: number;
  /** Levenberg–Marquardt steps taken after the gradient steps (their losses end `losses`). */
  readonly polishSteps: number;
  readonly seconds: number;
  readonly stopReason: string;
}

/** x = exp(u) where logScale, else u (elementwise, differentiable). */
export function toPhysical(problem: EstimationProblem, u: Array): Array {
  const mask = np.array(problem.logScale.map((b) => (b ? 1 : 0)), { dtype: "bool" });
  // Double where: exp of a large identity-coordinate never reaches a gradient.
  return np.where(mask, np.exp(np.where(mask, u, 0)), u);
}

/** u from physical values (host). */
export const toUnconstrained = (problem: EstimationProblem, x: readonly number[]): number[] =>
  x.map((v, i) => {
    if (!problem.logScale[i]) return v;
    if (!(v > 0)) throw new Error(`estimation: unknown ${i} must be positive (it is optimised in log space), got ${v}.`);
    return Math.log(v);
  });

const f32 = (x: readonly number[]): Array => np.array([...x], { dtype: "float32" });

const meanSquare = (r: Array): Array => np.mean(np.square(r));

export const mse = (a: Array, b: Array): Array => meanSquare(np.sub(a, b));

/** A loss over a flat parameter vector: value with gradient, and value alone (line-search trials). */
export interface Objective {
  valueAndGrad(u: Array): [Array, Array];
  value(u: Array): Array;
}

/** The objective of `loss`, each half one jitted program. */
export const compiledObjective = (loss: (u: Array) => Array): Objective => {
  const vg = jit(valueAndGrad(loss));
  return { valueAndGrad: (u) => vg(u) as [Array, Array], value: jit(loss) };
};

/**
 * Minimise an objective (or `loss(u)`, compiled) from u0 with a loop driven from the host: one
 * value-and-gradient per step, and for L-BFGS a backtracking (Armijo) line search whose trials are
 * forward passes. (optim.fit runs the line search as a lax.whileLoop inside the jitted step,
 * which the WebGPU backend cannot run: its loop predicate must be readable on the host.)
 * Stops early when the line search finds no decrease (converged to float32 precision).
 */
export async function minimize(objective: Objective | ((u: Array) => Array), u0: Array, s: FitSettings): Promise<{ params: Array; losses: number[]; gradNorms: number[]; steps: number; seconds: number; stopReason: string }> {
  const { valueAndGrad: valueAndGradJ, value: lossJ } = typeof objective === "function" ? compiledObjective(objective) : objective;
  const opt: optim.GradientTransformation<unknown> = s.optimizer === "lbfgs"
    ? optim.chain(optim.scaleByLbfgs({ memorySize: 10 }), optim.scale(-1)) as optim.GradientTransformation<unknown>
    : optim.adam(optim.cosineDecay({ initValue: s.lr ?? 0.05, decaySteps: Math.max(1, s.steps), alpha: 0.01 })) as optim.GradientTransformation<unknown>;
  const update = jit((g: Array, state: unknown, u: Array) => opt.update(g, state, u) as [Array, unknown]);
  const progress = optim.createProgress(s.steps, s.progress, undefined, s.label ?? "fit");
  const losses: number[] = [], gradNorms: number[] = [];
  const t0 = performance.now();
  let u = u0, state = opt.init(u0), stopReason = "steps";
  const scalar = async (x: Array) => (await x.data())[0]!;
  for (let k = 0; ; k++) {
    const [lossArr, grad] = valueAndGradJ(u);
    const value = await scalar(lossArr);
    losses.push(value);
    gradNorms.push(await scalar(np.sqrt(np.sum(np.square(grad)))));
    if (!Number.isFinite(value)) throw new Error(`estimation: the loss is ${value} at step ${k}; the simulation probably diverged (an unknown left its stable range).`);
    if (k === s.steps) break;
    progress.update(k, value);
    const [direction, next] = update(grad, state, u);
    state = next;
    if (s.optimizer !== "lbfgs") { u = np.add(u, direction); continue; }
    const d = await descentDirection(grad, direction);
    const moved = await lineSearch(lossJ, u, value, d.slope, d.direction);
    if (!moved) { stopReason = "converged"; break; }
    u = moved;
  }
  const seconds = (performance.now() - t0) / 1000;
  const last = losses.length - 1;
  progress.finish(`${last} steps in ${seconds.toFixed(2)}s, loss ${losses[0]!.toExponential(3)} → ${losses[last]!.toExponential(3)} (stopped: ${stopReason})`);
  if (s.lossCurveCsv) optim.writeLossCurveCsv(s.lossCurveCsv, losses, gradNorms);
  if (s.lossCurvePng) optim.writeLossCurvePng(s.lossCurvePng, losses);
  return { params: u, losses, gradNorms, steps: last, seconds, stopReason };
}

/**
 * The quasi-Newton direction if it points downhill, else steepest descent: on a non-convex loss
 * L-BFGS's curvature pairs can make it point uphill (slope ≥ 0), and the Armijo test below then
 * accepts an increase (seen on a rolling object's contact fit: 40 steps, each raising the loss).
 */
export async function descentDirection(grad: Array, direction: Array): Promise<{ direction: Array; slope: number }> {
  const slope = (await np.sum(np.mul(grad, direction)).data())[0]!;
  if (slope < 0) return { direction, slope };
  return { direction: np.neg(grad), slope: -(await np.sum(np.square(grad)).data())[0]! };
}

/**
 * Backtracking from the unit quasi-Newton step: the largest α ∈ {1, ½, ¼, …} (20 trials) with
 * f(u + αd) ≤ f(u) + 1e-4·α·∇f·d (Nocedal & Wright Alg. 3.1); if none satisfies it, the last
 * trial when it lowers the loss at all; null when nothing lowers it (NaN never does).
 */
async function lineSearch(lossJ: (u: Array) => Array, u: Array, f0: number, slope: number, d: Array): Promise<Array | null> {
  let alpha = 1, last: { u: Array; f: number } | null = null;
  for (let i = 0; i < 20; i++, alpha /= 2) {
    const trial = np.add(u, np.mul(d, alpha));
    const f = (await lossJ(trial).data())[0]!;
    if (f <= f0 + 1e-4 * alpha * slope) return trial;
    last = { u: trial, f };
  }
  return last && last.f < f0 ? last.u : null;
}

/** P·u with u [N·C] taken as rows [N, C] for P [N, N]. */
const applyRows = (p: Array, u: Array): Array => np.reshape(np.matmul(p, np.reshape(u, [p.shape[0]!, -1])), [-1]);

/**
 * Per-particle unknowns on a mesh (the cloth's initial velocities) have a badly conditioned
 * loss: a rough field excites the membrane's fast, stiff in-plane oscillations, which show in
 * every frame (high curvature), while smooth deformations of the field change the motion little
 * (low curvature), so descent spends its steps on the rough directions. P = (I + αL)⁻¹ (L: the
 * graph Laplacian of `edges`) damps rough directions and keeps smooth ones, a Sobolev-gradient
 * preconditioner. Measured on the cloth (49 particles): with α = 2, L-BFGS for 150 steps reaches
 * a velocity error of 0.022 instead of 0.059 from video and 0.022 instead of 0.050 from 3-D
 * states; α = 8 over-smooths (0.035, stalled).
 */
export function smoothingPreconditioner(nodes: number, edges: readonly (readonly [number, number])[], alpha: number): Preconditioner {
  const a = range(nodes).map((i) => range(nodes).map((j) => (i === j ? 1 : 0)));
  for (const [i, j] of edges) {
    a[i]![i]! += alpha; a[j]![j]! += alpha;
    a[i]![j]! -= alpha; a[j]![i]! -= alpha;
  }
  return { matrix: np.array(invert(a), { dtype: "float32" }), inverse: np.array(a, { dtype: "float32" }) };
}

/** Inverse of a small, well-conditioned square matrix (host, Gauss–Jordan with partial pivoting). */
function invert(m: readonly number[][]): number[][] {
  const n = m.length;
  const a = m.map((row, i) => [...row, ...range(n).map((j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    [a[c], a[p]] = [a[p]!, a[c]!];
    const d = a[c]![c]!;
    for (let j = 0; j < 2 * n; j++) a[c]![j]! /= d;
    for (let r = 0; r < n; r++) {
      const f = a[r]![c]!;
      if (r !== c && f !== 0) for (let j = 0; j < 2 * n; j++) a[r]![j]! -= f * a[c]![j]!;
    }
  }
  return a.map((row) => row.slice(n));
}

/**
 * Minimise mean(residual(x)²) over the unknowns from `initial` (physical values): the gradient
 * method, then `s.polish` Levenberg–Marquardt steps on the same residual and variables.
 */
async function fitResidual(problem: EstimationProblem, residualOfX: (x: Array) => Array, initial: readonly number[], s: FitSettings): Promise<FitOutcome> {
  const pre = problem.precondition;
  const unconstrained = (w: Array): Array => (pre ? applyRows(pre.matrix, w) : w);
  const residual = (w: Array): Array => residualOfX(toPhysical(problem, unconstrained(w)));
  const u0 = f32(toUnconstrained(problem, await bestStart(residualOfX, [initial, ...(s.starts ?? [])])));
  const polish = s.polish ?? 0;
  // The loss curves are written here, over both phases.
  const run = await minimize((w) => meanSquare(residual(w)), pre ? applyRows(pre.inverse, u0) : u0, { ...s, lossCurvePng: undefined, lossCurveCsv: undefined });
  const lm = polish > 0 ? await optim.levenbergMarquardt(residual, run.params, { iterations: polish, progress: s.progress, label: `${s.label ?? "fit"} (Levenberg–Marquardt)` }) : null;
  const params = lm?.params ?? run.params;
  const losses = lm ? [...run.losses, ...lm.losses.slice(1)] : run.losses;
  if (s.lossCurveCsv) optim.writeLossCurveCsv(s.lossCurveCsv, losses, run.gradNorms);
  if (s.lossCurvePng) optim.writeLossCurvePng(s.lossCurvePng, losses);
  const estimate = globalThis.Array.from(await toPhysical(problem, unconstrained(params)).data(), Number);
  return {
    estimate, losses, steps: run.steps, polishSteps: lm?.iterations ?? 0,
    seconds: run.seconds + (lm?.seconds ?? 0), stopReason: lm ? `${run.stopReason}; Levenberg–Marquardt ${lm.stopReason}` : run.stopReason,
  };
}

/** The candidate (physical values) with the lowest mean(residual²); the first one wins ties. */
async function bestStart(residualOfX: (x: Array) => Array, candidates: readonly (readonly number[])[]): Promise<readonly number[]> {
  if (candidates.length === 1) return candidates[0]!;
  const loss = jit((x: Array) => meanSquare(residualOfX(x)));
  let best = candidates[0]!, bestLoss = Infinity;
  for (const c of candidates) {
    const l = (await loss(f32(c)).data())[0]!;
    if (l < bestLoss) { best = c; bestLoss = l; }
  }
  return best;
}

/** gradsim: fit the unknowns to the target video by the pixelwise MSE. */
export const fitVideo = (problem: EstimationProblem, target: Array, initial: readonly number[], s: FitSettings): Promise<FitOutcome> =>
  fitResidual(problem, (x) => np.sub(problem.video(x), target), initial, s);

/** DiffPhysics: the same optimiser on the MSE of 3-D states (privileged supervision). */
export const fitStates = (problem: EstimationProblem, targetStates: Array, initial: readonly number[], s: FitSettings): Promise<FitOutcome> =>
  fitResidual(problem, (x) => np.sub(problem.states(x), targetStates), initial, s);

/** Mean absolute error over the entries `idx` of x̂ and x. */
export function meanAbsError(estimate: readonly number[], truth: readonly number[], idx: readonly number[]): number {
  return idx.reduce((s, i) => s + Math.abs(estimate[i]! - truth[i]!), 0) / Math.max(1, idx.length);
}

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

export const range = (n: number, start = 0): number[] => globalThis.Array.from({ length: n }, (_, i) => start + i);
