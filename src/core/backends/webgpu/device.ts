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
    throw new Error(
      `the "webgpu" package (Dawn for Node) could not be loaded ` +
        `(${(e as Error).message}); install it with \`npm install webgpu\``,
    );
  }
  // Expose GPUBufferUsage & co. for user code that expects browser globals, without overwriting anything.
  const g = globalThis as Record<string, unknown>;
  for (const [k, v] of Object.entries(mod.globals)) if (!(k in g)) g[k] = v;
  dawnInstance ??= mod.create([]);
  return dawnInstance;
}

/** What a probe learns about the adapter without opening a device. */
export interface AdapterProbe {
  readonly found: boolean;
  readonly software: boolean;
  readonly description: string;
}

/**
 * A CPU-emulated adapter (lavapipe, SwiftShader), from its info. Chromium's SwiftShader says so only
 * in its architecture ("swiftshader", empty description) and in isFallbackAdapter.
 */
export const isSoftwareAdapter = (info: {
  architecture?: unknown;
  description?: unknown;
  device?: unknown;
  isFallbackAdapter?: unknown;
}): boolean =>
  info.architecture === "software" ||
  info.isFallbackAdapter === true ||
  /llvmpipe|lavapipe|swiftshader|software/i.test(
    `${String(info.architecture ?? "")} ${String(info.description ?? "")} ${String(info.device ?? "")}`,
  );

/**
 * Node only: asks for an adapter in a child process, so that Dawn's start-up warnings (lavapipe
 * prints two about dynamic-buffer limits on stderr, from C++ where no JS can silence them) stay in
 * the child, and this process loads Dawn only when it will compute on the adapter. About 0.15 s.
 * null = the probe itself failed (no package, no child process): the caller loads Dawn here.
 */
export async function probeNodeAdapter(): Promise<AdapterProbe | null> {
  if (!isNode()) return null;
  try {
    // Specifiers in variables: bundlers for the web must not follow them.
    const [cp, nm, nu] = ["node:child_process", "node:module", "node:url"];
    const { spawnSync } = (await import(/* @vite-ignore */ cp)) as typeof import("node:child_process");
    const { createRequire } = (await import(/* @vite-ignore */ nm)) as unknown as {
      createRequire: (from: string) => { resolve(id: string): string };
    };
    const { pathToFileURL } = (await import(/* @vite-ignore */ nu)) as typeof import("node:url");
    const url = pathToFileURL(createRequire(import.meta.url).resolve("webgpu")).href;
    const script = `const m = await import(${JSON.stringify(url)});
const a = await m.create([]).requestAdapter({ powerPreference: "high-performance" });
const i = a ? a.info : null;
process.stdout.write(
  JSON.stringify(i ? { architecture: i.architecture, description: i.description, device: i.device } : null)
);
process.exit(0);`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR || "/tmp" },
    });
    if (r.status !== 0 || !r.stdout) return null;
    const info = JSON.parse(r.stdout) as { architecture?: string; description?: string; device?: string } | null;
    if (!info) return { found: false, software: false, description: "" };
    return {
      found: true,
      software: isSoftwareAdapter(info),
      description: String(info.description || info.architecture || ""),
    };
  } catch {
    return null;
  }
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
  "maxStorageBuffersPerShaderStage",
  "maxComputeWorkgroupsPerDimension",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupStorageSize",
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
] as const;

/** Finds an adapter and opens a device with the adapter's limits; throws a clear error when there is none. */
export async function acquireDevice(): Promise<AcquiredDevice> {
  const platform = isNode() ? "node" : "browser";
  let gpu: GPU | undefined;
  if (platform === "node") gpu = await nodeGpu();
  else gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) throw new Error("this browser has no WebGPU (navigator.gpu is undefined)");
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter)
    throw new Error("no WebGPU adapter was found (on Linux without a GPU, install Mesa's lavapipe Vulkan driver)");
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
    // In adapter.info since 2024, on the adapter itself before.
    isFallbackAdapter:
      (ai as { isFallbackAdapter?: boolean } | undefined)?.isFallbackAdapter ??
      (adapter as { isFallbackAdapter?: boolean }).isFallbackAdapter ??
      false,
    limits: { ...readLimits(device.limits) },
  };
  return { device, limits: readLimits(device.limits), info, platform };
}
