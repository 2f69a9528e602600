/**
 * Reverse mode through a scan whose body is cheap to recompute (fusible ops only) stores just each
 * step's carry and recomputes the residuals in the backward step (src/transforms/scan-remat.ts).
 * Gradients (first and second order, jit or not) equal the stored-residual path and central
 * differences; the primal scan of a cheap body emits only its carries, of an expensive body
 * (matrix product, nested scan) the residuals as before.
 */
import { afterEach, describe, expect, it } from "vitest";
import { grad, jit, jvp, lax, makeIR, np, type Array } from "../src/index.js";
import type { IR } from "../src/core/ir.js";
import { cheapToRecompute, setScanResiduals, type ScanResiduals } from "../src/transforms/scan-remat.js";
import { f64, hostOf, numericalJvp } from "../property-tests/gradcheck.js";

const N = 6,
  T = 5;
const tets = np.array([0, 1, 2, 3, 2, 3, 4, 5, 5, 0, 1, 4], { dtype: "int32" });
const ramp = (n: number, s: number, shape: number[]) =>
  f64(
    globalThis.Array.from({ length: n }, (_, i) => Math.sin(1 + i * s)),
    shape,
  );

/** An FEM-like substep: gather per element, nonlinear per-element math, scatter-add back, a smooth ground. */
function rollout(theta: Array, x0: Array, reverse = false): Array {
  const drive = ramp(T * N, 0.37, [T, N]);
  const [c] = lax.scan(
    (c: { x: Array; v: Array }, d: Array): [{ x: Array; v: Array }, Array] => {
      const e = np.reshape(np.take(c.x, np.reshape(tets, [-1])), [3, 4]);
      const stretch = np.sub(np.take(e, [1, 2, 3], 1), np.take(e, [0, 0, 0], 1));
      const energy = np.mul(theta, np.tanh(np.sum(np.square(stretch), 1)));
      const f = np.scatterAdd(
        np.zeros([N], { dtype: "float64" }),
        np.reshape(tets, [3, 4]),
        np.broadcastTo(np.reshape(np.sin(energy), [3, 1]), [3, 4]),
      );
      const ground = np.mul(0.5, np.add(np.neg(c.x), np.sqrt(np.add(np.square(c.x), 1e-2))));
      const v = np.add(c.v, np.mul(0.05, np.add(np.add(f, ground), d)));
      return [{ x: np.add(c.x, np.mul(0.05, v)), v }, np.sum(np.exp(np.mul(0.1, v)))];
    },
    { x: x0, v: np.mul(0.5, x0) },
    drive,
    { reverse },
  );
  return np.sum(np.square(c.x));
}

const theta0 = f64([0.7, -0.4, 1.3], [3]),
  xInit = ramp(N, 0.9, [N]);
const withPolicy = <R>(p: ScanResiduals, f: () => R): R => {
  const prev = setScanResiduals(p);
  try {
    return f();
  } finally {
    setScanResiduals(prev);
  }
};
afterEach(() => {
  setScanResiduals("auto");
});

const close = (a: Float64Array, b: Float64Array, rtol: number) => {
  const scale = Math.max(...b.map(Math.abs));
  a.forEach((v, i) => expect(Math.abs(v - b[i]!)).toBeLessThanOrEqual(rtol * scale + 1e-300));
};

/** Per-step elements the forward scans of f's gradient emit beside their carries. */
function storedPerStep(ir: IR): number {
  let n = 0;
  for (const e of ir.eqns) {
    if (e.prim.name !== "scan") continue;
    const p = e.params as { nCarry: number; length: number; reverse: boolean };
    if (!p.reverse) n += e.outs.slice(p.nCarry).reduce((s, v) => s + v.aval.size / p.length, 0);
  }
  return n;
}

describe("scan residuals: recompute from the carry", () => {
  it("gives the stored-residual gradient and central differences, forward and reversed, jit or not", () => {
    for (const reverse of [false, true]) {
      const f = (th: Array, x: Array) => rollout(th, x, reverse);
      const g = (p: ScanResiduals, j: boolean) =>
        withPolicy(
          p,
          () => (j ? jit(grad(f, { argnums: [0, 1] })) : grad(f, { argnums: [0, 1] }))(theta0, xInit) as Array[],
        ).map(hostOf);
      const stored = g("store", false),
        recomputed = g("recompute", false),
        jitted = g("recompute", true);
      stored.forEach((s, k) => {
        close(recomputed[k]!, s, 1e-12);
        close(jitted[k]!, s, 1e-12);
      });
      const dir = [ramp(3, 0.5, [3]), ramp(N, 0.2, [N])];
      const fd = numericalJvp(f, [theta0, xInit], dir, 1e-6)[0]![0]!;
      const ad = recomputed.reduce((s, gk, k) => s + gk.reduce((t, v, i) => t + v * hostOf(dir[k]!)[i]!, 0), 0);
      expect(Math.abs(ad - fd)).toBeLessThanOrEqual(1e-6 * Math.abs(fd));
    }
  });

  it("second order (jvp of grad) agrees between the two", () => {
    const hvp = (p: ScanResiduals) =>
      withPolicy(
        p,
        () =>
          jvp(
            (th: Array) => grad((t: Array) => rollout(t, xInit))(th) as Array,
            [theta0],
            [f64([1, 0.5, -1], [3])],
          )[1] as Array,
      );
    close(hostOf(hvp("recompute")), hostOf(hvp("store")), 1e-10);
  });

  it("a cheap body's forward scan stores only its carries; a matrix-product body stores residuals", () => {
    const cheap = withPolicy("recompute", () => makeIR(grad((th: Array) => rollout(th, xInit)))(theta0).ir);
    expect(storedPerStep(cheap)).toBe(1 + 2 * N); // its own y, and the x and v entering each step
    const storedIR = withPolicy("store", () => makeIR(grad((th: Array) => rollout(th, xInit)))(theta0).ir);
    expect(storedPerStep(storedIR)).toBeGreaterThan(4 * N);
    // "auto" recomputes only bodies with at least REMAT_MIN_SCALARS intermediates: this small one stores.
    const auto = withPolicy("auto", () => makeIR(grad((th: Array) => rollout(th, xInit)))(theta0).ir);
    expect(storedPerStep(auto)).toBe(storedPerStep(storedIR));
    const W = ramp(32 * 32, 0.11, [32, 32]);
    const mlp = (w: Array) =>
      np.sum(
        lax.scan((h: Array, _x: null): [Array, null] => [np.tanh(np.matmul(w, h)), null], ramp(32, 0.3, [32]), null, {
          length: 3,
        })[0],
      );
    const mm = withPolicy("auto", () => makeIR(grad(mlp))(W).ir);
    expect(storedPerStep(mm)).toBeGreaterThan(32);
  });

  it("classifies bodies: fusible ops and small contractions are cheap; matrix products and loops are not", () => {
    const bodyOf = (f: (c: Array) => Array, c: Array) => {
      const ir = makeIR(
        (c0: Array) => lax.scan((c1: Array, _x: null): [Array, null] => [f(c1), null], c0, null, { length: 2 })[0],
      )(c).ir;
      return (ir.eqns.find((e) => e.prim.name === "scan")!.params as { body: IR }).body;
    };
    const m3 = ramp(12, 0.4, [4, 3]);
    expect(cheapToRecompute(bodyOf((c) => np.sin(np.mul(c, c)), m3))).toBe(true);
    expect(
      cheapToRecompute(
        bodyOf(
          (c) =>
            np
              .matmul(np.reshape(c, [4, 3, 1]), np.reshape(c, [4, 1, 3]))
              .reshape([4, 9])
              .sum(1)
              .reshape([4, 1])
              .mul(c),
          m3,
        ),
      ),
    ).toBe(true);
    const big = ramp(64 * 64, 0.1, [64, 64]);
    expect(cheapToRecompute(bodyOf((c) => np.matmul(c, c), big))).toBe(false);
    expect(
      cheapToRecompute(
        bodyOf(
          (c) => lax.scan((a: Array, _x: null): [Array, null] => [np.sin(a), null], c, null, { length: 2 })[0],
          m3,
        ),
      ),
    ).toBe(false);
  });
});
