/** Spec entries for the elementwise primitives (unary math, binary arithmetic, comparisons, logic, select, casts). */
import fc from "fast-check";
import type { Array } from "../src/core/array.js";
import { scalar } from "../src/core/constants.js";
import { fromTyped } from "../src/core/create.js";
import type { Primitive } from "../src/core/primitive.js";
import * as lax from "../src/core/prims/index.js";
import { bind1 } from "../src/core/trace.js";
import { broadcastShapesArb, caseArb, fmt, sample, shapeArb, tensors, type Domain } from "./arbitraries.js";
import type { DifferentiableSpec, NonDifferentiableSpec, PrimSpec, ZeroDerivativeSpec } from "./spec-types.js";

const domainText = (d: Domain): string => {
  switch (d.kind) {
    case "uniform":
      return `uniform [${d.lo}, ${d.hi}]`;
    case "away-from-zero":
      return `|x| in [${d.lo}, ${d.hi}], random sign`;
    case "off-grid":
      return `[${d.lo}, ${d.hi}], ≥ ${d.margin} away from integers + ${d.offset}`;
    case "distinct":
      return `distinct values in [${d.lo}, ${d.hi}] (no ties)`;
  }
};

const unaryCases = (prim: Primitive, d: Domain) =>
  caseArb(shapeArb(), (s, rng) => ({
    label: `${prim.name} ${fmt(s)}`,
    inputs: tensors([s], d, rng),
    apply: (x: Array) => bind1(prim, [x], {}),
  }));

export function unary(prim: Primitive, d: Domain, why = ""): DifferentiableSpec {
  return { kind: "differentiable", domain: domainText(d) + why, cases: unaryCases(prim, d), order: 2 };
}

/**
 * Binary op on broadcasting shapes. With one domain for both operands the values are drawn jointly (so "distinct" holds
 * across a and b).
 */
export function binary(prim: Primitive, da: Domain, db: Domain = da, why = ""): DifferentiableSpec {
  const cases = caseArb(broadcastShapesArb(2), ([sa, sb], rng) => {
    const inputs = da === db ? tensors([sa, sb], da, rng) : [...tensors([sa], da, rng), ...tensors([sb], db, rng)];
    return {
      label: `${prim.name} ${fmt(sa)} ${fmt(sb)}`,
      inputs,
      apply: (a: Array, b: Array) => bind1(prim, [a, b], {}),
    };
  });
  return { kind: "differentiable", domain: `a: ${domainText(da)}; b: ${domainText(db)}${why}`, cases, order: 2 };
}

const zeroDerivative = (prim: Primitive, d: Domain, why: string, fdIsZero = true): ZeroDerivativeSpec => ({
  kind: "zero-derivative",
  why: `${why}; inputs ${domainText(d)}`,
  cases: unaryCases(prim, d),
  fdIsZero,
});

/** Comparisons: bool output, tangents are symbolic zeros. */
const comparison = (prim: Primitive): NonDifferentiableSpec => ({
  kind: "non-differentiable",
  why: "bool output",
  cases: caseArb(broadcastShapesArb(2), ([sa, sb], rng) => ({
    label: `${prim.name} ${fmt(sa)} ${fmt(sb)}`,
    inputs: tensors([sa, sb], { kind: "uniform", lo: -1, hi: 1 }, rng),
    apply: (a: Array, b: Array) => bind1(prim, [a, b], {}),
  })),
});
const zero64 = scalar(0, "float64");
const logical = (prim: Primitive): NonDifferentiableSpec => ({
  kind: "non-differentiable",
  why: "bool operands and output",
  cases: caseArb(broadcastShapesArb(2), ([sa, sb], rng) => ({
    label: `${prim.name} ${fmt(sa)} ${fmt(sb)}`,
    inputs: tensors([sa, sb], { kind: "uniform", lo: -1, hi: 1 }, rng),
    apply: (a: Array, b: Array) => bind1(prim, [lax.lt(a, zero64), lax.gt(b, zero64)], {}),
  })),
});

const U = (lo: number, hi: number): Domain => ({ kind: "uniform", lo, hi });
const AWAY = (lo: number, hi: number): Domain => ({ kind: "away-from-zero", lo, hi });

/** pow: base > 0 with any exponent, and negative bases with a constant integer exponent (d/db needs log a). */
const powSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "a in [0.5, 2], b in [-2, 2]; or a in ±[0.5, 2] with a constant integer exponent in [-3, 3]",
  order: 2,
  cases: fc.oneof(
    binary(lax.powP, U(0.5, 2), U(-2, 2)).cases,
    caseArb(fc.tuple(shapeArb(), fc.integer({ min: -3, max: 3 })), ([s, k], rng) => ({
      label: `pow ${fmt(s)} ^ ${k} (constant)`,
      inputs: tensors([s], AWAY(0.5, 2), rng),
      apply: (a: Array) => lax.pow(a, scalar(k, a.dtype)),
    })),
  ),
};

/** rem: a = (k + f)·b with f ∈ [0.1, 0.9], so trunc(a/b) is locally constant (no jumps within the FD step). */
const remSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "b in ±[0.5, 2]; a/b at least 0.1 away from an integer (rem jumps there)",
  order: 2,
  cases: caseArb(shapeArb(), (s, rng) => {
    const [b] = tensors([s], AWAY(0.5, 2), rng);
    const q = sample({ kind: "off-grid", lo: -3, hi: 3, offset: 0, margin: 0.1 }, b!.data.length, rng);
    const a = { shape: b!.shape, data: q.map((v, i) => v * b!.data[i]!) };
    return { label: `rem ${fmt(s)}`, inputs: [a, b!], apply: (x: Array, y: Array) => lax.rem(x, y) };
  }),
};

/** atan2(y, x): radius ≥ 0.5 and away from the branch cut on the negative x axis. */
const atan2Spec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "points with radius in [0.5, 2] and angle in ±[0, 0.9π] (off the branch cut at ±π)",
  order: 2,
  cases: caseArb(shapeArb(), (s, rng) => {
    const n = s.reduce((a, b) => a * b, 1);
    const r = sample(U(0.5, 2), n, rng),
      th = sample(U(-0.9 * Math.PI, 0.9 * Math.PI), n, rng);
    return {
      label: `atan2 ${fmt(s)}`,
      inputs: [
        { shape: s, data: r.map((v, i) => v * Math.sin(th[i]!)) },
        { shape: s, data: r.map((v, i) => v * Math.cos(th[i]!)) },
      ],
      apply: (y: Array, x: Array) => lax.atan2(y, x),
    };
  }),
};

/** select(p, a, b): differentiable in a and b; the predicate (broadcasting) is a constant of the case. */
const selectSpec: DifferentiableSpec = {
  kind: "differentiable",
  domain: "a, b uniform [-2, 2]; predicate random bool, all three broadcasting",
  order: 2,
  cases: caseArb(broadcastShapesArb(3), ([sp, sa, sb], rng) => {
    const [p, ...ab] = tensors([sp, sa, sb], U(-1, 1), rng);
    const pred = fromTyped(
      Uint8Array.from(p!.data, (v) => (v > 0 ? 1 : 0)),
      p!.shape,
      "bool",
    );
    return {
      label: `select p${fmt(sp)} ${fmt(sa)} ${fmt(sb)}`,
      inputs: ab,
      apply: (a: Array, b: Array) => lax.select(pred, a, b),
    };
  }),
};

const convertSpecs: readonly PrimSpec[] = [
  {
    kind: "differentiable",
    domain: "same dtype, weak ↔ strong: identity on values (float32 ↔ float64 casts: tests/api-transforms)",
    order: 2,
    cases: caseArb(fc.tuple(shapeArb(), fc.boolean()), ([s, weak], rng) => ({
      label: `convert f64 ${fmt(s)} weak=${weak}`,
      inputs: tensors([s], U(-2, 2), rng),
      apply: (x: Array) => lax.mul(bind1(lax.convertP, [x], { dtype: x.dtype, weak }), x),
    })),
  },
  {
    kind: "non-differentiable",
    why: "float → int32/bool has a zero tangent",
    cases: caseArb(fc.tuple(shapeArb(), fc.constantFrom("int32" as const, "bool" as const)), ([s, dtype], rng) => ({
      label: `convert f64 ${fmt(s)} → ${dtype}`,
      inputs: tensors([s], U(-3, 3), rng),
      apply: (x: Array) => bind1(lax.convertP, [x], { dtype }),
    })),
  },
];

export const elementwiseSpecs = {
  neg: unary(lax.negP, U(-2, 2)),
  abs: unary(lax.absP, AWAY(0.1, 2), " (kink at 0)"),
  exp: unary(lax.expP, U(-2, 2)),
  log: unary(lax.logP, U(0.5, 3), " (log needs x > 0)"),
  log1p: unary(lax.log1pP, U(-0.5, 2), " (needs x > -1)"),
  expm1: unary(lax.expm1P, U(-2, 2)),
  sin: unary(lax.sinP, U(-3, 3)),
  cos: unary(lax.cosP, U(-3, 3)),
  tan: unary(lax.tanP, U(-1.2, 1.2), " (poles at ±π/2)"),
  tanh: unary(lax.tanhP, U(-2, 2)),
  asin: unary(lax.asinP, U(-0.8, 0.8), " (singular at ±1)"),
  acos: unary(lax.acosP, U(-0.8, 0.8), " (singular at ±1)"),
  atan: unary(lax.atanP, U(-3, 3)),
  sqrt: unary(lax.sqrtP, U(0.5, 3), " (singular at 0)"),
  rsqrt: unary(lax.rsqrtP, U(0.5, 3), " (singular at 0)"),
  erf: unary(lax.erfP, U(-3, 3)),
  erfinv: unary(lax.erfinvP, U(-0.9, 0.9), " (singular at ±1)"),
  sign: zeroDerivative(lax.signP, AWAY(0.1, 2), "piecewise constant (jump at 0)"),
  floor: zeroDerivative(
    lax.floorP,
    { kind: "off-grid", lo: -3, hi: 3, offset: 0, margin: 0.05 },
    "piecewise constant (jumps at integers)",
  ),
  ceil: zeroDerivative(
    lax.ceilP,
    { kind: "off-grid", lo: -3, hi: 3, offset: 0, margin: 0.05 },
    "piecewise constant (jumps at integers)",
  ),
  round: zeroDerivative(
    lax.roundP,
    { kind: "off-grid", lo: -3, hi: 3, offset: 0.5, margin: 0.05 },
    "piecewise constant (jumps at half-integers)",
  ),
  stop_gradient: zeroDerivative(
    lax.stopGradientP,
    U(-2, 2),
    "gradient defined as zero (finite differences see the identity)",
    false,
  ),
  isfinite: { kind: "non-differentiable", why: "bool output", cases: unaryCases(lax.isfiniteP, U(-2, 2)) },
  not: {
    kind: "non-differentiable",
    why: "bool operand and output",
    cases: caseArb(shapeArb(), (s, rng) => ({
      label: `not ${fmt(s)}`,
      inputs: tensors([s], U(-1, 1), rng),
      apply: (x: Array) => lax.logicalNot(lax.lt(x, zero64)),
    })),
  },
  add: binary(lax.addP, U(-2, 2)),
  sub: binary(lax.subP, U(-2, 2)),
  mul: binary(lax.mulP, U(-2, 2)),
  div: binary(lax.divP, U(-2, 2), AWAY(0.5, 2), " (denominator away from 0)"),
  rem: remSpec,
  pow: powSpec,
  max: binary(lax.maxP, { kind: "distinct", lo: -2, hi: 2 }, undefined, " (kink where a = b)"),
  min: binary(lax.minP, { kind: "distinct", lo: -2, hi: 2 }, undefined, " (kink where a = b)"),
  atan2: atan2Spec,
  eq: comparison(lax.eqP),
  ne: comparison(lax.neP),
  lt: comparison(lax.ltP),
  le: comparison(lax.leP),
  gt: comparison(lax.gtP),
  ge: comparison(lax.geP),
  and: logical(lax.andP),
  or: logical(lax.orP),
  select: selectSpec,
  convert_element_type: convertSpecs,
} satisfies Record<string, PrimSpec | readonly PrimSpec[]>;
