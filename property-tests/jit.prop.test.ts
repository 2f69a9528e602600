/**
 * The CPU jit (src/core/compile) against the op-by-op reference implementations: random
 * programs give the same values and gradients compiled and eagerly, compiled programs are
 * cached per signature, fusion produces the kernels it should, and a long optimisation loop of
 * jitted steps keeps memory flat.
 */
import fc from "fast-check";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { grad, jit, np, valueAndGrad, type Array } from "../src/index.js";
import { cpuProgramFor } from "../src/core/run-ir.js";
import { femEnergy } from "../bench/workloads/fem.js";
import { w4Inputs } from "../bench/peers/lib/data.mjs";
import { expectClose } from "./gen/check.js";
import { arbProgram, randomArray } from "./gen/programs.js";

describe("jit equals eager", () => {
  it("random programs: values (float64)", () => {
    fc.assert(
      fc.property(
        arbProgram({ nInputs: 2, maxSteps: 8, dataIndices: true }),
        fc.integer({ min: 0, max: 1e6 }),
        (p, seed) => {
          const xs = p.inShapes.map((s, i) => randomArray(seed + i, s));
          expectClose(jit(p.fn)(...xs), p.fn(...xs), { rtol: 1e-10, atol: 1e-12 }, `jit vs eager\n${p.text}`);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("random programs: gradients of jitted functions and jitted gradients", () => {
    fc.assert(
      fc.property(
        arbProgram({ nInputs: 1, maxSteps: 7, smooth: true }),
        fc.integer({ min: 0, max: 1e6 }),
        (p, seed) => {
          const x = randomArray(seed, p.inShapes[0]!);
          const L = (v: Array) => np.sum(np.square(p.fn(v)));
          const ref = grad(L)(x);
          expectClose(grad(jit(L))(x), ref, { rtol: 1e-9, atol: 1e-11 }, `grad(jit)\n${p.text}`);
          expectClose(jit(grad(L))(x), ref, { rtol: 1e-9, atol: 1e-11 }, `jit(grad)\n${p.text}`);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("float32 programs agree with float64 within float32 rounding", () => {
    let checked = 0;
    fc.assert(
      fc.property(
        arbProgram({ nInputs: 1, maxSteps: 6, smooth: true }),
        fc.integer({ min: 0, max: 1e6 }),
        (p, seed) => {
          const x64 = randomArray(seed, p.inShapes[0]!);
          const out = jit(p.fn)(x64.astype("float32"));
          if (out.dtype !== "float32") return; // the program's own float64 constants promoted it
          checked++;
          expectClose(out.astype("float64"), p.fn(x64), { rtol: 1e-4, atol: 1e-5 }, `float32 jit\n${p.text}`);
        },
      ),
      { numRuns: 30 },
    );
    expect(checked).toBeGreaterThan(5);
  });
});

describe("compiled program cache", () => {
  it("traces once per signature; a new shape, dtype or static argument traces again", () => {
    let calls = 0;
    const f = jit(
      (x: Array, k: number) => {
        calls++;
        return np.mul(x, k);
      },
      { staticArgnums: [1] },
    );
    const a = np.ones([3]);
    f(a, 2);
    f(a, 2);
    f(np.zeros([3]), 2);
    expect(f.traceCount).toBe(1);
    expect(calls).toBe(1);
    f(np.ones([4]), 2);
    expect(f.traceCount).toBe(2);
    f(a, 3);
    expect(f.traceCount).toBe(3);
    f(np.ones([3], { dtype: "float64" }), 2);
    expect(f.traceCount).toBe(4);
    expect(f(a, 3).toList()).toEqual([3, 3, 3]);
  });
});

describe("fusion", () => {
  it("FEM energy + gradient compiles to one per-tet kernel with the scatter fused, plus a reduction", () => {
    const d = w4Inputs(1000);
    const T = d.T;
    const x = np.array(d.x).reshape([d.N, 3]);
    const tets = np.array(d.tets, { dtype: "int32" }).reshape([T, 4]);
    const DmInv = np.array(d.DmInv).reshape([T, 3, 3]);
    const vol = np.array(d.vol);
    const f = (p: Array) => femEnergy(p, tets, DmInv, vol, d.mu, d.lam);
    const vg = jit(valueAndGrad(f));
    const [E, g] = vg(x) as [Array, Array];
    const [E0, g0] = valueAndGrad(f)(x) as [Array, Array];
    expectClose(E, E0, { rtol: 1e-5 }, "energy");
    expectClose(g, g0, { rtol: 1e-4, atol: 1e-6 }, "gradient");
    const spec = cpuProgramFor(vg.lower(x).ir).spec;
    const kernels = spec.steps.filter((s) => s.kind === "kernel");
    expect(spec.steps.filter((s) => s.kind === "routine")).toEqual([]);
    const perTet = kernels.filter((k) => k.kind === "kernel" && k.loop.reduce((a, b) => a * b, 1) === T);
    expect(perTet.length).toBe(1);
    expect(perTet[0]!.kind === "kernel" && perTet[0]!.accumulators.length).toBe(1);
    expect(kernels.length).toBeLessThanOrEqual(3);
  });

  it("a cheap elementwise chain and its sum become one loop", () => {
    const f = (v: Array) => np.sum(np.add(np.mul(np.square(v), 1.5), np.abs(v)));
    const x = np.linspace(-3, 3, 1000);
    const spec = cpuProgramFor(jit(f).lower(x).ir).spec;
    expect(spec.steps.length).toBe(1);
    expectClose(jit(f)(x), f(x), { rtol: 1e-5 }, "cheap chain");
  });

  it("a chain with transcendental functions is a parallel kernel, its sum another (CPU: in lanes, on threads)", () => {
    const f = (v: Array) =>
      np.sum(np.add(np.mul(np.tanh(np.add(np.mul(v, 1.5), 0.5)), np.exp(np.neg(np.square(v)))), np.sin(v)));
    const x = np.linspace(-3, 3, 1000);
    const spec = cpuProgramFor(jit(f).lower(x).ir).spec;
    expect(spec.steps.length).toBe(2);
    // The same bits as the eager program (the sum in the same order, float32 terms rounded alike).
    expect(jit(f)(x).item()).toBe(f(x).item());
  });
});

/** A real garbage collection (exposed for this process only), so heap readings are live data. */
function gc(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

describe("memory", () => {
  it("an optimisation loop of jitted valueAndGrad steps keeps the heap flat", () => {
    const target = np.linspace(0, 1, 2000);
    const step = jit((p: Array) => {
      const [l, g] = valueAndGrad((q: Array) => np.mean(np.square(np.sub(np.tanh(q), target))))(p) as [Array, Array];
      return [l, np.sub(p, np.mul(g, 100))];
    });
    let p = np.zeros([2000]);
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    for (let i = 0; i < 200; i++) p = (step(p) as Array[])[1]!;
    const before = heap();
    for (let i = 0; i < 3000; i++) p = (step(p) as Array[])[1]!;
    const after = heap();
    // 3000 steps allocate ~100 MB in total; what stays live must not grow with the step count.
    expect(after - before).toBeLessThan(8 << 20);
    expect(step.traceCount).toBe(1);
  });
});
