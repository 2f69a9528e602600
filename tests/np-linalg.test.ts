/**
 * np.linalg (solve, inv, det, slogdet, cholesky): closed forms and identities (A·solve(A, b) = b,
 * A·inv(A) = I, det of 2×2/triangular/permutation matrices, det(AB) = det A·det B, L·Lᵀ = A),
 * gradients against central differences and closed forms (∇ log|det A| = A⁻ᵀ, Jacobi's formula),
 * batching (leading axes, broadcasting, vmap vs loop), jit against eager, and the errors
 * (singular, not positive definite, not square, WebGPU).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { grad, init, jit, np, vmap, type Array } from "../src/index.js";
import { checkGrads, makeRng } from "../property-tests/gradcheck.js";
import { randomArray } from "../property-tests/gen/programs.js";
import { expectClose } from "../property-tests/gen/check.js";

const { linalg } = np;
const f64 = (v: unknown) => np.array(v, { dtype: "float64" });
const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);
/** A well-conditioned batch: uniform entries plus 3·I. */
const wellConditioned = (seed: number, shape: number[]): Array =>
  np.add(randomArray(seed, shape, -1, 1), np.eye(shape[shape.length - 1]!, undefined, { dtype: "float64" }).mul(3));
const spd = (seed: number, shape: number[]): Array => {
  const m = randomArray(seed, shape, -1, 1);
  return np.add(
    np.matmul(m, np.swapaxes(m, -1, -2)),
    np.eye(shape[shape.length - 1]!, undefined, { dtype: "float64" }).mul(shape[shape.length - 1]!),
  );
};
const batchArb = fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 });
const nArb = fc.integer({ min: 1, max: 4 });

describe("np.linalg values", () => {
  it("A·solve(A, B) = B and A·inv(A) = I, batched, with broadcast leading axes and vector b", () => {
    fc.assert(
      fc.property(batchArb, nArb, fc.integer({ min: 1, max: 3 }), fc.nat(), (b, n, k, seed) => {
        const A = wellConditioned(seed, [...b, n, n]);
        const B = randomArray(seed + 1, [...b, n, k]);
        expectClose(np.matmul(A, linalg.solve(A, B)), B, { rtol: 1e-12, atol: 1e-12 }, "A·solve(A, B)");
        const eye = np.broadcastTo(np.eye(n, undefined, { dtype: "float64" }), A.shape);
        expectClose(np.matmul(A, linalg.inv(A)), eye, { rtol: 1e-12, atol: 1e-12 }, "A·inv(A)");
        const v = randomArray(seed + 2, [n]);
        const x = linalg.solve(A, v); // numpy 2: a 1-D b is a vector, broadcast over A's batch
        expect(x.shape).toEqual([...b, n]);
        expectClose(
          np.matmul(A, x.expandDims(-1)).squeeze(-1),
          np.broadcastTo(v, x.shape),
          { rtol: 1e-12, atol: 1e-12 },
          "A·solve(A, v)",
        );
        const one = linalg.solve(
          A.reshape([-1, n, n]).take(0, 0),
          np.broadcastTo(B.reshape([-1, n, k]).take(0, 0), [2, n, k]),
        );
        expect(one.shape).toEqual([2, n, k]); // one matrix, a batch of right-hand sides
      }),
      { numRuns: 30 },
    );
  });

  it("det and slogdet: closed forms and det(AB) = det A · det B", () => {
    expect(
      linalg
        .det(
          f64([
            [3, 8],
            [4, 6],
          ]),
        )
        .item(),
    ).toBeCloseTo(3 * 6 - 8 * 4, 12);
    expect(
      linalg
        .det(
          f64([
            [2, 5, 7],
            [0, -3, 1],
            [0, 0, 0.5],
          ]),
        )
        .item(),
    ).toBeCloseTo(-3, 12);
    expect(
      linalg
        .det(
          f64([
            [0, 1, 0],
            [1, 0, 0],
            [0, 0, 1],
          ]),
        )
        .item(),
    ).toBeCloseTo(-1, 12); // one swap
    const [s, l] = linalg.slogdet(
      f64([
        [
          [-2, 0],
          [0, 3],
        ],
        [
          [1, 2],
          [2, 4],
        ],
      ]),
    );
    expect(s.toList()).toEqual([-1, 0]);
    expect((l.toList() as number[])[0]).toBeCloseTo(Math.log(6), 12);
    expect((l.toList() as number[])[1]).toBe(-Infinity); // singular: numpy's (0, −inf)
    expect(
      linalg
        .det(
          f64([
            [1, 2],
            [2, 4],
          ]),
        )
        .item(),
    ).toBe(0);
    fc.assert(
      fc.property(batchArb, nArb, fc.nat(), (b, n, seed) => {
        const A = randomArray(seed, [...b, n, n], -2, 2),
          B = randomArray(seed + 1, [...b, n, n], -2, 2);
        expectClose(
          linalg.det(np.matmul(A, B)),
          np.mul(linalg.det(A), linalg.det(B)),
          { rtol: 1e-10, atol: 1e-12 },
          "det(AB)",
        );
      }),
      { numRuns: 30 },
    );
    expect(
      linalg.det(
        np.array([
          [1, 2],
          [3, 4],
        ]),
      ).dtype,
    ).toBe("float32"); // float32 and int input on the CPU
    expect(
      linalg
        .det(
          np.array(
            [
              [1, 2],
              [3, 4],
            ],
            { dtype: "int32" },
          ),
        )
        .item(),
    ).toBeCloseTo(-2, 5);
  });

  it("cholesky: the textbook factor, L·Lᵀ = A, lower triangular with a positive diagonal", () => {
    expect(
      linalg
        .cholesky(
          f64([
            [4, 12, -16],
            [12, 37, -43],
            [-16, -43, 98],
          ]),
        )
        .toList(),
    ).toEqual([
      [2, 0, 0],
      [6, 1, 0],
      [-8, 5, 3],
    ]);
    fc.assert(
      fc.property(batchArb, nArb, fc.nat(), (b, n, seed) => {
        const A = spd(seed, [...b, n, n]);
        const L = linalg.cholesky(A);
        expectClose(np.matmul(L, np.swapaxes(L, -1, -2)), A, { rtol: 1e-12, atol: 1e-12 }, "L·Lᵀ");
        const h = L.reshape([-1, n, n]).toList() as number[][][];
        for (const m of h)
          for (let i = 0; i < n; i++) {
            expect(m[i]![i]!).toBeGreaterThan(0);
            for (let j = i + 1; j < n; j++) expect(m[i]![j]).toBe(0);
          }
      }),
      { numRuns: 30 },
    );
  });
});

describe("np.linalg derivatives and transforms", () => {
  it("gradients agree with central differences (float64, to second order)", () => {
    fc.assert(
      fc.property(nArb, fc.nat(), (n, seed) => {
        const rng = makeRng(seed);
        const A = wellConditioned(seed, [n, n]),
          b = randomArray(seed + 1, [n]);
        checkGrads((a, y) => linalg.solve(a, y), [A, b], 2, rng);
        checkGrads((a) => linalg.inv(a), [A], 2, rng);
        // 1×1: det is the entry, its second derivative is 0 up to rounding that the dot-product check cannot scale.
        checkGrads((a) => linalg.det(a), [A], n === 1 ? 1 : 2, rng);
        const M = randomArray(seed + 2, [n, n], -1, 1);
        checkGrads(
          (m) => linalg.cholesky(np.add(np.matmul(m, m.T), np.eye(n, undefined, { dtype: "float64" }).mul(n))),
          [M],
          2,
          rng,
        );
      }),
      { numRuns: 12 },
    );
  });

  it("closed forms: ∇ log|det A| = A⁻ᵀ and ∇ det A = det A · A⁻ᵀ (Jacobi)", () => {
    const A = wellConditioned(7, [2, 3, 3]);
    const invT = np.swapaxes(linalg.inv(A), -1, -2);
    expectClose(grad((a: Array) => np.sum(linalg.slogdet(a)[1]))(A), invT, { rtol: 1e-12, atol: 1e-14 }, "∇ log|det|");
    expectClose(
      grad((a: Array) => np.sum(linalg.det(a)))(A),
      np.mul(linalg.det(A).reshape([2, 1, 1]), invT),
      { rtol: 1e-12, atol: 1e-14 },
      "∇ det",
    );
  });

  it("vmap equals a loop and jit equals eager (values and gradients)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), nArb, fc.nat(), (B, n, seed) => {
        const As = wellConditioned(seed, [B, n, n]),
          bs = randomArray(seed + 1, [B, n]);
        const Ss = spd(seed + 2, [B, n, n]);
        const fns: [string, (a: Array, y: Array, s: Array) => Array][] = [
          ["solve", (a, y) => linalg.solve(a, y)],
          ["inv", (a) => linalg.inv(a)],
          ["det", (a) => linalg.det(a)],
          ["slogdet", (a) => linalg.slogdet(a)[1]],
          ["cholesky", (_a, _y, s) => linalg.cholesky(s)],
        ];
        for (const [name, f] of fns) {
          const loop = np.stack(range(B).map((i) => f(As.take(i, 0), bs.take(i, 0), Ss.take(i, 0))));
          expectClose(vmap(f)(As, bs, Ss), loop, { rtol: 1e-13, atol: 1e-14 }, `vmap ${name}`);
          expectClose(
            jit(f)(As.take(0, 0), bs.take(0, 0), Ss.take(0, 0)),
            f(As.take(0, 0), bs.take(0, 0), Ss.take(0, 0)),
            { rtol: 1e-13, atol: 1e-14 },
            `jit ${name}`,
          );
          const L = (a: Array, y: Array, s: Array) => np.sum(np.sin(f(a, y, s)));
          const g = grad(L, { argnums: [0, 1, 2] });
          const items = range(B).map((i) => g(As.take(i, 0), bs.take(i, 0), Ss.take(i, 0)));
          const gv = vmap(g)(As, bs, Ss),
            gj = jit(g)(As.take(0, 0), bs.take(0, 0), Ss.take(0, 0));
          items[0]!.forEach((x, k) => expectClose(gj[k]!, x, { rtol: 1e-12, atol: 1e-13 }, `jit(grad) ${name}`));
          gv.forEach((x, k) =>
            expectClose(x, np.stack(items.map((it) => it[k]!)), { rtol: 1e-12, atol: 1e-13 }, `vmap(grad) ${name}`),
          );
        }
      }),
      { numRuns: 10 },
    );
  });
});

describe("np.linalg errors", () => {
  it("singular, not positive definite, not square, mismatched b", () => {
    expect(() =>
      linalg.solve(
        f64([
          [1, 2],
          [2, 4],
        ]),
        f64([1, 1]),
      ),
    ).toThrow(/linalg.solve: matrix 0 of the batch \(2×2\) is singular/);
    expect(() =>
      linalg.inv(
        f64([
          [
            [1, 0],
            [0, 1],
          ],
          [
            [0, 0],
            [0, 0],
          ],
        ]),
      ),
    ).toThrow(/matrix 1 of the batch \(2×2\) is singular/);
    expect(() =>
      linalg.cholesky(
        f64([
          [1, 2],
          [2, 1],
        ]),
      ),
    ).toThrow(/linalg.cholesky: matrix 0 of the batch \(2×2\) is not positive definite \(pivot 1 is -3\)/);
    expect(() =>
      linalg.det(
        f64([
          [1, 2, 3],
          [4, 5, 6],
        ]),
      ),
    ).toThrow(/np.linalg.det: expected square matrices in the last two axes \(\[..., n, n\]\), got f64\[2,3\]/);
    expect(() =>
      linalg.solve(
        f64([
          [1, 0],
          [0, 1],
        ]),
        f64([1, 2, 3]),
      ),
    ).toThrow(/np.linalg.solve: b must be \[2\] or \[..., 2, k\]/);
    expect(() =>
      linalg.solve(
        f64([
          [
            [1, 0],
            [0, 1],
          ],
          [
            [1, 0],
            [0, 1],
          ],
        ]),
        f64([
          [[1], [2]],
          [[1], [2]],
          [[1], [2]],
        ]),
      ),
    ).toThrow(/np.linalg.solve \(leading axes\)/);
  });

  it.runIf(process.platform === "linux")(
    "on WebGPU: a clear refusal (no kernels), not a silent wrong answer",
    async () => {
      let gpu = true;
      try {
        await init({ backend: "webgpu" });
      } catch (e) {
        if (process.env.CI === "true") throw e;
        gpu = false;
      }
      try {
        if (!gpu) return;
        const a = np.array(
          [
            [2, 1],
            [1, 3],
          ],
          { backend: "webgpu" },
        );
        expect(() => linalg.solve(a, np.array([1, 2], { backend: "webgpu" }))).toThrow(
          /linalg.solve has no WebGPU implementation .*compute it on the CPU/,
        );
        expect(() => jit((m: Array) => linalg.cholesky(m))(a)).toThrow(/linalg.cholesky has no WebGPU implementation/);
      } finally {
        await init({ backend: "cpu" });
      }
    },
  );
});
