/**
 * The everyday pieces added for issue 63 (nn.gelu, nn.leakyRelu, lax.map, np.isclose/allclose,
 * tree.leaves/structure, evalShape, random.categorical): gradients against central differences
 * (JAX's check_grads, to second order), vmap against a JS loop, lax.map against vmap and a loop,
 * evalShape against the shapes the function really returns, categorical's frequencies against
 * the softmax of its logits.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evalShape, grad, lax, nn, np, random, render, tree, vmap, type Array } from "../src/index.js";
import { checkGrads, makeRng } from "./gradcheck.js";
import { expectClose, sliceAt, stackAt } from "./gen/check.js";
import { fdGrad } from "./gen/fd.js";
import { randomArray } from "./gen/programs.js";

const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);
const shapeArb = fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 });
/** Values at least 0.05 away from 0, where leakyRelu has its kink (finite differences straddle it otherwise). */
const awayFromZero = (seed: number, shape: number[]): Array => {
  const x = randomArray(seed, shape, -2, 2);
  return np.where(np.less(np.abs(x), 0.05), np.add(x, np.mul(np.sign(np.add(x, 1e-9)), 0.1)), x);
};

describe("nn.gelu and nn.leakyRelu", () => {
  it("gradients (forward and reverse, to second order) agree with central differences", () => {
    fc.assert(
      fc.property(shapeArb, fc.nat(), fc.double({ min: 0, max: 0.5, noNaN: true }), (shape, seed, slope) => {
        const rng = makeRng(seed);
        checkGrads((x) => nn.gelu(x), [randomArray(seed, shape, -3, 3)], 2, rng);
        checkGrads((x) => nn.leakyRelu(x, slope), [awayFromZero(seed + 1, shape)], 2, rng);
      }),
      { numRuns: 25 },
    );
  });

  it("vmap equals a loop, and the values are the formulas'", () => {
    fc.assert(
      fc.property(shapeArb, fc.nat(), (shape, seed) => {
        const xs = randomArray(seed, shape, -3, 3);
        for (const f of [(x: Array) => nn.gelu(x), (x: Array) => nn.leakyRelu(x, 0.2)]) {
          expectClose(
            vmap(f)(xs),
            stackAt(
              range(shape[0]!).map((i) => f(sliceAt(xs, 0, i))),
              0,
            ),
            { rtol: 1e-12, atol: 1e-14 },
            "vmap vs loop",
          );
        }
        const host = [...xs.dataSync()];
        const gelu = host.map((x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3))));
        expect([...nn.gelu(xs).dataSync()].every((v, i) => Math.abs(v - gelu[i]!) < 1e-12)).toBe(true);
        expect([...nn.leakyRelu(xs, 0.2).dataSync()]).toEqual(host.map((x) => (x > 0 ? x : 0.2 * x)));
      }),
      { numRuns: 25 },
    );
    expect(() => nn.gelu(np.array([1]), { approximate: false })).toThrow(/needs erf/);
  });
});

describe("lax.map", () => {
  it("equals vmap and a loop, and its gradient the finite-difference one", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 4 }), fc.nat(), (n, m, seed) => {
        const xs = randomArray(seed, [n, m]);
        const w = randomArray(seed + 1, [m]);
        const f = (row: Array) => np.sum(np.mul(np.sin(row), w));
        const mapped = lax.map(f, xs);
        expectClose(mapped, vmap(f)(xs), { rtol: 1e-12, atol: 1e-14 }, "lax.map vs vmap");
        expectClose(
          mapped,
          np.stack(range(n).map((i) => f(sliceAt(xs, 0, i)))),
          { rtol: 1e-12, atol: 1e-14 },
          "lax.map vs loop",
        );
        const L = (x: Array) => np.sum(np.square(lax.map(f, x)));
        expectClose(grad(L)(xs), fdGrad(L, xs, 1e-6), { rtol: 1e-5, atol: 1e-8 }, "grad(lax.map)");
      }),
      { numRuns: 20 },
    );
  });
});

describe("np.isclose and np.allclose", () => {
  it("follow numpy's rule |a − b| ≤ atol + rtol·|b|, elementwise and over all", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        (a, seed) => {
          const rng = makeRng(seed);
          const b = a.map((x) => x + (2 * rng() - 1) * 1e-4);
          const want = a.map((x, i) => Math.abs(x - b[i]!) <= 1e-8 + 1e-5 * Math.abs(b[i]!));
          const got = [
            ...np.isclose(np.array(a, { dtype: "float64" }), np.array(b, { dtype: "float64" })).dataSync(),
          ].map(Boolean);
          expect(got).toEqual(want);
          expect(
            Boolean(np.allclose(np.array(a, { dtype: "float64" }), np.array(b, { dtype: "float64" })).item()),
          ).toBe(want.every(Boolean));
        },
      ),
      { numRuns: 50 },
    );
    expect(
      [...np.isclose(np.array([NaN, Infinity, -Infinity]), np.array([NaN, Infinity, Infinity])).dataSync()].map(
        Boolean,
      ),
    ).toEqual([false, true, false]);
    expect(Boolean(np.isclose(np.array(NaN), np.array(NaN), { equalNan: true }).item())).toBe(true);
  });
});

describe("tree.leaves, tree.structure and evalShape", () => {
  it("leaves and structure rebuild the tree", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 3 }), fc.array(fc.integer(), { maxLength: 3 }), {
          maxKeys: 4,
        }),
        (t) => {
          expect(tree.unflatten(tree.structure(t), tree.leaves(t))).toEqual(t);
          expect(tree.leaves(t)).toEqual(
            Object.keys(t)
              .sort()
              .flatMap((k) => t[k]!),
          );
        },
      ),
      { numRuns: 50 },
    );
  });

  it("evalShape gives the shapes and dtypes f returns, with its structure", () => {
    fc.assert(
      fc.property(shapeArb, fc.nat(), (shape, seed) => {
        const x = randomArray(seed, shape);
        const f = (a: Array) => ({
          total: np.sum(a),
          outer: np.outer(np.ravel(a), np.ravel(a)),
          ints: [np.argmax(np.ravel(a), 0)],
        });
        const s = evalShape(f, x),
          out = f(x);
        expect([s.total.shape, s.outer.shape, s.ints[0]!.shape]).toEqual([
          out.total.shape,
          out.outer.shape,
          out.ints[0]!.shape,
        ]);
        expect([s.total.dtype, s.outer.dtype, s.ints[0]!.dtype]).toEqual([
          out.total.dtype,
          out.outer.dtype,
          out.ints[0]!.dtype,
        ]);
      }),
      { numRuns: 20 },
    );
  });
});

describe("random.categorical", () => {
  it("draws each category about as often as softmax(logits) says, per row, and vmap over keys equals a loop", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 2, maxLength: 4 }),
        fc.nat({ max: 1000 }),
        (logits, seed) => {
          const n = 4000;
          const draws = [
            ...random.categorical(random.key(seed), np.broadcastTo(np.array(logits), [n, logits.length])).dataSync(),
          ];
          const p = logits.map(Math.exp),
            z = p.reduce((s, v) => s + v, 0);
          // 5 standard deviations of a frequency over 4,000 draws (≤ 0.04): a wrong law fails, a right one essentially
          // never.
          logits.forEach((_, k) =>
            expect(Math.abs(draws.filter((d) => d === k).length / n - p[k]! / z)).toBeLessThan(5 * Math.sqrt(0.25 / n)),
          );
          const keys = random.split(random.key(seed), 3);
          const batched = vmap((k: Array) => random.categorical(k, np.array(logits)))(keys);
          expect([...batched.dataSync()]).toEqual(
            range(3).map((i) => random.categorical(np.take(keys, i, 0), np.array(logits)).item()),
          );
        },
      ),
      { numRuns: 10 },
    );
  });
});

describe("np.dynamicSlice and np.dynamicUpdateSlice", () => {
  const caseArb = fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }).chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      sizes: fc.tuple(...shape.map((d) => fc.integer({ min: 1, max: d }))),
      starts: fc.tuple(...shape.map((d) => fc.integer({ min: -2, max: d + 2 }))),
      seed: fc.nat(),
    }),
  );
  /** The block by host index arithmetic, starts clamped as JAX clamps them. */
  const hostBlock = (x: Array, starts: number[], sizes: number[]): number[] => {
    const data = x.dataSync(),
      shape = x.shape;
    const st = starts.map((s, d) => Math.min(Math.max(s, 0), shape[d]! - sizes[d]!));
    const out: number[] = [];
    const rec = (d: number, off: number) => {
      if (d === shape.length) {
        out.push(data[off]!);
        return;
      }
      const stride = shape.slice(d + 1).reduce((a, b) => a * b, 1);
      for (let i = 0; i < sizes[d]!; i++) rec(d + 1, off + (st[d]! + i) * stride);
    };
    rec(0, 0);
    return out;
  };

  it("take the clamped block, and setting it back is the identity", () => {
    fc.assert(
      fc.property(caseArb, ({ shape, sizes, starts, seed }) => {
        const x = randomArray(seed, shape);
        const block = np.dynamicSlice(x, starts, sizes);
        expect(block.shape).toEqual(sizes);
        expect([...block.dataSync()]).toEqual(hostBlock(x, starts, sizes));
        expect([...np.dynamicUpdateSlice(x, block, starts).dataSync()]).toEqual([...x.dataSync()]);
        const u = randomArray(seed + 1, sizes);
        expect([...np.dynamicSlice(np.dynamicUpdateSlice(x, u, starts), starts, sizes).dataSync()]).toEqual([
          ...u.dataSync(),
        ]);
      }),
      { numRuns: 40 },
    );
  });

  it("gradients agree with central differences, and vmap over traced starts equals a loop", () => {
    fc.assert(
      fc.property(caseArb, ({ shape, sizes, starts, seed }) => {
        const rng = makeRng(seed);
        const x = randomArray(seed, shape),
          u = randomArray(seed + 1, sizes);
        checkGrads((a) => np.sin(np.dynamicSlice(a, starts, sizes)), [x], 2, rng);
        checkGrads((a, b) => np.sin(np.dynamicUpdateSlice(a, b, starts)), [x, u], 1, rng);
        const firsts = np.array([starts[0]!, 0, shape[0]! - 1], { dtype: "int32" });
        const f = (s0: Array) => np.dynamicSlice(x, [s0, ...starts.slice(1)], sizes);
        expectClose(
          vmap(f)(firsts),
          stackAt(
            range(3).map((i) => f(np.take(firsts, i, 0))),
            0,
          ),
          { rtol: 0, atol: 0 },
          "vmap over starts",
        );
      }),
      { numRuns: 20 },
    );
    expect(() => np.dynamicSlice(np.zeros([3]), [0], [4])).toThrow(/size 4 of axis 0 must be an integer in \[0, 3\]/);
    expect(() => np.dynamicSlice(np.zeros([3]), [np.array(1)], [2])).toThrow(/start of axis 0 must be an int32 scalar/);
  });
});

describe("np.sort, np.argsort, random.permutation and random.choice", () => {
  const valuesArb = fc.array(
    fc.oneof(
      fc.integer({ min: -3, max: 3 }).map((v) => v / 2),
      fc.constant(NaN),
    ),
    { minLength: 1, maxLength: 7 },
  );
  /** JS's stable sort of the indices, NaNs last. */
  const hostArgsort = (xs: number[]) =>
    range(xs.length).sort((i, j) => {
      const a = xs[i]!,
        b = xs[j]!;
      if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) === Number.isNaN(b) ? 0 : Number.isNaN(a) ? 1 : -1;
      return a - b;
    });

  it("argsort is JS's stable sort (ties keep their order, NaNs last) along any axis, and sort takes it", () => {
    fc.assert(
      fc.property(valuesArb, fc.integer({ min: 1, max: 3 }), (xs, rows) => {
        const m = np.array(
          range(rows).map((r) => xs.map((v, i) => (Number.isNaN(v) ? v : v + ((r * 7 + i) % 3)))),
          { dtype: "float64" },
        ); // [rows, n]
        const host = m.toList() as number[][];
        expect(np.argsort(m).toList()).toEqual(host.map(hostArgsort));
        expect(np.sort(m).toList()).toEqual(host.map((row) => hostArgsort(row).map((i) => row[i]!)));
        expect(np.argsort(np.transpose(m), 0).toList()).toEqual(np.transpose(np.argsort(m)).toList());
        expect(vmap((row: Array) => np.argsort(row))(m).toList()).toEqual(host.map(hostArgsort));
      }),
      { numRuns: 60 },
    );
  });

  it("sort's gradient agrees with central differences (distinct values)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: -50, max: 50 }), { minLength: 2, maxLength: 6 }),
        fc.nat(),
        (ints, seed) => {
          const x = np.array(
            ints.map((v) => v / 10),
            { dtype: "float64" },
          );
          checkGrads(
            (a) => np.mul(np.sort(a), np.arange(ints.length, undefined, 1, { dtype: "float64" })),
            [x],
            2,
            makeRng(seed),
          );
        },
      ),
      { numRuns: 25 },
    );
  });

  it("permutation permutes, choice without replacement draws distinct values, and with p follows p", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.nat({ max: 10_000 }), (n, seed) => {
        const perm = random.permutation(random.key(seed), n).toList() as number[];
        expect([...perm].sort((a, b) => a - b)).toEqual(range(n));
        const k = Math.min(n, 3);
        const picked = random.choice(random.key(seed), n, [k], { replace: false }).toList() as number[];
        expect(new Set(picked).size).toBe(k);
        expect(picked.every((v) => v >= 0 && v < n)).toBe(true);
      }),
      { numRuns: 40 },
    );
    // Every position is equally likely: the first element of 3,000 permutations of 4.
    const firsts = [
      ...vmap((key: Array) => np.take(random.permutation(key, 4), 0, 0))(random.split(random.key(7), 3000)).dataSync(),
    ];
    range(4).forEach((v) =>
      expect(Math.abs(firsts.filter((f) => f === v).length / 3000 - 0.25)).toBeLessThan(
        5 * Math.sqrt((0.25 * 0.75) / 3000),
      ),
    );
    const draws = [...random.choice(random.key(8), 3, [4000], { p: np.array([0.5, 0.3, 0.2]) }).dataSync()];
    [0.5, 0.3, 0.2].forEach((p, v) =>
      expect(Math.abs(draws.filter((d) => d === v).length / 4000 - p)).toBeLessThan(5 * Math.sqrt(0.25 / 4000)),
    );
    expect(() => random.choice(random.key(0), 3, [4], { replace: false })).toThrow(
      /cannot draw 4 values from 3 without replacement/,
    );
  });
});

describe("render.chamferDistance and render.samplePointsFromMesh", () => {
  it("chamferDistance: brute-force two-way mean nearest squared distance, with central-difference gradients", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 5 }), fc.nat(), (n, m, seed) => {
        const a = randomArray(seed, [n, 3]),
          b = randomArray(seed + 1, [m, 3]);
        const A = a.toList() as number[][],
          B = b.toList() as number[][];
        const d2 = (p: number[], q: number[]) => p.reduce((s, v, i) => s + (v - q[i]!) ** 2, 0);
        const oneWay = (P: number[][], Q: number[][]) =>
          P.reduce((s, p) => s + Math.min(...Q.map((q) => d2(p, q))), 0) / P.length;
        expect(render.chamferDistance(a, b).item()).toBeCloseTo(oneWay(A, B) + oneWay(B, A), 12);
        checkGrads((x, y) => render.chamferDistance(x, y), [a, b], 1, makeRng(seed));
      }),
      { numRuns: 25 },
    );
  });

  it("samples lie on the surface, faces are chosen by area, and vmap over keys equals a loop", () => {
    const half = [0.5, 0.25, 0.1] as const;
    const box = render.meshFromData(render.boxData(half), { dtype: "float64" });
    const n = 4000;
    const pts = render.samplePointsFromMesh(random.key(3), box, n).toList() as number[][];
    // On a face of the box: one coordinate at ±half, the others inside.
    const onFace = pts.map((p) => p.findIndex((v, d) => Math.abs(Math.abs(v) - half[d]!) < 1e-9));
    expect(onFace.every((d) => d >= 0)).toBe(true);
    expect(pts.every((p) => p.every((v, d) => Math.abs(v) <= half[d]! + 1e-9))).toBe(true);
    // Faces normal to axis d have area ∝ the product of the other two half extents.
    const areas = [half[1] * half[2], half[0] * half[2], half[0] * half[1]],
      total = areas[0]! + areas[1]! + areas[2]!;
    areas.forEach((area, d) =>
      expect(Math.abs(onFace.filter((f) => f === d).length / n - area / total)).toBeLessThan(5 * Math.sqrt(0.25 / n)),
    );
    const keys = random.split(random.key(4), 3);
    const batched = vmap((k: Array) => render.samplePointsFromMesh(k, box, 5))(keys);
    expectClose(
      batched,
      stackAt(
        range(3).map((i) => render.samplePointsFromMesh(np.take(keys, i, 0), box, 5)),
        0,
      ),
      { rtol: 1e-12, atol: 1e-14 },
      "vmap over keys",
    );
    // The samples move with the vertices (a reparametrised draw): shifting the mesh shifts them.
    const shifted = render
      .samplePointsFromMesh(
        random.key(3),
        { ...box, vertices: np.add(box.vertices, np.array([1, 0, 0], { dtype: "float64" })) },
        n,
      )
      .toList() as number[][];
    expect(shifted.every((p, i) => Math.abs(p[0]! - pts[i]![0]! - 1) < 1e-9)).toBe(true);
  });
});
