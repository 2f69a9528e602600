/**
 * Shared helpers of the gradsim benchmark scripts: the same protocol and JSON line as the peer
 * scripts in bench/peers (median of ≥ 5 timed runs after warm-up, device→host reads included).
 */
import { performance } from "node:perf_hooks";
import { init, type Array } from "gradsim";
// Internal on purpose: the benchmarks compare the CPU backend's kernel choices (WebAssembly or JavaScript).
import { setCpuKernels, type CpuKernels } from "../src/core/compile/wasm-kernel.js";
import { cpuThreads } from "../src/core/compile/threads.js";

export type BenchArgs = Record<string, string | number> & { readonly runs: number; readonly warmup: number };

export function parseArgs(defaults: Record<string, string | number> = {}): BenchArgs {
  const out: Record<string, string | number> = { runs: 7, warmup: 2, ...defaults };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) continue;
    let [k, v] = a.slice(2).split("=") as [string, string | undefined];
    if (v === undefined) v = argv[i + 1] && !argv[i + 1]!.startsWith("--") ? argv[++i]! : "1";
    out[k] = /^-?\d+(\.\d+)?(e\d+)?$/i.test(v) ? Number(v) : v;
  }
  if (Number(out.runs) < 5) throw new Error("runs must be >= 5");
  return out as BenchArgs;
}

export async function setup(backend: string | number, kernels: string | number | undefined = "wasm"): Promise<void> {
  if (backend !== "cpu" && backend !== "webgpu") throw new Error(`--backend must be cpu or webgpu, got ${backend}`);
  await init({ backend });
  setKernels(kernels);
}

/**
 * `--kernels js|wasm-scalar|wasm-f64x2|wasm`: the CPU jit's kernel form (default wasm: SIMD where the kernel allows,
 * four float32 lanes where its floats are all float32).
 */
export function setKernels(kernels: string | number): CpuKernels {
  if (kernels !== "js" && kernels !== "wasm" && kernels !== "wasm-f64x2" && kernels !== "wasm-scalar")
    throw new Error(`--kernels must be js, wasm-scalar, wasm-f64x2 or wasm, got ${kernels}`);
  setCpuKernels(kernels);
  return kernels;
}

export const round = (v: number, d = 3): number => Math.round(v * 10 ** d) / 10 ** d;

export async function timeIt<T>(
  fn: () => Promise<T>,
  { warmup, runs, warmupMs = 0, runsMs = 0 }: { warmup: number; runs: number; warmupMs?: number; runsMs?: number },
) {
  let t = performance.now();
  let out = await fn();
  const msFirst = performance.now() - t;
  // At least `warmup` calls and `warmupMs`: the engine optimises a fast function only after many calls.
  for (let i = 1; i < warmup || performance.now() - t < warmupMs; i++) out = await fn();
  const times: number[] = [];
  const t0 = performance.now();
  while (times.length < runs || performance.now() - t0 < runsMs) {
    t = performance.now();
    out = await fn();
    times.push(performance.now() - t);
  }
  const s = [...times].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { ms_median: round(median), ms_min: round(s[0]!), ms_first: round(msFirst), runs: times.length, out };
}

export function sum(a: ArrayLike<number>, abs = false): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += abs ? Math.abs(a[i]!) : a[i]!;
  return s;
}
export const read = (x: Array): Promise<ArrayLike<number>> => x.data();

/** A result record with the CPU kernels' thread count (GRADSIM_CPU_THREADS or the cores). */
export const withThreads = <T extends object>(obj: T): T & { threads: number } => ({ ...obj, threads: cpuThreads() });

/** Write a result line and exit. */
export function emit(obj: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(withThreads(obj)) + "\n", () => process.exit(0));
}
export function emitError(base: Record<string, unknown>, err: unknown): void {
  const msg = String((err as Error)?.stack ?? err)
    .split("\n")
    .slice(0, 3)
    .join(" | ");
  process.stdout.write(
    JSON.stringify({ ...base, ms_median: null, ms_min: null, runs: 0, checksum: null, error: msg }) + "\n",
    () => process.exit(1),
  );
}
