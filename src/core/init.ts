/** Backend selection: `init()` picks WebGPU when an adapter exists, else the CPU. */
import { defaultBackend, getBackend, hasBackend, registeredBackends, setDefaultBackend, type BackendName } from "./backends/backend.js";
import "./backends/cpu/cpu.js";

export interface InitOptions { readonly backend?: BackendName | "auto" }

/** Hook for the WebGPU backend module: set by it when it is loaded, so core needs no GPU import. */
let webgpuLoader: (() => Promise<void>) | null = null;
export function setWebGPULoader(f: () => Promise<void>): void { webgpuLoader = f; }

export async function init(opts: InitOptions = {}): Promise<BackendName> {
  const want = opts.backend ?? "auto";
  if (want !== "auto" && want !== "cpu" && want !== "webgpu") throw new Error(`init: unknown backend ${JSON.stringify(want)}; use "cpu", "webgpu" or "auto".`);
  if (want === "cpu") { setDefaultBackend("cpu"); return "cpu"; }
  if (!hasBackend("webgpu")) {
    try {
      if (!webgpuLoader) throw new Error("the WebGPU backend is not part of this build");
      await webgpuLoader();
    } catch (e) {
      if (want === "webgpu") throw new Error(`init: WebGPU is unavailable: ${(e as Error).message}. Use init({ backend: "cpu" }).`);
    }
  }
  if (hasBackend("webgpu")) { setDefaultBackend("webgpu"); return "webgpu"; }
  setDefaultBackend("cpu");
  return "cpu";
}

/** What was found: one entry per initialised backend with its adapter details. */
export const devices = (): Record<string, unknown>[] => registeredBackends().map((b) => b.info());
export { defaultBackend, getBackend };
