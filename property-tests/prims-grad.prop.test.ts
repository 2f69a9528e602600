/**
 * Gradient properties of every primitive, driven by the spec table: for each differentiable
 * primitive, random shapes/params/values (fast-check) and float64 checks of jvp and vjp against
 * central finite differences, jvp against vjp (dot-product test), and second derivatives
 * (jvp/vjp of jvp/vjp) against finite differences of the first derivative.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Array } from "../src/core/array.js";
import { grad, jvp, np, vjp } from "../src/index.js";
import { checkFloat32Agrees, checkGrads, f64, hostOf, makeRng, numericalJvp, randomLike } from "./gradcheck.js";
import { missingSpecs, specEntries, staleSpecs, type PrimName } from "./prim-specs.js";
import type { PrimCase, PrimSpec } from "./spec-types.js";

/** Runs per spec: 30 keeps the whole file around 10–25 s on 2 shared cores; the heavier higher-order ones get fewer. */
const RUNS: Partial<Record<PrimName, number>> = {
  conv2d: 20,
  scan: 10,
  jit_call: 10,
  while: 10,
  checkpoint: 10,
  custom_vjp_call: 10,
  cond: 10,
};
const DEFAULT_RUNS = 30;

const inputsOf = (c: PrimCase): Array[] => c.inputs.map((t) => f64(t.data, t.shape));
const allZero = (x: Array): boolean => hostOf(x).every((v) => v === 0);
const withLabel = (c: PrimCase, body: () => void): void => {
  try {
    body();
  } catch (e) {
    throw new Error(`${c.label}: ${(e as Error).message}`, { cause: e });
  }
};

function checkCase(spec: Exclude<PrimSpec, { kind: "covered-elsewhere" }>, c: PrimCase): void {
  const xs = inputsOf(c);
  const rng = makeRng(c.seed);
  switch (spec.kind) {
    case "differentiable":
      checkGrads(c.apply, xs, spec.order, rng, { modes: spec.modes });
      return;
    case "zero-derivative": {
      const ts = xs.map((x) => randomLike(x, rng));
      const [y, ty] = jvp(c.apply, xs, ts);
      expect(allZero(ty), "jvp tangent is zero").toBe(true);
      const [, back] = vjp(c.apply, ...xs);
      (back(randomLike(y as Array, rng)) as Array[]).forEach((ct) =>
        expect(allZero(ct), "vjp cotangent is zero").toBe(true),
      );
      if (spec.fdIsZero)
        numericalJvp(c.apply, xs, ts, 1e-5).forEach((d) =>
          expect(
            d.every((v) => v === 0),
            "no jump within the FD step",
          ).toBe(true),
        );
      return;
    }
    case "non-differentiable": {
      const [y, ty] = jvp(
        c.apply,
        xs,
        xs.map((x) => randomLike(x, rng)),
      );
      expect((ty as Array).shape).toEqual((y as Array).shape);
      expect(allZero(ty), "jvp tangent of a non-float output is zero").toBe(true);
      return;
    }
  }
}

describe("spec table", () => {
  it("has a spec for every registered primitive", () => {
    expect(missingSpecs(), "add these primitives to PrimName and the table in property-tests/prim-specs.ts").toEqual(
      [],
    );
  });
  it("has no entries for primitives that are not registered", () => {
    expect(staleSpecs(), "remove (or rename) these entries in property-tests/prim-specs.ts").toEqual([]);
  });
});

describe.each(specEntries().filter(([, s]) => s.kind !== "covered-elsewhere"))("%s", (name, spec) => {
  const s = spec as Exclude<PrimSpec, { kind: "covered-elsewhere" }>;
  const what = s.kind === "differentiable" ? `${s.kind} to order ${s.order} (${s.domain})` : `${s.kind}: ${s.why}`;
  it(what, () => {
    fc.assert(
      fc.property(s.cases, (c) => withLabel(c, () => checkCase(s, c))),
      { numRuns: RUNS[name] ?? DEFAULT_RUNS },
    );
  });
  if (s.kind === "differentiable") {
    it("float32 values and derivatives agree with float64", () => {
      fc.assert(
        fc.property(s.cases, (c) =>
          withLabel(c, () => checkFloat32Agrees(c.apply, inputsOf(c), makeRng(c.seed), s.modes)),
        ),
        { numRuns: 10 },
      );
    });
  }
});

describe.each(specEntries().filter(([, s]) => s.kind === "covered-elsewhere"))("%s", (_name, spec) => {
  it("is covered elsewhere", () => {
    expect((spec as { where: string }).where.length).toBeGreaterThan(0);
  });
});

/** Conventions at kinks, where finite differences do not apply (JAX's choices). */
describe("derivatives at kinks", () => {
  const v = (xs: number[]) => np.array(xs, { dtype: "float64" });
  it("maximum/minimum split the gradient equally on ties", () => {
    const [ga, gb] = grad((a: Array, b: Array) => np.sum(np.maximum(a, b)), { argnums: [0, 1] })(v([1, 2]), v([1, 3]));
    expect(ga.toList()).toEqual([0.5, 0]);
    expect(gb.toList()).toEqual([0.5, 1]);
    const [ha, hb] = grad((a: Array, b: Array) => np.sum(np.minimum(a, b)), { argnums: [0, 1] })(v([1, 2]), v([1, 3]));
    expect(ha.toList()).toEqual([0.5, 1]);
    expect(hb.toList()).toEqual([0.5, 0]);
  });
  it("max/min reductions share the gradient among tied maxima", () => {
    expect(grad((x: Array) => np.max(x))(v([3, 1, 3, 2])).toList()).toEqual([0.5, 0, 0.5, 0]);
    expect(grad((x: Array) => np.min(x))(v([1, 1, 1])).toList()).toEqual([1 / 3, 1 / 3, 1 / 3]);
  });
  it("abs and sign have derivative 0 at 0", () => {
    expect(grad((x: Array) => np.sum(np.abs(x)))(v([0, -2, 2])).toList()).toEqual([0, -1, 1]);
    expect(grad((x: Array) => np.sum(np.sign(x)))(v([0, 1])).toList()).toEqual([0, 0]);
  });
  it("prod's gradient at zeros is the product of the other entries", () => {
    expect(grad((x: Array) => np.prod(x))(v([0, 2, 3])).toList()).toEqual([6, 0, 0]);
    expect(grad((x: Array) => np.prod(x))(v([0, 2, 0])).toList()).toEqual([0, 0, 0]);
  });
  it("pow: d/db a^b is 0 (not NaN) at a = 0, and d/da 0^2 = 0", () => {
    const [ga, gb] = grad((a: Array, b: Array) => np.sum(np.pow(a, b)), { argnums: [0, 1] })(v([0, 0]), v([2, 3]));
    expect(ga.toList()).toEqual([0, 0]);
    expect(gb.toList()).toEqual([0, 0]);
  });
  it("pow: second derivative in b at a = 0 is 0, not NaN (log a is never evaluated there)", () => {
    const d2 = grad((b: Array) => np.sum(grad((c: Array) => np.sum(np.pow(v([0, 2]), c)))(b)))(v([2, 1]));
    const [atZero, atTwo] = d2.toList() as number[];
    expect(atZero).toBe(0);
    expect(atTwo).toBeCloseTo(2 * Math.log(2) ** 2, 14);
  });
  it("sqrt has an infinite derivative at 0 (as in JAX), not NaN", () => {
    expect(grad((x: Array) => np.sum(np.sqrt(x)))(v([0, 4])).toList()).toEqual([Infinity, 0.25]);
  });
  it("floor, ceil and round have zero derivative everywhere", () => {
    const g = grad((x: Array) => np.sum(np.floor(x).add(np.ceil(x)).add(np.round(x))))(v([0.5, 1, -1.5]));
    expect(g.toList()).toEqual([0, 0, 0]);
  });
});
