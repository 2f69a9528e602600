/**
 * Learning-rate schedules: pure functions of the int32 step counter (so they jit and vmap),
 * with optax's definitions. Each returns a scalar in the requested float dtype.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import type { FloatDType, Schedule } from "./base.js";

const num = (v: number, dtype: FloatDType): Array => np.full([], v, { dtype });
const stepAsFloat = (count: Array, dtype: FloatDType): Array => count.astype(dtype);

function checkSteps(name: string, field: string, v: number): void {
  if (!(Number.isInteger(v) && v > 0)) throw new Error(`${name}: ${field} must be a positive integer, got ${v}.`);
}

/** The same value at every step. */
export const constantSchedule =
  (value: number): Schedule =>
  (_count, dtype = "float32") =>
    num(value, dtype);

export interface ExponentialDecayOptions {
  readonly initValue: number;
  /** The value is multiplied by `decayRate` every `transitionSteps` steps. */
  readonly transitionSteps: number;
  readonly decayRate: number;
  /** Steps before decay starts (the value stays `initValue`). */
  readonly transitionBegin?: number;
  /** Decay in whole multiples of `transitionSteps` (a staircase) instead of continuously. */
  readonly staircase?: boolean;
  /** A floor (for decayRate < 1) or ceiling (> 1) on the value. */
  readonly endValue?: number;
}
/** initValue · decayRate^((count − transitionBegin) / transitionSteps). */
export function exponentialDecay(o: ExponentialDecayOptions): Schedule {
  checkSteps("exponentialDecay", "transitionSteps", o.transitionSteps);
  const begin = o.transitionBegin ?? 0;
  return (count, dtype = "float32") => {
    const t = np.sub(stepAsFloat(count, dtype), num(begin, dtype));
    let p = np.div(t, num(o.transitionSteps, dtype));
    if (o.staircase) p = np.floor(p);
    let v = np.where(
      np.lessEqual(t, num(0, dtype)),
      num(o.initValue, dtype),
      np.mul(num(o.initValue, dtype), np.pow(num(o.decayRate, dtype), p)),
    );
    if (o.endValue !== undefined)
      v = o.decayRate < 1 ? np.maximum(v, num(o.endValue, dtype)) : np.minimum(v, num(o.endValue, dtype));
    return v;
  };
}

export interface CosineDecayOptions {
  readonly initValue: number;
  readonly decaySteps: number;
  /** The final value as a fraction of initValue. */
  readonly alpha?: number;
  readonly exponent?: number;
}
/**
 * initValue · ((1 − α)·(½(1 + cos(π·min(count, decaySteps)/decaySteps)))^exponent + α) (Loshchilov & Hutter 2017, no
 * restarts).
 */
export function cosineDecay(o: CosineDecayOptions): Schedule {
  checkSteps("cosineDecay", "decaySteps", o.decaySteps);
  const alpha = o.alpha ?? 0,
    exponent = o.exponent ?? 1;
  return (count, dtype = "float32") => {
    const t = np.minimum(stepAsFloat(count, dtype), num(o.decaySteps, dtype));
    const cosine = np.mul(
      num(0.5, dtype),
      np.add(num(1, dtype), np.cos(np.mul(num(Math.PI / o.decaySteps, dtype), t))),
    );
    const shaped = exponent === 1 ? cosine : np.pow(cosine, num(exponent, dtype));
    return np.mul(num(o.initValue, dtype), np.add(np.mul(num(1 - alpha, dtype), shaped), num(alpha, dtype)));
  };
}

export interface LinearScheduleOptions {
  readonly initValue: number;
  readonly endValue: number;
  readonly transitionSteps: number;
  readonly transitionBegin?: number;
}
/** Linear interpolation from initValue to endValue over transitionSteps, constant outside. */
export function linearSchedule(o: LinearScheduleOptions): Schedule {
  checkSteps("linearSchedule", "transitionSteps", o.transitionSteps);
  const begin = o.transitionBegin ?? 0;
  return (count, dtype = "float32") => {
    const t = np.clip(
      np.sub(stepAsFloat(count, dtype), num(begin, dtype)),
      num(0, dtype),
      num(o.transitionSteps, dtype),
    );
    const frac = np.div(t, num(o.transitionSteps, dtype));
    return np.add(num(o.initValue, dtype), np.mul(num(o.endValue - o.initValue, dtype), frac));
  };
}

/** Linear warmup from `initValue` (default 0) to `peakValue` over `warmupSteps`, then constant. */
export const linearWarmup = (peakValue: number, warmupSteps: number, initValue = 0): Schedule =>
  linearSchedule({ initValue, endValue: peakValue, transitionSteps: warmupSteps });

/**
 * Piecewise schedule: `schedules[0]` until `boundaries[0]`, then `schedules[1]` restarted at 0,
 * and so on (optax join_schedules).
 */
export function joinSchedules(schedules: readonly Schedule[], boundaries: readonly number[]): Schedule {
  if (schedules.length !== boundaries.length + 1) {
    throw new Error(
      `joinSchedules: ${schedules.length} schedules need ${schedules.length - 1} boundaries, got ${boundaries.length}.`,
    );
  }
  return (count, dtype = "float32") => {
    let out = schedules[0]!(count, dtype);
    boundaries.forEach((b, i) => {
      out = np.where(np.less(count, b), out, schedules[i + 1]!(np.sub(count, b), dtype));
    });
    return out;
  };
}

export interface WarmupCosineDecayOptions {
  readonly initValue?: number;
  readonly peakValue: number;
  readonly warmupSteps: number;
  /** Total length including warmup. */
  readonly decaySteps: number;
  readonly endValue?: number;
  readonly exponent?: number;
}
/** Linear warmup to peakValue, then cosine decay to endValue at step decaySteps. */
export function warmupCosineDecay(o: WarmupCosineDecayOptions): Schedule {
  if (!(o.decaySteps > o.warmupSteps))
    throw new Error(`warmupCosineDecay: decaySteps (${o.decaySteps}) must exceed warmupSteps (${o.warmupSteps}).`);
  if (o.peakValue === 0) throw new Error("warmupCosineDecay: peakValue must be non-zero.");
  const end = o.endValue ?? 0;
  const decay = cosineDecay({
    initValue: o.peakValue,
    decaySteps: o.decaySteps - o.warmupSteps,
    alpha: end / o.peakValue,
    exponent: o.exponent,
  });
  if (o.warmupSteps === 0) return decay;
  return joinSchedules([linearWarmup(o.peakValue, o.warmupSteps, o.initValue ?? 0), decay], [o.warmupSteps]);
}
