/** Spec entries for gather/scatter_add, iota, random bits, dot_general and conv2d. */
import fc from "fast-check";
import type { Array } from "../src/core/array.js";
import { fromTyped } from "../src/core/create.js";
import * as lax from "../src/core/prims/index.js";
import { bind1 } from "../src/core/trace.js";
import * as random from "../src/core/random.js";
import { caseArb, fmt, permArb, shapeArb, sizeOfShape, tensors, type Domain } from "./arbitraries.js";
import type { Rng } from "./gradcheck.js";
import type { DifferentiableSpec, NonDifferentiableSpec } from "./spec-types.js";

const U: Domain = { kind: "uniform", lo: -2, hi: 2 };

/** Index arrays with values in [-n, n): negative indices count from the end; small n makes repeats common. */
function indices(shape: readonly number[], n: number, rng: Rng): Array {
  return fromTyped(
    Int32Array.from({ length: sizeOfShape(shape) }, () => Math.floor(rng() * 2 * n) - n),
    shape,
    "int32",
  );
}
const idxStr = (i: Array): string => `[${[...i.dataSync()].join(",")}]`;

/** x shape, gather axis and index shape. */
const gatherParams = shapeArb({ minRank: 1, maxDim: 4 }).chain((s) =>
  fc.tuple(fc.constant(s), fc.integer({ min: 0, max: s.length - 1 }), shapeArb({ maxRank: 2 })),
);

const gatherSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "x uniform [-2, 2]; indices of rank 0–2 in [-n, n) with repeats (linear in x, no kinks)",
  order: 2,
  cases: caseArb(gatherParams, ([s, axis, is], rng) => {
    const idx = indices(is, s[axis]!, rng);
    return {
      label: `gather ${fmt(s)} axis=${axis} idx${fmt(is)}=${idxStr(idx)}`,
      inputs: tensors([s], U, rng),
      apply: (x: Array) => bind1(lax.gatherP, [x, idx], { axis }),
    };
  }),
};
const scatterAddSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "target and updates uniform [-2, 2]; repeated and negative indices accumulate",
  order: 2,
  cases: caseArb(gatherParams, ([s, axis, is], rng) => {
    const idx = indices(is, s[axis]!, rng);
    const us = [...s.slice(0, axis), ...is, ...s.slice(axis + 1)];
    return {
      label: `scatter_add ${fmt(s)} axis=${axis} idx${fmt(is)}=${idxStr(idx)}`,
      inputs: tensors([s, us], U, rng),
      apply: (t: Array, u: Array) => bind1(lax.scatterAddP, [t, idx, u], { axis }),
    };
  }),
};

const iotaSpec: NonDifferentiableSpec = {
  kind: "non-differentiable",
  why: "no operands (a constant); its jvp gives a zero tangent",
  cases: caseArb(
    shapeArb({ minRank: 1 }).chain((s) => fc.tuple(fc.constant(s), fc.integer({ min: 0, max: s.length - 1 }))),
    ([s, dimension], rng) => ({
      label: `iota ${fmt(s)} dim=${dimension}`,
      inputs: tensors([[2]], U, rng),
      apply: () => bind1(lax.iotaP, [], { dtype: "float64", shape: s, dimension }),
    }),
  ),
};
const literalSpec: NonDifferentiableSpec = {
  kind: "non-differentiable",
  why: "a staged scalar constant (no operands); its jvp gives a zero tangent",
  cases: caseArb(fc.tuple(fc.double({ min: -4, max: 4, noNaN: true }), fc.boolean()), ([value, weak], rng) => ({
    label: `literal ${value} weak=${weak}`,
    inputs: tensors([[2]], U, rng),
    apply: () => bind1(lax.literalP, [], { value, dtype: "float64", weak }),
  })),
};
const randomBitsSpec: NonDifferentiableSpec = {
  kind: "non-differentiable",
  why: "int32 key operand; samples do not depend on float inputs",
  cases: caseArb(fc.tuple(shapeArb(), fc.integer({ min: 0, max: 1000 })), ([s, seed], rng) => {
    const k = random.key(seed);
    return {
      label: `random_bits ${fmt(s)} seed=${seed}`,
      inputs: tensors([[2]], U, rng),
      apply: () => bind1(lax.randomBitsP, [k], { shape: s, dtype: "float64" }),
    };
  }),
};

/**
 * dot_general with 0–2 batch, 0–2 contracting and 0–2 free dims per side, each operand's dims
 * in a random order (so batch/contract positions are arbitrary).
 */
const dotParams = fc
  .record({
    nb: fc.integer({ min: 0, max: 2 }),
    nc: fc.integer({ min: 0, max: 2 }),
    nl: fc.integer({ min: 0, max: 2 }),
    nr: fc.integer({ min: 0, max: 2 }),
  })
  .filter(({ nb, nc, nl, nr }) => nb + nc + Math.max(nl, nr) <= 4)
  .chain(({ nb, nc, nl, nr }) => {
    const dims = (n: number) => fc.array(fc.integer({ min: 1, max: 3 }), { minLength: n, maxLength: n });
    return fc.tuple(dims(nb), dims(nc), dims(nl), dims(nr), permArb(nb + nc + nl), permArb(nb + nc + nr));
  });
const dotSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "uniform [-2, 2]; bilinear (no kinks)",
  order: 2,
  cases: caseArb(dotParams, ([b, c, l, r, pl, pr], rng) => {
    const logicalL = [...b, ...c, ...l],
      logicalR = [...b, ...c, ...r];
    const lhs = pl.map((k) => logicalL[k]!),
      rhs = pr.map((k) => logicalR[k]!);
    const posL = (k: number) => pl.indexOf(k),
      posR = (k: number) => pr.indexOf(k);
    const params = {
      contract: [c.map((_, i) => posL(b.length + i)), c.map((_, i) => posR(b.length + i))] as const,
      batch: [b.map((_, i) => posL(i)), b.map((_, i) => posR(i))] as const,
    };
    return {
      label:
        `dot_general ${fmt(lhs)} ${fmt(rhs)} contract=${JSON.stringify(params.contract)} ` +
        `batch=${JSON.stringify(params.batch)}`,
      inputs: tensors([lhs, rhs], U, rng),
      apply: (x: Array, y: Array) => bind1(lax.dotGeneralP, [x, y], params),
    };
  }),
};

const convParams = fc
  .record({
    n: fc.integer({ min: 1, max: 2 }),
    c: fc.integer({ min: 1, max: 2 }),
    o: fc.integer({ min: 1, max: 2 }),
    h: fc.integer({ min: 1, max: 5 }),
    w: fc.integer({ min: 1, max: 5 }),
    kh: fc.integer({ min: 1, max: 3 }),
    kw: fc.integer({ min: 1, max: 3 }),
    stride: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 2 })),
    padding: fc.tuple(
      fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 })),
      fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 })),
    ),
    lhsDilation: fc.tuple(fc.constantFrom(1, 1, 2), fc.constantFrom(1, 1, 2)),
    rhsDilation: fc.tuple(fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 2 })),
  })
  .filter((p) =>
    [0, 1].every((i) => {
      const n = [p.h, p.w][i]!,
        k = [p.kh, p.kw][i]!;
      const dil = (m: number, d: number) => 1 + d * (m - 1);
      return dil(n, p.lhsDilation[i]!) + p.padding[i]![0] + p.padding[i]![1] - dil(k, p.rhsDilation[i]!) >= 0;
    }),
  );
const convSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain:
    "uniform [-2, 2]; NCHW/OIHW with random stride, asymmetric padding, lhs and rhs dilation; " +
    "gradients w.r.t. input and kernel",
  order: 2,
  cases: caseArb(convParams, (p, rng) => {
    const xs = [p.n, p.c, p.h, p.w],
      ws = [p.o, p.c, p.kh, p.kw];
    const params = { stride: p.stride, padding: p.padding, lhsDilation: p.lhsDilation, rhsDilation: p.rhsDilation };
    return {
      label: `conv2d x${fmt(xs)} w${fmt(ws)} ${JSON.stringify(params)}`,
      inputs: tensors([xs, ws], U, rng),
      apply: (x: Array, w: Array) => bind1(lax.conv2dP, [x, w], params),
    };
  }),
};

export const indexLinalgSpecs = {
  gather: gatherSpec,
  scatter_add: scatterAddSpec,
  iota: iotaSpec,
  literal: literalSpec,
  random_bits: randomBitsSpec,
  dot_general: dotSpec,
  conv2d: convSpec,
};
