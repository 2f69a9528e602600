/**
 * Types the transforms give their results, so that `grad` of `(p: P) => Array` is
 * `(p: P) => P` and no `any` reaches a user's program. Transforms return pytrees whose leaves
 * are Arrays: a JS number or boolean leaf of the input comes back as an Array.
 */
import type { Array } from "../core/array.js";

/** A JS scalar or an Array: what a transform accepts as a pytree leaf. */
export type Leaf = Array | number | boolean;

/**
 * T as a transform returns it: the same pytree structure (nested JS arrays, tuples, plain
 * objects) with every Array, number and boolean leaf an {@link Array}.
 */
export type Arrayed<T> = T extends Array
  ? Array
  : T extends number | boolean
    ? Array
    : T extends null | undefined
      ? T
      : T extends (...args: never[]) => unknown
        ? T
        : T extends readonly unknown[]
          ? { [K in keyof T]: Arrayed<T[K]> }
          : T extends object
            ? { [K in keyof T]: Arrayed<T[K]> }
            : T;

/** T as a transform accepts it (tangents, cotangents): the same structure, leaves Arrays or JS numbers. */
export type TreeLike<T> = T extends Array | number
  ? Array | number
  : T extends boolean
    ? Array | boolean
    : T extends null | undefined
      ? T
      : T extends (...args: never[]) => unknown
        ? T
        : T extends readonly unknown[]
          ? { [K in keyof T]: TreeLike<T[K]> }
          : T extends object
            ? { [K in keyof T]: TreeLike<T[K]> }
            : T;

/** Each argument of a function as a transform returns it (one cotangent per argument). */
export type ArrayedArgs<A extends readonly unknown[]> = { -readonly [K in keyof A]: Arrayed<A[K]> };
/** Each argument of a function as a transform accepts it (one tangent per argument). */
export type TreeLikeArgs<A extends readonly unknown[]> = { -readonly [K in keyof A]: TreeLike<A[K]> };

/** The type of argument I of a function with arguments A. */
export type ArgAt<A extends readonly unknown[], I> = I extends keyof A ? A[I] : never;

/** What a scalar function to differentiate returns: a float scalar Array (or a JS number). */
export type ScalarOut = Array | number;

/** The options `grad`/`valueAndGrad` take. */
export interface GradOptions {
  /**
   * Which argument(s) to differentiate: one index (the result is that argument's gradient) or a list (a tuple of
   * gradients). Default 0.
   */
  readonly argnums?: number | readonly number[];
  /** The function returns `[value, aux]`; aux is passed through, not differentiated. */
  readonly hasAux?: boolean;
}

/** The argnums an options type names (0 when it names none). */
export type ArgnumsOf<O> = "argnums" extends keyof O ? Exclude<O[keyof O & "argnums"], undefined> : 0;

/** The gradient(s) `grad(f, { argnums: N })` returns for a function with arguments A. */
export type GradOf<A extends readonly unknown[], N> = N extends number
  ? Arrayed<ArgAt<A, N>>
  : N extends readonly unknown[]
    ? { -readonly [K in keyof N]: Arrayed<ArgAt<A, N[K]>> }
    : never;

/**
 * The constraint of a loop carry (`lax.scan`, `whileLoop`, `foriLoop`): any pytree. Spelled as a
 * union with the empty tuple so that a body's `[[p, v], y]` is read as tuples, not as `Array[]`.
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is meant: any non-nullish value (a pytree of any shape).
export type Carry = readonly [] | {} | null | undefined;
