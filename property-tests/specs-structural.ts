/**
 * Spec entries for reductions, cumsum and the movement primitives (broadcast, reshape, transpose, slices, pad,
 * concatenate, rev).
 */
import fc from "fast-check";
import type { Array } from "../src/core/array.js";
import { scalar } from "../src/core/constants.js";
import type { Primitive } from "../src/core/primitive.js";
import * as lax from "../src/core/prims/index.js";
import { bind1 } from "../src/core/trace.js";
import { axesArb, caseArb, fmt, permArb, sample, shapeArb, tensors, type Domain } from "./arbitraries.js";
import type { DifferentiableSpec, NonDifferentiableSpec, PrimCase } from "./spec-types.js";

const U: Domain = { kind: "uniform", lo: -2, hi: 2 };
const DISTINCT: Domain = { kind: "distinct", lo: -2, hi: 2 };
const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);

/** A shape together with params that depend on it. */
const withShape = <P>(opts: Parameters<typeof shapeArb>[0], params: (s: number[]) => fc.Arbitrary<P>) =>
  shapeArb(opts).chain((s) => params(s).map((p) => [s, p] as const));

const differentiable = (domain: string, cases: fc.Arbitrary<PrimCase>): DifferentiableSpec => ({
  kind: "differentiable",
  domain,
  cases,
  order: 2,
});

// ---------------------------------------------------------------- reductions

function reduction(prim: Primitive, d: Domain) {
  return caseArb(
    withShape({ minRank: 1 }, (s) => axesArb(s.length)),
    ([s, axes], rng) => ({
      label: `${prim.name} ${fmt(s)} axes=${fmt(axes)}`,
      inputs: tensors([s], d, rng),
      apply: (x: Array) => bind1(prim, [x], { axes }),
    }),
  );
}
/**
 * Product inputs in ±[0.5, 1.5] with some exact zeros: prod is a polynomial, so zeros are no kink but stress the
 * exclusive-product rule.
 */
const prodCases = caseArb(
  withShape({ minRank: 1 }, (s) => axesArb(s.length)),
  ([s, axes], rng) => {
    const [t] = tensors([s], { kind: "away-from-zero", lo: 0.5, hi: 1.5 }, rng);
    const zeros = sample({ kind: "uniform", lo: 0, hi: 1 }, t!.data.length, rng);
    const data = t!.data.map((v, i) => (zeros[i]! < 0.15 ? 0 : v));
    return {
      label: `reduce_prod ${fmt(s)} axes=${fmt(axes)}`,
      inputs: [{ shape: s, data }],
      apply: (x: Array) => bind1(lax.reduceProdP, [x], { axes }),
    };
  },
);
const argReduction = (prim: Primitive): NonDifferentiableSpec => ({
  kind: "non-differentiable",
  why: "int32 output",
  cases: caseArb(
    withShape({ minRank: 1 }, (s) => fc.integer({ min: 0, max: s.length - 1 })),
    ([s, axis], rng) => ({
      label: `${prim.name} ${fmt(s)} axis=${axis}`,
      inputs: tensors([s], DISTINCT, rng),
      apply: (x: Array) => bind1(prim, [x], { axis }),
    }),
  ),
});

// ---------------------------------------------------------------- movement

const broadcastCases = caseArb(
  shapeArb({ maxRank: 3 }).chain((out) =>
    fc.tuple(
      fc.constant(out),
      fc.subarray(range(out.length)),
      fc.array(fc.boolean(), { minLength: out.length, maxLength: out.length }),
    ),
  ),
  ([out, dims, ones], rng) => {
    const inShape = dims.map((d, i) => (ones[i] ? 1 : out[d]!));
    return {
      label: `broadcast_in_dim ${fmt(inShape)} → ${fmt(out)} dims=${fmt(dims)}`,
      inputs: tensors([inShape], U, rng),
      apply: (x: Array) => bind1(lax.broadcastInDimP, [x], { shape: out, dims }),
    };
  },
);

/** Reshape to a shuffled shape with extra unit dims, or to the flat size. */
const reshapeCases = caseArb(
  withShape({}, (s) => fc.tuple(permArb(s.length), fc.integer({ min: 0, max: 2 }), fc.boolean())),
  ([s, [perm, ones, flat]], rng) => {
    const target = flat
      ? [s.reduce((a, b) => a * b, 1)]
      : [...perm.map((p) => s[p]!), ...new globalThis.Array<number>(ones).fill(1)];
    return {
      label: `reshape ${fmt(s)} → ${fmt(target)}`,
      inputs: tensors([s], U, rng),
      apply: (x: Array) => bind1(lax.reshapeP, [x], { shape: target }),
    };
  },
);

const transposeCases = caseArb(
  withShape({}, (s) => permArb(s.length)),
  ([s, perm], rng) => ({
    label: `transpose ${fmt(s)} perm=${fmt(perm)}`,
    inputs: tensors([s], U, rng),
    apply: (x: Array) => bind1(lax.transposeP, [x], { perm }),
  }),
);

/** Strided slices, possibly empty. */
const sliceCases = caseArb(
  withShape({ minRank: 1, maxDim: 5 }, (s) =>
    fc.tuple(
      ...s.map((n) =>
        fc
          .tuple(fc.integer({ min: 0, max: n }), fc.integer({ min: 0, max: n }), fc.integer({ min: 1, max: 3 }))
          .map(([a, b, st]) => [Math.min(a, b), Math.max(a, b), st] as const),
      ),
    ),
  ),
  ([s, dims], rng) => {
    const p = { start: dims.map((d) => d[0]), limit: dims.map((d) => d[1]), strides: dims.map((d) => d[2]) };
    return {
      label: `slice ${fmt(s)} start=${fmt(p.start)} limit=${fmt(p.limit)} strides=${fmt(p.strides)}`,
      inputs: tensors([s], U, rng),
      apply: (x: Array) => bind1(lax.sliceP, [x], p),
    };
  },
);

/** Pad with negative (cropping) edges and interior padding; the padding value is a differentiable operand too. */
const padCases = caseArb(
  withShape({ minRank: 1 }, (s) =>
    fc
      .tuple(
        ...s.map(() =>
          fc.tuple(fc.integer({ min: -1, max: 2 }), fc.integer({ min: -1, max: 2 }), fc.integer({ min: 0, max: 2 })),
        ),
      )
      .filter((dims) => dims.every(([lo, hi, k], i) => lo + hi + s[i]! + (s[i]! - 1) * k >= 1)),
  ),
  ([s, dims], rng) => {
    const p = { lo: dims.map((d) => d[0]), hi: dims.map((d) => d[1]), interior: dims.map((d) => d[2]) };
    return {
      label: `pad ${fmt(s)} lo=${fmt(p.lo)} hi=${fmt(p.hi)} interior=${fmt(p.interior)}`,
      inputs: tensors([s, []], U, rng),
      apply: (x: Array, v: Array) => bind1(lax.padP, [x, v], p),
    };
  },
);

const concatCases = caseArb(
  withShape({ minRank: 1 }, (s) =>
    fc.tuple(
      fc.integer({ min: 0, max: s.length - 1 }),
      fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }),
    ),
  ),
  ([s, [axis, sizes]], rng) => {
    const shapes = sizes.map((n) => s.map((d, i) => (i === axis ? n : d)));
    return {
      label: `concatenate ${shapes.map(fmt).join(" ")} axis=${axis}`,
      inputs: tensors(shapes, U, rng),
      apply: (...xs: Array[]) => bind1(lax.concatenateP, xs, { axis }),
    };
  },
);

const revCases = caseArb(
  withShape({ minRank: 1 }, (s) => axesArb(s.length)),
  ([s, dims], rng) => ({
    label: `rev ${fmt(s)} dims=${fmt(dims)}`,
    inputs: tensors([s], U, rng),
    apply: (x: Array) => bind1(lax.revP, [x], { dims }),
  }),
);

/** Start indices may be negative or too large: both the primitive and its transpose clamp them (XLA semantics). */
const startsArb = (s: readonly number[]) => fc.tuple(...s.map((n) => fc.integer({ min: -2, max: n + 1 })));
const sizesArb = (s: readonly number[]) => fc.tuple(...s.map((n) => fc.integer({ min: 1, max: n })));
const i32 = (v: number): Array => scalar(v, "int32");

const dynamicSliceCases = caseArb(
  withShape({ minRank: 1, maxDim: 4 }, (s) => fc.tuple(startsArb(s), sizesArb(s))),
  ([s, [starts, sizes]], rng) => ({
    label: `dynamic_slice ${fmt(s)} starts=${fmt(starts)} sizes=${fmt(sizes)}`,
    inputs: tensors([s], U, rng),
    apply: (x: Array) => bind1(lax.dynamicSliceP, [x, ...starts.map(i32)], { sizes }),
  }),
);
const dynamicUpdateCases = caseArb(
  withShape({ minRank: 1, maxDim: 4 }, (s) => fc.tuple(startsArb(s), sizesArb(s))),
  ([s, [starts, sizes]], rng) => ({
    label: `dynamic_update_slice ${fmt(s)} update=${fmt(sizes)} starts=${fmt(starts)}`,
    inputs: tensors([s, sizes], U, rng),
    apply: (x: Array, u: Array) => bind1(lax.dynamicUpdateSliceP, [x, u, ...starts.map(i32)], {}),
  }),
);

const cumsumCases = caseArb(
  withShape({ minRank: 1, maxDim: 4 }, (s) => fc.tuple(fc.integer({ min: 0, max: s.length - 1 }), fc.boolean())),
  ([s, [axis, reverse]], rng) => ({
    label: `cumsum ${fmt(s)} axis=${axis} reverse=${reverse}`,
    inputs: tensors([s], U, rng),
    apply: (x: Array) => bind1(lax.cumsumP, [x], { axis, reverse }),
  }),
);

export const structuralSpecs = {
  reduce_sum: differentiable(
    "uniform [-2, 2]; axes a random subset in random order (empty included)",
    reduction(lax.reduceSumP, U),
  ),
  reduce_max: differentiable(
    "distinct values (max is not differentiable at ties)",
    reduction(lax.reduceMaxP, DISTINCT),
  ),
  reduce_min: differentiable(
    "distinct values (min is not differentiable at ties)",
    reduction(lax.reduceMinP, DISTINCT),
  ),
  reduce_prod: differentiable("±[0.5, 1.5] with ~15% exact zeros", prodCases),
  argmax: argReduction(lax.argmaxP),
  argmin: argReduction(lax.argminP),
  cumsum: differentiable("uniform [-2, 2]; any axis, forward and reverse", cumsumCases),
  broadcast_in_dim: differentiable("uniform; random target shape, dims and size-1 input dims", broadcastCases),
  reshape: differentiable("uniform; shuffled dims plus unit dims, or flat", reshapeCases),
  transpose: differentiable("uniform; random permutation", transposeCases),
  slice: differentiable("uniform; random start/limit/stride ≤ 3 per axis (empty results included)", sliceCases),
  pad: differentiable(
    "uniform; lo/hi in [-1, 2] (negative crops), interior in [0, 2]; x and the padding value",
    padCases,
  ),
  concatenate: differentiable("uniform; 1–3 operands of different sizes along a random axis", concatCases),
  rev: differentiable("uniform; random set of reversed axes", revCases),
  dynamic_slice: differentiable("uniform; start indices in [-2, n+1] (clamped)", dynamicSliceCases),
  dynamic_update_slice: differentiable(
    "uniform; start indices in [-2, n+1] (clamped); operand and update",
    dynamicUpdateCases,
  ),
};
