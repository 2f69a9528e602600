/**
 * The CPU kernels' worker threads (src/core/compile/threads.ts) from the outside: the thread count
 * is validated and set through init, a kernel whose imported functions cannot be rebuilt in a
 * worker keeps to one thread (with the same results), and a big kernel's results are the same
 * bits on one thread and on two with the default thresholds. (Every kernel form on 1, 2 and 3
 * threads against the JavaScript kernels: tests/wasm-kernels.test.ts.)
 */
import { afterAll, describe, expect, it } from "vitest";
import { init, jit, np, type Array } from "../src/index.js";
import {
  cpuThreads,
  importSources,
  setCpuThreads,
  THREAD_MIN_WORK,
  threadedRuns,
  workerPieces,
} from "../src/core/compile/threads.js";
import { gemmF32, type StridedMatrices } from "../src/core/backends/cpu/gemm/index.js";
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

describe("the GEMM on threads", () => {
  it("a batched product's items split over threads give the one-thread bits, every operand layout", () => {
    const batch = 25,
      m = 13,
      k = 70,
      n = 37;
    const A = Float32Array.from({ length: batch * m * k + 5 }, (_, i) => Math.sin(i * 1.7) * 3);
    const B = Float32Array.from({ length: batch * k * n + 5 }, (_, i) => Math.cos(i * 0.37) / (1 + (i % 7)));
    const layouts: [StridedMatrices, StridedMatrices][] = [
      // a convolution's: the kernel shared by every item (batch stride 0), each image's columns
      [
        { data: A, offset: 3, batchStride: 0, rowStride: k, colStride: 1 },
        { data: B, offset: 1, batchStride: k * n, rowStride: n, colStride: 1 },
      ],
      // transposed operands
      [
        { data: A, offset: 0, batchStride: m * k, rowStride: 1, colStride: m },
        { data: B, offset: 2, batchStride: k * n, rowStride: 1, colStride: k },
      ],
    ];
    const before = setCpuThreads(1, { minWork: 0 });
    try {
      for (const [a, b] of layouts) {
        const one = gemmF32(a, b, { batch, m, k, n });
        for (const t of [2, 3]) {
          setCpuThreads(t);
          const runs0 = threadedRuns(),
            pieces0 = workerPieces();
          let same = true;
          // Workers start late the first time, and on a busy machine may not be scheduled before this thread has
          // taken every piece: run until they have taken some (at most 10 s).
          const t0 = performance.now();
          while (workerPieces() === pieces0 && performance.now() - t0 < 10_000) {
            const got = gemmF32(a, b, { batch, m, k, n });
            same &&= got.every((v, j) => Object.is(v, one[j]));
          }
          expect(threadedRuns()).toBeGreaterThan(runs0);
          expect(workerPieces(), "no worker took a piece").toBeGreaterThan(pieces0);
          expect(same, `${t} threads`).toBe(true);
        }
      }
    } finally {
      setCpuThreads(before, { minWork: THREAD_MIN_WORK });
    }
  });
});
