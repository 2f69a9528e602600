/**
 * The per pixel–face computation shared by the fused SoftRas kernels (SoftRas, Liu et al. 2019):
 * coverage x = δ·d²/σ or m|m|/σ and whether the pair is kept, the clipped barycentrics and
 * perspective depth a face colours a pixel with, and their derivatives written out by hand:
 * ∂w_k/∂vertices, ∂(d² or m|m|)/∂vertices (the envelope gradient of the clamped point–segment
 * distance), and the tangent and adjoint maps of (w̃, depth) given those of w and the depths.
 * Arithmetic is float64; nothing allocates per pair.
 */
import {
  addBaryGradient,
  barycentricsAt,
  baryTangent,
  binTiles,
  boundaryDistance,
  boundaryDistanceJoined,
  distanceLowerBound2,
  faceTable,
  insideJoined,
  ndcY,
  type FaceTable,
  type Piece,
  type TileBins,
} from "./faces.js";

export { addBaryGradient, baryTangent };

export interface SoftRasKernelParams {
  readonly width: number;
  readonly height: number;
  readonly sigma: number;
  /** Prune threshold T = ln(1/distEps − 1). */
  readonly prune: number;
  readonly distFunc: "euclidean" | "barycentric";
  readonly gamma: number;
  readonly near: number;
  readonly far: number;
  /** Colour layers kept per pixel. */
  readonly layers: number;
  /** Box padding of faces, NDC (see softRasMargin). */
  readonly margin: number;
}

/** Per-face masks: which faces shape the silhouette (`include`) and which may colour a pixel (`colour`). */
export interface FaceMasks {
  readonly include: Uint8Array;
  readonly colour: Uint8Array;
}

export interface SoftRasGeometryParams extends SoftRasKernelParams {
  /** Which faces may colour a pixel: all, front-facing only ("back" culled) or back-facing only. */
  readonly culling: "none" | "back" | "front";
  /** Apply the culling to the silhouette too. */
  readonly cullAlpha: boolean;
}

/** The masks of a call's faces for its culling (front: the faces' front-facing flags). */
export function masksOf(t: FaceTable, front: ArrayLike<number>, p: SoftRasGeometryParams): FaceMasks {
  const colour = new Uint8Array(t.n);
  for (let f = 0; f < t.n; f++) colour[f] = p.culling === "none" || (p.culling === "back") === !!front[f] ? 1 : 0;
  return { colour, include: p.cullAlpha ? colour : new Uint8Array(t.n).fill(1) };
}

/** Everything a kept pair needs downstream, filled by `pair`, and reused temporaries. */
export class Pair {
  keep = false;
  inside = false;
  x = 0;
  readonly w = new Float64Array(3);
  /** boundaryDistance's outputs: d², edge, t, e. */
  readonly dist = new Float64Array(5);
  /** Barycentric distance function: which w_k is the minimum. */
  minK = 0;
  // Temporaries of the colour geometry and the derivative code.
  readonly wc = new Float64Array(3);
  readonly c = new Float64Array(3);
  s = 0;
  sum = 0;
  q = 0;
  readonly dw = new Float64Array(3);
  readonly dwc = new Float64Array(3);
  readonly gw = new Float64Array(3);
  readonly gz = new Float64Array(3);
  /** σ(x) and σ(−x) (filled by `sigmoids`: one exp), and log σ(x) (by `activations`: one more log1p). */
  sx = 0;
  snx = 0;
  ex = 0;
  logD = 0;
}

/** σ(x), σ(−x) of a kept pair into pr.sx, pr.snx. */
export function sigmoids(pr: Pair): void {
  const x = pr.x,
    ex = Math.exp(-Math.abs(x)),
    inv = 1 / (1 + ex);
  pr.ex = ex;
  if (x >= 0) {
    pr.sx = inv;
    pr.snx = ex * inv;
  } else {
    pr.sx = ex * inv;
    pr.snx = inv;
  }
}

/** σ(x), σ(−x) and log σ(x) of a kept pair into pr.sx, pr.snx, pr.logD. */
export function activations(pr: Pair): void {
  sigmoids(pr);
  const l = Math.log1p(pr.ex);
  pr.logD = pr.x >= 0 ? -l : pr.x - l;
}

/**
 * Evaluate pixel p against face f into `out`. Where only d² is needed (`valueOnly`: no derivative
 * follows), a pixel inside the triangle takes the distance to the nearest edge's line, min_k w_k·h_k —
 * for an interior point the nearest boundary point is that line's foot — instead of the three
 * point–segment distances.
 */
export function pair(
  t: FaceTable,
  f: number,
  px: number,
  py: number,
  p: SoftRasKernelParams,
  out: Pair,
  valueOnly = false,
): void {
  out.keep = false;
  if (!t.valid[f]) return;
  const w = out.w;
  barycentricsAt(t, f, px, py, w);
  const j = p.distFunc === "euclidean" ? t.joins[f]! : 0;
  out.inside = j ? insideJoined(w, j) : w[0]! > 0 && w[1]! > 0 && w[2]! > 0;
  if (p.distFunc === "euclidean") {
    // Far outside: pruned without the exact distance (d² ≥ bound ≥ Tσ ⇒ x ≤ −T; joined edges only lengthen d).
    if (!out.inside && distanceLowerBound2(t, f, w) > p.prune * p.sigma * (1 + 1e-9)) return;
    if (j) boundaryDistanceJoined(t, f, px, py, j, out.dist);
    else if (valueOnly && out.inside) {
      const h = t.height,
        o = 3 * f,
        d = Math.min(w[0]! * h[o]!, w[1]! * h[o + 1]!, w[2]! * h[o + 2]!);
      out.dist[0] = d * d;
    } else boundaryDistance(t, f, px, py, out.dist);
    out.x = (out.inside ? out.dist[0]! : -out.dist[0]!) / p.sigma;
  } else {
    const k = w[0]! <= w[1]! ? (w[0]! <= w[2]! ? 0 : 2) : w[1]! <= w[2]! ? 1 : 2;
    out.minK = k;
    out.x = (w[k]! * Math.abs(w[k]!)) / p.sigma;
  }
  out.keep = out.inside || out.x > -p.prune;
}

/**
 * Columns [c0, c1] of row r (within the face's pixel box c0..c1) where `pair` can keep face f
 * (euclidean distance): outside them some edge's line is farther than the prune radius R, which
 * `pair` rejects by its distance bound (−w_k·h_k > R). w_k is affine along the row, so each edge
 * bounds the columns on one side; the span is widened by a column each way so that rounding never
 * drops a pixel `pair` would keep. Returns c1 < c0 when none can be kept.
 */
export function rowSpan(
  t: FaceTable,
  f: number,
  r: number,
  c0: number,
  c1: number,
  p: SoftRasKernelParams,
): [number, number] {
  if (p.distFunc !== "euclidean") return [c0, c1];
  const W = p.width,
    py = ndcY(r, p.height),
    B = t.bary,
    o = 12 * f,
    R = Math.sqrt(p.prune * p.sigma * (1 + 1e-9));
  let lo = c0,
    hi = c1;
  for (let k = 0; k < 3; k++) {
    const h = t.height[3 * f + k]!;
    if (!(h > 0)) continue;
    // w_k(px) = a·px + b ≥ −R/h, px = (2·col + 1 − W)/W.
    const a = B[o + 4 * k + 2]!,
      b = -B[o + 4 * k]! * a - (py - B[o + 4 * k + 1]!) * B[o + 4 * k + 3]!,
      bound = -R / h;
    if (a === 0) {
      if (b < bound) return [c0, c0 - 1];
      continue;
    }
    const colAt = (((bound - b) / a) * W + W - 1) / 2;
    if (a > 0) lo = Math.max(lo, Math.floor(colAt) - 1);
    else hi = Math.min(hi, Math.ceil(colAt) + 1);
  }
  return [lo, hi];
}

/** log σ(x), stable for either sign. */
export function logSigmoid(x: number): number {
  return x > 0 ? -Math.log1p(Math.exp(-x)) : x - Math.log1p(Math.exp(x));
}
export function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

/**
 * Clipped barycentrics and perspective depth of a pair: returns the depth; fills pr.wc, pr.c (clipped), pr.s (sum
 * guard), pr.sum, pr.q.
 */
export function colourGeometry(t: FaceTable, f: number, pr: Pair): number {
  const w = pr.w,
    c = pr.c,
    wc = pr.wc;
  c[0] = Math.min(1, Math.max(0, w[0]!));
  c[1] = Math.min(1, Math.max(0, w[1]!));
  c[2] = Math.min(1, Math.max(0, w[2]!));
  const sum = c[0] + c[1] + c[2],
    s = Math.max(sum, 1e-5),
    is = 1 / s;
  wc[0] = c[0] * is;
  wc[1] = c[1] * is;
  wc[2] = c[2] * is;
  pr.sum = sum;
  pr.s = s;
  pr.q = wc[0] * t.iz[3 * f]! + wc[1] * t.iz[3 * f + 1]! + wc[2] * t.iz[3 * f + 2]!;
  return 1 / Math.max(pr.q, 1e-12);
}

export function faceTableFor(
  xy: ArrayLike<number>,
  z: ArrayLike<number>,
  n: number,
  p: SoftRasKernelParams,
  joins?: ArrayLike<number>,
): FaceTable {
  return faceTable(xy, z, n, p.margin, joins);
}

export const binsOf = (t: FaceTable, masks: FaceMasks, p: SoftRasKernelParams, rows?: Piece): TileBins =>
  binTiles(t, p.width, p.height, (f) => !!(t.valid[f] && masks.include[f]), TILE, rows);
/**
 * Pixels per tile side: small tiles test fewer faces per pixel (measured on a 1,280-face sphere: 4 beats 8 at 64² and
 * 256²).
 */
const TILE = 4;

/**
 * Tangent of a kept pair's d² (or m|m|) for vertex tangents d[o..o+5]: for d² the envelope
 * gradient of the clamped point–segment distance, ∂d²/∂a = −2e(1 − t), ∂d²/∂b = −2e·t; for m|m|
 * (m = w_k), 2|m|·dw_k.
 */
export function distanceTangent(
  t: FaceTable,
  f: number,
  px: number,
  py: number,
  pr: Pair,
  p: SoftRasKernelParams,
  d: ArrayLike<number>,
  o: number,
): number {
  if (p.distFunc === "euclidean") {
    const e = pr.dist[1]!,
      tt = pr.dist[2]!,
      ex = pr.dist[3]!,
      ey = pr.dist[4]!;
    const a = o + 2 * e,
      b = o + 2 * ((e + 1) % 3);
    return -2 * ((1 - tt) * (ex * d[a]! + ey * d[a + 1]!) + tt * (ex * d[b]! + ey * d[b + 1]!));
  }
  baryTangent(t, f, px, py, pr.w, d, o, pr.dw);
  return 2 * Math.abs(pr.w[pr.minK]!) * pr.dw[pr.minK]!;
}

/** g[0..5] += gd·∂(d² or m|m|)/∂v (see distanceTangent). */
export function addDistanceGradient(
  t: FaceTable,
  f: number,
  px: number,
  py: number,
  pr: Pair,
  p: SoftRasKernelParams,
  gd: number,
  g: Float64Array,
): void {
  if (p.distFunc === "euclidean") {
    const e = pr.dist[1]!,
      tt = pr.dist[2]!,
      ex = pr.dist[3]!,
      ey = pr.dist[4]!;
    const a = 2 * e,
      b = 2 * ((e + 1) % 3),
      ga = -2 * gd * (1 - tt),
      gb = -2 * gd * tt;
    g[a] += ga * ex;
    g[a + 1] += ga * ey;
    g[b] += gb * ex;
    g[b + 1] += gb * ey;
    return;
  }
  const k = pr.minK,
    m2 = 2 * Math.abs(pr.w[k]!) * gd;
  addBaryGradient(t, f, px, py, pr.w, k === 0 ? m2 : 0, k === 1 ? m2 : 0, k === 2 ? m2 : 0, g);
}

/**
 * Cotangents of a layer's w̃ and depth pulled back to w (pr.gw) and the vertex depths (pr.gz). Needs colourGeometry
 * first.
 */
export function layerAdjoint(
  t: FaceTable,
  f: number,
  pr: Pair,
  gwc0: number,
  gwc1: number,
  gwc2: number,
  gDepth: number,
): void {
  const q = pr.q,
    s = pr.s,
    c = pr.c,
    wc = pr.wc;
  const gq = q > 1e-12 ? -gDepth / (q * q) : 0;
  const iz0 = t.iz[3 * f]!,
    iz1 = t.iz[3 * f + 1]!,
    iz2 = t.iz[3 * f + 2]!;
  const g0 = gwc0 + gq * iz0,
    g1 = gwc1 + gq * iz1,
    g2 = gwc2 + gq * iz2;
  pr.gz[0] = -gq * wc[0]! * iz0 * iz0;
  pr.gz[1] = -gq * wc[1]! * iz1 * iz1;
  pr.gz[2] = -gq * wc[2]! * iz2 * iz2;
  const gs = pr.sum > 1e-5 ? -(g0 * c[0]! + g1 * c[1]! + g2 * c[2]!) / (s * s) : 0;
  const w = pr.w;
  pr.gw[0] = w[0]! > 0 && w[0]! < 1 ? g0 / s + gs : 0;
  pr.gw[1] = w[1]! > 0 && w[1]! < 1 ? g1 / s + gs : 0;
  pr.gw[2] = w[2]! > 0 && w[2]! < 1 ? g2 / s + gs : 0;
}

/**
 * Tangent of a layer's depth (returned) and w̃ (pr.dwc) for tangents pr.dw of w and dz0..2 of the vertex depths. Needs
 * colourGeometry first.
 */
export function layerTangent(t: FaceTable, f: number, pr: Pair, dz0: number, dz1: number, dz2: number): number {
  const w = pr.w,
    c = pr.c,
    wc = pr.wc,
    s = pr.s,
    dw = pr.dw,
    dwc = pr.dwc;
  const dc0 = w[0]! > 0 && w[0]! < 1 ? dw[0]! : 0,
    dc1 = w[1]! > 0 && w[1]! < 1 ? dw[1]! : 0,
    dc2 = w[2]! > 0 && w[2]! < 1 ? dw[2]! : 0;
  const ds = pr.sum > 1e-5 ? dc0 + dc1 + dc2 : 0;
  dwc[0] = dc0 / s - (c[0]! * ds) / (s * s);
  dwc[1] = dc1 / s - (c[1]! * ds) / (s * s);
  dwc[2] = dc2 / s - (c[2]! * ds) / (s * s);
  const iz0 = t.iz[3 * f]!,
    iz1 = t.iz[3 * f + 1]!,
    iz2 = t.iz[3 * f + 2]!;
  const dq =
    dwc[0] * iz0 -
    wc[0]! * dz0 * iz0 * iz0 +
    dwc[1] * iz1 -
    wc[1]! * dz1 * iz1 * iz1 +
    dwc[2] * iz2 -
    wc[2]! * dz2 * iz2 * iz2;
  return pr.q > 1e-12 ? -dq / (pr.q * pr.q) : 0;
}
