/**
 * DIB-R (Chen et al. 2019), kaolin's dibr_rasterization:
 *   foreground: hard z-buffer over front faces with w_k ≥ 0 (inclusive); the nearest affine depth
 *     Σ w_k z_k wins (ties: first face); I(p) = Σ_k w_k u_k for any per-vertex attribute u.
 *   alpha: 1 on covered pixels, else 1 − Π_j (1 − exp(−d²_j/δ)) over the first `knum` faces (face
 *     order) whose bounding box padded by `boxLen` contains p (δ = 1/sigmaInv).
 * The winner is chosen from stopGradient'd values (argmin); its barycentrics are then recomputed
 * differentiably, so gradients reach the winning face's vertices and attributes (§2 "DIB-R").
 */
import type { Array, ArrayLike } from "../core/array.js";
import { np } from "../core/np/index.js";
import { toArray } from "./camera.js";
import { tilesToImage } from "./cull.js";
import {
  affineDepth,
  barycentrics,
  barycentricsFrom,
  boundaryDistanceSq,
  CH,
  insideInclusive,
  interpolate,
  unstack,
} from "./raster-common.js";
import { runTiles, setupRaster, slotValues, type ScreenFaces, type TilingOptions } from "./screen.js";
import { frontFacing, type FaceCulling, type Fragment } from "./softras.js";
import { bind } from "../core/trace.js";
import { dibrGeometryP } from "./fused/dibr-prim.js";
import { fusedBackend } from "./fused/backend.js";

export interface DibrOptions extends TilingOptions {
  /** 1/δ of the soft silhouette exp(−d²·sigmaInv). Default 7000 (kaolin, gradSim). */
  readonly sigmaInv?: number;
  /**
   * NDC padding of face boxes for the soft silhouette. Default 0.02 (kaolin); ≥ √(ln(1e4)/sigmaInv) avoids the step
   * (§2).
   */
  readonly boxLen?: number;
  /** At most this many faces (in face order) shape a pixel's soft silhouette. Default 30; Infinity disables. */
  readonly knum?: number;
  /** Faces excluded from the hard (foreground) pass. Default "back" (kaolin culls normal_z < 0). */
  readonly faceCulling?: FaceCulling;
  /** Perspective-correct attribute weights instead of DIB-R's screen barycentrics. Default false. */
  readonly perspectiveCorrect?: boolean;
  /** Feature value of uncovered pixels. Default 0 (kaolin). */
  readonly background?: ArrayLike;
  /**
   * Rasterize with the fused geometry kernels (fused/dibr-prim.ts) instead of the array program over tiles. Default
   * true.
   */
  readonly fused?: boolean;
}

export interface DibrResult {
  /** [H, W, K]: fragment(interpolated attributes) on covered pixels, background elsewhere (null without attributes). */
  readonly features: Array | null;
  /** [H, W] soft silhouette. */
  readonly alpha: Array;
  /** int32 [H, W]: index of the visible face, −1 where uncovered. */
  readonly faceIndex: Array;
  /** int32 []: (tile, face) pairs dropped by a too-small capacity. */
  readonly overflow: Array;
}

export function dibrRasterize(
  faces: ScreenFaces,
  attrs: Array | null,
  width: number,
  height: number,
  opts: DibrOptions = {},
  fragment: Fragment = (a) => a,
): DibrResult {
  const sigmaInv = opts.sigmaInv ?? 7000,
    boxLen = opts.boxLen ?? 0.02,
    knum = opts.knum ?? 30;
  if (!(sigmaInv > 0) || !(boxLen >= 0))
    throw new Error(`dibrRasterize: sigmaInv must be > 0 and boxLen ≥ 0, got ${sigmaInv}, ${boxLen}.`);
  const culling = opts.faceCulling ?? "back";
  if ((opts.fused ?? true) && fusedBackend(dibrGeometryP))
    return fusedDibr(
      faces,
      attrs,
      width,
      height,
      { sigmaInv, boxLen, knum, culling, background: opts.background, perspectiveCorrect: opts.perspectiveCorrect },
      fragment,
    );
  const setup = setupRaster(faces, width, height, boxLen, (g) => np.onesLike(g.valid), opts);
  const coeffs = np.split(setup.geom.packed, [CH.edge], 1)[0]!; // [F, 12] barycentric channels
  const invzAll = np.split(setup.geom.packed, [CH.invz, CH.invz + 3], 1)[1]!; // [F, 3]
  const bg = toArray(opts.background ?? 0, faces.xy.dtype);

  const outs = runTiles(setup, (b) => {
    const { px, py, slots, slotValid } = b;
    const [Tb, C] = b.index.shape as [number, number];
    const Pt = px.shape[1]!;
    // ---- hard foreground: selection from stopGradient'd values
    const w = barycentrics(slots, px, py).map((v) => np.stopGradient(v));
    let cand = np.logicalAnd(slotValid, insideInclusive(w));
    if (culling !== "none") {
      const f = slotValues(b, setup.front);
      cand = np.logicalAnd(cand, culling === "back" ? f : np.logicalNot(f));
    }
    const zc = np.where(cand, affineDepth(slots, w), Infinity);
    const sel = np.argmin(zc, 2, { keepdims: true }); // [Tb,Pt,1], first face on ties
    const covered = np.greater(np.sum(np.astype(cand, "int32"), 2), 0); // [Tb,Pt]
    // (core's takeAlongAxis does not broadcast size-1 axes of x yet, so broadcast the slot table explicitly)
    const winner = np.reshape(np.takeAlongAxis(np.broadcastTo(np.reshape(b.index, [Tb, 1, C]), [Tb, Pt, C]), sel, 2), [
      Tb,
      Pt,
    ]);

    // ---- soft silhouette for uncovered pixels
    const vx = [0, 1, 2].map((k) => np.stopGradient(slots.ch[CH.edge + 5 * k]!));
    const vy = [0, 1, 2].map((k) => np.stopGradient(slots.ch[CH.edge + 5 * k + 1]!));
    const mn = (v: Array[]) => np.minimum(np.minimum(v[0]!, v[1]!), v[2]!);
    const mx = (v: Array[]) => np.maximum(np.maximum(v[0]!, v[1]!), v[2]!);
    let near = np.logicalAnd(
      slotValid,
      np.logicalAnd(
        np.logicalAnd(np.greaterEqual(px, np.sub(mn(vx), boxLen)), np.lessEqual(px, np.add(mx(vx), boxLen))),
        np.logicalAnd(np.greaterEqual(py, np.sub(mn(vy), boxLen)), np.lessEqual(py, np.add(mx(vy), boxLen))),
      ),
    );
    if (Number.isFinite(knum) && knum < C)
      near = np.logicalAnd(near, np.lessEqual(np.cumsum(np.astype(near, "int32"), 2), knum));
    // log(1 − exp(−s)) = log(−expm1(−s)); s is clamped away from 0 so neither value nor slope is infinite.
    const s = np.maximum(np.mul(boundaryDistanceSq(slots, px, py), sigmaInv), 1e-12);
    const logOneMinus = np.where(near, np.log(np.neg(np.expm1(np.neg(s)))), 0);
    const alpha = np.where(covered, 1, np.sub(1, np.exp(np.sum(logOneMinus, 2))));
    const faceIndex = np.where(covered, winner, -1);
    if (!attrs) return [alpha, faceIndex];

    // ---- differentiable barycentrics of the winning face, attribute interpolation, fragment
    const c = unstack(np.take(coeffs, winner, 0), 2); // 12 × [Tb,Pt]
    let weights: Array[] = barycentricsFrom(c, np.reshape(px, [Tb, Pt]), np.reshape(py, [Tb, Pt]));
    if (opts.perspectiveCorrect) {
      const invz = unstack(np.take(invzAll, winner, 0), 2);
      const q = weights.map((v, k) => np.mul(v, invz[k]!));
      const sum = np.add(np.add(q[0]!, q[1]!), q[2]!);
      const safe = np.where(covered, sum, 1);
      weights = q.map((v) => np.div(v, safe));
    }
    const corners = unstack(np.take(attrs, winner, 0), 2); // 3 × [Tb,Pt,D]
    const frag = fragment(interpolate(weights, corners)); // [Tb,Pt,K]
    const features = np.where(np.expandDims(covered, -1), frag, np.broadcastTo(np.astype(bg, frag.dtype), frag.shape));
    return [alpha, faceIndex, features];
  });
  const { grid } = setup;
  const features = attrs ? tilesToImage(grid, outs[2]!) : null;
  const alpha = tilesToImage(grid, outs[0]!);
  const faceIndex = tilesToImage(grid, outs[1]!);
  const overflow = setup.bins.overflow;
  return { features, alpha, faceIndex, overflow };
}

/** DIB-R through the fused geometry primitive; shading, interpolation and compositing as above. */
function fusedDibr(
  faces: ScreenFaces,
  attrs: Array | null,
  width: number,
  height: number,
  o: {
    sigmaInv: number;
    boxLen: number;
    knum: number;
    culling: FaceCulling;
    background?: ArrayLike;
    perspectiveCorrect?: boolean;
  },
  fragment: Fragment,
): DibrResult {
  const { xy, z } = faces;
  if (xy.ndim !== 3 || xy.shape[1] !== 3 || xy.shape[2] !== 2)
    throw new Error(`render: screen xy must be [F, 3, 2], got [${xy.shape}].`);
  if (z.ndim !== 2 || z.shape[0] !== xy.shape[0] || z.shape[1] !== 3)
    throw new Error(`render: screen z must be [F, 3] matching xy [${xy.shape}], got [${z.shape}].`);
  if (xy.shape[0] === 0) throw new Error("render: no faces to rasterize.");
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new Error(`render: image size must be positive integers, got ${width}×${height}.`);
  const dtype = xy.dtype === "float64" || z.dtype === "float64" ? "float64" : "float32";
  const fxy = np.astype(xy, dtype),
    fz = np.astype(z, dtype);
  const front = faces.front ?? frontFacing(fxy);
  // (knum = Infinity is passed as the largest int32: params must survive JSON, which turns Infinity into null.)
  const [logT, face, bary] = bind(dibrGeometryP, [fxy, fz, front], {
    width,
    height,
    sigmaInv: o.sigmaInv,
    boxLen: o.boxLen,
    knum: Number.isFinite(o.knum) ? o.knum : 2 ** 31 - 1,
    culling: o.culling,
  }) as [Array, Array, Array];
  const covered = np.greaterEqual(face, 0);
  const alpha = np.where(covered, 1, np.sub(1, np.exp(logT)));
  const overflow = np.zeros([], { dtype: "int32" });
  if (!attrs) return { features: null, alpha, faceIndex: face, overflow };
  if (attrs.ndim !== 3 || attrs.shape[1] !== 3 || attrs.shape[0] !== xy.shape[0])
    throw new Error(`render: per-corner attributes must be [F, 3, D] for ${xy.shape[0]} faces, got [${attrs.shape}].`);
  const index = np.maximum(face, 0);
  let weights = unstack(bary, 2); // 3 × [H,W]
  if (o.perspectiveCorrect) {
    const invz = unstack(np.take(np.div(1, np.where(np.greater(fz, 0), fz, 1)), index, 0), 2);
    const q = weights.map((w, k) => np.mul(w, invz[k]!));
    const safe = np.where(covered, np.add(np.add(q[0]!, q[1]!), q[2]!), 1);
    weights = q.map((w) => np.div(w, safe));
  }
  const corners = unstack(np.take(np.astype(attrs, dtype), index, 0), 2); // 3 × [H,W,D]
  const frag = fragment(interpolate(weights, corners)); // [H,W,K]
  const bg = toArray(o.background ?? 0, dtype);
  const features = np.where(np.expandDims(covered, -1), frag, np.broadcastTo(np.astype(bg, frag.dtype), frag.shape));
  return { features, alpha, faceIndex: face, overflow };
}
