/**
 * The WebGPU backend's entry point. Importing this module only registers a loader with
 * `init()` (no GPU code runs and the `webgpu` package is not loaded until then):
 * `await init()` picks webgpu when an adapter exists; `init({ backend: "webgpu" })` throws a
 * clear error when none does.
 */
import { registerBackend, hasBackend } from "../backend.js";
import { setWebGPULoader } from "../../init.js";
import { registerIRRunner } from "../../run-ir.js";
import { acquireDevice, probeNodeAdapter } from "./device.js";
import { GpuContext, gpuIfReady, setGpuContext } from "./context.js";
import { webgpuBackend } from "./backend.js";
import { webgpuRunner } from "./runner.js";
import { finalizedHandles, type GpuMemoryStats } from "./buffers.js";

let loading: Promise<void> | null = null;

/**
 * Node only: a way to run the garbage collector when device memory grows (finalizers free GPU buffers, V8 cannot see
 * their size).
 */
async function nodeGcHook(): Promise<(() => void) | null> {
  try {
    const v8 = await import("node:v8");
    const vm = await import("node:vm");
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as unknown;
    return typeof gc === "function" ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

async function load(): Promise<void> {
  const dev = await acquireDevice();
  const ctx = new GpuContext(dev);
  if (dev.platform === "node") {
    const gc = await nodeGcHook();
    if (gc) ctx.pool.onPressure = () => gc();
  }
  setGpuContext(ctx);
  registerBackend(webgpuBackend);
}

setWebGPULoader(() => {
  if (hasBackend("webgpu")) return Promise.resolve();
  loading ??= load().catch((e) => {
    loading = null;
    throw e;
  });
  return loading;
}, probeNodeAdapter);
registerIRRunner(webgpuRunner);

/** Device memory counters of the webgpu backend (null before init). */
export function webgpuMemory():
  | (GpuMemoryStats & { finalized: number; dispatches: number; submits: number; pipelines: number })
  | null {
  const ctx = gpuIfReady();
  if (!ctx) return null;
  return {
    ...ctx.pool.stats(),
    finalized: finalizedHandles(),
    dispatches: ctx.stream.dispatches,
    submits: ctx.stream.submits,
    pipelines: ctx.pipelines.size,
  };
}

/** Waits until the device has finished all submitted work (benchmarks, memory measurements). */
export async function webgpuSync(): Promise<void> {
  await gpuIfReady()?.stream.sync();
}

/** Device errors reported asynchronously so far (validation, out of memory). Tests assert there are none. */
export const webgpuErrors = (): readonly string[] => gpuIfReady()?.errors ?? [];

/** Releases pooled device memory (it is otherwise kept for reuse). */
export function webgpuTrimPool(): void {
  gpuIfReady()?.pool.trim(0);
}
