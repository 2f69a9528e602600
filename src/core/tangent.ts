import type { ShapedArray } from "./aval.js";
import type { Array } from "./array.js";

/** A symbolic zero tangent/cotangent: never allocated (JAX's ad_util.Zero). */
export class Zero {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: a brand, never read: an Array is never a Zero.
  readonly #symbolicZero = true;
  constructor(readonly aval: ShapedArray) {}
  toString(): string {
    return `Zero(${this.aval})`;
  }
}
export type Tangent = Array | Zero;
export const isZero = (t: unknown): t is Zero => t instanceof Zero;

/** An input of a linear equation whose value is being solved for in a transpose (JAX's UndefinedPrimal). */
export class UndefPrimal {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: a brand, never read: nothing else is an UndefPrimal.
  readonly #undefinedPrimal = true;
  constructor(readonly aval: ShapedArray) {}
  toString(): string {
    return `UndefPrimal(${this.aval})`;
  }
}
export const isUndef = (x: unknown): x is UndefPrimal => x instanceof UndefPrimal;
