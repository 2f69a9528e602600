/**
 * DIB-R geometry as fused CPU kernels (render-anchors.md §1.3, dibr.ts): per pixel
 *   hard pass: among valid faces containing p (w_k ≥ 0) that pass the culling, the nearest by
 *     affine depth Σ w_k z_k wins (ties: the first face); its screen barycentrics are output;
 *   soft silhouette: over the first `knum` faces (face order) whose box padded by boxLen contains
 *     p, logT = Σ log(1 − exp(−max(d²·sigmaInv, 1e-12)))  → alpha = covered ? 1 : 1 − exp(logT).
 * Forward, jvp and vjp (per face over its padded box: deterministic); float64 arithmetic.
 */
import { binTiles, boundaryDistance, faceTable, ndcX, ndcY, pixelBox, type FaceTable } from "./faces.js";

export interface DibrKernelParams {
  readonly width: number;
  readonly height: number;
  readonly sigmaInv: number;
  readonly boxLen: number;
  /** Faces shaping a pixel's soft silhouette (Infinity: all). */
  readonly knum: number;
  readonly culling: "none" | "back" | "front";
}

export interface DibrForward {
  /** [H·W] log transmittance of the soft silhouette. */
  readonly logT: Float64Array;
  /** [H·W] visible face, −1 where uncovered. */
  readonly face: Int32Array;
  /** [H·W·3] screen barycentrics of the visible face (0 where uncovered). */
  readonly bary: Float64Array;
}

export const dibrFaceTable = (xy: ArrayLike<number>, z: ArrayLike<number>, n: number, p: DibrKernelParams): FaceTable => faceTable(xy, z, n, p.boxLen);

function barycentricsOf(t: FaceTable, f: number, px: number, py: number, w: Float64Array): void {
  const o = 6 * f, x = t.xy, A = t.area[f]!;
  for (let k = 0; k < 3; k++) {
    const a = (k + 1) % 3, b = (k + 2) % 3;
    const xa = x[o + 2 * a]!, ya = x[o + 2 * a + 1]!, xb = x[o + 2 * b]!, yb = x[o + 2 * b + 1]!;
    w[k] = ((px - xa) * (yb - ya) - (py - ya) * (xb - xa)) / A;
  }
}

const inBox = (t: FaceTable, f: number, px: number, py: number) => px >= t.lo[2 * f]! && px <= t.hi[2 * f]! && py >= t.lo[2 * f + 1]! && py <= t.hi[2 * f + 1]!;

/** Which faces may win the hard pass. */
const drawable = (front: ArrayLike<number>, f: number, culling: DibrKernelParams["culling"]) =>
  culling === "none" || (culling === "back" ? !!front[f] : !front[f]);

/**
 * Visit the faces of pixel (c, r) in face order: `soft(f)` for each of the first knum faces whose
 * padded box contains it. Returns the winner of the hard pass (−1 if none) and fills its barycentrics.
 */
function visitPixel(t: FaceTable, bins: ReturnType<typeof binTiles>, front: ArrayLike<number>, p: DibrKernelParams, c: number, r: number,
  w: Float64Array, best: Float64Array, soft: (f: number) => void): number {
  const px = ndcX(c, p.width), py = ndcY(r, p.height);
  const tile = Math.floor(r / bins.size) * bins.nx + Math.floor(c / bins.size);
  let near = 0, winner = -1, zBest = Infinity;
  for (let i = bins.start[tile]!; i < bins.start[tile + 1]!; i++) {
    const f = bins.faces[i]!;
    if (!inBox(t, f, px, py)) continue;
    if (near < p.knum) { near++; soft(f); }
    if (!drawable(front, f, p.culling)) continue;
    barycentricsOf(t, f, px, py, w);
    if (!(w[0]! >= 0 && w[1]! >= 0 && w[2]! >= 0)) continue;
    const z = w[0]! * t.z[3 * f]! + w[1]! * t.z[3 * f + 1]! + w[2]! * t.z[3 * f + 2]!;
    if (z < zBest) { zBest = z; winner = f; best.set(w); }
  }
  return winner;
}

const binsOf = (t: FaceTable, p: DibrKernelParams) => binTiles(t, p.width, p.height, (f) => !!t.valid[f]);

export function dibrForward(t: FaceTable, front: ArrayLike<number>, p: DibrKernelParams): DibrForward {
  const { width: W, height: H } = p;
  const logT = new Float64Array(W * H), face = new Int32Array(W * H), bary = new Float64Array(3 * W * H);
  const bins = binsOf(t, p), dist = new Float64Array(5), w = new Float64Array(3), best = new Float64Array(3);
  for (let r = 0; r < H; r++) for (let c = 0; c < W; c++) {
    const px = ndcX(c, W), py = ndcY(r, H), pix = r * W + c;
    let s = 0;
    const winner = visitPixel(t, bins, front, p, c, r, w, best, (f) => {
      boundaryDistance(t, f, px, py, dist);
      s += Math.log(-Math.expm1(-Math.max(dist[0]! * p.sigmaInv, 1e-12)));
    });
    logT[pix] = s;
    face[pix] = winner;
    if (winner >= 0) bary.set(best, 3 * pix);
  }
  return { logT, face, bary };
}

/** ∂ log(1 − exp(−s))/∂(d²) with s = max(d²·sigmaInv, 1e-12): sigmaInv/expm1(s), 0 where clamped. */
const logOneMinusSlope = (d2: number, sigmaInv: number): number => (d2 * sigmaInv > 1e-12 ? sigmaInv / Math.expm1(d2 * sigmaInv) : 0);

/** ∂d²/∂(x0 y0 x1 y1 x2 y2) at p: the envelope gradient −2e(1 − t) to the edge's start, −2e·t to its end. */
function distanceJacobian(dist: Float64Array, j: Float64Array): void {
  j.fill(0);
  const e = dist[1]!, tt = dist[2]!, ex = dist[3]!, ey = dist[4]!;
  const a = e, b = (e + 1) % 3;
  j[2 * a] = -2 * ex * (1 - tt); j[2 * a + 1] = -2 * ey * (1 - tt);
  j[2 * b] += -2 * ex * tt; j[2 * b + 1] += -2 * ey * tt;
}

/** ∂w_k/∂(x0 y0 x1 y1 x2 y2) for all k at once into jw[k·6 + i] (see softras-cpu.ts baryJacobian). */
function baryJacobians(t: FaceTable, f: number, px: number, py: number, w: Float64Array, jw: Float64Array): void {
  const o = 6 * f, x = t.xy, A = t.area[f]!;
  const X = (i: number) => x[o + 2 * i]!, Y = (i: number) => x[o + 2 * i + 1]!;
  const dA = [Y(2) - Y(1), X(1) - X(2), Y(0) - Y(2), X(2) - X(0), Y(1) - Y(0), X(0) - X(1)];
  jw.fill(0);
  for (let k = 0; k < 3; k++) {
    const a = (k + 1) % 3, b = (k + 2) % 3, o6 = 6 * k;
    jw[o6 + 2 * a] += py - Y(b); jw[o6 + 2 * a + 1] += X(b) - px;
    jw[o6 + 2 * b] += Y(a) - py; jw[o6 + 2 * b + 1] += px - X(a);
    for (let i = 0; i < 6; i++) jw[o6 + i] = (jw[o6 + i]! - w[k]! * dA[i]!) / A;
  }
}

export function dibrJvp(t: FaceTable, front: ArrayLike<number>, face: Int32Array, dxy: ArrayLike<number>, p: DibrKernelParams): { logT: Float64Array; bary: Float64Array } {
  const { width: W, height: H } = p;
  const dT = new Float64Array(W * H), dB = new Float64Array(3 * W * H);
  const bins = binsOf(t, p), dist = new Float64Array(5), jd = new Float64Array(6), jw = new Float64Array(18), w = new Float64Array(3), best = new Float64Array(3);
  for (let r = 0; r < H; r++) for (let c = 0; c < W; c++) {
    const px = ndcX(c, W), py = ndcY(r, H), pix = r * W + c;
    let s = 0;
    visitPixel(t, bins, front, p, c, r, w, best, (f) => {
      boundaryDistance(t, f, px, py, dist);
      const slope = logOneMinusSlope(dist[0]!, p.sigmaInv);
      if (slope === 0) return;
      distanceJacobian(dist, jd);
      let dd = 0;
      for (let i = 0; i < 6; i++) dd += jd[i]! * dxy[6 * f + i]!;
      s += slope * dd;
    });
    dT[pix] = s;
    const f = face[pix]!;
    if (f < 0) continue;
    barycentricsOf(t, f, px, py, w);
    baryJacobians(t, f, px, py, w, jw);
    for (let k = 0; k < 3; k++) { let d = 0; for (let i = 0; i < 6; i++) d += jw[6 * k + i]! * dxy[6 * f + i]!; dB[3 * pix + k] = d; }
  }
  return { logT: dT, bary: dB };
}

export function dibrVjp(t: FaceTable, front: ArrayLike<number>, face: Int32Array, ctLogT: ArrayLike<number>, ctBary: ArrayLike<number>, p: DibrKernelParams): Float64Array {
  const { width: W, height: H } = p;
  const gxy = new Float64Array(6 * t.n);
  const bins = binsOf(t, p), dist = new Float64Array(5), jd = new Float64Array(6), jw = new Float64Array(18), w = new Float64Array(3), best = new Float64Array(3);
  // Per pixel, the last face of its soft silhouette (face order): a face takes part iff it is near and not after it.
  const cutoff = new Int32Array(W * H).fill(-1);
  for (let r = 0; r < H; r++) for (let c = 0; c < W; c++) visitPixel(t, bins, front, p, c, r, w, best, (f) => { cutoff[r * W + c] = f; });
  for (let f = 0; f < t.n; f++) {
    if (!t.valid[f]) continue;
    const [c0, c1, r0, r1] = pixelBox(t, f, W, H);
    const g = new Float64Array(6);
    for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) {
      const px = ndcX(c, W), py = ndcY(r, H), pix = r * W + c;
      if (f <= cutoff[pix]! && ctLogT[pix] !== 0) {
        boundaryDistance(t, f, px, py, dist);
        const slope = logOneMinusSlope(dist[0]!, p.sigmaInv);
        if (slope !== 0) {
          distanceJacobian(dist, jd);
          for (let i = 0; i < 6; i++) g[i] += ctLogT[pix]! * slope * jd[i]!;
        }
      }
      if (face[pix] !== f) continue;
      barycentricsOf(t, f, px, py, w);
      baryJacobians(t, f, px, py, w, jw);
      for (let k = 0; k < 3; k++) for (let i = 0; i < 6; i++) g[i] += ctBary[3 * pix + k]! * jw[6 * k + i]!;
    }
    gxy.set(g, 6 * f);
  }
  return gxy;
}
