/**
 * Whether the fused rasterizer kernels run on the current default backend. The CPU runs them as
 * host kernels (inside jit too, as routines); on WebGPU they need the WGSL kernels.
 */
import { defaultBackend } from "../../core/init.js";

export const fusedBackend = (): boolean => defaultBackend() === "cpu";
