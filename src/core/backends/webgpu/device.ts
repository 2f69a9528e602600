/**
 * Device acquisition: Node through the `webgpu` package (Dawn), a browser through
 * `navigator.gpu`. The package is imported dynamically so the library loads (and runs on the
 * CPU) where it is not installed.
 */

/** The device limits the code generators and routines respect. */
export interface GpuLimits {
  readonly maxStorageBuffersPerShaderStage: number;
  readonly maxComputeWorkgroupsPerDimension: number;
  readonly maxComputeInvocationsPerWorkgroup: number;
  readonly maxComputeWorkgroupStorageSize: number;
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
  readonly minUniformBufferOffsetAlignment: number;
}

export interface AcquiredDevice {
  readonly device: GPUDevice;
  readonly limits: GpuLimits;
  readonly info: Record<string, unknown>;
  readonly platform: "node" | "browser";
}

/** The slice of the `webgpu` npm package this module uses. */
interface DawnModule {
  create(flags: string[]): GPU;
  globals: Record<string, unknown>;
}

const isNode = (): boolean =>
  typeof process !== "undefined" && typeof process.versions === "object" && typeof process.versions.node === "string";

/** Kept alive for the process: Dawn's instance owns the adapter and device. */
let dawnInstance: GPU | null = null;

async function nodeGpu(): Promise<GPU> {
  // lavapipe/Mesa warn (and some loaders fail) without a runtime dir; tests may run from a plain shell.
  if (!process.env.XDG_RUNTIME_DIR) process.env.XDG_RUNTIME_DIR = "/tmp";
  const specifier = "webgpu";
  let mod: DawnModule;
  try {
    mod = (await import(/* @vite-ignore */ specifier)) as DawnModule;
  } catch (e) {
    throw new Error(`the "webgpu" package (Dawn for Node) could not be loaded ` + `(${(e as Error).message}); install it with \`npm install webgpu\``);
  }
  // Expose GPUBufferUsage & co. for user code that expects browser globals, without overwriting anything.
  const g = globalThis as Record<string, unknown>;
  for (const [k, v] of Object.entries(mod.globals)) if (!(k in g)) g[k] = v;
  dawnInstance ??= mod.create([]);
  return dawnInstance;
}

function readLimits(l: GPUSupportedLimits): GpuLimits {
  return {
    maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
    maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
    maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
    maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
    maxBufferSize: l.maxBufferSize,
    minUniformBufferOffsetAlignment: l.minUniformBufferOffsetAlignment,
  };
}

/** Limits worth raising above the WebGPU defaults (the adapter decides how far). */
const REQUESTED_LIMITS = [
  "maxStorageBuffersPerShaderStage", "maxComputeWorkgroupsPerDimension", "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupStorageSize", "maxStorageBufferBindingSize", "maxBufferSize",
  "maxComputeWorkgroupSizeX", "maxComputeWorkgroupSizeY", "maxComputeWorkgroupSizeZ",
] as const;

/** Finds an adapter and opens a device with the adapter's limits; throws a clear error when there is none. */
export async function acquireDevice(): Promise<AcquiredDevice> {
  const platform = isNode() ? "node" : "browser";
  let gpu: GPU | undefined;
  if (platform === "node") gpu = await nodeGpu();
  else gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) throw new Error("this browser has no WebGPU (navigator.gpu is undefined)");
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new Error("no WebGPU adapter was found (on Linux without a GPU, install Mesa's lavapipe Vulkan driver)");
  const requiredLimits: Record<string, number> = {};
  for (const k of REQUESTED_LIMITS) {
    const v = (adapter.limits as unknown as Record<string, number | undefined>)[k];
    if (typeof v === "number") requiredLimits[k] = v;
  }
  const device = await adapter.requestDevice({ requiredLimits });
  const ai = adapter.info;
  const info: Record<string, unknown> = {
    name: "webgpu",
    platform,
    vendor: ai?.vendor ?? "",
    architecture: ai?.architecture ?? "",
    device: ai?.device ?? "",
    description: ai?.description ?? "",
    limits: { ...readLimits(device.limits) },
  };
  return { device, limits: readLimits(device.limits), info, platform };
}
