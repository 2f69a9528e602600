/**
 * The building blocks optimizers are chained from (optax `transform.py`). Each is a factory
 * returning a `GradientTransformation` with a named state type; the aliases in `alias.ts`
 * chain them with a learning rate.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { tree } from "../core/tree.js";
import {
  emptyState,
  type EmptyState,
  type FloatDType,
  type GradientTransformation,
  type PyTree,
  type ScalarOrSchedule,
  type Schedule,
} from "./base.js";
import { constLike, ema, fullLikeTree, incrementCount, newCount, requireArray, zerosLikeTree } from "./tree-math.js";

function floatDType(x: Array, what: string): FloatDType {
  if (x.dtype !== "float32" && x.dtype !== "float64")
    throw new Error(`${what}: updates must be float32 or float64, got ${x.aval}.`);
  return x.dtype;
}

/** updates · factor. */
export function scale(factor: number): GradientTransformation<EmptyState> {
  return {
    init: () => emptyState(),
    update: (updates, state) => [tree.map((g: Array) => np.mul(g, constLike(factor, g)), updates), state],
  };
}

export interface ScaleByScheduleState {
  readonly count: Array;
}
/** updates · schedule(count); the counter starts at 0. */
export function scaleBySchedule(schedule: Schedule): GradientTransformation<ScaleByScheduleState> {
  return {
    init: () => ({ count: newCount() }),
    update: (updates, state) => {
      // One evaluation per float dtype present (a tree may mix float32 and float64 leaves).
      const byDType = new Map<FloatDType, Array>();
      const factorFor = (g: Array): Array => {
        const d = floatDType(g, "scaleBySchedule");
        if (!byDType.has(d)) byDType.set(d, schedule(state.count, d).astype(d));
        return byDType.get(d)!;
      };
      return [tree.map((g: Array) => np.mul(g, factorFor(g)), updates), { count: incrementCount(state.count) }];
    },
  };
}

export type LearningRateState = EmptyState | ScaleByScheduleState;
/** updates · (−learningRate): turns a descent direction into a step. */
export function scaleByLearningRate(learningRate: number): GradientTransformation<EmptyState>;
export function scaleByLearningRate(learningRate: Schedule): GradientTransformation<ScaleByScheduleState>;
export function scaleByLearningRate(learningRate: ScalarOrSchedule): GradientTransformation<LearningRateState>;
export function scaleByLearningRate(learningRate: ScalarOrSchedule): GradientTransformation<LearningRateState> {
  if (typeof learningRate === "number") return scale(-learningRate);
  const s = learningRate;
  return scaleBySchedule((count, dtype) => np.neg(s(count, dtype))) as GradientTransformation<LearningRateState>;
}

export interface TraceState {
  readonly trace: PyTree;
}
export interface TraceOptions {
  readonly decay: number;
  /** Nesterov's accelerated gradient: apply the momentum look-ahead to the current gradient. */
  readonly nesterov?: boolean;
}
/**
 * Momentum (heavy ball): t ← g + decay·t; the update is t, or g + decay·t with Nesterov
 * (Sutskever et al. 2013 formulation, as in optax and PyTorch).
 */
export function trace({ decay, nesterov = false }: TraceOptions): GradientTransformation<TraceState> {
  return {
    init: (params) => ({ trace: zerosLikeTree(params, "trace.init") }),
    update: (updates, state) => {
      const t = tree.map((g: Array, t0: Array) => np.add(g, np.mul(constLike(decay, g), t0)), updates, state.trace);
      const out = nesterov
        ? tree.map((g: Array, t1: Array) => np.add(g, np.mul(constLike(decay, g), t1)), updates, t)
        : t;
      return [out, { trace: t }];
    },
  };
}

export interface ScaleByAdamState {
  readonly count: Array;
  readonly mu: PyTree;
  readonly nu: PyTree;
}
export interface AdamOptions {
  readonly b1?: number;
  readonly b2?: number;
  readonly eps?: number;
  /** Added inside the square root (useful when differentiating through the optimizer). */
  readonly epsRoot?: number;
}
/**
 * Adam (Kingma & Ba 2015, Algorithm 1): m ← β1·m + (1−β1)·g, v ← β2·v + (1−β2)·g²,
 * update = m̂ / (sqrt(v̂ + ε_root) + ε) with m̂ = m/(1−β1ᵗ), v̂ = v/(1−β2ᵗ).
 */
export function scaleByAdam({
  b1 = 0.9,
  b2 = 0.999,
  eps = 1e-8,
  epsRoot = 0,
}: AdamOptions = {}): GradientTransformation<ScaleByAdamState> {
  return {
    init: (params) => ({
      count: newCount(),
      mu: zerosLikeTree(params, "adam.init"),
      nu: zerosLikeTree(params, "adam.init"),
    }),
    update: (updates, state) => {
      const mu = tree.map((m: Array, g: Array) => ema(m, g, b1), state.mu, updates);
      const nu = tree.map((v: Array, g: Array) => ema(v, np.square(g), b2), state.nu, updates);
      const count = incrementCount(state.count);
      const out = tree.map(
        (m: Array, v: Array) => {
          const t = count.astype(floatDType(m, "adam"));
          const mHat = np.div(m, np.sub(constLike(1, m), np.pow(constLike(b1, m), t)));
          const vHat = np.div(v, np.sub(constLike(1, v), np.pow(constLike(b2, v), t)));
          return np.div(mHat, np.add(np.sqrt(np.add(vHat, constLike(epsRoot, v))), constLike(eps, v)));
        },
        mu,
        nu,
      );
      return [out, { count, mu, nu }];
    },
  };
}

export interface ScaleByRmsState {
  readonly nu: PyTree;
}
export interface RmsOptions {
  readonly decay?: number;
  readonly eps?: number;
  /** Starting value of the mean square (Tieleman & Hinton use 1; optax defaults to 0). */
  readonly initialScale?: number;
  /** g / sqrt(ν + ε) (true, optax) or g / (sqrt(ν) + ε) (false, PyTorch). */
  readonly epsInSqrt?: boolean;
}
const rmsScale = (g: Array, meanSquare: Array, eps: number, epsInSqrt: boolean): Array =>
  epsInSqrt
    ? np.div(g, np.sqrt(np.add(meanSquare, constLike(eps, g))))
    : np.div(g, np.add(np.sqrt(meanSquare), constLike(eps, g)));

/** RMSProp's scaling (Tieleman & Hinton 2012): ν ← decay·ν + (1−decay)·g², update = g / sqrt(ν + ε). */
export function scaleByRms({
  decay = 0.9,
  eps = 1e-8,
  initialScale = 0,
  epsInSqrt = true,
}: RmsOptions = {}): GradientTransformation<ScaleByRmsState> {
  return {
    init: (params) => ({ nu: fullLikeTree(params, initialScale, "rms.init") }),
    update: (updates, state) => {
      const nu = tree.map((v: Array, g: Array) => ema(v, np.square(g), decay), state.nu, updates);
      return [tree.map((g: Array, v: Array) => rmsScale(g, v, eps, epsInSqrt), updates, nu), { nu }];
    },
  };
}

export interface ScaleByStddevState {
  readonly mu: PyTree;
  readonly nu: PyTree;
}
/** Centered RMSProp (Graves 2013): divides by the running standard deviation, sqrt(ν − μ² + ε). */
export function scaleByStddev({
  decay = 0.9,
  eps = 1e-8,
  initialScale = 0,
  epsInSqrt = true,
}: RmsOptions = {}): GradientTransformation<ScaleByStddevState> {
  return {
    init: (params) => ({
      mu: zerosLikeTree(params, "stddev.init"),
      nu: fullLikeTree(params, initialScale, "stddev.init"),
    }),
    update: (updates, state) => {
      const mu = tree.map((m: Array, g: Array) => ema(m, g, decay), state.mu, updates);
      const nu = tree.map((v: Array, g: Array) => ema(v, np.square(g), decay), state.nu, updates);
      const out = tree.map(
        (g: Array, m: Array, v: Array) => rmsScale(g, np.sub(v, np.square(m)), eps, epsInSqrt),
        updates,
        mu,
        nu,
      );
      return [out, { mu, nu }];
    },
  };
}

/** updates + weightDecay · params (decoupled weight decay, Loshchilov & Hutter 2019). */
export function addDecayedWeights(weightDecay: number): GradientTransformation<EmptyState> {
  return {
    init: () => emptyState(),
    update: (updates, state, params) => {
      if (params === undefined)
        throw new Error("addDecayedWeights: update needs params (pass them as the third argument).");
      const out = tree.map(
        (g: Array, p: unknown) => {
          const pa = requireArray(p, "addDecayedWeights (params)");
          return np.add(g, np.mul(constLike(weightDecay, g), pa.dtype === g.dtype ? pa : pa.astype(g.dtype)));
        },
        updates,
        params,
      );
      return [out, state];
    },
  };
}
