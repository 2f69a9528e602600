/**
 * SoftRas geometry as fused CPU kernels, layered (for any fragment function): per pixel the
 * silhouette's log transmittance S = Σ log(1 − D_j) over every kept face (alpha = 1 − exp(S)),
 * and the K kept, colourable faces with near ≤ z ≤ far of largest softmax score log D + z̄/γ:
 * face index, clipped barycentrics w̃, perspective depth, log D. Shading and the depth softmax
 * over those layers are array code (softras.ts). Forward, jvp, and vjp (per face over its padded
 * box: deterministic, no atomics); results are stored in the output arrays' own type.
 */
import type { TypedArray } from "../../core/dtype.js";
import { ndcX, ndcY, pixelBox, type FaceTable, type Piece, tileOf, type TileBins } from "./faces.js";
import {
  addBaryGradient,
  addDistanceGradient,
  baryTangent,
  binsOf,
  colourGeometry,
  distanceTangent,
  layerAdjoint,
  layerTangent,
  logSigmoid,
  Pair,
  pair,
  sigmoid,
  type FaceMasks,
  type SoftRasKernelParams,
} from "./softras-pair.js";

/** Output arrays (any float typed array; face is int32). */
export interface SoftRasOutputs {
  /** [H·W] log transmittance Σ log(1 − D). */
  readonly S: TypedArray;
  /** [H·W·K] face per layer (−1: empty). */
  readonly face: Int32Array;
  /** [H·W·K·3] clipped barycentrics. */
  readonly bary: TypedArray;
  /** [H·W·K] perspective depth (1 in empty layers). */
  readonly depth: TypedArray;
  /** [H·W·K] log D (0 in empty layers). */
  readonly logD: TypedArray;
}

/**
 * Forward pass into `out`; returns the number of pixels whose colour lost a face of weight above e⁻⁴⁰ of the best to
 * the layer count.
 */
export function softrasForward(
  t: FaceTable,
  masks: FaceMasks,
  p: SoftRasKernelParams,
  out: SoftRasOutputs,
  rows: Piece = [0, p.height],
  bins: TileBins = binsOf(t, masks, p, rows),
): number {
  const { width: W, height: H, layers: K } = p;
  const { S, face, bary, depth, logD } = out;
  const [a0, a1] = [rows[0] * W * K, rows[1] * W * K];
  face.fill(-1, a0, a1);
  bary.fill(0, 3 * a0, 3 * a1);
  depth.fill(1, a0, a1);
  logD.fill(0, a0, a1);
  const pr = new Pair(),
    wc = pr.wc;
  const score = new Float64Array(K);
  const span = 1 / (p.far - p.near);
  let overflow = 0;
  for (let r = rows[0]; r < rows[1]; r++)
    for (let c = 0; c < W; c++) {
      const px = ndcX(c, W),
        py = ndcY(r, H),
        pix = r * W + c;
      const tile = tileOf(bins, r, c);
      let s = 0,
        filled = 0,
        dropped = -Infinity;
      for (let i = bins.start[tile]!; i < bins.start[tile + 1]!; i++) {
        const f = bins.faces[i]!;
        if (px < t.lo[2 * f]! || px > t.hi[2 * f]! || py < t.lo[2 * f + 1]! || py > t.hi[2 * f + 1]!) continue;
        pair(t, f, px, py, p, pr, true);
        if (!pr.keep) continue;
        const ld = logSigmoid(pr.x);
        s += ld - pr.x;
        if (!masks.colour[f]) continue;
        const z = colourGeometry(t, f, pr);
        if (!(z >= p.near && z <= p.far)) continue;
        const sc = ld + ((p.far - z) * span) / p.gamma;
        // Insert into the descending list of layers; later faces lose ties (face order, as argmax would).
        let at = filled;
        while (at > 0 && score[at - 1]! < sc) at--;
        if (at >= K) {
          dropped = Math.max(dropped, sc);
          continue;
        }
        if (filled === K) dropped = Math.max(dropped, score[K - 1]!);
        for (let l = Math.min(filled, K - 1); l > at; l--) {
          score[l] = score[l - 1]!;
          const a = pix * K + l,
            b = a - 1;
          face[a] = face[b]!;
          depth[a] = depth[b]!;
          logD[a] = logD[b]!;
          bary[3 * a] = bary[3 * b]!;
          bary[3 * a + 1] = bary[3 * b + 1]!;
          bary[3 * a + 2] = bary[3 * b + 2]!;
        }
        const a = pix * K + at;
        score[at] = sc;
        face[a] = f;
        depth[a] = z;
        logD[a] = ld;
        bary[3 * a] = wc[0]!;
        bary[3 * a + 1] = wc[1]!;
        bary[3 * a + 2] = wc[2]!;
        filled = Math.min(filled + 1, K);
      }
      S[pix] = s;
      if (filled > 0 && dropped > score[0]! - 40) overflow++;
    }
  return overflow;
}

/** Layer of pixel `pix` holding face f, or −1. */
function layerOf(face: Int32Array, pix: number, K: number, f: number): number {
  for (let l = 0; l < K; l++) if (face[pix * K + l] === f) return l;
  return -1;
}

/**
 * Tangents of the forward outputs (into `out`) for vertex tangents dxy [F·6] and dz [F·3], with the layers `face` of
 * the forward pass.
 */
export function softrasJvp(
  t: FaceTable,
  masks: FaceMasks,
  face: Int32Array,
  dxy: ArrayLike<number>,
  dzs: ArrayLike<number>,
  p: SoftRasKernelParams,
  out: { S: TypedArray; bary: TypedArray; depth: TypedArray; logD: TypedArray },
  rows: Piece = [0, p.height],
  bins: TileBins = binsOf(t, masks, p, rows),
): void {
  const { width: W, height: H, layers: K } = p;
  const [a0, a1] = [rows[0] * W * K, rows[1] * W * K];
  out.bary.fill(0, 3 * a0, 3 * a1);
  out.depth.fill(0, a0, a1);
  out.logD.fill(0, a0, a1);
  const pr = new Pair();
  for (let r = rows[0]; r < rows[1]; r++)
    for (let c = 0; c < W; c++) {
      const px = ndcX(c, W),
        py = ndcY(r, H),
        pix = r * W + c;
      const tile = tileOf(bins, r, c);
      let ds = 0;
      for (let i = bins.start[tile]!; i < bins.start[tile + 1]!; i++) {
        const f = bins.faces[i]!;
        if (px < t.lo[2 * f]! || px > t.hi[2 * f]! || py < t.lo[2 * f + 1]! || py > t.hi[2 * f + 1]!) continue;
        pair(t, f, px, py, p, pr);
        if (!pr.keep) continue;
        const l = layerOf(face, pix, K, f);
        const o = 6 * f;
        const dd = distanceTangent(t, f, px, py, pr, p, dxy, o);
        const dx = (p.distFunc === "euclidean" && !pr.inside ? -dd : dd) / p.sigma;
        ds -= sigmoid(pr.x) * dx;
        if (l < 0) continue;
        const a = pix * K + l;
        out.logD[a] = sigmoid(-pr.x) * dx;
        baryTangent(t, f, px, py, pr.w, dxy, o, pr.dw);
        colourGeometry(t, f, pr);
        out.depth[a] = layerTangent(t, f, pr, dzs[3 * f]!, dzs[3 * f + 1]!, dzs[3 * f + 2]!);
        out.bary[3 * a] = pr.dwc[0]!;
        out.bary[3 * a + 1] = pr.dwc[1]!;
        out.bary[3 * a + 2] = pr.dwc[2]!;
      }
      out.S[pix] = ds;
    }
}

/** Cotangents of the vertices (into gxy [F·6], gz [F·3]) for cotangents of the forward outputs. */
export function softrasVjp(
  t: FaceTable,
  masks: FaceMasks,
  face: Int32Array,
  ct: { S: ArrayLike<number>; bary: ArrayLike<number>; depth: ArrayLike<number>; logD: ArrayLike<number> },
  p: SoftRasKernelParams,
  gxy: TypedArray,
  gz: TypedArray,
  faces: Piece = [0, t.n],
): void {
  const { width: W, height: H, layers: K } = p;
  const pr = new Pair();
  const g = new Float64Array(6),
    gzf = new Float64Array(3);
  for (let f = faces[0]; f < faces[1]; f++) {
    if (!t.valid[f] || !masks.include[f]) {
      gxy.fill(0, 6 * f, 6 * f + 6);
      gz.fill(0, 3 * f, 3 * f + 3);
      continue;
    }
    const [c0, c1, r0, r1] = pixelBox(t, f, W, H);
    g.fill(0);
    gzf.fill(0);
    for (let r = r0; r <= r1; r++)
      for (let c = c0; c <= c1; c++) {
        const px = ndcX(c, W),
          py = ndcY(r, H),
          pix = r * W + c;
        pair(t, f, px, py, p, pr);
        if (!pr.keep) continue;
        // ∂S/∂x = −σ(x); ∂ log D/∂x = σ(−x).
        let gx = -ct.S[pix]! * sigmoid(pr.x);
        const l = layerOf(face, pix, K, f);
        if (l >= 0) {
          const a = pix * K + l;
          gx += ct.logD[a]! * sigmoid(-pr.x);
          colourGeometry(t, f, pr);
          layerAdjoint(t, f, pr, ct.bary[3 * a]!, ct.bary[3 * a + 1]!, ct.bary[3 * a + 2]!, ct.depth[a]!);
          gzf[0] += pr.gz[0]!;
          gzf[1] += pr.gz[1]!;
          gzf[2] += pr.gz[2]!;
          addBaryGradient(t, f, px, py, pr.w, pr.gw[0]!, pr.gw[1]!, pr.gw[2]!, g);
        }
        if (gx === 0) continue;
        addDistanceGradient(t, f, px, py, pr, p, (p.distFunc === "euclidean" && !pr.inside ? -gx : gx) / p.sigma, g);
      }
    for (let m = 0; m < 6; m++) gxy[6 * f + m] = g[m]!;
    gz[3 * f] = gzf[0]!;
    gz[3 * f + 1] = gzf[1]!;
    gz[3 * f + 2] = gzf[2]!;
  }
}
