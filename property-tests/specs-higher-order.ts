/**
 * Spec entries for higher-order primitives. Each gets a small smoke gradcheck here through its
 * public API; the exhaustive properties (vmap/scan/cond composition, jit-vs-eager) belong to
 * the suites of issues 3 and 4.
 */
import fc from "fast-check";
import type { Array } from "../src/core/array.js";
import { fromTyped } from "../src/core/create.js";
import * as lax from "../src/core/prims/index.js";
import { checkpoint, customVjp, jit, lax as control } from "../src/index.js";
import { caseArb, fmt, shapeArb, tensors, type Domain } from "./arbitraries.js";
import type { CoveredElsewhereSpec, DifferentiableSpec } from "./spec-types.js";

const U: Domain = { kind: "uniform", lo: -1.5, hi: 1.5 };
const vec = shapeArb({ minRank: 1, maxRank: 1, maxDim: 4 });

const jitSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "uniform; grad/jvp of jit(f) for a smooth f (jit-vs-eager properties: issue 4's suite)",
  order: 2,
  cases: caseArb(vec, (s, rng) => {
    const f = jit((x: Array, y: Array) => lax.mul(lax.sin(x), lax.exp(lax.mul(x, y))));
    return { label: `jit_call ${fmt(s)}`, inputs: tensors([s, s], U, rng), apply: (x: Array, y: Array) => f(x, y) };
  }),
};

/** scan with a differentiated initial carry (a constant one is covered in tests/api-transforms). */
const scanSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "uniform; carry c ← c·sin(x_t) + x_t, ys = c·x_t, forward or reverse (scan-vs-unrolled: issue 3's suite)",
  order: 2,
  cases: caseArb(
    fc.tuple(fc.integer({ min: 1, max: 4 }), shapeArb({ maxRank: 1, maxDim: 3 }), fc.boolean()),
    ([T, s, reverse], rng) => ({
      label: `scan T=${T} carry${fmt(s)} reverse=${reverse}`,
      inputs: tensors([s, [T, ...s]], U, rng),
      apply: (c0: Array, xs: Array) => {
        const [c, ys] = control.scan(
          (c: Array, x: Array) => [lax.add(lax.mul(c, lax.sin(x)), x), lax.mul(c, x)],
          c0,
          xs,
          { reverse },
        );
        return lax.concatenate([lax.reshape(c, [1, ...s]), ys], 0);
      },
    }),
  ),
};

/** cond with a staged (Array) predicate; both branches smooth. */
const condSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "uniform; staged predicate fixed per case, both branches smooth (vmap of cond: issue 3's suite)",
  order: 2,
  cases: caseArb(fc.tuple(vec, fc.boolean()), ([s, which], rng) => {
    const pred = fromTyped(Uint8Array.of(which ? 1 : 0), [], "bool");
    return {
      label: `cond ${fmt(s)} pred=${which}`,
      inputs: tensors([s], U, rng),
      apply: (x: Array) =>
        control.cond(
          pred,
          (a: Array) => lax.mul(a, lax.sin(a)),
          (a: Array) => lax.exp(lax.neg(a)),
          x,
        ),
    };
  }),
};

/** whileLoop is forward-mode only (reverse mode raises a clear error, tested in tests/errors). */
const whileSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "uniform; a fixed trip count of 1–3 doubling-and-sin steps; forward mode only",
  order: 2,
  modes: ["fwd"],
  cases: caseArb(fc.tuple(vec, fc.integer({ min: 1, max: 3 })), ([s, n], rng) => ({
    label: `while ${fmt(s)} trips=${n}`,
    inputs: tensors([s], U, rng),
    apply: (x: Array) => {
      const i0 = fromTyped(Int32Array.of(0), [], "int32");
      const [, y] = control.whileLoop(
        ([i]: [Array, Array]) => lax.lt(i, fromTyped(Int32Array.of(n), [], "int32")),
        ([i, c]: [Array, Array]) =>
          [lax.add(i, fromTyped(Int32Array.of(1), [], "int32")), lax.sin(lax.add(c, c))] as [Array, Array],
        [i0, x] as [Array, Array],
      );
      return y;
    },
  })),
};

const checkpointSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "uniform; checkpoint(f) for a smooth f, its tangent is the remat_lin primitive",
  order: 2,
  cases: caseArb(vec, (s, rng) => {
    const f = checkpoint((x: Array, y: Array) => lax.mul(lax.tanh(x), lax.cos(y)));
    return { label: `checkpoint ${fmt(s)}`, inputs: tensors([s, s], U, rng), apply: (x: Array, y: Array) => f(x, y) };
  }),
};

/** customVjp with the true derivative as its bwd, so finite differences apply; reverse mode only. */
const customVjpSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain:
    "uniform; f = sin(x)·y with a hand-written bwd; reverse mode only, " +
    "to second order (grad of grad differentiates bwd); " +
    "forward mode raises a clear error",
  order: 2,
  modes: ["rev"],
  cases: caseArb(vec, (s, rng) => {
    const f = customVjp(
      (x: Array, y: Array) => lax.mul(lax.sin(x), y),
      (x: Array, y: Array) => [lax.mul(lax.sin(x), y), [x, y]],
      ([x, y]: Array[], g: Array) => [lax.mul(g, lax.mul(lax.cos(x!), y!)), lax.mul(g, lax.sin(x!))],
    );
    return {
      label: `custom_vjp_call ${fmt(s)}`,
      inputs: tensors([s, s], U, rng),
      apply: (x: Array, y: Array) => f(x, y),
    };
  }),
};

const internal = (where: string): CoveredElsewhereSpec => ({ kind: "covered-elsewhere", where });

export const higherOrderSpecs = {
  jit_call: jitSpec,
  scan: scanSpec,
  cond: condSpec,
  while: whileSpec,
  checkpoint: checkpointSpec,
  custom_vjp_call: customVjpSpec,
  remat_lin: internal(
    "the tangent of checkpoint: exercised by the `checkpoint` spec (jvp evaluates it, vjp transposes it) " +
      "and by tests/api-transforms.test.ts",
  ),
  custom_lin: internal(
    "the tangent of custom_vjp_call: exercised by the `custom_vjp_call` spec (vjp transposes it) " +
      "and by tests/api-transforms.test.ts",
  ),
};
