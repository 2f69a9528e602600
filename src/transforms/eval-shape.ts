/**
 * evalShape(f, ...args): the shapes and dtypes f would return, found by tracing it without
 * computing anything (JAX's eval_shape), as a pytree of ShapedArrays with f's output structure.
 */
import type { Array } from "../core/array.js";
import type { ShapedArray } from "../core/aval.js";
import { unflatten } from "../core/tree.js";
import { makeIR, type JitOptions } from "./jit.js";

/** T with every Array (or number) leaf a ShapedArray: what evalShape returns. */
export type Shaped<T> = T extends Array | number | boolean
  ? ShapedArray
  : T extends null | undefined
    ? T
    : T extends readonly unknown[]
      ? { [K in keyof T]: Shaped<T[K]> }
      : T extends object
        ? { [K in keyof T]: Shaped<T[K]> }
        : T;

export function evalShape<A extends unknown[], R>(f: (...args: A) => R, ...args: A): Shaped<R>;
export function evalShape(f: (...args: unknown[]) => unknown, ...args: unknown[]): unknown {
  return evalShapeWith(f, {}, args);
}

/** evalShape with jit's options (staticArgnums). */
export function evalShapeWith(f: (...args: any[]) => unknown, opts: JitOptions, args: readonly unknown[]): unknown {
  const traced = makeIR(f, opts)(...args);
  return unflatten(traced.outTree, traced.ir.outAvals);
}
