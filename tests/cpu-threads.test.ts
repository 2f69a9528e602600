/**
 * The CPU kernels' worker threads (src/core/compile/threads.ts) from the outside: the thread count
 * is validated and set through init, a kernel whose imported functions cannot be rebuilt in a
 * worker keeps to one thread (with the same results), and a big kernel's results are the same
 * bits on one thread and on two with the default thresholds. (Every kernel form on 1, 2 and 3
 * threads against the JavaScript kernels: tests/wasm-kernels.test.ts.)
 */
import { afterAll, describe, expect, it } from "vitest";
import { init, jit, np, type Array } from "../src/index.js";
import { cpuThreads, importSources, setCpuThreads, threadedRuns } from "../src/core/compile/threads.js";
import { UNARY_OPS } from "../src/core/kernel/scalar-ops.js";
import { randomArray } from "../property-tests/gen/programs.js";

const before = cpuThreads();
afterAll(() => {
  setCpuThreads(before);
});

describe("CPU kernel threads", () => {
  it("a thread count is an integer ≥ 1, set by setCpuThreads or init({ cpuThreads })", async () => {
    expect(() => setCpuThreads(0)).toThrow(/a thread count is an integer ≥ 1, got 0/);
    expect(() => setCpuThreads(1.5)).toThrow(/integer ≥ 1/);
    await init({ backend: "cpu", cpuThreads: 3 });
    expect(cpuThreads()).toBe(3);
    await init({ backend: "cpu", cpuThreads: 1 });
    expect(cpuThreads()).toBe(1);
  });

  it("imports travel to workers as source only when the source rebuilds them exactly", () => {
    expect(importSources({ a: Math.exp, b: Math.atan2 })).toEqual({ a: "Math.exp", b: "Math.atan2" });
    const rem = (a: number, b: number) => a % b;
    expect(importSources({ rem })).toEqual({ rem: rem.toString() });
    // erf calls a helper of its module: a worker could not rebuild it from its source.
    expect(importSources({ e: UNARY_OPS.erf.eval as (x: number) => number })).toBeNull();
  });

  it("a big kernel gives the same bits on one thread and on two (default thresholds), and ran threaded", () => {
    const x = randomArray(5, [400_000]);
    const w = randomArray(6, [400_000]);
    const idx = np.array(
      globalThis.Array.from({ length: 400_000 }, (_, i) => (i * 7919) % 1000),
      { dtype: "int32" },
    );
    // ~20 float operations per element (above the 2M-operation threshold; one exp, which workers call as Math.exp),
    // scatter-added into 1,000 bins.
    const f = jit((a: Array, b: Array) => {
      const r = np.div(np.sub(a, b), np.add(np.square(a), 1));
      const y = np.add(np.mul(np.sqrt(np.abs(np.mul(a, b))), r), np.mul(np.maximum(a, b), np.minimum(r, 0.5)));
      return [y, np.scatterAdd(np.zeros([1000], { dtype: "float64" }), idx, np.mul(y, np.exp(np.mul(b, 0.01))))];
    });
    const run = (t: number) => {
      setCpuThreads(t);
      return (f(x, w) as Array[]).map((r) => [...r.dataSync()]);
    };
    const one = run(1);
    const runs0 = threadedRuns();
    const two = run(2);
    expect(threadedRuns()).toBeGreaterThan(runs0);
    expect(two).toEqual(one);
  });
});
