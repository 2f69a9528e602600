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
import { softrasForward, softrasJvp, softrasVjp } from "./softras-layers-cpu.js";
import { softrasColourForward, softrasColourJvp, softrasColourVjp } from "./softras-colour-cpu.js";
import { faceTableFor, type FaceMasks, type SoftRasKernelParams } from "./softras-pair.js";
import type { FaceTable } from "./faces.js";
import { defineLinearized } from "./linearized.js";
import { softrasColourReference, softrasGeometryReference } from "./reference.js";
import * as colourGpu from "./gpu/softras-colour-gpu.js";
import * as geometryGpu from "./gpu/softras-geometry-gpu.js";

export interface SoftRasGeometryParams extends SoftRasKernelParams {
  /** Which faces may colour a pixel: all, front-facing only ("back" culled) or back-facing only. */
  readonly culling: "none" | "back" | "front";
  /** Apply the culling to the silhouette too. */
  readonly cullAlpha: boolean;
}

export const host = (data: TypedArray, shape: readonly number[], dtype: DType): HostArray => ({
  data,
  shape: [...shape],
  dtype,
});

function masksOf(t: FaceTable, front: ArrayLike<number>, p: SoftRasGeometryParams): FaceMasks {
  const colour = new Uint8Array(t.n);
  for (let f = 0; f < t.n; f++) colour[f] = p.culling === "none" || (p.culling === "back") === !!front[f] ? 1 : 0;
  return { colour, include: p.cullAlpha ? colour : new Uint8Array(t.n).fill(1) };
}

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

const table = ([xy, z]: readonly HostArray[], joins: HostArray, p: SoftRasGeometryParams) =>
  faceTableFor(xy!.data, z!.data, xy!.shape[0]!, p, joins.data);

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
    const t = table(ins, ins[3]!, p);
    const d = ins[0]!.dtype;
    const arr = (i: number) => typedArrayFor(d, out[i]!.size);
    const o = { S: arr(0), face: new Int32Array(out[1]!.size), bary: arr(2), depth: arr(3), logD: arr(4) };
    const overflow = softrasForward(t, masksOf(t, ins[2]!.data, p), p, o);
    return [
      host(o.S, out[0]!.shape, d),
      host(o.face, out[1]!.shape, "int32"),
      host(o.bary, out[2]!.shape, d),
      host(o.depth, out[3]!.shape, d),
      host(o.logD, out[4]!.shape, d),
      host(Int32Array.of(overflow), [], "int32"),
    ];
  },
  jvp: (ins, [face], [txy, tz], p, out) => {
    const t = table(ins, ins[3]!, p);
    const d = ins[0]!.dtype;
    const o = {
      S: typedArrayFor(d, out[0]!.size),
      bary: typedArrayFor(d, out[1]!.size),
      depth: typedArrayFor(d, out[2]!.size),
      logD: typedArrayFor(d, out[3]!.size),
    };
    softrasJvp(t, masksOf(t, ins[2]!.data, p), face!.data as Int32Array, txy!.data, tz!.data, p, o);
    return [o.S, o.bary, o.depth, o.logD].map((a, i) => host(a, out[i]!.shape, d));
  },
  vjp: (ins, [face], [cS, cBary, cDepth, cLogD], p) => {
    const t = table(ins, ins[3]!, p);
    const d = ins[0]!.dtype;
    const gxy = typedArrayFor(d, ins[0]!.data.length),
      gz = typedArrayFor(d, ins[1]!.data.length);
    softrasVjp(
      t,
      masksOf(t, ins[2]!.data, p),
      face!.data as Int32Array,
      { S: cS!.data, bary: cBary!.data, depth: cDepth!.data, logD: cLogD!.data },
      p,
      gxy,
      gz,
    );
    return [host(gxy, ins[0]!.shape, d), host(gz, ins[1]!.shape, d)];
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
    const t = table(ins, ins[5]!, p);
    const d = ins[0]!.dtype;
    const o = {
      rgb: typedArrayFor(d, out[0]!.size),
      S: typedArrayFor(d, out[1]!.size),
      M: typedArrayFor(d, out[2]!.size),
      Z: typedArrayFor(d, out[3]!.size),
    };
    softrasColourForward(t, masksOf(t, ins[2]!.data, p), ins[3]!.data, ins[4]!.data, p, o);
    return [o.rgb, o.S, o.M, o.Z].map((a, i) => host(a, out[i]!.shape, d));
  },
  jvp: (ins, [rgb, M, Z], [txy, tz, tA, tbg], p, out) => {
    const t = table(ins, ins[5]!, p);
    const d = ins[0]!.dtype;
    const o = { rgb: typedArrayFor(d, out[0]!.size), S: typedArrayFor(d, out[1]!.size) };
    softrasColourJvp(
      t,
      masksOf(t, ins[2]!.data, p),
      ins[3]!.data,
      { rgb: rgb!.data, M: M!.data, Z: Z!.data },
      { xy: txy!.data, z: tz!.data, A: tA!.data, bg: tbg!.data },
      p,
      o,
    );
    return [host(o.rgb, out[0]!.shape, d), host(o.S, out[1]!.shape, d)];
  },
  vjp: (ins, [rgb, M, Z], [cRgb, cS], p) => {
    const t = table(ins, ins[5]!, p);
    const d = ins[0]!.dtype;
    const o = {
      xy: typedArrayFor(d, ins[0]!.data.length),
      z: typedArrayFor(d, ins[1]!.data.length),
      A: typedArrayFor(d, ins[3]!.data.length),
      bg: typedArrayFor(d, ins[4]!.data.length),
    };
    softrasColourVjp(
      t,
      masksOf(t, ins[2]!.data, p),
      ins[3]!.data,
      { rgb: rgb!.data, M: M!.data, Z: Z!.data },
      { rgb: cRgb!.data, S: cS!.data },
      p,
      o,
    );
    return [
      host(o.xy, ins[0]!.shape, d),
      host(o.z, ins[1]!.shape, d),
      host(o.A, ins[3]!.shape, d),
      host(o.bg, ins[4]!.shape, d),
    ];
  },
});
