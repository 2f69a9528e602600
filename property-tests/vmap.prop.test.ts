/**
 * vmap properties on random programs: the batched function equals a JS loop over the examples
 * (slice, call eagerly, stack) for random inAxes/outAxes (numbers, negative, null, pytrees),
 * nested vmap, vmap(grad), grad of vmap, jvp of vmap; and clear errors on bad batch sizes.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { grad, jvp, np, vmap, type Array } from "../src/index.js";
import { arbProgram, buildProgram, randomArray, type Program } from "./gen/programs.js";
import { expectClose, normAxis, sliceAt, stackAt } from "./gen/check.js";
import { exampleOf, insertAxis, randomAxis, stackResults } from "./gen/axes.js";
import { makeRng } from "../src/core/host-rng.js";
import { useEvaluatorForProperties } from "./gen/runner.js";

useEvaluatorForProperties();
const RUNS = 30;
const exact = { rtol: 1e-10, atol: 1e-12 };

/** Re-throws with the program text so a failing case is readable. */
function explain<T>(what: string, progs: readonly Program[], body: () => T): T {
  try {
    return body();
  } catch (e) {
    throw new Error(`${what}\n${progs.map((p) => p.text).join("\n--\n")}\n${(e as Error).message}`);
  }
}
const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);

describe("vmap equals a loop over examples", () => {
  it("vmap(f)(xs) == stack(f(x_i)) for random programs (including data-dependent gather/scatter indices)", () => {
    fc.assert(
      fc.property(arbProgram({ dataIndices: true }), fc.integer({ min: 1, max: 4 }), fc.nat(), (p, B, seed) => {
        const xs = randomArray(seed, [B, ...p.inShapes[0]!]);
        explain("vmap vs loop", [p], () => {
          const ref = stackAt(
            range(B).map((i) => p.fn(sliceAt(xs, 0, i))),
            0,
          );
          expectClose(vmap(p.fn)(xs), ref, exact, "vmap(f)(xs)");
        });
      }),
      { numRuns: 40 },
    );
  });

  it("random inAxes/outAxes: numbers, negative, null and pytrees of them (prefix form too)", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 3 }), (seed, B) => {
        const rng = makeRng(seed);
        const shape = () => range(rng.between(0, 2)).map(() => rng.between(1, 3));
        const p1 = buildProgram(rng.int(1e9), [shape()], rng.between(1, 4), { dataIndices: true });
        const p2 = buildProgram(rng.int(1e9), [shape(), shape()], rng.between(1, 4), { dataIndices: true });
        // h(a, {q, r}) -> {u: p1(a), v: [p2(q, r), 2·sum(r)]}
        const h = (a: Array, t: { q: Array; r: Array }) => ({ u: p1.fn(a), v: [p2.fn(t.q, t.r), np.sum(t.r).mul(2)] });
        const [sa, sq, sr] = [p1.inShapes[0]!, p2.inShapes[0]!, p2.inShapes[1]!];
        let axA = randomAxis(rng, sa.length + 1, 0.25),
          axQ = randomAxis(rng, sq.length + 1, 0.25),
          axR = randomAxis(rng, sr.length + 1, 0.25);
        if (axA === null && axQ === null && axR === null) axA = 0;
        // Prefix form: one axis for the whole {q, r} subtree when both share it.
        const samePrefix = rng.chance(0.3) && axQ !== null && sq.length === sr.length;
        if (samePrefix) axR = axQ;
        const inAxes = [axA, samePrefix ? axQ : { q: axQ, r: axR }];
        const a = randomArray(rng.int(1e9), axA === null ? sa : insertAxis(sa, axA, B));
        const q = randomArray(rng.int(1e9), axQ === null ? sq : insertAxis(sq, axQ, B));
        const r = randomArray(rng.int(1e9), axR === null ? sr : insertAxis(sr, axR, B));
        // Out axes: null is allowed exactly for outputs that do not depend on mapped inputs.
        const outRanks = [p1.outShape.length, p2.outShape.length, 0];
        const batchedOut = [axA !== null, axQ !== null || axR !== null, axR !== null];
        const oAx = outRanks.map((rk, k) => randomAxis(rng, rk + 1, batchedOut[k] ? 0 : 0.6));
        const prefixV = rng.chance(0.3) && oAx[1] !== null && normAxis(oAx[1]!, outRanks[1]! + 1) === 0;
        if (prefixV) oAx[2] = 0;
        const outAxes = { u: oAx[0], v: prefixV ? 0 : [oAx[1], oAx[2]] };
        explain(`inAxes ${JSON.stringify(inAxes)} outAxes ${JSON.stringify(outAxes)} B=${B}`, [p1, p2], () => {
          const got = vmap(h, { inAxes, outAxes })(a, { q, r }) as { u: Array; v: [Array, Array] };
          const loop = range(B).map((i) =>
            h(exampleOf(a, axA, i), { q: exampleOf(q, axQ, i), r: exampleOf(r, axR, i) }),
          );
          expectClose(
            got.u,
            stackResults(
              loop.map((o) => o.u),
              oAx[0]!,
            ),
            exact,
            "u",
          );
          expectClose(
            got.v[0],
            stackResults(
              loop.map((o) => o.v[0]!),
              oAx[1]!,
            ),
            exact,
            "v[0]",
          );
          expectClose(
            got.v[1],
            stackResults(
              loop.map((o) => o.v[1]!),
              oAx[2]!,
            ),
            exact,
            "v[1]",
          );
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("nested vmap with random axes equals a double loop", () => {
    fc.assert(
      fc.property(arbProgram({ maxRank: 2 }), fc.nat(), (p, seed) => {
        const rng = makeRng(seed);
        const S = p.inShapes[0]!;
        const B1 = rng.between(1, 3),
          B2 = rng.between(1, 3);
        const i1 = randomAxis(rng, S.length + 1)!,
          i2 = randomAxis(rng, S.length + 2)!;
        const o1 = randomAxis(rng, p.outShape.length + 1)!,
          o2 = randomAxis(rng, p.outShape.length + 2)!;
        const X = randomArray(seed, insertAxis(insertAxis(S, i1, B1), i2, B2));
        explain(`inner in/out ${i1}/${o1}, outer ${i2}/${o2}`, [p], () => {
          const got = vmap(vmap(p.fn, { inAxes: i1, outAxes: o1 }), { inAxes: i2, outAxes: o2 })(X);
          const ref = stackResults(
            range(B2).map((j) => {
              const Xj = exampleOf(X, i2, j);
              return stackResults(
                range(B1).map((k) => p.fn(exampleOf(Xj, i1, k))),
                o1,
              );
            }),
            o2,
          );
          expectClose(got, ref, exact, "vmap(vmap(f))");
        });
      }),
      { numRuns: RUNS },
    );
  });
});

describe("vmap composes with differentiation", () => {
  /** A scalar loss of a program: Σ f(x)·w with fixed random weights (so gradients are not symmetric). */
  const lossOf = (p: Program, seed: number) => {
    const w = randomArray(seed ^ 0x5bd1e995, p.outShape);
    return (...xs: Array[]) => np.sum(np.mul(p.fn(...xs), w));
  };

  it("vmap(grad(f)) gives per-example gradients equal to a loop of grad(f)", () => {
    fc.assert(
      fc.property(arbProgram(), fc.integer({ min: 1, max: 3 }), fc.nat(), (p, B, seed) => {
        const loss = lossOf(p, seed);
        const xs = randomArray(seed, [B, ...p.inShapes[0]!]);
        explain("vmap(grad)", [p], () => {
          const ref = stackAt(
            range(B).map((i) => grad(loss)(sliceAt(xs, 0, i))),
            0,
          );
          expectClose(vmap(grad(loss))(xs), ref, exact, "vmap(grad(f))");
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("grad of a function that calls vmap equals a loop (mapped inputs and a broadcast parameter)", () => {
    fc.assert(
      fc.property(arbProgram({ nInputs: 2, maxRank: 2 }), fc.integer({ min: 1, max: 3 }), fc.nat(), (p, B, seed) => {
        const [S0, S1] = p.inShapes as [number[], number[]];
        const theta = randomArray(seed + 1, S0);
        const xs = randomArray(seed + 2, [B, ...S1]);
        const W = randomArray(seed + 3, [B, ...p.outShape]);
        // L(theta, xs) = Σ_i Σ f(theta, x_i)·W_i ; theta is broadcast (inAxes null), xs mapped.
        const L = (th: Array, x: Array) => np.sum(np.mul(vmap(p.fn, { inAxes: [null, 0] })(th, x), W));
        const li = (i: number) => (th: Array, x: Array) => np.sum(np.mul(p.fn(th, x), sliceAt(W, 0, i)));
        explain("grad(vmap)", [p], () => {
          const [gTheta, gXs] = grad(L, { argnums: [0, 1] })(theta, xs) as [Array, Array];
          const per = range(B).map((i) => grad(li(i), { argnums: [0, 1] })(theta, sliceAt(xs, 0, i)) as [Array, Array]);
          const refTheta = per.map((g) => g[0]).reduce((s, g) => np.add(s, g));
          expectClose(gTheta, refTheta, { rtol: 1e-9, atol: 1e-12 }, "d/dtheta (summed over the batch)");
          expectClose(
            gXs,
            stackAt(
              per.map((g) => g[1]),
              0,
            ),
            exact,
            "d/dxs (per example)",
          );
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("jvp of vmap equals a loop of jvp", () => {
    fc.assert(
      fc.property(arbProgram(), fc.integer({ min: 1, max: 3 }), fc.nat(), (p, B, seed) => {
        const xs = randomArray(seed, [B, ...p.inShapes[0]!]);
        const ts = randomArray(seed + 7, xs.shape);
        explain("jvp(vmap)", [p], () => {
          const [out, tout] = jvp(vmap(p.fn), [xs], [ts]) as [Array, Array];
          const per = range(B).map((i) => jvp(p.fn, [sliceAt(xs, 0, i)], [sliceAt(ts, 0, i)]) as [Array, Array]);
          expectClose(
            out,
            stackAt(
              per.map((r) => r[0]),
              0,
            ),
            exact,
            "primal",
          );
          expectClose(
            tout,
            stackAt(
              per.map((r) => r[1]),
              0,
            ),
            exact,
            "tangent",
          );
        });
      }),
      { numRuns: RUNS },
    );
  });
});

describe("vmap errors", () => {
  const ones = (shape: number[]) => np.ones(shape, { dtype: "float64" });

  it("names both sizes and the inputs when batch sizes disagree", () => {
    const f = (a: Array, b: Array) => a.add(b);
    expect(() => vmap(f)(ones([3, 2]), ones([4, 2]))).toThrow(
      /vmap: batched arguments have different sizes along their mapped axes \(3 vs 4\)/,
    );
    expect(() => vmap(f)(ones([3, 2]), ones([4, 2]))).toThrow(/f64\[3,2\]@0, f64\[4,2\]@0/);
    // the mapped axis counts, not axis 0; pytree arguments too
    expect(() =>
      vmap((t: { a: Array; b: Array }) => t.a.sum().add(t.b.sum()), { inAxes: [{ a: 1, b: 0 }] })({
        a: ones([2, 5]),
        b: ones([2, 3]),
      }),
    ).toThrow(/different sizes along their mapped axes \(5 vs 2\)/);
    // inside grad the message is the same
    expect(() => grad((x: Array) => vmap(f)(x, ones([4])).sum())(ones([3]))).toThrow(/\(3 vs 4\)/);
    // an explicit axisSize that disagrees with the data
    expect(() => vmap((x: Array) => x, { axisSize: 5 })(ones([3]))).toThrow(/\(5 vs 3\)/);
  });

  it("rejects out-of-range axes, a null outAxes for a batched output and mismatched axis trees", () => {
    expect(() => vmap((x: Array) => x, { inAxes: 2 })(ones([3, 2]))).toThrow(
      /vmap inAxes: axis 2 is out of range for an array of rank 2/,
    );
    expect(() => vmap((x: Array) => x, { inAxes: 0 })(np.array(1, { dtype: "float64" }))).toThrow(
      /cannot map axis 0 of a scalar/,
    );
    expect(() => vmap((x: Array) => x, { outAxes: null })(ones([3]))).toThrow(/outAxes entry is null/);
    expect(() => vmap((x: Array) => x, { outAxes: 3 })(ones([3, 2]))).toThrow(/vmap outAxes: axis 3 is out of range/);
    expect(() => vmap((a: Array, b: Array) => a.add(b), { inAxes: [0] })(ones([3]), ones([3]))).toThrow(
      /vmap inAxes: a list of 1 entries/,
    );
    expect(() => vmap((x: Array) => x, { inAxes: null })(ones([3]))).toThrow(/no argument is mapped/);
  });
});
