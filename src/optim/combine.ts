/** Combining transformations: `chain` runs them in sequence; `masked` and `freeze` act per leaf. */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { tree } from "../core/tree.js";
import { emptyState, type EmptyState, type GradientTransformation, type PyTree, type UpdateExtras } from "./base.js";

/** The tuple of states of a tuple of transformations. */
export type ChainState<T extends readonly GradientTransformation<unknown>[]> = {
  readonly [K in keyof T]: T[K] extends GradientTransformation<infer S> ? S : never;
};

/**
 * Apply transformations in order; the state is the tuple of their states.
 * @example
 * const opt = chain(clipByGlobalNorm(1), scaleByAdam(), scaleByLearningRate(1e-3));
 */
export function chain<const T extends readonly GradientTransformation<unknown>[]>(
  ...transforms: T
): GradientTransformation<ChainState<T>> {
  return {
    init: (params) => transforms.map((t) => t.init(params)) as unknown as ChainState<T>,
    update: (updates, state, params, extras) => {
      // Line searches need the raw gradient even after earlier links rescaled the updates.
      const ex: UpdateExtras<typeof updates> = extras?.grad === undefined ? { ...extras, grad: updates } : extras;
      const states = state as readonly unknown[];
      let u = updates;
      const next = transforms.map((t, i) => {
        const [u1, s1] = t.update(u, states[i], params, ex);
        u = u1;
        return s1;
      });
      return [u, next as unknown as ChainState<T>];
    },
  };
}

/**
 * Which leaves a per-leaf transformation applies to: a pytree of booleans with the structure
 * of the params (or a prefix of it: `{ net: true, mass: false }` covers every leaf under
 * `net`), or a function computing one from the params.
 */
export type Mask = PyTree | ((params: PyTree) => PyTree);

function maskFlags(mask: Mask, t: unknown, what: string): boolean[] {
  const m = typeof mask === "function" ? (mask as (p: PyTree) => PyTree)(t) : mask;
  return tree.broadcastPrefix(m, t, what).map((f, i) => {
    if (typeof f !== "boolean")
      throw new Error(`${what}: mask entry for leaf ${i} is ${String(f)}; masks are pytrees of booleans.`);
    return f;
  });
}

/** Replace the leaves whose flag is false by `null` (an empty subtree), keeping the structure. */
function keepWhere<P>(t: P, flags: readonly boolean[]): P {
  const [leaves, def] = tree.flatten(t);
  return tree.unflatten(
    def,
    leaves.map((l, i) => (flags[i] ? l : null)),
  ) as P;
}

/** Put the leaves of a `keepWhere` tree back into the full tree. */
function mergeInto<P>(full: P, inner: unknown, flags: readonly boolean[]): P {
  const [leaves, def] = tree.flatten(full);
  const [innerLeaves] = tree.flatten(inner);
  let k = 0;
  return tree.unflatten(
    def,
    leaves.map((l, i) => (flags[i] ? innerLeaves[k++] : l)),
  ) as P;
}

export interface MaskedState<S> {
  readonly inner: S;
}
/**
 * Apply `inner` only to the leaves where `mask` is true; the other updates pass through
 * unchanged (optax `masked`). To keep parameters fixed, use `freeze`.
 */
export function masked<S>(inner: GradientTransformation<S>, mask: Mask): GradientTransformation<MaskedState<S>> {
  return {
    init: (params) => ({ inner: inner.init(keepWhere(params, maskFlags(mask, params, "masked"))) }),
    update: (updates, state, params, extras) => {
      const flags = maskFlags(mask, updates, "masked");
      const sub = <Q>(t: Q | undefined): Q | undefined => (t === undefined ? undefined : keepWhere(t, flags));
      // The inner transformation sees only the masked leaves; its objective fills in the rest.
      const fullFn = extras?.valueFn;
      const valueFn =
        fullFn && params !== undefined ? (q: typeof updates) => fullFn(mergeInto(params, q, flags)) : undefined;
      const innerExtras = extras && { ...extras, grad: sub(extras.grad), valueFn };
      const [u, s] = inner.update(keepWhere(updates, flags), state.inner, sub(params), innerExtras);
      return [mergeInto(updates, u, flags), { inner: s }];
    },
  };
}

/** Zero the updates of the leaves where `mask` is true: those parameters stay fixed. */
export function freeze(mask: Mask): GradientTransformation<EmptyState> {
  return {
    init: () => emptyState(),
    update: (updates, state) => {
      const flags = maskFlags(mask, updates, "freeze");
      const [leaves, def] = tree.flatten(updates);
      return [
        tree.unflatten(
          def,
          leaves.map((g, i) => (flags[i] ? np.zerosLike(g as Array) : g)),
        ),
        state,
      ];
    },
  };
}

/** Every update becomes zero. */
export function setToZero(): GradientTransformation<EmptyState> {
  return {
    init: () => emptyState(),
    update: (updates, state) => [tree.map((g: Array) => np.zerosLike(g), updates), state],
  };
}
