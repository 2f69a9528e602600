/**
 * `fit`: the training loop most users want. The step (value_and_grad + update + apply) is
 * jitted once; the loop reads back the loss, shows progress, stops early on a tolerance and
 * fails loudly (naming the step and the offending parameter leaves) when values go non-finite.
 *
 * @example
 * const { params, losses } = await fit(loss, { mass: np.array(1) }, {
 *   optimizer: adam(0.05),
 *   steps: 500,
 *   tolerance: 1e-9,
 * });
 */
import type { Array } from "../core/array.js";
import { tree } from "../core/tree.js";
import { jit } from "../transforms/jit.js";
import { valueAndGrad } from "../transforms/vjp.js";
import { applyUpdates, type GradientTransformation } from "./base.js";
import { lossCurveWriters } from "./loss-curve.js";
import { createProgress, formatLoss, type ProgressMode, type ProgressStream } from "./progress.js";
import { globalNorm, leafPaths, nonFiniteCounts, requireArray } from "./tree-math.js";

export interface StepInfo<P, S> {
  /** Number of updates applied before this evaluation (0 for the starting point). */
  readonly step: number;
  /** The loss at `params`. */
  readonly loss: number;
  /** ‖∇loss(params)‖ over all leaves. */
  readonly gradNorm: number;
  readonly params: P;
  /** The optimizer state after this step's update. */
  readonly state: S;
}

export interface FitOptions<P, S> {
  readonly optimizer: GradientTransformation<S>;
  /** Most updates to apply. */
  readonly steps: number;
  /** Called after every step; return `false` to stop. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a callback may return nothing (go on) or a boolean.
  readonly onStep?: (info: StepInfo<P, S>) => void | boolean;
  /** Stop when |L_k − L_{k−1}| ≤ tolerance · max(|L_k|, |L_{k−1}|, 1) (scipy's ftol). */
  readonly tolerance?: number;
  /** Stop when the loss is at most this. */
  readonly targetLoss?: number;
  /** Stop when the gradient's global norm is at most this. */
  readonly gradTolerance?: number;
  /** "auto" (default): a progress bar on a TTY, a few log lines otherwise; false: silent. */
  readonly progress?: ProgressMode;
  /** Where progress goes (default process.stderr). */
  readonly output?: ProgressStream;
  /** Write the loss curve as a PNG (Node only; log y axis when the loss spans > 2 decades, or as `logScale` says). */
  readonly lossCurvePng?: string;
  /** Write the loss curve as CSV (`step,loss,grad_norm`; Node only). */
  readonly lossCurveCsv?: string;
  readonly logScale?: boolean;
  /** Resume from this optimizer state instead of `optimizer.init(params)`. */
  readonly initialState?: S;
}

export type StopReason = "steps" | "tolerance" | "targetLoss" | "gradTolerance" | "callback";

export interface FitResult<P, S> {
  /** The parameters whose loss is the last entry of `losses`. */
  readonly params: P;
  readonly state: S;
  /** losses[k] is the loss after k updates (losses[0] at the starting point). */
  readonly losses: number[];
  readonly gradNorms: number[];
  /** Updates applied to reach `params` (losses.length − 1). */
  readonly steps: number;
  readonly stopReason: StopReason;
  readonly seconds: number;
}

interface StepOut<P, S> {
  readonly params: P;
  readonly state: S;
  readonly loss: Array;
  readonly gradNorm: Array;
  /** Non-finite element counts per leaf, for error messages. */
  readonly badParams: Array;
  readonly badGrads: Array;
  readonly badNext: Array;
}

const readScalar = async (x: Array): Promise<number> => (await x.data())[0]!;
const readCounts = async (x: Array): Promise<number[]> => globalThis.Array.from(await x.data(), Number);
const namesWhere = (paths: readonly string[], counts: readonly number[]): string[] =>
  paths.filter((_, i) => counts[i]! > 0);

function checkParams(params: unknown): void {
  const [leaves] = tree.flatten(params);
  if (!leaves.length) throw new Error("fit: params has no leaves; pass an Array or a pytree of Arrays.");
  leaves.forEach((l, i) => {
    const a = requireArray(l, "fit (params)");
    if (a.dtype !== "float32" && a.dtype !== "float64")
      throw new Error(
        `fit: parameter leaf ${leafPaths(params)[i]} is ${a.aval}; parameters must be float32 or float64.`,
      );
  });
}

function nonFiniteMessage(
  step: number,
  loss: number,
  prevLoss: number | undefined,
  paths: readonly string[],
  badParams: number[],
  badGrads: number[],
): string {
  const p = namesWhere(paths, badParams),
    g = namesWhere(paths, badGrads);
  const where = p.length
    ? `Non-finite parameter leaves at step ${step}: ${p.join(", ")}.`
    : `All parameter leaves are finite at step ${step}, so the loss function itself ` +
      `produced ${loss} there (log/sqrt of a negative number, 0/0, overflow).`;
  const prev = prevLoss === undefined ? "" : ` (loss at step ${step - 1}: ${formatLoss(prevLoss)})`;
  const grads = g.length ? ` Non-finite gradient leaves: ${g.join(", ")}.` : "";
  return (
    `fit: the loss is ${loss} at step ${step}${prev}. ${where}${grads} ` +
    "Try a smaller learning rate, clipByGlobalNorm, or reparametrizing bounded parameters (logSpace, sigmoidBox)."
  );
}

/** Minimize `lossFn` from `params` with `optimizer`; resolves to the final params and the loss history. */
export async function fit<P, S>(
  lossFn: (params: P) => Array,
  params: P,
  opts: FitOptions<P, S>,
): Promise<FitResult<P, S>> {
  const { optimizer, steps } = opts;
  if (!(Number.isInteger(steps) && steps >= 0))
    throw new Error(`fit: steps must be a non-negative integer, got ${steps}.`);
  checkParams(params);
  const paths = leafPaths(params);

  const step = jit((p: P, s: S): StepOut<P, S> => {
    const [loss, grads] = valueAndGrad(lossFn)(p) as [Array, P];
    const [updates, state] = optimizer.update(grads, s, p, { value: loss, grad: grads, valueFn: lossFn });
    const next = applyUpdates(p, updates);
    return {
      params: next,
      state,
      loss,
      gradNorm: globalNorm(grads),
      badParams: nonFiniteCounts(p),
      badGrads: nonFiniteCounts(grads),
      badNext: nonFiniteCounts(next),
    };
  });

  const progress = createProgress(steps, opts.progress ?? "auto", opts.output);
  const losses: number[] = [],
    gradNorms: number[] = [];
  const t0 = performance.now();
  const curves =
    opts.lossCurveCsv || opts.lossCurvePng
      ? lossCurveWriters(opts.lossCurveCsv ? "lossCurveCsv" : "lossCurvePng")
      : undefined;
  const writeCurves = () => {
    if (opts.lossCurveCsv) curves!.csv(opts.lossCurveCsv, losses, gradNorms);
    if (opts.lossCurvePng) curves!.png(opts.lossCurvePng, losses, { logY: opts.logScale ?? "auto" });
  };
  const fail = (message: string): never => {
    progress.finish(`stopped with an error at step ${losses.length - 1}`);
    writeCurves();
    throw new Error(message);
  };

  let p = params;
  let s = opts.initialState ?? optimizer.init(params);
  let stopReason: StopReason = "steps";
  for (let k = 0; k <= steps; k++) {
    // The last pass only evaluates the final parameters (its update is discarded).
    const out = step(p, s);
    const loss = await readScalar(out.loss),
      gradNorm = await readScalar(out.gradNorm);
    losses.push(loss);
    gradNorms.push(gradNorm);
    if (!Number.isFinite(loss))
      fail(
        nonFiniteMessage(
          k,
          loss,
          losses[k - 1],
          paths,
          await readCounts(out.badParams),
          await readCounts(out.badGrads),
        ),
      );
    if (k === steps) break;
    progress.update(k, loss);

    const prev = losses[k - 1];
    if (opts.targetLoss !== undefined && loss <= opts.targetLoss) {
      stopReason = "targetLoss";
      break;
    }
    if (opts.gradTolerance !== undefined && gradNorm <= opts.gradTolerance) {
      stopReason = "gradTolerance";
      break;
    }
    if (
      opts.tolerance !== undefined &&
      prev !== undefined &&
      Math.abs(loss - prev) <= opts.tolerance * Math.max(Math.abs(loss), Math.abs(prev), 1)
    ) {
      stopReason = "tolerance";
      break;
    }
    if (opts.onStep?.({ step: k, loss, gradNorm, params: p, state: out.state }) === false) {
      stopReason = "callback";
      break;
    }

    const badNext = await readCounts(out.badNext);
    if (badNext.some((c) => c > 0)) {
      const g = namesWhere(paths, await readCounts(out.badGrads));
      fail(
        `fit: the update at step ${k} (loss ${formatLoss(loss)}) made ` +
          `parameter leaves non-finite: ${namesWhere(paths, badNext).join(", ")}` +
          `${g.length ? ` (non-finite gradient leaves: ${g.join(", ")})` : ""}. ` +
          `Try a smaller learning rate or clipByGlobalNorm.`,
      );
    }
    p = out.params;
    s = out.state;
  }
  const seconds = (performance.now() - t0) / 1000;
  const last = losses.length - 1;
  progress.finish(
    `${last} steps in ${seconds.toFixed(2)}s, loss ${formatLoss(losses[0]!)} ` +
      `→ ${formatLoss(losses[last]!)} (stopped: ${stopReason})`,
  );
  writeCurves();
  return { params: p, state: s, losses, gradNorms, steps: last, stopReason, seconds };
}
