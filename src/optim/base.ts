/**
 * Optimizers as pure gradient transformations (optax style): a transformation is a pair of
 * pure functions `init(params) -> state` and `update(updates, state, params?) -> [updates, state]`
 * over pytrees. Because both are pure and the state is a pytree of Arrays (counters are int32
 * Arrays, never JS numbers), an update can be jitted, vmapped and carried through `lax.scan`.
 */
import type { Array } from "../core/array.js";
import type { DType } from "../core/dtype.js";
import { np } from "../core/np/index.js";
import { tree } from "../core/tree.js";
import { requireArray } from "./tree-math.js";

/** Nested JS arrays and plain objects whose leaves are Arrays (see `tree`). */
export type PyTree = unknown;

export type FloatDType = Extract<DType, "float32" | "float64">;

/**
 * What an update may need besides the incoming updates: line searches evaluate the objective.
 * `fit` passes all three; in a hand-written loop pass them when the chain contains `lbfgs`.
 */
export interface UpdateExtras<P = PyTree> {
  /** The loss at `params` (saves the line search one evaluation). */
  readonly value?: Array;
  /** The raw gradient at `params` (`chain` fills it with its incoming updates when absent). */
  readonly grad?: P;
  /** The objective; it is traced into the update when the step is jitted. */
  readonly valueFn?: (params: P) => Array;
}

/**
 * A pure gradient transformation with state type `S`.
 * @example
 * const opt = adam(1e-2);
 * let state = opt.init(params);
 * const [updates, next] = opt.update(grads, state, params);
 * params = applyUpdates(params, updates); state = next;
 */
export interface GradientTransformation<S> {
  init<P>(params: P): S;
  update<P>(updates: P, state: S, params?: P, extras?: UpdateExtras<P>): [P, S];
}

/** The state of a stateless transformation. */
export type EmptyState = Readonly<Record<string, never>>;
export const emptyState = (): EmptyState => ({});

/**
 * A learning-rate (or any scalar) schedule: the value at step `count` (an int32 scalar Array),
 * computed in `dtype` (default float32) so that float64 optimisations keep full precision.
 */
export type Schedule = (count: Array, dtype?: FloatDType) => Array;
export type ScalarOrSchedule = number | Schedule;

/** params + updates, leafwise; the result keeps each parameter's dtype. */
export function applyUpdates<P>(params: P, updates: P): P {
  return tree.map(
    (p: unknown, u: unknown) => {
      const pa = requireArray(p, "applyUpdates (params)");
      const ua = requireArray(u, "applyUpdates (updates)");
      return np.add(pa, ua.dtype === pa.dtype ? ua : ua.astype(pa.dtype));
    },
    params,
    updates,
  ) as P;
}
