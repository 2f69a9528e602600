/**
 * Levenberg–Marquardt for nonlinear least squares, min_x mean(r(x)²), driven from the host
 * like scipy's `least_squares(method="lm")`: each iteration takes the Jacobian J = ∂r/∂x by
 * forward mode (one jitted `jacfwd`, i.e. n batched jvps), forms the normal equations in
 * float64 on the host and solves
 *     (JᵀJ + λ·diag(JᵀJ)) δ = −Jᵀr
 * by Cholesky; a step that lowers the loss is taken and λ shrinks, otherwise λ grows and the
 * same J is reused (Nocedal & Wright §10.3, Marquardt's scaling).
 *
 * Why beside the gradient methods: on badly conditioned fits (the cloth's per-particle
 * velocities from video) first-order methods and L-BFGS stall where a step's decrease drops
 * below the float32 rounding of the loss, while J still holds the curvature of every
 * direction. Gauss–Newton steps need no line search along such noisy values. It is a local
 * method: start it from a gradient fit's result, not from a far-off guess.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { jit } from "../transforms/jit.js";
import { jacfwd } from "../transforms/vjp.js";
import { createProgress, formatLoss, type ProgressMode, type ProgressStream } from "./progress.js";

export interface LevenbergMarquardtOptions {
  /** Most Jacobian evaluations (accepted steps). */
  readonly iterations: number;
  /** Initial damping λ (relative to diag(JᵀJ)); default 1e-3. */
  readonly damping?: number;
  /** Rejected steps (λ ×8 each) before giving up at one Jacobian; default 10. */
  readonly maxRejections?: number;
  readonly progress?: ProgressMode;
  readonly output?: ProgressStream;
  readonly label?: string;
  /** Further arguments of the residual, held fixed (e.g. a point a re-fit moves from). */
  readonly data?: readonly Array[];
}

export type LevenbergMarquardtStop = "iterations" | "stalled";

export interface LevenbergMarquardtResult {
  /** The parameters whose loss is the last entry of `losses` (same shape and dtype as x0). */
  readonly params: Array;
  /** mean(r²) at the start and after each accepted step. */
  readonly losses: number[];
  readonly iterations: number;
  readonly seconds: number;
  /** "stalled": no damping made a step lower the loss (converged to the loss's precision). */
  readonly stopReason: LevenbergMarquardtStop;
}

type Residual = (x: Array, ...data: Array[]) => Array;
const compiledResiduals = new WeakMap<Residual, { residual: Residual; jacobian: Residual }>();
/** The residual and its Jacobian in x, compiled once per residual function (its data arguments are inputs). */
function compiledResidual(residual: Residual): { residual: Residual; jacobian: Residual } {
  let c = compiledResiduals.get(residual);
  if (!c) {
    const flat = (x: Array, ...data: Array[]) => np.reshape(residual(x, ...data), [-1]);
    c = { residual: jit(flat), jacobian: jit(jacfwd(flat)) as Residual };
    compiledResiduals.set(residual, c);
  }
  return c;
}

/**
 * Minimise mean(residual(x, ...data)²) over a 1-D x from x0. A residual called again (with other `data`) reuses its
 * compiled programs.
 */
export async function levenbergMarquardt(
  residual: (x: Array, ...data: Array[]) => Array,
  x0: Array,
  opts: LevenbergMarquardtOptions,
): Promise<LevenbergMarquardtResult> {
  if (x0.ndim !== 1)
    throw new Error(`levenbergMarquardt: x0 must be 1-D (flatten the unknowns), got shape [${x0.shape.join(", ")}].`);
  if (!(Number.isInteger(opts.iterations) && opts.iterations >= 0))
    throw new Error(`levenbergMarquardt: iterations must be a non-negative integer, got ${opts.iterations}.`);
  const data = opts.data ?? [];
  const compiled = compiledResidual(residual);
  const residualJ = (x: Array) => compiled.residual(x, ...data),
    jacobianJ = (x: Array) => compiled.jacobian(x, ...data);
  const n = x0.shape[0]!;
  const maxRejections = opts.maxRejections ?? 10;
  const progress = createProgress(
    opts.iterations,
    opts.progress ?? "auto",
    opts.output,
    opts.label ?? "levenberg-marquardt",
  );
  const t0 = performance.now();
  const lossOf = (r: ArrayLike<number>) => {
    let s = 0;
    for (let i = 0; i < r.length; i++) s += r[i]! * r[i]!;
    return s / Math.max(1, r.length);
  };

  let x = x0,
    r = await residualJ(x).data(),
    loss = lossOf(r),
    lambda = opts.damping ?? 1e-3;
  if (!Number.isFinite(loss)) throw new Error(`levenbergMarquardt: the residual is not finite at x0 (loss ${loss}).`);
  const losses = [loss];
  let stopReason: LevenbergMarquardtStop = "iterations";
  for (let it = 0; it < opts.iterations; it++) {
    progress.update(it, loss);
    const { jtj, jtr } = normalEquations(await jacobianJ(x).data(), r, n);
    const xHost = Float64Array.from(await x.data());
    let accepted = false;
    for (let k = 0; k <= maxRejections && !accepted; k++, lambda *= 8) {
      const delta = solveDamped(jtj, jtr, lambda);
      if (!delta) continue;
      const trial = np.array(
        xHost.map((v, i) => v + delta[i]!),
        { dtype: x0.dtype },
      );
      const rTrial = await residualJ(trial).data(),
        trialLoss = lossOf(rTrial);
      if (trialLoss < loss) {
        x = trial;
        r = rTrial;
        loss = trialLoss;
        accepted = true;
      }
    }
    if (!accepted) {
      stopReason = "stalled";
      break;
    }
    lambda = Math.max(1e-12, lambda / 32); // undo the last ×8, then shrink ×4 after a success
    losses.push(loss);
  }
  const seconds = (performance.now() - t0) / 1000;
  progress.finish(
    `${losses.length - 1} Levenberg–Marquardt steps in ${seconds.toFixed(2)}s, ` +
      `loss ${formatLoss(losses[0]!)} → ${formatLoss(loss)} (stopped: ${stopReason})`,
  );
  return { params: x, losses, iterations: losses.length - 1, seconds, stopReason };
}

/** JᵀJ (row-major n×n) and Jᵀr in float64 from J [m, n] (row-major) and r [m]. */
export function normalEquations(
  j: ArrayLike<number>,
  r: ArrayLike<number>,
  n: number,
): { jtj: Float64Array; jtr: Float64Array } {
  const m = r.length;
  if (j.length !== m * n) throw new Error(`normalEquations: J has ${j.length} entries, expected ${m}×${n}.`);
  const jtj = new Float64Array(n * n),
    jtr = new Float64Array(n),
    row = new Float64Array(n);
  for (let k = 0; k < m; k++) {
    for (let i = 0; i < n; i++) row[i] = j[k * n + i]!;
    const rk = r[k]!;
    for (let i = 0; i < n; i++) {
      const ji = row[i]!;
      if (ji === 0) continue;
      jtr[i] += ji * rk;
      for (let c = i; c < n; c++) jtj[i * n + c] += ji * row[c]!;
    }
  }
  for (let i = 0; i < n; i++) for (let c = 0; c < i; c++) jtj[i * n + c] = jtj[c * n + i]!;
  return { jtj, jtr };
}

/**
 * δ solving (JᵀJ + λ·D) δ = −Jᵀr with D = diag(JᵀJ), floored at 1e-12 of its largest entry so
 * unknowns the residual does not see stay put instead of making the system singular; null when
 * the damped matrix is not numerically positive definite.
 */
export function solveDamped(jtj: Float64Array, jtr: Float64Array, lambda: number): Float64Array | null {
  const n = jtr.length;
  let maxDiag = 0;
  for (let i = 0; i < n; i++) maxDiag = Math.max(maxDiag, jtj[i * n + i]!);
  const a = Float64Array.from(jtj);
  for (let i = 0; i < n; i++) a[i * n + i] += lambda * Math.max(jtj[i * n + i]!, 1e-12 * maxDiag, Number.MIN_VALUE);
  return choleskySolve(
    a,
    jtr.map((v) => -v),
    n,
  );
}

/** Solve A x = b for symmetric positive definite A (row-major n×n, float64); null if A is not. */
export function choleskySolve(a: Float64Array, b: Float64Array, n: number): Float64Array | null {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c <= i; c++) {
      let s = a[i * n + c]!;
      for (let k = 0; k < c; k++) s -= l[i * n + k]! * l[c * n + k]!;
      if (i === c) {
        if (!(s > 0)) return null;
        l[i * n + i] = Math.sqrt(s);
      } else l[i * n + c] = s / l[c * n + c]!;
    }
  }
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= l[i * n + k]! * y[k]!;
    y[i] = s / l[i * n + i]!;
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let k = i + 1; k < n; k++) s -= l[k * n + i]! * x[k]!;
    x[i] = s / l[i * n + i]!;
  }
  return x;
}
