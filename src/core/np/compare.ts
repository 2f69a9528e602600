/** Tolerance comparisons with numpy's names and defaults. */
import type { Array, ArrayLike } from "../array.js";
import { abs, add, isfinite, lessEqual, logicalAnd, logicalOr, mul, sub, equal, isnan, logicalNot } from "./math.js";
import { min } from "./reduce.js";

export interface CloseOptions {
  /** Relative tolerance, default 1e-5. */
  readonly rtol?: number;
  /** Absolute tolerance, default 1e-8. */
  readonly atol?: number;
  /** NaNs in the same places compare equal. Default false. */
  readonly equalNan?: boolean;
}

/**
 * Elementwise |a − b| ≤ atol + rtol·|b| (numpy's isclose: asymmetric in b); infinities are close only to themselves.
 * bool.
 */
export function isclose(a: ArrayLike, b: ArrayLike, opts: CloseOptions = {}): Array {
  const rtol = opts.rtol ?? 1e-5,
    atol = opts.atol ?? 1e-8;
  if (!(rtol >= 0 && atol >= 0)) throw new Error(`isclose: rtol and atol must be ≥ 0, got rtol ${rtol}, atol ${atol}.`);
  const finite = logicalAnd(isfinite(a), isfinite(b));
  const within = lessEqual(abs(sub(a, b)), add(atol, mul(rtol, abs(b))));
  // Off the finite values: equal infinities are close; NaN is close to nothing unless equalNan.
  const close = logicalOr(logicalAnd(finite, within), logicalAnd(logicalNot(finite), equal(a, b)));
  return opts.equalNan ? logicalOr(close, logicalAnd(isnan(a), isnan(b))) : close;
}

/** Whether every element is close (numpy's allclose): a bool scalar Array. */
export const allclose = (a: ArrayLike, b: ArrayLike, opts: CloseOptions = {}): Array => min(isclose(a, b, opts));
