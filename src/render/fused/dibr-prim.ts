/**
 * The fused DIB-R geometry as a linearized primitive (linearized.ts):
 *   dibr_geometry (xy [F,3,2], z [F,3], front bool [F])
 *     → logT [H,W] (0 where a face covers the pixel), face int32 [H,W], bary [H,W,3]
 * differentiable in xy (the depths only choose the visible face); the derivative kernels read `face`.
 */
import { ShapedArray } from "../../core/aval.js";
import type { HostArray } from "../../core/backends/backend.js";
import type { DibrKernelParams } from "./dibr-cpu.js";
import { runRaster, type RasterFloat } from "./raster-threads.js";
import { defineLinearized } from "./linearized.js";
import { dibrGeometryReference } from "./reference.js";
import * as dibrGpu from "./gpu/dibr-gpu.js";
import { checkGeometry, host } from "./softras-prim.js";

/** The screen geometry operands by the names the kernels read. */
const geometry = ([xy, z, front]: readonly HostArray[]) => ({ xy: xy!.data, z: z!.data, front: front!.data });

export const dibrGeometry = defineLinearized<DibrKernelParams>({
  name: "dibr_geometry",
  outputs: ([xy, z, front], p) => {
    const d = checkGeometry("dibr_geometry", xy!, z!, front!);
    return [
      new ShapedArray([p.height, p.width], d),
      new ShapedArray([p.height, p.width], "int32"),
      new ShapedArray([p.height, p.width, 3], d),
    ];
  },
  diffInputs: [0],
  diffOutputs: [0, 2],
  aux: [1],
  reference: dibrGeometryReference,
  gpu: { forward: dibrGpu.forwardRule, jvp: dibrGpu.jvpRule, vjp: dibrGpu.vjpRule },
  forward: (ins, p, out) => {
    const d = ins[0]!.dtype as RasterFloat;
    const { outs: o } = runRaster(
      "dibr_geometry",
      geometry(ins),
      { logT: [d, out[0]!.size], face: ["int32", out[1]!.size], bary: [d, out[2]!.size] },
      p,
    );
    return [host(o.logT!, out[0]!.shape, d), host(o.face!, out[1]!.shape, "int32"), host(o.bary!, out[2]!.shape, d)];
  },
  jvp: (ins, [face], [txy], p, out) => {
    const d = ins[0]!.dtype as RasterFloat;
    const { outs: o } = runRaster(
      "dibr_geometry_jvp",
      { ...geometry(ins), face: face!.data, txy: txy!.data },
      { logT: [d, out[0]!.size], bary: [d, out[1]!.size] },
      p,
    );
    return [host(o.logT!, out[0]!.shape, d), host(o.bary!, out[1]!.shape, d)];
  },
  vjp: (ins, [face], [cT, cB], p) => {
    const d = ins[0]!.dtype as RasterFloat;
    const { outs: cut } = runRaster(
      "dibr_cutoffs",
      { ...geometry(ins), face: face!.data },
      { cutoff: ["int32", p.width * p.height] },
      p,
    );
    const { outs: o } = runRaster(
      "dibr_geometry_vjp",
      { ...geometry(ins), face: face!.data, cT: cT!.data, cB: cB!.data, cutoff: cut.cutoff! },
      { xy: [d, ins[0]!.data.length] },
      p,
    );
    return [host(o.xy!, ins[0]!.shape, d)];
  },
});
export const dibrGeometryP = dibrGeometry.primal;
