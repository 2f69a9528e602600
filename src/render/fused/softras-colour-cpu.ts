/**
 * SoftRas with per-corner colours (no fragment function: flat or Gouraud shading, colours
 * interpolated), fused end to end and exact over every face (SoftRas, Liu et al. 2019):
 *   S   = Σ_j log(1 − D_j)                                              → alpha = 1 − exp(S)
 *   rgb = (Σ_j e_j c_j + e_b bg) / (Σ_j e_j + e_b),  e_j = D_j exp(z̄_j/γ), e_b = exp(ε/γ),
 *   c_j = Σ_k w̃_jk A_jk (clipped barycentrics of face j at the pixel, its corner colours A_j),
 * the softmax accumulated online per pixel (running maximum M of the exponents, normaliser Z).
 * Differentiable in the vertices, depths, corner colours and background. Forward, jvp, and vjp
 * (per face over its padded box; the background's cotangent over pixels): deterministic.
 */
import type { TypedArray } from "../../core/dtype.js";
import { firstRow, lastRow, ndcX, ndcY, pixelBox, type FaceTable, type Piece, tileOf, type TileBins } from "./faces.js";
import {
  activations,
  addBaryGradient,
  rowSpan,
  sigmoids,
  addDistanceGradient,
  baryTangent,
  binsOf,
  colourGeometry,
  distanceTangent,
  layerAdjoint,
  layerTangent,
  Pair,
  pair,
  type FaceMasks,
  type SoftRasKernelParams,
} from "./softras-pair.js";

export interface SoftRasColourParams extends SoftRasKernelParams {
  /** ε: normalised depth of the background term. */
  readonly eps: number;
  /** Colour channels D. */
  readonly channels: number;
  /** Let gradients flow through the barycentrics that interpolate colours (false: SoftRas' CUDA backward). */
  readonly baryGradient: boolean;
}

export interface SoftRasColourOutputs {
  /** [H·W·D] colour. */
  readonly rgb: TypedArray;
  /** [H·W] log transmittance. */
  readonly S: TypedArray;
  /**
   * [H·W] the softmax's maximum exponent M and normaliser Z = Σ exp(u − M) (background included): what the derivatives
   * need.
   */
  readonly M: TypedArray;
  readonly Z: TypedArray;
}

/** The face's colour at the pixel (c_d = Σ_k w̃_k A_kd) into c; needs colourGeometry first. */
function faceColour(pr: Pair, A: ArrayLike<number>, f: number, D: number, c: Float64Array): void {
  const o = 3 * D * f,
    wc = pr.wc;
  for (let d = 0; d < D; d++) c[d] = wc[0]! * A[o + d]! + wc[1]! * A[o + D + d]! + wc[2]! * A[o + 2 * D + d]!;
}

/**
 * z̄/γ = (far − depth)·scale with scale = 1/((far − near)·γ) (depthScale): the depth's part of the
 * softmax exponent u = log D + z̄/γ (e = D·exp(z̄/γ − M) = σ(x)·exp(z̄/γ − M), no log needed).
 */
const depthTerm = (depth: number, far: number, scale: number) => (far - depth) * scale;
const depthScale = (p: SoftRasColourParams) => 1 / ((p.far - p.near) * p.gamma);

/**
 * Per face, the largest depth term any of its pixels can have: that of its nearest vertex (the
 * perspective depth of clipped barycentrics lies between its vertices' depths). A pair whose bound
 * is already below the weights the kernels leave out (e⁻⁴⁶ of the largest) is skipped before its
 * colour geometry is computed: the occluded faces behind a surface (a closed mesh's back half).
 */
export function nearestDepthTerms(t: FaceTable, p: SoftRasColourParams): Float64Array {
  const out = new Float64Array(t.n);
  const scale = depthScale(p);
  for (let f = 0; f < t.n; f++)
    out[f] = depthTerm(Math.min(t.z[3 * f]!, t.z[3 * f + 1]!, t.z[3 * f + 2]!), p.far, scale);
  return out;
}
/** ln 1e20 and a little more (the skip tests bounds, the kept pairs' weights are computed exactly). */
const NEGLIGIBLE = 47;

export function softrasColourForward(
  t: FaceTable,
  masks: FaceMasks,
  A: ArrayLike<number>,
  bg: ArrayLike<number>,
  p: SoftRasColourParams,
  out: SoftRasColourOutputs,
  rows: Piece = [0, p.height],
  nearTerm: Float64Array = nearestDepthTerms(t, p),
): void {
  const { width: W, height: H, channels: D } = p;
  const [R0, R1] = rows,
    base = R0 * W,
    HW = (R1 - R0) * W;
  const pr = new Pair(),
    c = new Float64Array(D);
  const ub = p.eps / p.gamma,
    scale = depthScale(p);
  // Per-pixel accumulators of rows [R0, R1) in float64 (the outputs may be float32): S, the
  // softmax's running maximum M, its normaliser Z and numerators, the background's term already in.
  const S = new Float64Array(HW),
    M = new Float64Array(HW).fill(ub),
    Z = new Float64Array(HW).fill(1),
    num = new Float64Array(HW * D);
  for (let pix = 0; pix < HW; pix++) for (let d = 0; d < D; d++) num[pix * D + d] = bg[d]!;
  // Face by face over its padded box, in face order: each pixel sees its faces in the same order as
  // a loop over the pixel's faces would, and a face's data stays in cache.
  for (let f = 0; f < t.n; f++) {
    // Faces outside the rows are skipped first: a thread's piece of a few rows meets few faces.
    if (!t.valid[f] || !masks.include[f] || lastRow(t, f, H) < R0 || firstRow(t, f, H) >= R1) continue;
    const [c0, c1, r0, r1] = pixelBox(t, f, W, H);
    const colourable = masks.colour[f] === 1,
      nt = nearTerm[f]!;
    for (let r = Math.max(r0, R0); r <= Math.min(r1, R1 - 1); r++) {
      const [s0, s1] = rowSpan(t, f, r, c0, c1, p);
      for (let col = s0; col <= s1; col++) {
        const px = ndcX(col, W),
          py = ndcY(r, H),
          pix = r * W + col - base;
        pair(t, f, px, py, p, pr, true);
        if (!pr.keep) continue;
        activations(pr);
        const ld = pr.logD;
        S[pix] += ld - pr.x;
        const m = M[pix]!;
        if (!colourable || nt < m - NEGLIGIBLE) continue;
        const z = colourGeometry(t, f, pr);
        if (!(z >= p.near && z <= p.far)) continue;
        const u = ld + depthTerm(z, p.far, scale);
        // Weight below e⁻⁴⁶ ≈ 1e-20 of the largest so far: below float64 rounding of the sums, left out.
        if (u < m - 46) continue;
        faceColour(pr, A, f, D, c);
        const o = pix * D;
        if (u > m) {
          const rescale = Math.exp(m - u);
          Z[pix] = Z[pix]! * rescale + 1;
          for (let d = 0; d < D; d++) num[o + d] = num[o + d]! * rescale + c[d]!;
          M[pix] = u;
        } else {
          const e = Math.exp(u - m);
          Z[pix] += e;
          for (let d = 0; d < D; d++) num[o + d] += e * c[d]!;
        }
      }
    }
  }
  for (let pix = 0; pix < HW; pix++) {
    const o = base + pix;
    out.S[o] = S[pix]!;
    out.M[o] = M[pix]!;
    out.Z[o] = Z[pix]!;
    for (let d = 0; d < D; d++) out.rgb[o * D + d] = num[pix * D + d]! / Z[pix]!;
  }
}

/** Tangents of rgb and S (into out) for tangents of the vertices, depths, corner colours and background. */
export function softrasColourJvp(
  t: FaceTable,
  masks: FaceMasks,
  A: ArrayLike<number>,
  aux: { rgb: ArrayLike<number>; M: ArrayLike<number>; Z: ArrayLike<number> },
  tan: { xy: ArrayLike<number>; z: ArrayLike<number>; A: ArrayLike<number>; bg: ArrayLike<number> },
  p: SoftRasColourParams,
  out: { rgb: TypedArray; S: TypedArray },
  rows: Piece = [0, p.height],
  bins: TileBins = binsOf(t, masks, p, rows),
  nearTerm: Float64Array = nearestDepthTerms(t, p),
): void {
  const { width: W, height: H, channels: D } = p;
  const pr = new Pair(),
    c = new Float64Array(D),
    drgb = new Float64Array(D);
  const ub = p.eps / p.gamma,
    scale = depthScale(p),
    sigmaInv = 1 / p.sigma;
  for (let r = rows[0]; r < rows[1]; r++)
    for (let col = 0; col < W; col++) {
      const px = ndcX(col, W),
        py = ndcY(r, H),
        pix = r * W + col;
      const tile = tileOf(bins, r, col);
      const M = aux.M[pix]!,
        Z = aux.Z[pix]!,
        cut = M + Math.log(Z) - NEGLIGIBLE;
      let ds = 0;
      const eb = Math.exp(ub - M) / Z;
      for (let d = 0; d < D; d++) drgb[d] = eb * tan.bg[d]!;
      for (let i = bins.start[tile]!; i < bins.start[tile + 1]!; i++) {
        const f = bins.faces[i]!;
        if (px < t.lo[2 * f]! || px > t.hi[2 * f]! || py < t.lo[2 * f + 1]! || py > t.hi[2 * f + 1]!) continue;
        pair(t, f, px, py, p, pr);
        if (!pr.keep) continue;
        const o = 6 * f;
        const colourable = masks.colour[f] === 1 && nearTerm[f]! >= cut;
        const z = colourable ? colourGeometry(t, f, pr) : 0;
        sigmoids(pr);
        // A weight that underflowed to 0 contributes exactly nothing (common with a sharp depth softmax).
        const e = colourable && z >= p.near && z <= p.far ? (pr.sx * Math.exp(depthTerm(z, p.far, scale) - M)) / Z : 0;
        const dd = distanceTangent(t, f, px, py, pr, p, tan.xy, o);
        const dx = (p.distFunc === "euclidean" && !pr.inside ? -dd : dd) * sigmaInv;
        ds -= pr.sx * dx;
        if (!(e > 1e-20)) continue;
        baryTangent(t, f, px, py, pr.w, tan.xy, o, pr.dw);
        const dDepth = layerTangent(t, f, pr, tan.z[3 * f]!, tan.z[3 * f + 1]!, tan.z[3 * f + 2]!);
        const du = pr.snx * dx - dDepth * scale;
        faceColour(pr, A, f, D, c);
        const oa = 3 * D * f,
          wc = pr.wc,
          dwc = pr.dwc,
          bg = p.baryGradient;
        for (let d = 0; d < D; d++) {
          let dc = wc[0]! * tan.A[oa + d]! + wc[1]! * tan.A[oa + D + d]! + wc[2]! * tan.A[oa + 2 * D + d]!;
          if (bg) dc += dwc[0]! * A[oa + d]! + dwc[1]! * A[oa + D + d]! + dwc[2]! * A[oa + 2 * D + d]!;
          drgb[d] += e * (dc + du * (c[d]! - aux.rgb[pix * D + d]!));
        }
      }
      out.S[pix] = ds;
      for (let d = 0; d < D; d++) out.rgb[pix * D + d] = drgb[d]!;
    }
}

/**
 * Per pixel of rows [rows[0], rows[1]) (into out): the depth term below which a face's weight is
 * negligible (`cut`, see nearestDepthTerms) and the background's share e_b of the colour (`eb`) —
 * what the adjoint's pieces read, and the background's cotangent.
 */
export function softrasColourCuts(
  aux: { M: ArrayLike<number>; Z: ArrayLike<number> },
  p: SoftRasColourParams,
  out: { cut: TypedArray; eb: TypedArray },
  rows: Piece = [0, p.height],
): void {
  const ub = p.eps / p.gamma;
  for (let pix = rows[0] * p.width; pix < rows[1] * p.width; pix++) {
    out.cut[pix] = aux.M[pix]! + Math.log(aux.Z[pix]!) - NEGLIGIBLE;
    out.eb[pix] = Math.exp(ub - aux.M[pix]!) / aux.Z[pix]!;
  }
}

/** The background's cotangent (into bg [D]) from every pixel's share eb (softrasColourCuts), summed in pixel order. */
export function softrasColourBackgroundVjp(
  eb: ArrayLike<number>,
  ctRgb: ArrayLike<number>,
  p: SoftRasColourParams,
  bg: TypedArray,
): void {
  const D = p.channels,
    gbg = new Float64Array(D);
  for (let pix = 0; pix < p.width * p.height; pix++)
    for (let d = 0; d < D; d++) gbg[d] += eb[pix]! * ctRgb[pix * D + d]!;
  for (let d = 0; d < D; d++) bg[d] = gbg[d]!;
}

/**
 * Cotangents of the vertices, depths and corner colours of faces [faces[0], faces[1]) (into out, whose other faces'
 * entries are left as they are) for cotangents of rgb and S; the background's: softrasColourBackgroundVjp.
 */
export function softrasColourVjp(
  t: FaceTable,
  masks: FaceMasks,
  A: ArrayLike<number>,
  aux: { rgb: ArrayLike<number>; M: ArrayLike<number>; Z: ArrayLike<number> },
  ct: { rgb: ArrayLike<number>; S: ArrayLike<number> },
  p: SoftRasColourParams,
  out: { xy: TypedArray; z: TypedArray; A: TypedArray },
  faces: Piece,
  cut: ArrayLike<number>,
  nearTerm: Float64Array,
): void {
  const { width: W, height: H, channels: D } = p;
  const pr = new Pair(),
    c = new Float64Array(D);
  const g = new Float64Array(6),
    gz = new Float64Array(3),
    gA = new Float64Array(3 * D);
  const scale = depthScale(p),
    sigmaInv = 1 / p.sigma;
  for (let f = faces[0]; f < faces[1]; f++) {
    const oa = 3 * D * f;
    if (!t.valid[f] || !masks.include[f]) {
      out.xy.fill(0, 6 * f, 6 * f + 6);
      out.z.fill(0, 3 * f, 3 * f + 3);
      out.A.fill(0, oa, oa + 3 * D);
      continue;
    }
    const [c0, c1, r0, r1] = pixelBox(t, f, W, H);
    g.fill(0);
    gz.fill(0);
    gA.fill(0);
    for (let r = r0; r <= r1; r++) {
      const [s0, s1] = rowSpan(t, f, r, c0, c1, p);
      for (let col = s0; col <= s1; col++) {
        const px = ndcX(col, W),
          py = ndcY(r, H),
          pix = r * W + col;
        pair(t, f, px, py, p, pr);
        if (!pr.keep) continue;
        sigmoids(pr);
        let gx = -ct.S[pix]! * pr.sx;
        const colourable = masks.colour[f] === 1 && nearTerm[f]! >= cut[pix]!;
        const z = colourable ? colourGeometry(t, f, pr) : 0;
        // Weights below 1e-20 (common with a sharp depth softmax) are left out, as in the forward pass.
        const e =
          colourable && z >= p.near && z <= p.far
            ? (pr.sx * Math.exp(depthTerm(z, p.far, scale) - aux.M[pix]!)) / aux.Z[pix]!
            : 0;
        if (e > 1e-20) {
          faceColour(pr, A, f, D, c);
          // ∂rgb/∂u = e (c − rgb); ∂rgb/∂c = e.
          let gu = 0,
            gw0 = 0,
            gw1 = 0,
            gw2 = 0;
          const wc = pr.wc;
          for (let d = 0; d < D; d++) {
            const cd = ct.rgb[pix * D + d]!,
              gc = e * cd;
            gu += cd * e * (c[d]! - aux.rgb[pix * D + d]!);
            gA[d] += gc * wc[0]!;
            gA[D + d] += gc * wc[1]!;
            gA[2 * D + d] += gc * wc[2]!;
            gw0 += gc * A[oa + d]!;
            gw1 += gc * A[oa + D + d]!;
            gw2 += gc * A[oa + 2 * D + d]!;
          }
          if (!p.baryGradient) {
            gw0 = 0;
            gw1 = 0;
            gw2 = 0;
          }
          gx += gu * pr.snx;
          layerAdjoint(t, f, pr, gw0, gw1, gw2, -gu * scale);
          gz[0] += pr.gz[0]!;
          gz[1] += pr.gz[1]!;
          gz[2] += pr.gz[2]!;
          addBaryGradient(t, f, px, py, pr.w, pr.gw[0]!, pr.gw[1]!, pr.gw[2]!, g);
        }
        if (gx === 0) continue;
        addDistanceGradient(t, f, px, py, pr, p, (p.distFunc === "euclidean" && !pr.inside ? -gx : gx) * sigmaInv, g);
      }
    }
    for (let m = 0; m < 6; m++) out.xy[6 * f + m] = g[m]!;
    out.z[3 * f] = gz[0]!;
    out.z[3 * f + 1] = gz[1]!;
    out.z[3 * f + 2] = gz[2]!;
    for (let i = 0; i < 3 * D; i++) out.A[oa + i] = gA[i]!;
  }
}
