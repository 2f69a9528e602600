/**
 * Backend selection: `init()` ("auto") picks WebGPU when a hardware adapter exists, else the CPU —
 * a software adapter (lavapipe, SwiftShader) runs the same kernels on the CPU's cores, slower than
 * the CPU backend, so auto says so and uses the CPU; `init({ backend: "webgpu" })` insists.
 */
import { defaultBackend, getBackend, hasBackend, registeredBackends, setDefaultBackend, type BackendName } from "./backends/backend.js";
import "./backends/cpu/cpu.js";

export interface InitOptions { readonly backend?: BackendName | "auto" }

/** Hook for the WebGPU backend module: set by it when it is loaded, so core needs no GPU import. */
let webgpuLoader: (() => Promise<void>) | null = null;
export function setWebGPULoader(f: () => Promise<void>): void { webgpuLoader = f; }

let softwareNoticeShown = false;

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
  if (hasBackend("webgpu")) {
    const info = getBackend("webgpu").info();
    if (want === "webgpu" || info.software !== true) { setDefaultBackend("webgpu"); return "webgpu"; }
    if (!softwareNoticeShown) {
      softwareNoticeShown = true;
      console.error(`gradsim: the only WebGPU adapter is a software one ` + `(${String(info.description || info.architecture)}), slower than the CPU backend here; computing on ` + `the CPU. Ask for WebGPU explicitly (init({ backend: "webgpu" }), --backend webgpu) to use it anyway.`);
    }
  }
  setDefaultBackend("cpu");
  return "cpu";
}

/** What was found: one entry per initialised backend with its adapter details. */
export const devices = (): Record<string, unknown>[] => registeredBackends().map((b) => b.info());
export { defaultBackend, getBackend };
