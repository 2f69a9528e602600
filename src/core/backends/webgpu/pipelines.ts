/**
 * Compute pipelines cached by WGSL source (every shape is baked into its source, so equal
 * sources are interchangeable), bind groups, and dispatch grids within the device's
 * maxComputeWorkgroupsPerDimension (2-D grids for big launches).
 */
import { BUF_UNIFORM, type DeviceBuffer } from "./buffers.js";

export interface Pipeline {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  readonly source: string;
}

/** A binding: a whole buffer, or a uniform range. */
export type BindingResource =
  | DeviceBuffer
  | { readonly uniform: GPUBuffer; readonly offset: number; readonly size: number };

/** Bind groups kept for reuse (keys name the GPUBuffers, so a recycled buffer keeps its groups valid). */
const BIND_GROUP_CACHE_MAX = 4096;

export class PipelineCache {
  private readonly cache = new Map<string, Pipeline>();
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  private readonly ids = new WeakMap<object, number>();
  private nextId = 1;
  /** Shader sources compiled so far (tests count them; a loop must not keep compiling). */
  compiled = 0;
  constructor(private readonly device: GPUDevice) {}

  private idOf(o: object): number {
    let id = this.ids.get(o);
    if (id === undefined) this.ids.set(o, (id = this.nextId++));
    return id;
  }

  get(source: string): Pipeline {
    let p = this.cache.get(source);
    if (!p) {
      const module = this.device.createShaderModule({ code: source });
      const pipeline = this.device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
      p = { pipeline, layout: pipeline.getBindGroupLayout(0), source };
      this.cache.set(source, p);
      this.compiled++;
    }
    return p;
  }

  /**
   * The bind group of `resources` for `p`. Pooled buffers recur in steady loops, so groups are
   * cached by the identity of the GPUBuffers (creating one costs tens of microseconds in Dawn). A
   * destroyed buffer never comes back from the pool, so its cached groups are simply never asked
   * for again (and age out).
   */
  bindGroup(p: Pipeline, resources: readonly BindingResource[]): GPUBindGroup {
    let key = String(this.idOf(p));
    for (const r of resources) key += "uniform" in r ? `,u${this.idOf(r.uniform)}@${r.offset}` : `,${this.idOf(r.gpu)}`;
    let g = this.bindGroups.get(key);
    if (g) return g;
    g = this.createBindGroup(p, resources);
    if (this.bindGroups.size >= BIND_GROUP_CACHE_MAX) this.bindGroups.delete(this.bindGroups.keys().next().value!);
    this.bindGroups.set(key, g);
    return g;
  }

  private createBindGroup(p: Pipeline, resources: readonly BindingResource[]): GPUBindGroup {
    return this.device.createBindGroup({
      layout: p.layout,
      entries: resources.map((r, binding) => ({
        binding,
        resource: "uniform" in r ? { buffer: r.uniform, offset: r.offset, size: r.size } : { buffer: r.gpu },
      })),
    });
  }

  get size(): number {
    return this.cache.size;
  }
}

/**
 * Workgroups for `groups` work-groups in a 2-D grid: x ≤ maxPerDim; the shader recovers the
 * linear group as wid.y * nwg.x + wid.x (and skips the overhang).
 */
export function grid(groups: number, maxPerDim: number): [number, number] {
  if (groups <= 0) return [0, 0];
  if (groups <= maxPerDim) return [groups, 1];
  const y = Math.ceil(groups / maxPerDim);
  if (y > maxPerDim)
    throw new Error(`webgpu: a launch of ${groups} workgroups exceeds the device's ${maxPerDim}² grid.`);
  return [Math.ceil(groups / y), y];
}

/**
 * A small uniform buffer of u32 parameters (sizes, strides), written once. Routines keep their
 * shapes here instead of in the shader source, so one pipeline serves every shape.
 */
export function uniformParams(device: GPUDevice, values: readonly number[]): BindingResource {
  const words = Math.max(4, Math.ceil(values.length / 4) * 4);
  const uniform = device.createBuffer({ size: words * 4, usage: BUF_UNIFORM, mappedAtCreation: true });
  const view = new Uint32Array(uniform.getMappedRange());
  values.forEach((v, i) => (view[i] = v >>> 0));
  uniform.unmap();
  return { uniform, offset: 0, size: words * 4 };
}

/** WGSL struct declaration for `uniformParams` values named `fields` (all u32). */
export function paramsStruct(fields: readonly string[]): string {
  const padded = [...fields];
  while (padded.length % 4 !== 0) padded.push(`_pad${padded.length}`);
  return `struct Params { ${padded.map((f) => `${f}: u32`).join(", ")} }`;
}
