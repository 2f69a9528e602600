/**
 * The fused rasterizers' CPU kernels by name, in the form both the calling thread and the
 * rasterizer worker threads run them (raster-threads.ts): `prepare` builds what every piece reads
 * (the face table and masks) from the operands, `run` computes the outputs of one piece —
 * a range of image rows for the kernels that loop over pixels, a range of faces for the adjoints,
 * which accumulate face by face. Pieces write disjoint parts of the outputs and nothing is summed
 * across them (the one sum over every pixel, the background's cotangent, stays on one thread), so
 * any split over threads gives the one-thread bits. `run` returns a count summed over pieces (an
 * integer: exact in any order).
 */
import type { TypedArray } from "../../core/dtype.js";
import { dibrCutoffs, dibrFaceTable, dibrForward, dibrJvp, dibrVjp, type DibrKernelParams } from "./dibr-cpu.js";
import type { FaceTable, Piece } from "./faces.js";
import {
  nearestDepthTerms,
  softrasColourCuts,
  softrasColourForward,
  softrasColourJvp,
  softrasColourVjp,
  type SoftRasColourParams,
} from "./softras-colour-cpu.js";
import { softrasForward, softrasJvp, softrasVjp } from "./softras-layers-cpu.js";
import { faceTableFor, masksOf, type FaceMasks, type SoftRasGeometryParams } from "./softras-pair.js";

/** A kernel's operands and outputs by name. */
export type RasterArrays = Readonly<Record<string, TypedArray>>;

export interface RasterKernel<P, C> {
  /**
   * Float operations of a call, roughly (the CPU jit's threshold for threads, 2M, decides whether it splits): the
   * pixel–face pairs of the faces' boxes at a few hundred operations each — a 1,280-face sphere at 64² splits, a
   * 12-face box filling a third of the image does not.
   */
  work(ins: RasterArrays, p: P): number;
  /** Rows (pixel kernels) or faces (adjoints): what pieces split. Every output element is written by some piece. */
  units(ins: RasterArrays, p: P): number;
  prepare(ins: RasterArrays, p: P): C;
  /** The piece's outputs; a count (an integer) where the kernel has one. */
  run(c: C, ins: RasterArrays, outs: RasterArrays, p: P, piece: Piece): number | undefined;
}

const kernel = <P, C>(k: RasterKernel<P, C>): RasterKernel<P, C> => k;
/** Operations per pixel–face pair, roughly (bench/render-floor.ts counts ~215 forward, ~260 backward). */
const OPS_PER_PAIR = 250;
/** OPS_PER_PAIR × the pixels of every face's screen box padded by the kernel's margin (NDC), clipped to the image. */
function boxPairWork(
  ins: RasterArrays,
  p: { width: number; height: number; margin?: number; boxLen?: number },
): number {
  const xy = ins.xy!,
    pad = 2 * (p.margin ?? p.boxLen ?? 0);
  let pairs = 0;
  for (let o = 0; o < xy.length; o += 6) {
    const w = Math.max(xy[o]!, xy[o + 2]!, xy[o + 4]!) - Math.min(xy[o]!, xy[o + 2]!, xy[o + 4]!) + pad;
    const h = Math.max(xy[o + 1]!, xy[o + 3]!, xy[o + 5]!) - Math.min(xy[o + 1]!, xy[o + 3]!, xy[o + 5]!) + pad;
    // NDC spans 2 across the image; a face's box holds at least its pixel.
    if (w >= 0 && h >= 0) pairs += Math.max(1, (Math.min(2, w) * p.width * Math.min(2, h) * p.height) / 4);
  }
  return OPS_PER_PAIR * pairs;
}
const faceCount = (ins: RasterArrays) => ins.xy!.length / 6;
const rows = (_: RasterArrays, p: { width: number; height: number }) => p.height;

/** Equal element by element (NaN never equals: a table is then rebuilt). */
function sameValues(a: ArrayLike<number> | undefined, b: ArrayLike<number> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
const sameParams = (a: object, b: object): boolean => {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.is(a[k as never], b[k as never]));
};
/**
 * `build` (a pure function of the named operands and the parameters) remembering its last result on this thread:
 * `fresh` builds (the forward kernels), `reused` returns the last result when its operands and parameters are equal —
 * a render's adjoint reads the geometry its forward read (DIB-R's adjoint runs two kernels on it), so it reuses that
 * call's face table. Operands are compared by value against kept copies, so a reused table is exactly the one a
 * rebuild would give.
 */
function remembered<P extends object, C>(names: readonly string[], build: (ins: RasterArrays, p: P) => C) {
  let last: { arrays: (TypedArray | undefined)[]; p: P; value: C } | null = null;
  const fresh = (ins: RasterArrays, p: P): C => {
    const value = build(ins, p);
    // A huge mesh's table (~450 bytes a face with the copies) is not kept past its call.
    last = faceCount(ins) <= REMEMBER_MAX_FACES ? { arrays: names.map((n) => ins[n]?.slice()), p, value } : null;
    return value;
  };
  const reused = (ins: RasterArrays, p: P): C =>
    last && sameParams(last.p, p) && names.every((n, i) => sameValues(last!.arrays[i], ins[n]))
      ? last.value
      : fresh(ins, p);
  return { fresh, reused };
}

/** Meshes up to this many faces have their last face table kept by each thread (≤ ~60 MB). */
const REMEMBER_MAX_FACES = 1 << 17;

/** The SoftRas face table and masks of a call's operands (xy, z, front, joins). */
const softrasFaces = remembered(
  ["xy", "z", "front", "joins"],
  (ins, p: SoftRasGeometryParams): { t: FaceTable; masks: FaceMasks } => {
    const t = faceTableFor(ins.xy!, ins.z!, faceCount(ins), p, ins.joins);
    return { t, masks: masksOf(t, ins.front!, p) };
  },
);
type ColourParams = SoftRasColourParams & SoftRasGeometryParams;
const dibrTable = remembered(["xy", "z"], (ins, p: DibrKernelParams) =>
  dibrFaceTable(ins.xy!, ins.z!, faceCount(ins), p),
);

export const RASTER_KERNELS = {
  softras_geometry: kernel({
    work: boxPairWork,
    units: rows,
    prepare: softrasFaces.fresh,
    run: (c, _ins, o, p: SoftRasGeometryParams, piece) =>
      softrasForward(
        c.t,
        c.masks,
        p,
        { S: o.S!, face: o.face as Int32Array, bary: o.bary!, depth: o.depth!, logD: o.logD! },
        piece,
      ),
  }),
  softras_geometry_jvp: kernel({
    work: boxPairWork,
    units: rows,
    prepare: softrasFaces.reused,
    run: (c, ins, o, p: SoftRasGeometryParams, piece) => {
      const out = { S: o.S!, bary: o.bary!, depth: o.depth!, logD: o.logD! };
      softrasJvp(c.t, c.masks, ins.face as Int32Array, ins.txy!, ins.tz!, p, out, piece);
    },
  }),
  softras_geometry_vjp: kernel({
    work: boxPairWork,
    units: faceCount,
    prepare: softrasFaces.reused,
    run: (c, ins, o, p: SoftRasGeometryParams, piece) => {
      const ct = { S: ins.cS!, bary: ins.cBary!, depth: ins.cDepth!, logD: ins.cLogD! };
      softrasVjp(c.t, c.masks, ins.face as Int32Array, ct, p, o.xy!, o.z!, piece);
    },
  }),
  softras_colour: kernel({
    work: boxPairWork,
    units: rows,
    prepare: softrasFaces.fresh,
    run: (c, ins, o, p: ColourParams, piece) => {
      softrasColourForward(c.t, c.masks, ins.A!, ins.bg!, p, { rgb: o.rgb!, S: o.S!, M: o.M!, Z: o.Z! }, piece);
    },
  }),
  softras_colour_jvp: kernel({
    work: boxPairWork,
    units: rows,
    prepare: softrasFaces.reused,
    run: (c, ins, o, p: ColourParams, piece) => {
      const aux = { rgb: ins.rgb!, M: ins.M!, Z: ins.Z! };
      const tan = { xy: ins.txy!, z: ins.tz!, A: ins.tA!, bg: ins.tbg! };
      softrasColourJvp(c.t, c.masks, ins.A!, aux, tan, p, { rgb: o.rgb!, S: o.S! }, piece);
    },
  }),
  softras_colour_cuts: kernel({
    work: (_, p) => 20 * p.width * p.height,
    units: rows,
    prepare: () => null,
    run: (_c, ins, o, p: ColourParams, piece) => {
      softrasColourCuts({ M: ins.M!, Z: ins.Z! }, p, { cut: o.cut!, eb: o.eb! }, piece);
    },
  }),
  softras_colour_vjp: kernel({
    work: boxPairWork,
    units: faceCount,
    prepare: (ins, p: ColourParams) => {
      const c = softrasFaces.reused(ins, p);
      return { ...c, nearTerm: nearestDepthTerms(c.t, p) };
    },
    run: (c, ins, o, p: ColourParams, piece) => {
      const aux = { rgb: ins.rgb!, M: ins.M!, Z: ins.Z! };
      const ct = { rgb: ins.cRgb!, S: ins.cS! };
      const out = { xy: o.xy!, z: o.z!, A: o.A! };
      softrasColourVjp(c.t, c.masks, ins.A!, aux, ct, p, out, piece, ins.cut!, c.nearTerm);
    },
  }),
  dibr_geometry: kernel({
    work: boxPairWork,
    units: rows,
    prepare: dibrTable.fresh,
    run: (t, ins, o, p: DibrKernelParams, piece) => {
      dibrForward(t, ins.front!, p, { logT: o.logT!, face: o.face as Int32Array, bary: o.bary! }, piece);
    },
  }),
  dibr_geometry_jvp: kernel({
    work: boxPairWork,
    units: rows,
    prepare: dibrTable.reused,
    run: (t, ins, o, p: DibrKernelParams, piece) => {
      dibrJvp(t, ins.front!, ins.face as Int32Array, ins.txy!, p, { logT: o.logT!, bary: o.bary! }, piece);
    },
  }),
  dibr_cutoffs: kernel({
    work: (ins, p) => boxPairWork(ins, p) / 4,
    units: rows,
    prepare: dibrTable.reused,
    run: (t, ins, o, p: DibrKernelParams, piece) => {
      dibrCutoffs(t, ins.face as Int32Array, p, o.cutoff as Int32Array, piece);
    },
  }),
  dibr_geometry_vjp: kernel({
    work: boxPairWork,
    units: faceCount,
    prepare: dibrTable.reused,
    run: (t, ins, o, p: DibrKernelParams, piece) => {
      dibrVjp(t, ins.face as Int32Array, ins.cT!, ins.cB!, p, o.xy!, piece, ins.cutoff as Int32Array);
    },
  }),
} as const;

export type RasterKernelName = keyof typeof RASTER_KERNELS;
