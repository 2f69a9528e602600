/**
 * The fused SoftRas geometry as a linearized primitive (linearized.ts):
 *   softras_geometry (xy [F,3,2], z [F,3], front bool [F], joins int32 [F])
 *     → S [H,W], face int32 [H,W,K], bary [H,W,K,3], depth [H,W,K], logD [H,W,K], overflow int32 []
 * differentiable in xy and z; the derivative kernels read `face` (which face is in which layer).
 * `joins` are the joined-edge flags of mesh-edges.ts (zeros: every face edge is a boundary, SoftRas' own).
 */
import { ShapedArray } from "../../core/aval.js";
import type { HostArray } from "../../core/backends/backend.js";
import type { DType, TypedArray } from "../../core/dtype.js";
import { typedArrayFor } from "../../core/dtype.js";
import { softrasColourBackgroundVjp } from "./softras-colour-cpu.js";
import type { SoftRasGeometryParams } from "./softras-pair.js";
import { runRaster, type RasterFloat } from "./raster-threads.js";
import { defineLinearized } from "./linearized.js";
import { softrasColourReference, softrasGeometryReference } from "./reference.js";
import * as colourGpu from "./gpu/softras-colour-gpu.js";
import * as geometryGpu from "./gpu/softras-geometry-gpu.js";

export type { SoftRasGeometryParams };

export const host = (data: TypedArray, shape: readonly number[], dtype: DType): HostArray => ({
  data,
  shape: [...shape],
  dtype,
});

/** Validate the screen geometry operands; their float dtype. */
export function checkGeometry(
  op: string,
  xy: ShapedArray,
  z: ShapedArray,
  front: ShapedArray,
  joins?: ShapedArray,
): DType {
  if (joins && (joins.dtype !== "int32" || joins.ndim !== 1 || joins.shape[0] !== xy.shape[0]))
    throw new Error(`${op}: joined-edge flags must be int32 [F], got ${joins}.`);
  if (xy.ndim !== 3 || xy.shape[1] !== 3 || xy.shape[2] !== 2)
    throw new Error(`${op}: screen xy must be [F, 3, 2], got ${xy}.`);
  if (z.ndim !== 2 || z.shape[0] !== xy.shape[0] || z.shape[1] !== 3)
    throw new Error(`${op}: depths must be [F, 3] matching xy ${xy}, got ${z}.`);
  if (front.dtype !== "bool" || front.ndim !== 1 || front.shape[0] !== xy.shape[0])
    throw new Error(`${op}: front must be bool [F], got ${front}.`);
  if (xy.dtype !== z.dtype || (xy.dtype !== "float32" && xy.dtype !== "float64"))
    throw new Error(`${op}: xy and z must share a float dtype, got ${xy} and ${z}.`);
  return xy.dtype;
}

/** The screen geometry operands (xy, z, front, joins) by the names the kernels read. */
const geometry = (ins: readonly HostArray[], joins: HostArray) => ({
  xy: ins[0]!.data,
  z: ins[1]!.data,
  front: ins[2]!.data,
  joins: joins.data,
});

export const softrasGeometry = defineLinearized<SoftRasGeometryParams>({
  name: "softras_geometry",
  outputs: ([xy, z, front, joins], p) => {
    const d = checkGeometry("softras_geometry", xy!, z!, front!, joins!);
    const { height: H, width: W, layers: K } = p;
    return [
      new ShapedArray([H, W], d),
      new ShapedArray([H, W, K], "int32"),
      new ShapedArray([H, W, K, 3], d),
      new ShapedArray([H, W, K], d),
      new ShapedArray([H, W, K], d),
      new ShapedArray([], "int32"),
    ];
  },
  diffInputs: [0, 1],
  diffOutputs: [0, 2, 3, 4],
  aux: [1],
  reference: softrasGeometryReference,
  gpu: { forward: geometryGpu.forwardRule, jvp: geometryGpu.jvpRule, vjp: geometryGpu.vjpRule },
  forward: (ins, p, out) => {
    const d = ins[0]!.dtype as RasterFloat;
    const { outs: o, count } = runRaster(
      "softras_geometry",
      geometry(ins, ins[3]!),
      {
        S: [d, out[0]!.size],
        face: ["int32", out[1]!.size],
        bary: [d, out[2]!.size],
        depth: [d, out[3]!.size],
        logD: [d, out[4]!.size],
      },
      p,
    );
    return [
      host(o.S!, out[0]!.shape, d),
      host(o.face!, out[1]!.shape, "int32"),
      host(o.bary!, out[2]!.shape, d),
      host(o.depth!, out[3]!.shape, d),
      host(o.logD!, out[4]!.shape, d),
      host(Int32Array.of(count), [], "int32"),
    ];
  },
  jvp: (ins, [face], [txy, tz], p, out) => {
    const d = ins[0]!.dtype as RasterFloat;
    const { outs: o } = runRaster(
      "softras_geometry_jvp",
      { ...geometry(ins, ins[3]!), face: face!.data, txy: txy!.data, tz: tz!.data },
      { S: [d, out[0]!.size], bary: [d, out[1]!.size], depth: [d, out[2]!.size], logD: [d, out[3]!.size] },
      p,
    );
    return [o.S!, o.bary!, o.depth!, o.logD!].map((a, i) => host(a, out[i]!.shape, d));
  },
  vjp: (ins, [face], [cS, cBary, cDepth, cLogD], p) => {
    const d = ins[0]!.dtype as RasterFloat;
    const { outs: o } = runRaster(
      "softras_geometry_vjp",
      {
        ...geometry(ins, ins[3]!),
        face: face!.data,
        cS: cS!.data,
        cBary: cBary!.data,
        cDepth: cDepth!.data,
        cLogD: cLogD!.data,
      },
      { xy: [d, ins[0]!.data.length], z: [d, ins[1]!.data.length] },
      p,
    );
    return [host(o.xy!, ins[0]!.shape, d), host(o.z!, ins[1]!.shape, d)];
  },
});
export const softrasGeometryP = softrasGeometry.primal;

export interface SoftRasColourGeometryParams extends SoftRasGeometryParams {
  readonly eps: number;
  readonly channels: number;
  readonly baryGradient: boolean;
}

/**
 * SoftRas with per-corner colours, fused end to end (softras-colour-cpu.ts):
 *   softras_colour (xy, z, front, attrs [F,3,D], background [D], joins) → rgb [H,W,D], S [H,W], M [H,W], Z [H,W]
 * differentiable in xy, z, attrs and background; M and Z (the softmax's maximum exponent and
 * normaliser) are what the derivative kernels read besides rgb.
 */
export const softrasColour = defineLinearized<SoftRasColourGeometryParams>({
  name: "softras_colour",
  outputs: ([xy, z, front, attrs, bg, joins], p) => {
    const d = checkGeometry("softras_colour", xy!, z!, front!, joins!);
    if (
      attrs!.dtype !== d ||
      attrs!.ndim !== 3 ||
      attrs!.shape[0] !== xy!.shape[0] ||
      attrs!.shape[1] !== 3 ||
      attrs!.shape[2] !== p.channels
    ) {
      throw new Error(
        `softras_colour: corner colours must be ${d} [F, 3, ${p.channels}] for ${xy!.shape[0]} faces, got ${attrs}.`,
      );
    }
    if (bg!.dtype !== d || bg!.shape.join() !== String(p.channels))
      throw new Error(`softras_colour: the background must be ${d} [${p.channels}], got ${bg}.`);
    const { height: H, width: W } = p;
    return [
      new ShapedArray([H, W, p.channels], d),
      new ShapedArray([H, W], d),
      new ShapedArray([H, W], d),
      new ShapedArray([H, W], d),
    ];
  },
  diffInputs: [0, 1, 3, 4],
  diffOutputs: [0, 1],
  aux: [0, 2, 3],
  reference: softrasColourReference,
  gpu: { forward: colourGpu.forwardRule, jvp: colourGpu.jvpRule, vjp: colourGpu.vjpRule },
  forward: (ins, p, out) => {
    const d = ins[0]!.dtype as RasterFloat;
    const { outs: o } = runRaster(
      "softras_colour",
      { ...geometry(ins, ins[5]!), A: ins[3]!.data, bg: ins[4]!.data },
      { rgb: [d, out[0]!.size], S: [d, out[1]!.size], M: [d, out[2]!.size], Z: [d, out[3]!.size] },
      p,
    );
    return [o.rgb!, o.S!, o.M!, o.Z!].map((a, i) => host(a, out[i]!.shape, d));
  },
  jvp: (ins, [rgb, M, Z], [txy, tz, tA, tbg], p, out) => {
    const d = ins[0]!.dtype as RasterFloat;
    const { outs: o } = runRaster(
      "softras_colour_jvp",
      {
        ...geometry(ins, ins[5]!),
        A: ins[3]!.data,
        rgb: rgb!.data,
        M: M!.data,
        Z: Z!.data,
        txy: txy!.data,
        tz: tz!.data,
        tA: tA!.data,
        tbg: tbg!.data,
      },
      { rgb: [d, out[0]!.size], S: [d, out[1]!.size] },
      p,
    );
    return [host(o.rgb!, out[0]!.shape, d), host(o.S!, out[1]!.shape, d)];
  },
  vjp: (ins, [rgb, M, Z], [cRgb, cS], p) => {
    const d = ins[0]!.dtype as RasterFloat;
    const pixels = p.width * p.height;
    const { outs: cuts } = runRaster(
      "softras_colour_cuts",
      { M: M!.data, Z: Z!.data },
      { cut: ["float64", pixels], eb: ["float64", pixels] },
      p,
    );
    const { outs: o } = runRaster(
      "softras_colour_vjp",
      {
        ...geometry(ins, ins[5]!),
        A: ins[3]!.data,
        rgb: rgb!.data,
        M: M!.data,
        Z: Z!.data,
        cRgb: cRgb!.data,
        cS: cS!.data,
        cut: cuts.cut!,
      },
      { xy: [d, ins[0]!.data.length], z: [d, ins[1]!.data.length], A: [d, ins[3]!.data.length] },
      p,
    );
    const bg = typedArrayFor(d, ins[4]!.data.length);
    softrasColourBackgroundVjp(cuts.eb!, cRgb!.data, p, bg);
    return [
      host(o.xy!, ins[0]!.shape, d),
      host(o.z!, ins[1]!.shape, d),
      host(o.A!, ins[3]!.shape, d),
      host(bg, ins[4]!.shape, d),
    ];
  },
});
