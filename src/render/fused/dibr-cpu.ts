/**
 * DIB-R geometry as fused CPU kernels (DIB-R, Chen et al. 2019, as in dibr.ts): per pixel
 *   hard pass: among valid faces containing p (w_k ≥ 0) that pass the culling, the nearest by
 *     affine depth Σ w_k z_k wins (ties: the first face); its screen barycentrics are output;
 *   soft silhouette: over the first `knum` faces (face order) whose box padded by boxLen contains
 *     p, logT = Σ log(1 − exp(−max(d²·sigmaInv, 1e-12)))  → alpha = covered ? 1 : 1 − exp(logT);
 *     at covered pixels alpha is 1 whatever logT is, so logT is not computed there (0): inside the
 *     silhouette every nearby face is close, so those pixels would cost the most.
 * Forward, jvp and vjp (per face over its padded box: deterministic); float64 arithmetic.
 */
import type { TypedArray } from "../../core/dtype.js";
import {
  addBaryGradient,
  barycentricsAt,
  baryTangent,
  binTiles,
  boundaryDistance,
  distanceLowerBound2,
  faceTable,
  ndcX,
  ndcY,
  pixelBox,
  type FaceTable,
  type Piece,
  tileOf,
  type TileBins,
} from "./faces.js";

export interface DibrKernelParams {
  readonly width: number;
  readonly height: number;
  readonly sigmaInv: number;
  readonly boxLen: number;
  /** Faces shaping a pixel's soft silhouette (a huge number: all). */
  readonly knum: number;
  readonly culling: "none" | "back" | "front";
}

export const dibrFaceTable = (xy: ArrayLike<number>, z: ArrayLike<number>, n: number, p: DibrKernelParams): FaceTable =>
  faceTable(xy, z, n, p.boxLen);

/**
 * A soft-silhouette term log(1 − e^{−s}) with s = d²·sigmaInv > 50 is above −2e-22: left out,
 * where the distance bound from the barycentrics already shows it (so the exact point–segment
 * distance is only computed for faces that matter).
 */
const FAR_S = 50;

export const dibrBins = (t: FaceTable, p: DibrKernelParams, rows?: Piece): TileBins =>
  binTiles(t, p.width, p.height, (f) => !!t.valid[f], 4, rows);

/** Per-pixel traversal results and temporaries. */
class Scan {
  /** The pixel's soft faces: the first knum whose padded box contains it, in face order. */
  readonly near: Int32Array;
  n = 0;
  winner = -1;
  readonly w = new Float64Array(3);
  readonly best = new Float64Array(3);
  readonly dist = new Float64Array(5);
  readonly dw = new Float64Array(3);
  constructor(knum: number, maxFaces: number) {
    this.near = new Int32Array(Math.max(1, Math.min(knum, maxFaces)));
  }
}

/** Fill s.near/s.n and, with `hard`, the hard pass's winner (s.winner, its barycentrics in s.best) for pixel (c, r). */
function scanPixel(
  t: FaceTable,
  bins: TileBins,
  front: ArrayLike<number>,
  p: DibrKernelParams,
  c: number,
  r: number,
  s: Scan,
  hard = true,
): void {
  const px = ndcX(c, p.width),
    py = ndcY(r, p.height),
    w = s.w;
  const tile = tileOf(bins, r, c);
  let zBest = Infinity;
  s.n = 0;
  s.winner = -1;
  for (let i = bins.start[tile]!; i < bins.start[tile + 1]!; i++) {
    const f = bins.faces[i]!;
    if (px < t.lo[2 * f]! || px > t.hi[2 * f]! || py < t.lo[2 * f + 1]! || py > t.hi[2 * f + 1]!) continue;
    if (s.n < p.knum) s.near[s.n++] = f;
    if (!hard) continue;
    if (!(p.culling === "none" || (p.culling === "back") === !!front[f])) continue;
    barycentricsAt(t, f, px, py, w);
    if (!(w[0]! >= 0 && w[1]! >= 0 && w[2]! >= 0)) continue;
    const z = w[0]! * t.z[3 * f]! + w[1]! * t.z[3 * f + 1]! + w[2]! * t.z[3 * f + 2]!;
    if (z < zBest) {
      zBest = z;
      s.winner = f;
      s.best[0] = w[0]!;
      s.best[1] = w[1]!;
      s.best[2] = w[2]!;
    }
  }
}

/**
 * Squared distance of p to face f into s.dist (d² ≥ FAR_S/sigmaInv shows as −1 in dist[0], the term being left out).
 */
function softDistance(t: FaceTable, f: number, px: number, py: number, p: DibrKernelParams, s: Scan): boolean {
  barycentricsAt(t, f, px, py, s.w);
  if (distanceLowerBound2(t, f, s.w) * p.sigmaInv > FAR_S) return false;
  boundaryDistance(t, f, px, py, s.dist);
  return s.dist[0]! * p.sigmaInv <= FAR_S;
}

/** ∂ log(1 − exp(−s))/∂(d²) with s = max(d²·sigmaInv, 1e-12): sigmaInv/expm1(s), 0 where clamped. */
const logOneMinusSlope = (d2: number, sigmaInv: number): number =>
  d2 * sigmaInv > 1e-12 ? sigmaInv / Math.expm1(d2 * sigmaInv) : 0;

export function dibrForward(
  t: FaceTable,
  front: ArrayLike<number>,
  p: DibrKernelParams,
  out: { logT: TypedArray; face: Int32Array; bary: TypedArray },
  rows: Piece = [0, p.height],
  bins: TileBins = dibrBins(t, p, rows),
): void {
  const { width: W, height: H } = p;
  const s = new Scan(p.knum, t.n);
  out.bary.fill(0, 3 * rows[0] * W, 3 * rows[1] * W);
  for (let r = rows[0]; r < rows[1]; r++)
    for (let c = 0; c < W; c++) {
      const px = ndcX(c, W),
        py = ndcY(r, H),
        pix = r * W + c;
      scanPixel(t, bins, front, p, c, r, s);
      out.face[pix] = s.winner;
      if (s.winner >= 0) {
        out.logT[pix] = 0;
        out.bary[3 * pix] = s.best[0]!;
        out.bary[3 * pix + 1] = s.best[1]!;
        out.bary[3 * pix + 2] = s.best[2]!;
        continue;
      }
      let sum = 0;
      for (let i = 0; i < s.n; i++) {
        if (!softDistance(t, s.near[i]!, px, py, p, s)) continue;
        sum += Math.log(-Math.expm1(-Math.max(s.dist[0]! * p.sigmaInv, 1e-12)));
      }
      out.logT[pix] = sum;
    }
}

/** Tangent of d² at p (its envelope gradient, see softras-pair.ts distanceTangent) for vertex tangents d[o..o+5]. */
function distanceTangent(dist: Float64Array, d: ArrayLike<number>, o: number): number {
  const e = dist[1]!,
    tt = dist[2]!,
    ex = dist[3]!,
    ey = dist[4]!;
  const a = o + 2 * e,
    b = o + 2 * ((e + 1) % 3);
  return -2 * ((1 - tt) * (ex * d[a]! + ey * d[a + 1]!) + tt * (ex * d[b]! + ey * d[b + 1]!));
}

export function dibrJvp(
  t: FaceTable,
  front: ArrayLike<number>,
  face: Int32Array,
  dxy: ArrayLike<number>,
  p: DibrKernelParams,
  out: { logT: TypedArray; bary: TypedArray },
  rows: Piece = [0, p.height],
  bins: TileBins = dibrBins(t, p, rows),
): void {
  const { width: W, height: H } = p;
  const s = new Scan(p.knum, t.n);
  out.bary.fill(0, 3 * rows[0] * W, 3 * rows[1] * W);
  for (let r = rows[0]; r < rows[1]; r++)
    for (let c = 0; c < W; c++) {
      const px = ndcX(c, W),
        py = ndcY(r, H),
        pix = r * W + c;
      const f = face[pix]!;
      if (f < 0) {
        // Uncovered: the soft silhouette's tangent (covered pixels have logT = 0, see the header).
        scanPixel(t, bins, front, p, c, r, s, false);
        let sum = 0;
        for (let i = 0; i < s.n; i++) {
          const near = s.near[i]!;
          if (!softDistance(t, near, px, py, p, s)) continue;
          const slope = logOneMinusSlope(s.dist[0]!, p.sigmaInv);
          if (slope !== 0) sum += slope * distanceTangent(s.dist, dxy, 6 * near);
        }
        out.logT[pix] = sum;
        continue;
      }
      out.logT[pix] = 0;
      barycentricsAt(t, f, px, py, s.w);
      baryTangent(t, f, px, py, s.w, dxy, 6 * f, s.dw);
      out.bary[3 * pix] = s.dw[0]!;
      out.bary[3 * pix + 1] = s.dw[1]!;
      out.bary[3 * pix + 2] = s.dw[2]!;
    }
}

/**
 * Per pixel of rows [rows[0], rows[1]) (into cutoff), the last face of its soft silhouette (face order): a face takes
 * part in the adjoint at a pixel iff it is near and not after it (−1 at covered pixels).
 */
export function dibrCutoffs(
  t: FaceTable,
  face: Int32Array,
  p: DibrKernelParams,
  cutoff: Int32Array = new Int32Array(p.width * p.height),
  rows: Piece = [0, p.height],
): Int32Array {
  const { width: W, height: H } = p;
  const bins = dibrBins(t, p, rows);
  cutoff.fill(-1, rows[0] * W, rows[1] * W);
  for (let r = rows[0]; r < rows[1]; r++)
    for (let c = 0; c < W; c++) {
      if (face[r * W + c]! >= 0) continue; // covered: logT is constant 0 there
      const px = ndcX(c, W),
        py = ndcY(r, H),
        tile = tileOf(bins, r, c);
      let near = 0;
      for (let i = bins.start[tile]!; i < bins.start[tile + 1]! && near < p.knum; i++) {
        const f = bins.faces[i]!;
        if (px >= t.lo[2 * f]! && px <= t.hi[2 * f]! && py >= t.lo[2 * f + 1]! && py <= t.hi[2 * f + 1]!) {
          near++;
          cutoff[r * W + c] = f;
        }
      }
    }
  return cutoff;
}

/** Cotangents of the vertices of faces [faces[0], faces[1]) (into gxy; other faces' entries are left as they are). */
export function dibrVjp(
  t: FaceTable,
  face: Int32Array,
  ctLogT: ArrayLike<number>,
  ctBary: ArrayLike<number>,
  p: DibrKernelParams,
  gxy: TypedArray,
  faces: Piece,
  cutoff: Int32Array,
): void {
  const { width: W, height: H } = p;
  const s = new Scan(p.knum, t.n),
    g = new Float64Array(6);
  for (let f = faces[0]; f < faces[1]; f++) {
    if (!t.valid[f]) {
      gxy.fill(0, 6 * f, 6 * f + 6);
      continue;
    }
    const [c0, c1, r0, r1] = pixelBox(t, f, W, H);
    g.fill(0);
    for (let r = r0; r <= r1; r++)
      for (let c = c0; c <= c1; c++) {
        const px = ndcX(c, W),
          py = ndcY(r, H),
          pix = r * W + c;
        const ct = ctLogT[pix]!;
        if (ct !== 0 && f <= cutoff[pix]! && softDistance(t, f, px, py, p, s)) {
          const gd = ct * logOneMinusSlope(s.dist[0]!, p.sigmaInv);
          if (gd !== 0) {
            const e = s.dist[1]!,
              tt = s.dist[2]!,
              ex = s.dist[3]!,
              ey = s.dist[4]!;
            const a = 2 * e,
              b = 2 * ((e + 1) % 3),
              ga = -2 * gd * (1 - tt),
              gb = -2 * gd * tt;
            g[a] += ga * ex;
            g[a + 1] += ga * ey;
            g[b] += gb * ex;
            g[b + 1] += gb * ey;
          }
        }
        if (face[pix] !== f) continue;
        barycentricsAt(t, f, px, py, s.w);
        addBaryGradient(t, f, px, py, s.w, ctBary[3 * pix]!, ctBary[3 * pix + 1]!, ctBary[3 * pix + 2]!, g);
      }
    for (let m = 0; m < 6; m++) gxy[6 * f + m] = g[m]!;
  }
}
