/**
 * np/nn against direct JS-loop references (loop-refs.ts), in float32 and float64: numpy
 * broadcasting, reductions over random (negative, unordered) axes with keepdims, arg-reductions
 * with ties, matmul, einsum, takeAlongAxis, scatterAdd and conv2d.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { np, nn, type Array, type DType } from "../src/index.js";
import { broadcastShapesArb, shapeArb } from "./arbitraries.js";
import { makeRng } from "./gradcheck.js";
import {
  argRef,
  binaryRef,
  conv2dRef,
  einsumRef,
  matmulRef,
  nd,
  reduceRef,
  samePadding,
  scatterAddRef,
  size,
  takeAlongAxisRef,
  type Nd,
} from "./loop-refs.js";

const RUNS = 30;
type FloatDType = Extract<DType, "float32" | "float64">;

/**
 * Random values on [lo, hi], rounded to the dtype (so the reference sees exactly the stored inputs); `ints` gives ties.
 */
function values(shape: readonly number[], seed: number, dtype: FloatDType, lo = -2, hi = 2, ints = false): Nd {
  const rng = makeRng(seed);
  const data = Float64Array.from({ length: size(shape) }, () => {
    const v = lo + (hi - lo) * rng();
    return ints ? Math.round(v) : dtype === "float32" ? Math.fround(v) : v;
  });
  return nd(shape, data);
}
const toArray = (x: Nd, dtype: FloatDType): Array =>
  np
    .array(dtype === "float32" ? Float32Array.from(x.data) : Float64Array.from(x.data), { dtype })
    .reshape([...x.shape]);
const intArray = (x: Nd): Array => np.array(Int32Array.from(x.data), { dtype: "int32" }).reshape([...x.shape]);

/** Unit roundoff. */
const UNIT: Record<FloatDType, number> = { float32: 2 ** -24, float64: 2 ** -53 };

/**
 * |a − r| ≤ 8u·|r| + 2u·bound_i, with r the float64 reference on the stored inputs and u the
 * dtype's unit roundoff: 8u covers a few final roundings; `bound` (n·Σ|terms| per element) is the
 * classic error bound of summing n terms in the dtype in any order, so float32 accumulation
 * (e.g. a float32 GEMM) passes while a wrong index or a missing term (O(|term|)) does not.
 */
function expectMatches(actual: Array, ref: Nd, dtype: FloatDType, bound?: Nd): void {
  expect(actual.shape).toEqual(ref.shape);
  expect(actual.dtype).toBe(dtype);
  const a = actual.dataSync();
  const u = UNIT[dtype];
  ref.data.forEach((r, i) => {
    const v = a[i]!;
    if (Number.isNaN(r)) {
      expect(v).toBeNaN();
      return;
    }
    const tol = 8 * u * Math.abs(r) + 2 * u * (bound ? bound.data[i]! : 0);
    if (!(Math.abs(v - r) <= tol)) {
      throw new Error(
        `element ${i}: got ${v}, reference ${r}, |diff| ${Math.abs(v - r)} > ${tol} ` +
          `(dtype ${dtype}, shape [${ref.shape}])`,
      );
    }
  });
}
const abs = (x: Nd): Nd => nd(x.shape, x.data.map(Math.abs));
const scaled = (x: Nd, k: number): Nd =>
  nd(
    x.shape,
    x.data.map((v) => v * k),
  );

/** Axis argument in each numpy form: undefined (all), a possibly negative number, or a list in any order. */
const axisArgArb = (rank: number): fc.Arbitrary<number | number[] | undefined> =>
  fc.oneof(
    fc.constant(undefined),
    ...(rank > 0 ? [fc.integer({ min: -rank, max: rank - 1 })] : []),
    fc
      .shuffledSubarray(globalThis.Array.from({ length: rank }, (_, i) => i))
      .chain((axes) =>
        fc.tuple(...axes.map((a) => fc.boolean().map((neg) => (neg ? a - rank : a)))).map((xs) => [...xs]),
      ),
  );
const normAxes = (axis: number | number[] | undefined, rank: number): number[] =>
  axis === undefined
    ? globalThis.Array.from({ length: rank }, (_, i) => i)
    : (typeof axis === "number" ? [axis] : axis).map((a) => (a < 0 ? a + rank : a));

const BINARY: [string, (a: Array, b: Array) => Array, (x: number, y: number) => number, [number, number]][] = [
  ["add", np.add, (x, y) => x + y, [-2, 2]],
  ["sub", np.sub, (x, y) => x - y, [-2, 2]],
  ["mul", np.mul, (x, y) => x * y, [-2, 2]],
  ["div", np.div, (x, y) => x / y, [0.5, 2]],
  ["maximum", np.maximum, Math.max, [-2, 2]],
  ["minimum", np.minimum, Math.min, [-2, 2]],
  ["pow", np.pow, Math.pow, [0.5, 2]],
  ["arctan2", np.arctan2, Math.atan2, [-2, 2]],
];

describe.each(["float32", "float64"] as const)("%s", (dtype) => {
  const f = (x: number) => (dtype === "float32" ? Math.fround(x) : x);

  it.each(BINARY)("np.%s broadcasts like numpy", (_name, op, ref, [lo, hi]) => {
    fc.assert(
      fc.property(broadcastShapesArb(2), fc.integer(), ([sa, sb], seed) => {
        const a = values(sa, seed, dtype, lo, hi),
          b = values(sb, seed + 1, dtype, lo, hi);
        expectMatches(
          op(toArray(a, dtype), toArray(b, dtype)),
          binaryRef(a, b, (x, y) => f(ref(x, y))),
          dtype,
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("comparisons broadcast and give bool", () => {
    fc.assert(
      fc.property(broadcastShapesArb(2), fc.integer(), ([sa, sb], seed) => {
        const a = values(sa, seed, dtype, -2, 2, true),
          b = values(sb, seed + 1, dtype, -2, 2, true);
        const r = np.greaterEqual(toArray(a, dtype), toArray(b, dtype));
        expect(r.dtype).toBe("bool");
        expect([...r.dataSync()]).toEqual([...binaryRef(a, b, (x, y) => (x >= y ? 1 : 0)).data]);
      }),
      { numRuns: RUNS },
    );
  });

  const REDUCERS: [
    string,
    (x: Array, axis: number | number[] | undefined, o: { keepdims: boolean }) => Array,
    number,
    (a: number, v: number) => number,
  ][] = [
    ["sum", np.sum, 0, (a, v) => a + v],
    ["max", np.max, -Infinity, Math.max],
    ["min", np.min, Infinity, Math.min],
    ["prod", np.prod, 1, (a, v) => a * v],
  ];
  it.each(REDUCERS)("np.%s over random axes, keepdims or not", (_name, op, init, fn) => {
    fc.assert(
      fc.property(
        shapeArb({ maxRank: 4 }).chain((s) =>
          fc.tuple(fc.constant(s), axisArgArb(s.length), fc.boolean(), fc.integer()),
        ),
        ([s, axis, keepdims, seed]) => {
          const x = values(s, seed, dtype, -1.5, 1.5);
          const axes = normAxes(axis, s.length);
          const n = size(axes.map((a) => s[a]!));
          const r = reduceRef(x, axes, init, fn, keepdims);
          const bound =
            init === 0
              ? scaled(
                  reduceRef(abs(x), axes, 0, (a, v) => a + v, keepdims),
                  n,
                )
              : init === 1
                ? scaled(abs(r), n)
                : undefined;
          expectMatches(op(toArray(x, dtype), axis, { keepdims }), r, dtype, bound);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("np.mean over random axes, keepdims or not", () => {
    fc.assert(
      fc.property(
        shapeArb({ maxRank: 4 }).chain((s) =>
          fc.tuple(fc.constant(s), axisArgArb(s.length), fc.boolean(), fc.integer()),
        ),
        ([s, axis, keepdims, seed]) => {
          const x = values(s, seed, dtype);
          const axes = normAxes(axis, s.length);
          const n = size(axes.map((a) => s[a]!));
          const r = reduceRef(x, axes, 0, (a, v) => a + v, keepdims);
          const bound = reduceRef(abs(x), axes, 0, (a, v) => a + v, keepdims); // n·Σ|x|/n
          expectMatches(
            np.mean(toArray(x, dtype), axis, { keepdims }),
            nd(
              r.shape,
              r.data.map((v) => v / n),
            ),
            dtype,
            bound,
          );
        },
      ),
      { numRuns: RUNS },
    );
  });

  it.each([
    ["argmax", np.argmax, (a: number, b: number) => a > b],
    ["argmin", np.argmin, (a: number, b: number) => a < b],
  ] as const)("np.%s picks the first extremum (ties included)", (_name, op, better) => {
    fc.assert(
      fc.property(
        shapeArb({ minRank: 1 }).chain((s) =>
          fc.tuple(fc.constant(s), fc.option(fc.integer({ min: -s.length, max: s.length - 1 })), fc.integer()),
        ),
        ([s, axis, seed]) => {
          const x = values(s, seed, dtype, -2, 2, true); // integers: many ties
          const r = op(toArray(x, dtype), axis ?? undefined);
          const ref =
            axis === null
              ? argRef(nd([size(s)], x.data), 0, better)
              : argRef(x, axis < 0 ? axis + s.length : axis, better);
          expect(r.dtype).toBe("int32");
          expect(r.shape).toEqual(ref.shape);
          expect([...r.dataSync()]).toEqual([...ref.data]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  /** matmul operands: 1-D, 2-D or batched with broadcasting batch dims. */
  const matmulShapes = fc
    .tuple(
      fc.integer({ min: 1, max: 3 }),
      fc.integer({ min: 1, max: 3 }),
      fc.integer({ min: 1, max: 3 }),
      broadcastShapesArb(2, 2),
      fc.boolean(),
      fc.boolean(),
    )
    .map(([m, k, n, [ba, bb], va, vb]) => [va ? [k] : [...ba, m, k], vb ? [k] : [...bb, k, n]] as const);
  it("np.matmul: batched with broadcasting, 1-D operands", () => {
    fc.assert(
      fc.property(matmulShapes, fc.integer(), ([sa, sb], seed) => {
        const a = values(sa, seed, dtype),
          b = values(sb, seed + 1, dtype);
        const k = sa[sa.length - 1]!;
        expectMatches(
          np.matmul(toArray(a, dtype), toArray(b, dtype)),
          matmulRef(a, b),
          dtype,
          scaled(matmulRef(abs(a), abs(b)), k),
        );
      }),
      { numRuns: RUNS },
    );
  });

  const EINSUMS: [string, string][] = [
    ["ij,jk->ik", "ij,jk"],
    ["bij,bjk->bik", "bij,bjk->bik"],
    ["ij->ji", "ij->ji"],
    ["ij->", "ij->"],
    ["i,i->", "i,i->"],
    ["ijk->kj", "ijk->kj"],
    ["ij,ij->ij", "ij,ij->ij"],
    ["ij,kj->ik", "ij,kj->ik"],
    ["i,j->ij", "i,j->ij"],
    ["bij,jk->bik", "bij,jk->bik"],
    ["ijk,ikl->jl", "ijk,ikl->jl"],
    ["ij,jk,kl->il", "ij,jk,kl->il"],
    ["jk,ij->ik", "jk,ij"], // implicit output: labels used once, in alphabetical order (not order of appearance)
  ];
  it.each(EINSUMS)("np.einsum %s", (explicit, given) => {
    const labels = [...new Set(explicit.replace(/[,>-]/g, ""))];
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: labels.length, maxLength: labels.length }),
        fc.integer(),
        (dims, seed) => {
          const [lhs] = explicit.split("->") as [string];
          const ops = lhs.split(",").map((s, i) =>
            values(
              [...s].map((c) => dims[labels.indexOf(c)]!),
              seed + i,
              dtype,
            ),
          );
          const terms = size(
            labels.filter((c) => !explicit.split("->")[1]!.includes(c)).map((c) => dims[labels.indexOf(c)]!),
          );
          const bound = scaled(einsumRef(explicit, ...ops.map(abs)), terms);
          expectMatches(
            np.einsum(given, ...ops.map((o) => toArray(o, dtype))),
            einsumRef(explicit, ...ops),
            dtype,
            bound,
          );
        },
      ),
      { numRuns: 15 },
    );
  });

  it("np.takeAlongAxis with broadcasting and negative indices", () => {
    const arb = shapeArb({ minRank: 1 }).chain((s) =>
      fc.tuple(
        fc.constant(s),
        fc.integer({ min: 0, max: s.length - 1 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.boolean(), { minLength: s.length, maxLength: s.length }),
        fc.integer(),
      ),
    );
    fc.assert(
      fc.property(arb, ([s, axis, m, ones, seed]) => {
        const is = s.map((d, i) => (i === axis ? m : ones[i] ? 1 : d));
        const x = values(s, seed, dtype);
        const rng = makeRng(seed + 7);
        const idx = nd(
          is,
          Float64Array.from({ length: size(is) }, () => Math.floor(rng() * 2 * s[axis]!) - s[axis]!),
        );
        expectMatches(np.takeAlongAxis(toArray(x, dtype), intArray(idx), axis), takeAlongAxisRef(x, idx, axis), dtype);
      }),
      { numRuns: RUNS },
    );
  });

  it("np.scatterAdd accumulates repeated indices", () => {
    const arb = shapeArb({ minRank: 1 }).chain((s) =>
      fc.tuple(fc.constant(s), fc.integer({ min: 0, max: s.length - 1 }), shapeArb({ maxRank: 2 }), fc.integer()),
    );
    fc.assert(
      fc.property(arb, ([s, axis, is, seed]) => {
        const t = values(s, seed, dtype);
        const us = [...s.slice(0, axis), ...is, ...s.slice(axis + 1)];
        const u = values(us, seed + 1, dtype);
        const rng = makeRng(seed + 2);
        const idx = nd(
          is,
          Float64Array.from({ length: size(is) }, () => Math.floor(rng() * 2 * s[axis]!) - s[axis]!),
        );
        const bound = scaled(scatterAddRef(abs(t), idx, abs(u), axis), size(is) + 1);
        expectMatches(
          np.scatterAdd(toArray(t, dtype), intArray(idx), toArray(u, dtype), axis),
          scatterAddRef(t, idx, u, axis),
          dtype,
          bound,
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("nn.conv2d with stride, padding (numbers, pairs, SAME, VALID) and dilation", () => {
    const arb = fc.record({
      n: fc.integer({ min: 1, max: 2 }),
      c: fc.integer({ min: 1, max: 3 }),
      o: fc.integer({ min: 1, max: 2 }),
      h: fc.integer({ min: 1, max: 6 }),
      w: fc.integer({ min: 1, max: 6 }),
      kh: fc.integer({ min: 1, max: 3 }),
      kw: fc.integer({ min: 1, max: 3 }),
      stride: fc.oneof(
        fc.integer({ min: 1, max: 3 }),
        fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 })),
      ),
      padding: fc.oneof(
        fc.constant("SAME" as const),
        fc.constant("VALID" as const),
        fc.integer({ min: 0, max: 2 }),
        fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 })),
      ),
      dilation: fc.integer({ min: 1, max: 2 }),
      seed: fc.integer(),
    });
    const pair = (v: number | readonly [number, number]): [number, number] =>
      typeof v === "number" ? [v, v] : [v[0], v[1]];
    fc.assert(
      fc.property(arb, (p) => {
        const stride = pair(p.stride);
        const pads: [[number, number], [number, number]] =
          p.padding === "SAME"
            ? [samePadding(p.h, p.kh, stride[0], p.dilation), samePadding(p.w, p.kw, stride[1], p.dilation)]
            : p.padding === "VALID"
              ? [
                  [0, 0],
                  [0, 0],
                ]
              : (() => {
                  const [a, b] = pair(p.padding);
                  return [
                    [a, a],
                    [b, b],
                  ];
                })();
        const fits = [
          p.h + pads[0][0] + pads[0][1] - p.dilation * (p.kh - 1) - 1,
          p.w + pads[1][0] + pads[1][1] - p.dilation * (p.kw - 1) - 1,
        ].every((d) => d >= 0);
        fc.pre(fits);
        const x = values([p.n, p.c, p.h, p.w], p.seed, dtype),
          w = values([p.o, p.c, p.kh, p.kw], p.seed + 1, dtype);
        const r = conv2dRef(x, w, stride, pads, [p.dilation, p.dilation]);
        const bound = scaled(conv2dRef(abs(x), abs(w), stride, pads, [p.dilation, p.dilation]), p.c * p.kh * p.kw);
        const y = nn.conv2d(toArray(x, dtype), toArray(w, dtype), {
          stride: p.stride,
          padding: p.padding,
          dilation: p.dilation,
        });
        expectMatches(y, r, dtype, bound);
      }),
      { numRuns: RUNS },
    );
  });
});
