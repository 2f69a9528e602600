/**
 * x.atIndex(i).set/add/mul/min/max (JAX's x.at[i]): values against a host loop with numpy's
 * semantics for repeated indices (set: the last update; add, mul, min, max: every update), on
 * both paths (indices known on the host, and traced under jit, where every index meets every
 * row); gradients against central differences; vmap (over x, v and the indices) against a loop.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { grad, jit, np, vmap, type Array } from "../src/index.js";
import { checkGrads, makeRng } from "./gradcheck.js";
import { expectClose, sliceAt, stackAt } from "./gen/check.js";
import { randomArray } from "./gen/programs.js";

type Op = "set" | "add" | "mul" | "min" | "max";
const OPS: Op[] = ["set", "add", "mul", "min", "max"];
const i32 = (v: number[]) => np.array(v, { dtype: "int32" });
const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);

/** numpy on the host: rows [N, R], indices along axis 0 (negative from the end), updates [K, R]. */
function reference(op: Op, x: number[], N: number, R: number, idx: number[], u: number[]): number[] {
  const out = [...x];
  idx.forEach((i0, k) => {
    const i = i0 < 0 ? i0 + N : i0;
    for (let r = 0; r < R; r++) {
      const o = i * R + r,
        v = u[k * R + r]!;
      out[o] =
        op === "set"
          ? v
          : op === "add"
            ? out[o]! + v
            : op === "mul"
              ? out[o]! * v
              : op === "min"
                ? Math.min(out[o]!, v)
                : Math.max(out[o]!, v);
    }
  });
  return out;
}
const apply = (op: Op, x: Array, i: Array | number, v: Array): Array => x.atIndex(i)[op](v);

const caseArb = fc
  .record({
    N: fc.integer({ min: 1, max: 5 }),
    R: fc.integer({ min: 1, max: 3 }),
    K: fc.integer({ min: 1, max: 6 }),
    seed: fc.nat(),
  })
  .chain((c) =>
    fc.record({
      c: fc.constant(c),
      idx: fc.array(fc.integer({ min: -c.N, max: c.N - 1 }), { minLength: c.K, maxLength: c.K }),
    }),
  );

describe("x.atIndex(i) updates", () => {
  it("equal numpy's loop for repeated and negative indices, eagerly and traced (jit)", () => {
    fc.assert(
      fc.property(caseArb, ({ c, idx }) => {
        const x = randomArray(c.seed, [c.N, c.R], -2, 2),
          v = randomArray(c.seed + 1, [idx.length, c.R], -2, 2);
        const hx = [...x.dataSync()],
          hv = [...v.dataSync()];
        for (const op of OPS) {
          const want = np.array(reference(op, hx, c.N, c.R, idx, hv), { dtype: "float64" }).reshape([c.N, c.R]);
          expectClose(apply(op, x, i32(idx), v), want, { rtol: 1e-14, atol: 0 }, `${op} eager [${idx}]`);
          expectClose(
            jit((a: Array, i: Array, b: Array) => apply(op, a, i, b))(x, i32(idx), v),
            want,
            { rtol: 1e-14, atol: 0 },
            `${op} traced [${idx}]`,
          );
        }
        expectClose(x.atIndex(i32(idx)).get(), np.take(x, i32(idx.map((i) => (i < 0 ? i + c.N : i))), 0), {}, "get");
      }),
      { numRuns: 40 },
    );
  });

  it("a scalar index, a [row, col] pair, broadcast updates and ints", () => {
    const x = np.arange(12, undefined, 1, { dtype: "float64" }).reshape([3, 4]);
    expect(x.atIndex(1).set(0).toList()).toEqual([
      [0, 1, 2, 3],
      [0, 0, 0, 0],
      [8, 9, 10, 11],
    ]);
    expect(x.atIndex(-1).add([1, 2, 3, 4]).toList()).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [9, 11, 13, 15],
    ]);
    expect(x.atIndex([2, 1]).set(-1).toList()).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, -1, 10, 11],
    ]);
    expect(
      x
        .atIndex([
          [0, 2],
          [3, 0],
        ])
        .mul(10)
        .toList(),
    ).toEqual([
      [0, 1, 2, 30],
      [4, 5, 6, 7],
      [80, 9, 10, 11],
    ]);
    expect(
      (
        x
          .atIndex([i32([0, 0]), i32([1, 1])])
          .add(1)
          .toList() as number[][]
      )[0],
    ).toEqual([0, 3, 2, 3]); // repeated: accumulates
    expect(x.atIndex([1, 2]).get().item()).toBe(6);
    const ints = np.array([5, 6, 7], { dtype: "int32" });
    const m = ints.atIndex(i32([0, 0, 2])).min(i32([4, 1, 9]));
    expect(m.dtype).toBe("int32");
    expect(m.toList()).toEqual([1, 6, 7]);
    expect(
      ints
        .atIndex(i32([2, 2]))
        .set(i32([1, 2]))
        .toList(),
    ).toEqual([5, 6, 2]); // last write wins
  });

  it("gradients in x and v agree with central differences (to second order; repeated indices too)", () => {
    fc.assert(
      fc.property(caseArb, ({ c, idx }) => {
        const rng = makeRng(c.seed);
        const x = randomArray(c.seed, [c.N, c.R], 0.5, 2),
          v = randomArray(c.seed + 1, [idx.length, c.R], -2, -0.5);
        for (const op of OPS) {
          // min/max: x ∈ [0.5, 2], v ∈ [−2, −0.5] and their negations keep every comparison far from a tie.
          const vv = op === "max" ? np.neg(v) : v;
          const shifted = op === "max" ? np.neg(x) : x;
          checkGrads((a, b) => apply(op, a, i32(idx), b), [shifted, vv], op === "min" || op === "max" ? 1 : 2, rng);
        }
      }),
      { numRuns: 15 },
    );
  });

  it("vmap over x, v and the indices equals a loop", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), caseArb, (B, { c, idx }) => {
        const xs = randomArray(c.seed, [B, c.N, c.R]),
          vs = randomArray(c.seed + 2, [B, idx.length, c.R]);
        const is = i32(range(B).flatMap((b) => idx.map((i) => (i + b) % c.N))).reshape([B, idx.length]);
        for (const op of OPS) {
          const f = (a: Array, i: Array, b: Array) => apply(op, a, i, b);
          const loop = stackAt(
            range(B).map((b) => f(sliceAt(xs, 0, b), sliceAt(is, 0, b), sliceAt(vs, 0, b))),
            0,
          );
          expectClose(vmap(f)(xs, is, vs), loop, { rtol: 1e-14, atol: 0 }, `vmap ${op}`);
          expectClose(
            vmap((a: Array, b: Array) => f(a, i32(idx), b))(xs, vs),
            stackAt(
              range(B).map((b) => f(sliceAt(xs, 0, b), i32(idx), sliceAt(vs, 0, b))),
              0,
            ),
            { rtol: 1e-14, atol: 0 },
            `vmap ${op} (fixed indices)`,
          );
        }
      }),
      { numRuns: 15 },
    );
  });

  it("grad of a loss through set: the overwritten entries get no gradient, the updates get theirs", () => {
    const x = np.array([1, 2, 3], { dtype: "float64" });
    const g = grad((a: Array, b: Array) => np.sum(np.square(a.atIndex(i32([0, 0])).set(b))), { argnums: [0, 1] })(
      x,
      np.array([5, 7], { dtype: "float64" }),
    );
    expect(g[0].toList()).toEqual([0, 4, 6]);
    expect(g[1].toList()).toEqual([0, 14]); // the first of the repeated updates is overwritten
  });

  it("bad input: clear errors", () => {
    const x = np.zeros([3, 2]);
    expect(() => x.atIndex(3).set(1)).toThrow(/atIndex: index 3 is out of bounds for axis 0 with size 3/);
    expect(() => x.atIndex(i32([0, -4])).set(1)).toThrow(/index -4 is out of bounds for axis 0 with size 3/);
    expect(() => x.atIndex(np.array([0.5])).set(1)).toThrow(/must be int32/);
    expect(() => x.atIndex([0, 0, 0]).set(1)).toThrow(/3 indices for f32\[3,2\]/);
    expect(() => x.atIndex(i32([0, 1])).set(np.ones([3, 2]))).toThrow(
      /does not broadcast to the indexed region \[2,2\]/,
    );
  });
});
