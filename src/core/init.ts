/**
 * Backend selection: `init()` ("auto") picks WebGPU when a hardware adapter exists, else the CPU —
 * a software adapter (lavapipe, SwiftShader) runs the same kernels on the CPU's cores, slower than
 * the CPU backend, so auto says so and uses the CPU; `init({ backend: "webgpu" })` insists.
 */
import {
  defaultBackend,
  getBackend,
  hasBackend,
  registeredBackends,
  setDefaultBackend,
  type BackendName,
} from "./backends/backend.js";
import "./backends/cpu/cpu.js";
import { setCpuThreads } from "./compile/threads.js";

export interface InitOptions {
  readonly backend?: BackendName | "auto";
  /**
   * Threads the CPU backend's big compiled kernels run on (Node only; default: the
   * GRADSIM_CPU_THREADS environment variable, else the cores, at most 8). Results are the same
   * bits on any count.
   */
  readonly cpuThreads?: number;
}

/** What the WebGPU module's probe reports (null: it could not tell, so load and look). */
type AdapterProbe = { readonly found: boolean; readonly software: boolean; readonly description: string } | null;

/** Hooks for the WebGPU backend module: set by it when it is loaded, so core needs no GPU import. */
let webgpuLoader: (() => Promise<void>) | null = null;
let webgpuProbe: (() => Promise<AdapterProbe>) | null = null;
export function setWebGPULoader(f: () => Promise<void>, probe?: () => Promise<AdapterProbe>): void {
  webgpuLoader = f;
  webgpuProbe = probe ?? null;
}

let softwareNoticeShown = false;
function softwareNotice(description: string): void {
  if (softwareNoticeShown) return;
  softwareNoticeShown = true;
  console.error(
    `gradsim: the only WebGPU adapter is a software one (${description}), slower than the CPU backend here; ` +
      `computing on the CPU. ` +
      `Ask for WebGPU explicitly (init({ backend: "webgpu" }), --backend webgpu) to use it anyway.`,
  );
}

export async function init(opts: InitOptions = {}): Promise<BackendName> {
  if (opts.cpuThreads !== undefined) setCpuThreads(opts.cpuThreads);
  const want = opts.backend ?? "auto";
  if (want !== "auto" && want !== "cpu" && want !== "webgpu")
    throw new Error(`init: unknown backend ${JSON.stringify(want)}; use "cpu", "webgpu" or "auto".`);
  if (want === "cpu") {
    setDefaultBackend("cpu");
    return "cpu";
  }
  if (want === "auto" && !hasBackend("webgpu") && webgpuProbe) {
    // Auto in Node: look at the adapter from a child process first, so a run that ends up on the
    // CPU never loads Dawn here (and never shows its start-up warnings).
    const probe = await webgpuProbe();
    if (probe && (!probe.found || probe.software)) {
      if (probe.software) softwareNotice(probe.description);
      setDefaultBackend("cpu");
      return "cpu";
    }
  }
  if (!hasBackend("webgpu")) {
    try {
      if (!webgpuLoader) throw new Error("the WebGPU backend is not part of this build");
      await webgpuLoader();
    } catch (e) {
      if (want === "webgpu")
        throw new Error(`init: WebGPU is unavailable: ${(e as Error).message}. Use init({ backend: "cpu" }).`);
    }
  }
  if (hasBackend("webgpu")) {
    const info = getBackend("webgpu").info();
    if (want === "webgpu" || info.software !== true) {
      setDefaultBackend("webgpu");
      return "webgpu";
    }
    softwareNotice(String(info.description || info.architecture));
  }
  setDefaultBackend("cpu");
  return "cpu";
}

/** What was found: one entry per initialised backend with its adapter details. */
export const devices = (): Record<string, unknown>[] => registeredBackends().map((b) => b.info());
export { defaultBackend, getBackend };
