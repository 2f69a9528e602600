/** Types of the per-primitive spec table (`prim-specs.ts`) and the test cases it generates. */
import type fc from "fast-check";
import type { Array } from "../src/core/array.js";
import type { Mode } from "./gradcheck.js";

/** A float64 input as host data (Arrays are built in the test, so fast-check can print and shrink cases). */
export interface HostTensor {
  readonly shape: readonly number[];
  readonly data: Float64Array;
}

/**
 * One concrete application of a primitive: differentiable float64 inputs and a closure holding params and index
 * operands.
 */
export interface PrimCase {
  /** Shapes and params, for failure messages. */
  readonly label: string;
  readonly inputs: readonly HostTensor[];
  readonly apply: (...xs: Array[]) => Array;
  /** Seed for the random directions of the gradient checks. */
  readonly seed: number;
}

/** Smooth on the generated domain: checked against finite differences to `order`, in `modes`. */
export interface DifferentiableSpec {
  readonly kind: "differentiable";
  /** Where inputs are drawn and which kinks/singularities are avoided. */
  readonly domain: string;
  readonly cases: fc.Arbitrary<PrimCase>;
  readonly order: 1 | 2;
  readonly modes?: readonly Mode[];
}
/** Float output whose derivative is identically zero (piecewise constant or stop_gradient). */
export interface ZeroDerivativeSpec {
  readonly kind: "zero-derivative";
  readonly why: string;
  readonly cases: fc.Arbitrary<PrimCase>;
  /** True when finite differences are zero too (piecewise constant away from jumps); false for stop_gradient. */
  readonly fdIsZero: boolean;
}
/** Integer or bool output (or no float input): jvp must give an all-zero tangent. */
export interface NonDifferentiableSpec {
  readonly kind: "non-differentiable";
  readonly why: string;
  readonly cases: fc.Arbitrary<PrimCase>;
}
/** Higher-order or internal primitives exercised by another suite or spec. */
export interface CoveredElsewhereSpec {
  readonly kind: "covered-elsewhere";
  readonly where: string;
}
export type PrimSpec = DifferentiableSpec | ZeroDerivativeSpec | NonDifferentiableSpec | CoveredElsewhereSpec;
