/**
 * Shared setup of the WebGPU tests: the backend is initialised once per test file; without an
 * adapter the webgpu suites are skipped, except with CI=true, where a missing adapter fails
 * the run (CI has Mesa's lavapipe). Results are compared with the CPU reference (float64) to
 * float32 tolerance.
 */
import { describe, expect, it } from "vitest";
import { init, type Array } from "../src/index.js";
import { fromTyped } from "../src/core/create.js";
import type { DType } from "../src/core/dtype.js";
import { webgpuErrors } from "../src/core/backends/webgpu/index.js";

async function detect(): Promise<boolean> {
  try {
    await init({ backend: "webgpu" });
    return true;
  } catch (e) {
    if (process.env.CI === "true") {
      throw new Error(
        `CI=true: the WebGPU tests need an adapter (Mesa lavapipe on CI; set XDG_RUNTIME_DIR), ` +
          `but init failed: ${(e as Error).message}`,
      );
    }
    return false;
  }
}

/** True when a WebGPU adapter exists (the default backend is then webgpu). */
export const hasWebGPU: boolean = await detect();
/**
 * describe() for webgpu suites; without an adapter the body is not even run (it creates webgpu
 * arrays while collecting), a placeholder test reports the skip.
 */
export const describeGpu = (name: string, body: () => void): void => {
  if (hasWebGPU) describe(name, body);
  else
    describe.skip(name, () => {
      it("needs a WebGPU adapter", () => {});
    });
};

/** Deterministic float32-representable samples in [lo, hi). */
export function samples(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  let s = (seed * 2654435761) >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = lo + ((s >>> 0) / 4294967296) * (hi - lo);
  }
  return out;
}
export function intSamples(n: number, seed: number, lo: number, hi: number): Int32Array {
  return Int32Array.from(samples(n, seed, 0, 1), (u) => lo + Math.floor(u * (hi - lo)));
}

/** The same data on webgpu (float32) and on the CPU (float64 for floats): the pair a test compares. */
export interface Pair {
  readonly gpu: Array;
  readonly cpu: Array;
}
export function pair(
  data: Float32Array | Int32Array | Uint8Array | readonly number[],
  shape: readonly number[],
  dtype: DType = "float32",
): Pair {
  const typed =
    dtype === "float32"
      ? Float32Array.from(data as ArrayLike<number>)
      : dtype === "int32"
        ? Int32Array.from(data as ArrayLike<number>)
        : Uint8Array.from(data as ArrayLike<number>);
  const cpuTyped = dtype === "float32" ? Float64Array.from(typed) : typed;
  return {
    gpu: fromTyped(typed, shape, dtype, { backend: "webgpu" }),
    cpu: fromTyped(cpuTyped, shape, dtype === "float32" ? "float64" : dtype, { backend: "cpu" }),
  };
}
export const randPair = (shape: readonly number[], seed: number, lo = -1, hi = 1): Pair =>
  pair(
    samples(
      shape.reduce((a, b) => a * b, 1),
      seed,
      lo,
      hi,
    ),
    shape,
  );

export interface Tolerance {
  readonly rtol?: number;
  readonly atol?: number;
}

/**
 * webgpu result vs CPU reference: same shape; float32 vs float64 within
 * |g − c| ≤ atol·max(1, max|c|) + rtol·|c| (NaN matches NaN, ±Inf must match); ints and bools exactly.
 */
export async function expectMatch(gpu: Array, cpu: Array, tol: Tolerance = {}, label = ""): Promise<void> {
  const where = label ? ` (${label})` : "";
  expect(gpu.shape, `shape${where}`).toEqual(cpu.shape);
  const wantDType = cpu.dtype === "float64" ? "float32" : cpu.dtype;
  expect(gpu.dtype, `dtype${where}`).toBe(wantDType);
  expect((gpu as { backend?: { name: string } }).backend?.name, `backend${where}`).toBe("webgpu");
  const g = await gpu.data();
  const c = cpu.dataSync();
  expect(g.length).toBe(c.length);
  const bad: string[] = [];
  if (wantDType !== "float32") {
    for (let i = 0; i < c.length && bad.length < 5; i++)
      if (Number(g[i]) !== Number(c[i])) bad.push(`[${i}] webgpu ${g[i]} cpu ${c[i]}`);
  } else {
    const rtol = tol.rtol ?? 2e-6,
      atol = tol.atol ?? 2e-6;
    let scale = 1;
    for (let i = 0; i < c.length; i++) if (Number.isFinite(c[i]!)) scale = Math.max(scale, Math.abs(c[i]!));
    for (let i = 0; i < c.length && bad.length < 5; i++) {
      const a = g[i]!,
        b = c[i]!;
      if (Number.isNaN(b)) {
        if (!Number.isNaN(a)) bad.push(`[${i}] webgpu ${a} cpu NaN`);
        continue;
      }
      if (!Number.isFinite(b)) {
        if (a !== b) bad.push(`[${i}] webgpu ${a} cpu ${b}`);
        continue;
      }
      // The reference rounded to float32 is what float32 can represent at best.
      const bf = Math.fround(b);
      if (!(Math.abs(a - b) <= atol * scale + rtol * Math.abs(b)) && a !== bf)
        bad.push(`[${i}] webgpu ${a} cpu ${b} (diff ${Math.abs(a - b).toExponential(2)})`);
    }
  }
  expect(bad, `mismatches${where}`).toEqual([]);
}

/** Bit-level equality of two webgpu results (determinism). */
export async function expectIdentical(a: Array, b: Array): Promise<void> {
  const x = await a.data(),
    y = await b.data();
  expect(new Uint8Array(x.buffer, x.byteOffset, x.byteLength)).toEqual(
    new Uint8Array(y.buffer, y.byteOffset, y.byteLength),
  );
}

/** No asynchronous device errors (validation, out-of-memory) so far. */
export function expectNoDeviceErrors(): void {
  expect(webgpuErrors()).toEqual([]);
}
