/** The initialised WebGPU state: device, limits, memory pool, command stream and pipeline cache. */
import { BufferPool } from "./buffers.js";
import { isSoftwareAdapter, type AcquiredDevice, type GpuLimits } from "./device.js";
import { PipelineCache } from "./pipelines.js";
import { Stream } from "./stream.js";

export class GpuContext {
  readonly device: GPUDevice;
  readonly limits: GpuLimits;
  readonly info: Record<string, unknown>;
  readonly pool: BufferPool;
  readonly stream: Stream;
  readonly pipelines: PipelineCache;
  /** Validation/out-of-memory errors the device reported asynchronously (kept for tests and diagnostics). */
  readonly errors: string[] = [];
  /**
   * A CPU-emulated adapter (lavapipe, SwiftShader): workgroup barriers make every invocation a
   * coroutine there, so kernels avoid workgroup-cooperative forms unless very few workgroups run.
   */
  readonly software: boolean;

  constructor(d: AcquiredDevice) {
    this.device = d.device;
    this.limits = d.limits;
    this.info = d.info;
    this.pool = new BufferPool(d.device, d.limits.maxBufferSize);
    this.stream = new Stream(d.device);
    this.pipelines = new PipelineCache(d.device);
    this.software = isSoftwareAdapter(d.info);
    void d.device.lost.then((info) => {
      if (info.reason !== "destroyed") this.errors.push(`device lost: ${info.message}`);
    });
    d.device.addEventListener("uncapturederror", (ev) => {
      const msg = (ev as GPUUncapturedErrorEvent).error.message;
      if (this.errors.length < 100) this.errors.push(msg);
      if (this.errors.length <= 3) console.error(`gradsim webgpu: device error: ${msg}`);
    });
  }
}

let current: GpuContext | null = null;
export function setGpuContext(c: GpuContext): void {
  current = c;
}
export function gpu(): GpuContext {
  if (!current) throw new Error('internal: the WebGPU backend is used before `await init({ backend: "webgpu" })`.');
  return current;
}
export const gpuIfReady = (): GpuContext | null => current;
