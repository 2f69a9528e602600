/**
 * Consecutive JavaScript kernels of a CPU program run as one function (cpu-program.ts, kernelRuns): the same bits as
 * the eager program, in every kernel mode, at top level and as a scan's step.
 */
import { afterAll, describe, expect, it } from "vitest";
import { jit, lax, np, type Array } from "../src/index.js";
import { cpuProgramFor } from "../src/core/run-ir.js";
import { setCpuKernels, type CpuKernels } from "../src/core/compile/wasm-kernel.js";

/**
 * A vector through sums and broadcasts: a chain of kernels of 1 and 100 iterations, like a rigid step's (a sum over
 * more than 64 terms is a loop, a kernel of its own).
 */
const step = (x: Array): Array => {
  let v = x;
  for (let k = 0; k < 6; k++) {
    const s = np.sum(np.mul(v, v));
    v = np.add(np.mul(np.sin(v), np.sqrt(np.add(s, 1))), np.div(np.max(v), np.add(np.abs(s), 2)));
  }
  return v;
};
const bits = (a: Array): string[] => [...a.dataSync()].map((x) => x.toString());

afterAll(() => {
  setCpuKernels("wasm");
});

describe("runs of JavaScript kernels", () => {
  it("a float32 sum of ≤ 16 terms adds term by term in float32, a longer one in float64: jit and eager alike", () => {
    // 1 + 2^-24 rounds to 1 in float32 (ties to even), so term by term the small terms vanish; in float64 they add up.
    const short = np.array([1, ...globalThis.Array(15).fill(2 ** -24)], { dtype: "float32" });
    const long = np.array([1, ...globalThis.Array(16).fill(2 ** -24)], { dtype: "float32" });
    const f = (v: Array) => np.sum(v);
    expect(f(short).item()).toBe(1);
    expect(f(long).item()).toBe(1 + 16 * 2 ** -24);
    for (const mode of ["js", "wasm", "wasm-f64x2", "wasm-scalar"] as CpuKernels[]) {
      setCpuKernels(mode);
      expect(jit(f)(short).item(), mode).toBe(1);
      expect(jit(f)(long).item(), mode).toBe(1 + 16 * 2 ** -24);
    }
  });

  it("run as one function, with the eager program's bits (top level and a scan's step; float32 and float64)", () => {
    for (const dtype of ["float32", "float64"] as const) {
      const x = np.array(
        globalThis.Array.from({ length: 100 }, (_, i) => Math.sin(i * 0.7) * 0.3),
        { dtype },
      );
      const scanned = (x0: Array) => lax.scan((c: Array, _: Array) => [step(c), c], x0, np.zeros([5]))[0] as Array;
      const want = bits(step(x)),
        wantScan = bits(scanned(x));
      for (const mode of ["js", "wasm", "wasm-f64x2", "wasm-scalar"] as CpuKernels[]) {
        setCpuKernels(mode);
        expect(bits(jit(step)(x)), `${dtype} ${mode}`).toEqual(want);
        expect(bits(jit(scanned)(x)), `${dtype} ${mode} scan`).toEqual(wantScan);
      }
      // The program has several kernels, and they run as one function.
      const prog = cpuProgramFor(jit(step).lower(x).ir);
      expect(prog.spec.steps.length).toBeGreaterThan(6);
      const runs = (prog as unknown as { kernelRuns(m: CpuKernels): { end: Int32Array } }).kernelRuns("js");
      expect(runs.end[0]).toBeGreaterThan(2);
    }
  });
});
