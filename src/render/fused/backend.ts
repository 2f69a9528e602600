/**
 * Whether a fused rasterizer primitive runs on the current default backend. The CPU runs them as
 * host kernels (inside jit too, as routines); on WebGPU they need their WGSL kernels (`gpu` rules).
 */
import { defaultBackend } from "../../core/init.js";
import type { Primitive } from "../../core/primitive.js";

export const fusedBackend = (prim: Primitive): boolean =>
  defaultBackend() === "cpu" || (defaultBackend() === "webgpu" && prim.gpu !== undefined);
