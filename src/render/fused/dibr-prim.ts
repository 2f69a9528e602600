/**
 * The fused DIB-R geometry as a linearized primitive (linearized.ts):
 *   dibr_geometry (xy [F,3,2], z [F,3], front bool [F])
 *     → logT [H,W] (0 where a face covers the pixel), face int32 [H,W], bary [H,W,3]
 * differentiable in xy (the depths only choose the visible face); the derivative kernels read `face`.
 */
import { ShapedArray } from "../../core/aval.js";
import type { HostArray } from "../../core/backends/backend.js";
import { dibrFaceTable, dibrForward, dibrJvp, dibrVjp, type DibrKernelParams } from "./dibr-cpu.js";
import { defineLinearized } from "./linearized.js";
import { dibrGeometryReference } from "./reference.js";
import * as dibrGpu from "./gpu/dibr-gpu.js";
import { checkGeometry, host } from "./softras-prim.js";
import { typedArrayFor } from "../../core/dtype.js";

const table = ([xy, z]: readonly HostArray[], p: DibrKernelParams) =>
  dibrFaceTable(xy!.data, z!.data, xy!.shape[0]!, p);

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
    const d = ins[0]!.dtype;
    const o = {
      logT: typedArrayFor(d, out[0]!.size),
      face: new Int32Array(out[1]!.size),
      bary: typedArrayFor(d, out[2]!.size),
    };
    dibrForward(table(ins, p), ins[2]!.data, p, o);
    return [host(o.logT, out[0]!.shape, d), host(o.face, out[1]!.shape, "int32"), host(o.bary, out[2]!.shape, d)];
  },
  jvp: (ins, [face], [txy], p, out) => {
    const d = ins[0]!.dtype;
    const o = { logT: typedArrayFor(d, out[0]!.size), bary: typedArrayFor(d, out[1]!.size) };
    dibrJvp(table(ins, p), ins[2]!.data, face!.data as Int32Array, txy!.data, p, o);
    return [host(o.logT, out[0]!.shape, d), host(o.bary, out[1]!.shape, d)];
  },
  vjp: (ins, [face], [cT, cB], p) => {
    const d = ins[0]!.dtype;
    const g = typedArrayFor(d, ins[0]!.data.length);
    dibrVjp(table(ins, p), face!.data as Int32Array, cT!.data, cB!.data, p, g);
    return [host(g, ins[0]!.shape, d)];
  },
});
export const dibrGeometryP = dibrGeometry.primal;
