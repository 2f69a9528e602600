/**
 * Spec entries for np.linalg's primitives (linalg_solve, slogdet, cholesky), custom_jvp_call and debug_print.
 * Matrices are kept well conditioned (a random block plus 3·I; a Cholesky input M·Mᵀ + n·I from a
 * free M, so its perturbations are symmetric, as the rule assumes); batches of 0–2 leading axes.
 */
import fc from "fast-check";
import type { Array } from "../src/core/array.js";
import { scalar } from "../src/core/constants.js";
import * as lax from "../src/core/prims/index.js";
import { cholesky, mT, slogdet, solve } from "../src/core/prims/linalg-decomp.js";
import { customJvp } from "../src/index.js";
import { caseArb, fmt, shapeArb, tensors, type Domain } from "./arbitraries.js";
import type { CoveredElsewhereSpec, DifferentiableSpec } from "./spec-types.js";

const U: Domain = { kind: "uniform", lo: -1, hi: 1 };
const batchArb = fc.array(fc.integer({ min: 1, max: 2 }), { maxLength: 2 });
const nArb = fc.integer({ min: 1, max: 3 });

/** a + s·I over the last two axes. */
function shifted(a: Array, s: number): Array {
  const n = a.shape[a.ndim - 1]!;
  const eye = lax.convert(lax.eq(lax.iota("int32", [n, n], 0), lax.iota("int32", [n, n], 1)), a.dtype);
  return lax.add(a, lax.broadcastTo(lax.mul(eye, scalar(s, a.dtype)), a.shape));
}
const bmm = (x: Array, y: Array): Array => {
  const nb = x.ndim - 2,
    bd = globalThis.Array.from({ length: nb }, (_, i) => i);
  return lax.dotGeneral(x, y, { contract: [[nb + 1], [nb]], batch: [bd, bd] });
};

const solveSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "A = U[-1,1] + 3·I (diagonally dominant), B uniform; smooth in both",
  order: 2,
  cases: caseArb(fc.tuple(batchArb, nArb, fc.integer({ min: 1, max: 2 })), ([b, n, k], rng) => ({
    label: `linalg_solve A${fmt([...b, n, n])} B${fmt([...b, n, k])}`,
    inputs: tensors(
      [
        [...b, n, n],
        [...b, n, k],
      ],
      U,
      rng,
    ),
    apply: (a: Array, y: Array) => solve(shifted(a, 3), y),
  })),
};

const slogdetSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "A = U[-1,1] + 3·I (det > 0); log|det A| (the sign's derivative is zero)",
  order: 2,
  cases: caseArb(fc.tuple(batchArb, nArb), ([b, n], rng) => ({
    label: `slogdet A${fmt([...b, n, n])}`,
    inputs: tensors([[...b, n, n]], U, rng),
    apply: (a: Array) => slogdet(shifted(a, 3))[1],
  })),
};

const choleskySpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "A = M·Mᵀ + n·I from a free M ∈ U[-1,1] (symmetric positive definite, symmetric perturbations)",
  order: 2,
  cases: caseArb(fc.tuple(batchArb, nArb), ([b, n], rng) => ({
    label: `cholesky A${fmt([...b, n, n])}`,
    inputs: tensors([[...b, n, n]], U, rng),
    apply: (m: Array) => cholesky(shifted(bmm(m, mT(m)), n)),
  })),
};

const vec = shapeArb({ minRank: 1, maxRank: 1, maxDim: 4 });
/** customJvp with the true derivative as its rule, so finite differences apply in both modes. */
const customJvpSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "uniform; f = sin(x)·y with a hand-written jvp rule; to second order (the rule is differentiated)",
  order: 2,
  cases: caseArb(vec, (s, rng) => {
    const f = customJvp(
      (x: Array, y: Array) => lax.mul(lax.sin(x), y),
      ([x, y], [tx, ty]) => [
        lax.mul(lax.sin(x), y),
        lax.add(lax.mul(tx, lax.mul(lax.cos(x), y)), lax.mul(ty, lax.sin(x))),
      ],
    );
    return {
      label: `custom_jvp_call ${fmt(s)}`,
      inputs: tensors([s, s], U, rng),
      apply: (x: Array, y: Array) => f(x, y),
    };
  }),
};

export const linalgDecompSpecs = {
  linalg_solve: solveSpec,
  slogdet: slogdetSpec,
  cholesky: choleskySpec,
  custom_jvp_call: customJvpSpec,
  debug_print: {
    kind: "covered-elsewhere",
    where:
      "an effect with no outputs (nothing to differentiate): tests/debug-print.test.ts " +
      "prints under jit, vmap, grad and scan",
  } satisfies CoveredElsewhereSpec,
};
