/**
 * The descent itself: Adam or RMSProp (with the best iterate kept) or L-BFGS with a host-driven
 * backtracking line search, optionally followed by L-BFGS refinement steps and
 * Levenberg–Marquardt polishing on the residuals, all over the flat unconstrained vector u —
 * optionally through a change of variables u = P·w (a preconditioner).
 *
 * The loop is driven from the host (one value-and-gradient per step, line-search trials as
 * forward passes) rather than as a lax.whileLoop inside a jitted step, so it runs on every
 * backend (WebGPU cannot read a loop predicate back synchronously).
 */
import type { Array } from "../core/array.js";
import { invertHost } from "./host-linalg.js";
import { np } from "../core/np/index.js";
import { jit } from "../transforms/index.js";
import * as optim from "../optim/index.js";
import { DivergenceError } from "../models/common/divergence.js";
import type { Objective } from "./objective.js";
import { signSteps, type SignStepSettings } from "./sign-steps.js";

export interface AdamSettings {
  /** Initial learning rate (in unconstrained units: for log-space unknowns, a relative step). */
  readonly lr: number;
  /** Learning rate at the last step. Default lr/100. */
  readonly lrEnd?: number;
  /** exponential (default): lr·(lrEnd/lr)^(k/steps); cosine: cosine decay from lr to lrEnd. */
  readonly schedule?: "exponential" | "cosine";
  /**
   * β1. Default 0.5: little momentum, so steps are the learning rate on plateaus and V-shaped
   * losses far from the optimum and shrink with the gradient in the smooth basin around it.
   */
  readonly b1?: number;
  /**
   * Stop after this many steps without a new lowest loss (default: run every step). In Table 2's
   * fits a third of the descent time went to phases that ended no lower than they started, e.g.
   * the last 120 Adam steps from a curriculum estimate already at the loss's floor.
   */
  readonly patience?: number;
}

/**
 * RMSProp as PyTorch's torch.optim.RMSprop (the RISP paper's optimiser): ν ← αν + (1 − α)g², the step g/(√ν + ε)
 * through heavy-ball momentum, times a constant learning rate.
 */
export interface RmspropSettings {
  readonly lr: number;
  /** Heavy-ball momentum on the scaled gradient (default 0). */
  readonly momentum?: number;
  /** α, the squared gradient's running average (default 0.99, PyTorch's). */
  readonly decay?: number;
}

export interface DescentSettings {
  /** First-order methods (Adam, RMSProp) keep the lowest iterate seen; L-BFGS too. */
  readonly optimizer: "adam" | "rmsprop" | "lbfgs";
  readonly steps: number;
  readonly adam?: AdamSettings;
  readonly rmsprop?: RmspropSettings;
  /**
   * L-BFGS steps after Adam, from its best iterate (Adam finds the basin, L-BFGS resolves its ill-conditioned
   * directions).
   */
  readonly refine?: number;
  /**
   * Polish steps at the end: Levenberg–Marquardt on the residuals (for fits a line search leaves short of float32
   * precision), or sign steps (`polishBy`).
   */
  readonly polish?: number;
  /**
   * How the polish steps move (default Levenberg–Marquardt): sign steps suit L1 losses, whose kink at the minimum no
   * residual model fits.
   */
  readonly polishBy?: "levenberg-marquardt" | SignStepSettings;
  /**
   * Keep u within [lower, upper], entry by entry: Adam's or RMSProp's iterates (and sign steps) are projected
   * onto the box (projected gradient descent). Without L-BFGS or a preconditioner.
   */
  readonly box?: Box;
  /** Change of variables u = P·w, with u taken as rows [N, C] for P [N, N] (see smoothingPreconditioner). */
  readonly precondition?: Preconditioner;
  readonly progress?: optim.ProgressMode;
  readonly label?: string;
  /** Called at every evaluated iterate of the Adam and L-BFGS phases (awaited), e.g. to draw live progress. */
  readonly onStep?: (info: DescentStep) => void | Promise<void>;
}

export interface DescentStep {
  /** The phase's label (e.g. "fit", "fit L-BFGS"). */
  readonly label: string;
  /** The iterate's index within its phase. */
  readonly step: number;
  readonly loss: number;
  /** The iterate in unconstrained units (after undoing any preconditioner). */
  readonly u: readonly number[];
}

/** Per-entry bounds of u. */
export interface Box {
  readonly lower: readonly number[];
  readonly upper: readonly number[];
}

export interface Preconditioner {
  readonly matrix: Array;
  readonly inverse: Array;
}

export interface Descent {
  /** The unconstrained estimate (the lowest loss seen). */
  readonly u: number[];
  readonly finalLoss: number;
  /** Loss at the start and after each step of every phase, in order. */
  readonly losses: number[];
  readonly gradNorms: number[];
  /** Gradient steps (Adam + L-BFGS) and Levenberg–Marquardt steps taken. */
  readonly steps: number;
  readonly polishSteps: number;
  readonly seconds: number;
  readonly stopReason: string;
}

const scalar = async (x: Array): Promise<number> => (await x.data())[0]!;
const f32 = (x: readonly number[]): Array => np.array([...x], { dtype: "float32" });

/** Updates that leave every parameter bit-identical this many times in a row end an Adam run. */
const STALL_STEPS = 3;

/** P·u with u [N·C] taken as rows [N, C] for P [N, N]. */
const applyRows = (p: Array, u: Array): Array => np.reshape(np.matmul(p, np.reshape(u, [p.shape[0]!, -1])), [-1]);

/** The objective seen through u = P·w. */
function preconditioned(o: Objective, p: Preconditioner): Objective {
  const toU = (w: Array) => applyRows(p.matrix, w);
  const vg = jit((w: Array) => {
    const [l, g] = o.valueAndGrad(toU(w));
    // ∂L/∂w = Pᵀ·∂L/∂u (rows).
    return [l, applyRows(np.transpose(p.matrix), g)] as [Array, Array];
  });
  return {
    size: o.size,
    valueAndGrad: (w) => vg(w) as [Array, Array],
    value: (w) => o.value(toU(w)),
    residual: (w) => o.residual(toU(w)),
    values: async (ws) =>
      o.values(await Promise.all(ws.map(async (w) => globalThis.Array.from(await toU(f32(w)).data(), Number)))),
    diagnose: (w) => o.diagnose(toU(w)),
    gradientCulprit: (w) => o.gradientCulprit(toU(w)),
  };
}

/** Minimise the objective from u0 (host values of the unconstrained vector). */
export async function descend(objective: Objective, u0: readonly number[], s: DescentSettings): Promise<Descent> {
  if (!(Number.isInteger(s.steps) && s.steps >= 0))
    throw new Error(`sysid: steps must be a whole number ≥ 0, got ${s.steps}.`);
  if (u0.length !== objective.size)
    throw new Error(`sysid: the start has ${u0.length} values, the objective ${objective.size}.`);
  const p = s.precondition;
  if (s.box) checkBox(s, objective.size, u0);
  const o = p ? preconditioned(objective, p) : objective;
  let w = p ? applyRows(p.inverse, f32(u0)) : f32(u0);
  const label = s.label ?? "fit";
  const losses: number[] = [],
    gradNorms: number[] = [];
  let seconds = 0,
    steps = 0;
  const reasons: string[] = [];

  const report: Report | undefined =
    s.onStep &&
    (async (lbl, step, loss, at) =>
      s.onStep!({
        label: lbl,
        step,
        loss,
        u: globalThis.Array.from(await (p ? applyRows(p.matrix, at) : at).data(), Number),
      }));
  const first =
    s.optimizer === "lbfgs"
      ? await lbfgsPhase(o, w, s.steps, s.progress, label, report)
      : await firstOrderPhase(o, w, s.steps, firstOrder(s), s.progress, label, report, s.box);
  w = first.params;
  losses.push(...first.losses);
  gradNorms.push(...first.gradNorms);
  seconds += first.seconds;
  steps += first.steps;
  reasons.push(first.stopReason);
  let best = first.bestLoss;

  if (s.optimizer !== "lbfgs" && s.refine) {
    const r = await lbfgsPhase(o, w, s.refine, s.progress, `${label} L-BFGS`, report);
    // From the first-order phase's best iterate; its own best is never higher.
    w = r.params;
    best = r.bestLoss;
    losses.push(...r.losses.slice(1));
    gradNorms.push(...r.gradNorms.slice(1));
    seconds += r.seconds;
    steps += r.steps;
    reasons.push(`L-BFGS ${r.stopReason}`);
  }
  const gradient = {
    finalLoss: best,
    losses,
    gradNorms,
    steps,
    polishSteps: 0,
    seconds,
    stopReason: reasons.join("; "),
  };
  return s.polish ? polishPhase(o, w, gradient, s) : { ...gradient, u: await hostU(w, p) };
}

/**
 * The Levenberg–Marquardt polish (settings.polish steps) after a descent without one, e.g. of the
 * best of several fits (the polish is most of a cloth fit's time: 30 of 44 s).
 */
export async function polish(objective: Objective, d: Descent, s: DescentSettings): Promise<Descent> {
  if (!s.polish) return d;
  if (s.box) checkBox(s, objective.size, d.u);
  const p = s.precondition;
  return polishPhase(p ? preconditioned(objective, p) : objective, p ? applyRows(p.inverse, f32(d.u)) : f32(d.u), d, s);
}

const hostU = async (w: Array, p: Preconditioner | undefined): Promise<number[]> =>
  globalThis.Array.from(await (p ? applyRows(p.matrix, w) : w).data(), Number);

/** The box's sizes, order and the start within it; a box only for Adam or RMSProp without a preconditioner. */
function checkBox(s: DescentSettings, size: number, u0: readonly number[]): void {
  const { lower, upper } = s.box!;
  if (s.optimizer === "lbfgs" || s.refine || s.precondition)
    throw new Error(
      "sysid: a box (projected descent) is for Adam or RMSProp without L-BFGS refinement or a preconditioner; " +
        'drop the box or use optimizer "adam" or "rmsprop" alone.',
    );
  if (lower.length !== size || upper.length !== size)
    throw new Error(
      `sysid: the box has ${lower.length} lower and ${upper.length} upper bounds for ${size} unknowns; ` +
        `give one of each per entry of u.`,
    );
  lower.forEach((lo, i) => {
    if (!(lo <= upper[i]!)) throw new Error(`sysid: the box's entry ${i} has lower ${lo} above upper ${upper[i]}.`);
    if (!(u0[i]! >= lo && u0[i]! <= upper[i]!))
      throw new Error(
        `sysid: the start's entry ${i} (${u0[i]}) is outside the box [${lo}, ${upper[i]}]; start inside it.`,
      );
  });
}

/** Polish from w (in the preconditioned variables), the end of descent `d`, and append its losses. */
async function polishPhase(o: Objective, w: Array, d: Omit<Descent, "u">, s: DescentSettings): Promise<Descent> {
  if (s.polishBy && s.polishBy !== "levenberg-marquardt") {
    if (s.precondition)
      throw new Error("sysid: sign steps polish u itself; drop the preconditioner or polish by Levenberg–Marquardt.");
    const r = await signSteps(o, globalThis.Array.from(await w.data(), Number), s.polish!, s.polishBy, s.box);
    const found = r.loss < d.finalLoss;
    return {
      u: found ? r.u : await hostU(w, s.precondition),
      finalLoss: Math.min(r.loss, d.finalLoss),
      losses: [...d.losses, ...r.losses],
      gradNorms: d.gradNorms,
      steps: d.steps,
      polishSteps: r.losses.length,
      seconds: d.seconds + r.seconds,
      stopReason: `${d.stopReason}; sign steps ${r.stopReason}`,
    };
  }
  const lm = await optim.levenbergMarquardt(o.residual, w, {
    iterations: s.polish!,
    progress: s.progress,
    label: `${s.label ?? "fit"} (Levenberg–Marquardt)`,
  });
  // The LM losses are mean(r²); rescale them to the objective's loss (Σr² = loss up to a factor).
  const scale = lm.losses[0]! > 0 ? d.finalLoss / lm.losses[0]! : 1;
  return {
    u: await hostU(lm.params, s.precondition),
    finalLoss: lm.losses[lm.losses.length - 1]! * scale,
    losses: [...d.losses, ...lm.losses.slice(1).map((l) => l * scale)],
    gradNorms: d.gradNorms,
    steps: d.steps,
    polishSteps: lm.iterations,
    seconds: d.seconds + lm.seconds,
    stopReason: `${d.stopReason}; Levenberg–Marquardt ${lm.stopReason}`,
  };
}

type Report = (label: string, step: number, loss: number, at: Array) => Promise<void>;

interface Phase {
  params: Array;
  bestLoss: number;
  losses: number[];
  gradNorms: number[];
  steps: number;
  seconds: number;
  stopReason: string;
}

export function adamOptimizer(a: AdamSettings, steps: number): optim.GradientTransformation<unknown> {
  if (!(a.lr > 0)) throw new Error(`sysid: Adam's learning rate must be positive, got ${a.lr}.`);
  if (a.patience !== undefined && !(Number.isInteger(a.patience) && a.patience >= 1))
    throw new Error(`sysid: Adam's patience must be a whole number of steps ≥ 1, got ${a.patience}.`);
  const lrEnd = a.lrEnd ?? a.lr / 100;
  const schedule =
    a.schedule === "cosine"
      ? optim.cosineDecay({ initValue: a.lr, decaySteps: Math.max(1, steps), alpha: lrEnd / a.lr })
      : optim.exponentialDecay({ initValue: a.lr, decayRate: lrEnd / a.lr, transitionSteps: Math.max(1, steps) });
  return optim.adam(schedule, { b1: a.b1 ?? 0.5 }) as optim.GradientTransformation<unknown>;
}

export function rmspropOptimizer(r: RmspropSettings): optim.GradientTransformation<unknown> {
  if (!(r.lr > 0)) throw new Error(`sysid: RMSProp's learning rate must be positive, got ${r.lr}.`);
  const momentum = r.momentum ?? 0,
    decay = r.decay ?? 0.99;
  if (!(momentum >= 0 && momentum < 1))
    throw new Error(`sysid: RMSProp's momentum must be in [0, 1), got ${momentum}.`);
  if (!(decay > 0 && decay < 1)) throw new Error(`sysid: RMSProp's decay must be in (0, 1), got ${decay}.`);
  // PyTorch's form: ε outside the root, ν from 0.
  return optim.rmsprop(r.lr, { momentum, decay, eps: 1e-8, epsInSqrt: false }) as optim.GradientTransformation<unknown>;
}

/** The first-order method and its patience (Adam's alone). */
function firstOrder(s: DescentSettings): { opt: optim.GradientTransformation<unknown>; patience?: number } {
  if (s.optimizer === "rmsprop") {
    if (!s.rmsprop) throw new Error('sysid: optimizer "rmsprop" needs its settings: give rmsprop: { lr }.');
    return { opt: rmspropOptimizer(s.rmsprop) };
  }
  const a = s.adam ?? { lr: 0.05 };
  return { opt: adamOptimizer(a, s.steps), ...(a.patience !== undefined ? { patience: a.patience } : {}) };
}

/** The error for a non-finite loss or gradient: the simulation's divergence when the rerun finds one. */
async function notFinite(
  o: Objective,
  at: Array,
  label: string,
  k: number,
  loss: number,
  gradNorm: number,
): Promise<Error> {
  const head = `${label}: the loss or its gradient is not finite at step ${k} (loss ${loss}, ‖∇‖ ${gradNorm})`;
  const d = await o.diagnose(at).catch(() => null);
  if (d)
    return new DivergenceError(
      `${head}, because ${d.message} An unknown may have left its stable ` +
        `range: narrow the prior, start closer, or lower the learning rate.`,
      d.divergence,
    );
  const culprit = Number.isFinite(loss) ? await o.gradientCulprit(at).catch(() => null) : null;
  if (culprit === "simulation") {
    return new Error(
      `${head}; the simulated states stayed finite but the simulation's ` +
        `derivative did not (the rollout's gradient, before any rendering): ` +
        `run with setDebugNans(true) to find the operation, or ` +
        `narrow the prior, start closer, or lower the learning rate.`,
    );
  }
  return new Error(
    `${head}; the simulation${culprit === "render" ? " and its derivative" : ""} stayed ` +
      `finite, so the rendering or the loss produced it: run with setDebugNans(true) to ` +
      `find the operation, or narrow the prior, start closer, or lower the learning rate.`,
  );
}

/** A first-order method for `steps` updates (plus a final evaluation); keeps the iterate with the lowest loss. */
async function firstOrderPhase(
  o: Objective,
  w0: Array,
  steps: number,
  { opt, patience }: ReturnType<typeof firstOrder>,
  progressMode: optim.ProgressMode | undefined,
  label: string,
  report?: Report,
  box?: Box,
): Promise<Phase> {
  const lower = box && f32(box.lower),
    upper = box && f32(box.upper);
  const update = jit((g: Array, state: unknown, w: Array) => opt.update(g, state, w) as [Array, unknown]);
  const progress = optim.createProgress(steps, progressMode ?? "auto", undefined, label);
  const losses: number[] = [],
    gradNorms: number[] = [];
  const t0 = performance.now();
  let w = w0,
    state = opt.init(w0),
    best = w0,
    bestLoss = Infinity,
    sinceBest = 0,
    unchanged = 0,
    stopReason = "steps";
  for (let k = 0; ; k++) {
    const [lossArr, g] = o.valueAndGrad(w);
    const loss = await scalar(lossArr),
      gradNorm = await scalar(np.sqrt(np.sum(np.square(g))));
    losses.push(loss);
    gradNorms.push(gradNorm);
    if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) {
      progress.finish(`stopped at step ${k}`);
      throw await notFinite(o, w, label, k, loss, gradNorm);
    }
    await report?.(label, k, loss, w);
    if (loss < bestLoss) {
      best = w;
      bestLoss = loss;
      sinceBest = 0;
    } else sinceBest++;
    if (k === steps) break;
    if (patience !== undefined && sinceBest >= patience) {
      stopReason = `no lower loss in ${patience} steps`;
      break;
    }
    progress.update(k, loss);
    const [updates, next] = update(g, state, w);
    const moved = box ? np.clip(np.add(w, updates), lower, upper) : np.add(w, updates);
    // Converged to the parameters' precision: updates no longer change them (float32 rounding).
    const same = await sameValues(w, moved);
    unchanged = same ? unchanged + 1 : 0;
    w = moved;
    state = next;
    if (unchanged >= STALL_STEPS) {
      stopReason = "parameters unchanged";
      break;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  progress.finish(
    `${losses.length - 1} steps in ${seconds.toFixed(1)}s, loss ${losses[0]!.toExponential(3)} ` +
      `→ ${bestLoss.toExponential(3)} (stopped: ${stopReason})`,
  );
  return { params: best, bestLoss, losses, gradNorms, steps: losses.length - 1, seconds, stopReason };
}

async function sameValues(a: Array, b: Array): Promise<boolean> {
  const x = await a.data(),
    y = await b.data();
  for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return false;
  return true;
}

/**
 * L-BFGS with a backtracking line search for `steps` steps; stops early when the line search finds
 * no decrease (converged to float32 precision). Keeps the iterate with the lowest loss: the line
 * search's trials are forward passes (`value`), a separately compiled program from `valueAndGrad`,
 * and near the floor of a contact fit's loss their rounding differs by more than the steps' decrease —
 * 12 of 650 L-BFGS phases in a Table 2 run ended higher than they started (1.3e-8 → 1.5e-7).
 */
async function lbfgsPhase(
  o: Objective,
  w0: Array,
  steps: number,
  progressMode: optim.ProgressMode | undefined,
  label: string,
  report?: Report,
): Promise<Phase> {
  const opt = optim.chain(
    optim.scaleByLbfgs({ memorySize: 10 }),
    optim.scale(-1),
  ) as optim.GradientTransformation<unknown>;
  const update = jit((g: Array, state: unknown, w: Array) => opt.update(g, state, w) as [Array, unknown]);
  const progress = optim.createProgress(steps, progressMode ?? "auto", undefined, label);
  const losses: number[] = [],
    gradNorms: number[] = [];
  const t0 = performance.now();
  let w = w0,
    state = opt.init(w0),
    best = w0,
    bestLoss = Infinity,
    stopReason = "steps";
  for (let k = 0; ; k++) {
    const [lossArr, g] = o.valueAndGrad(w);
    const value = await scalar(lossArr),
      gradNorm = await scalar(np.sqrt(np.sum(np.square(g))));
    losses.push(value);
    gradNorms.push(gradNorm);
    if (!Number.isFinite(value) || !Number.isFinite(gradNorm)) {
      progress.finish(`stopped at step ${k}`);
      throw await notFinite(o, w, label, k, value, gradNorm);
    }
    await report?.(label, k, value, w);
    if (value < bestLoss) {
      best = w;
      bestLoss = value;
    }
    if (k === steps) break;
    progress.update(k, value);
    const [direction, next] = update(g, state, w);
    state = next;
    const d = await descentDirection(g, direction);
    const moved = await lineSearch(o.value, w, value, d.slope, d.direction);
    if (!moved) {
      stopReason = "no lower loss along the line search";
      break;
    }
    w = moved;
  }
  const seconds = (performance.now() - t0) / 1000;
  const last = losses.length - 1;
  progress.finish(
    `${last} steps in ${seconds.toFixed(2)}s, loss ${losses[0]!.toExponential(3)} ` +
      `→ ${bestLoss.toExponential(3)} (stopped: ${stopReason})`,
  );
  return { params: best, bestLoss, losses, gradNorms, steps: last, seconds, stopReason };
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
 * trial when it lowers the loss at all; null when nothing lowers it (NaN never does). A trial
 * at exactly f(u) also ends the search with null: the loss no longer resolves the steps (float32),
 * and the Armijo test would accept it whenever 1e-4·α·∇f·d is below f(u)'s rounding — which
 * made L-BFGS take its remaining steps (30 in Table 2's fits) at an unchanged loss.
 */
async function lineSearch(
  value: (u: Array) => Array,
  u: Array,
  f0: number,
  slope: number,
  d: Array,
): Promise<Array | null> {
  let alpha = 1,
    last: { u: Array; f: number } | null = null;
  for (let i = 0; i < 20; i++, alpha /= 2) {
    const trial = np.add(u, np.mul(d, alpha));
    const f = (await value(trial).data())[0]!;
    if (f === f0) return null;
    if (f <= f0 + 1e-4 * alpha * slope) return trial;
    last = { u: trial, f };
  }
  return last && last.f < f0 ? last.u : null;
}

/**
 * Per-particle unknowns on a mesh (a cloth's initial velocities) have a badly conditioned
 * loss: a rough field excites the membrane's fast, stiff in-plane oscillations, which show in
 * every frame (high curvature), while smooth deformations of the field change the motion little
 * (low curvature), so descent spends its steps on the rough directions. P = (I + αL)⁻¹ (L: the
 * graph Laplacian of `edges`) damps rough directions and keeps smooth ones, a Sobolev-gradient
 * preconditioner. Measured on the cloth (49 particles): with α = 2, L-BFGS for 150 steps reaches
 * a velocity error of 0.022 instead of 0.059 from video and 0.022 instead of 0.050 from 3-D
 * states; α = 8 over-smooths (0.035, stalled).
 */
export function smoothingPreconditioner(
  nodes: number,
  edges: readonly (readonly [number, number])[],
  alpha: number,
): Preconditioner {
  const range = (n: number) => globalThis.Array.from({ length: n }, (_, i) => i);
  const a = range(nodes).map((i) => range(nodes).map((j) => (i === j ? 1 : 0)));
  for (const [i, j] of edges) {
    a[i]![i]! += alpha;
    a[j]![j]! += alpha;
    a[i]![j]! -= alpha;
    a[j]![i]! -= alpha;
  }
  const inverse = invertHost(a);
  if (!inverse) throw new Error("sysid: the smoothing preconditioner's matrix I + αL is singular; use α ≥ 0.");
  return { matrix: np.array(inverse, { dtype: "float32" }), inverse: np.array(a, { dtype: "float32" }) };
}
