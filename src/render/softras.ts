/**
 * SoftRas (Liu et al. 2019): per pixel i and face j,
 *   D_j(i) = sigmoid(δ_ij · d²(i,j) / σ)                       (eq. D, 'euclidean')
 *   A(i)   = 1 − Π_j (1 − D_j(i))                               (silhouette, 'prod')
 *   I(i)   = Σ_j w_j C_j(i) + w_b C_bg,  w_j ∝ D_j exp(z̄_j/γ),  w_b ∝ exp(ε/γ)   (colour, 'softmax')
 * with z̄ = (far − z)/(far − near) from the perspective-correct depth of the clipped barycentrics.
 * Faces with D < distEps are pruned to exactly 0 (bbox padded by √(Tσ), T = ln(1/distEps − 1)).
 * Alpha uses every face (no depth test, no near/far, no culling unless `cullAlpha`).
 */
import type { Array, ArrayLike } from "../core/array.js";
import { np } from "../core/np/index.js";
import { toArray } from "./camera.js";
import { tilesToImage } from "./cull.js";
import { flagBits, joinedEdgeFlags } from "./mesh-edges.js";
import {
  barycentrics,
  boundaryDistanceSq,
  boundaryDistanceSqJoined,
  clipBarycentrics,
  insideJoined,
  insideStrict,
  interpolate,
  logSigmoid,
  perspectiveDepth,
  perspectiveWeights,
  unstack,
  type FaceGeometry,
} from "./raster-common.js";
import { bind } from "../core/trace.js";
import type { Primitive } from "../core/primitive.js";
import { softrasColour, softrasGeometryP } from "./fused/softras-prim.js";
import { fusedBackend } from "./fused/backend.js";
import {
  runTiles,
  setupRaster,
  slotCornerAttributes,
  slotValues,
  type ScreenFaces,
  type TilingOptions,
} from "./screen.js";

export type FaceCulling = "none" | "back" | "front";
/** Maps interpolated attributes [..., D] to colours [..., K] (e.g. texture lookup × lighting). */
export type Fragment = (attrs: Array) => Array;

export interface SoftRasOptions extends TilingOptions {
  /** σ: sharpness of the coverage sigmoid, NDC². Default 1e-5 (SoftRas/gradSim). */
  readonly sigma?: number;
  /** γ: depth-softmax temperature. Default 1e-4. */
  readonly gamma?: number;
  /** Coverage below which a face is pruned to exactly 0. Default 1e-4. */
  readonly distEps?: number;
  /** ε: normalised depth of the background term. Default 1e-3. */
  readonly eps?: number;
  /** Depth range for colour (z̄ normalisation and the near ≤ z ≤ far test). Defaults 1 and 100. */
  readonly near?: number;
  readonly far?: number;
  /** Background colour [K] (or a number). Default 0. */
  readonly background?: ArrayLike;
  /** Which faces may colour a pixel. Default "none" (SoftRenderer fill_back=True). */
  readonly faceCulling?: FaceCulling;
  /** Apply faceCulling to the silhouette as well (SoftRas never does). Default false. */
  readonly cullAlpha?: boolean;
  /**
   * Edges shared by two faces of one mesh that face the same way on screen (needs the faces'
   * topology, which render() supplies): "join" measures each face's coverage to the mesh's
   * boundary only, so a subdivided surface (a ground plane) has no seams along its inner edges
   * (SoftRas gives ¾ coverage there); "split" (default) treats every face edge as a boundary
   * (SoftRas' own). A closed surface's outline stays a soft edge either way; see mesh-edges.ts.
   * Applies to 'euclidean' coverage. Joining needs the face indices on the host (meshFromData,
   * groundPlane, any CPU array): faces computed inside a traced function or made on a device are
   * drawn split, so a function that renders such faces both ways (eagerly and under jit or vmap)
   * can differ — why it is not the default.
   */
  readonly sharedEdges?: "join" | "split";
  /** Coverage function. Default "euclidean". */
  readonly distFunc?: "euclidean" | "barycentric" | "hard";
  /** Silhouette aggregation. Default "prod". */
  readonly aggrAlpha?: "prod" | "hard";
  /** Colour aggregation. Default "softmax". */
  readonly aggrRgb?: "softmax" | "hard";
  /**
   * Interpolate colours with perspective-correct weights instead of SoftRas' clipped screen
   * barycentrics. Default false.
   */
  readonly perspectiveCorrect?: boolean;
  /**
   * Let gradients flow through the barycentrics used to sample colours. Default true (the true
   * derivative, matching finite differences); false reproduces SoftRas' CUDA backward (§2).
   */
  readonly colorBaryGradient?: boolean;
  /**
   * Rasterize with the fused geometry kernels (fused/softras-prim.ts: forward and backward as one
   * primitive each) where they apply — 'euclidean' or 'barycentric' coverage, 'prod' silhouette,
   * 'softmax' colour — instead of the array program over tiles. Default true.
   */
  readonly fused?: boolean;
  /**
   * Fused path: faces per pixel that take part in the colour softmax, those of largest weight
   * D·exp(z̄/γ). Faces beyond it with weight above e⁻⁴⁰ of the largest are counted in `overflow`.
   * Default 8.
   */
  readonly layers?: number;
}

export interface SoftRasResult {
  /** [H, W, K] colour (null when no attributes were given). */
  readonly rgb: Array | null;
  /** [H, W] silhouette. */
  readonly alpha: Array;
  /** int32 []: (tile, face) pairs dropped by a too-small capacity (0 when exact). */
  readonly overflow: Array;
}

/** T = ln(1/distEps − 1): D < distEps ⇔ δ·d²/σ < −T (anchors §1.2). */
export const pruneThreshold = (distEps: number): number => Math.log(1 / distEps - 1);
/** NDC radius beyond which an outside pixel gets exactly zero coverage: √(Tσ) (oracle 2). */
export const pruneRadius = (sigma: number, distEps = 1e-4): number => Math.sqrt(pruneThreshold(distEps) * sigma);

const cullMask = (culling: FaceCulling, front: Array): Array | null =>
  culling === "back" ? front : culling === "front" ? np.logicalNot(front) : null;

/** NDC padding of face boxes when binning: the prune radius √(Tσ) (barycentric coverage is unbounded on screen). */
export function softRasMargin(opts: SoftRasOptions): number {
  const distFunc = opts.distFunc ?? "euclidean";
  return distFunc === "euclidean"
    ? Math.sqrt(pruneThreshold(opts.distEps ?? 1e-4) * (opts.sigma ?? 1e-5))
    : distFunc === "hard"
      ? 0
      : 4;
}
/** Faces that can contribute at all (alpha uses every face unless cullAlpha). */
export const softRasInclude =
  (opts: SoftRasOptions) =>
  (_g: FaceGeometry, front: Array): Array =>
    (opts.cullAlpha ? cullMask(opts.faceCulling ?? "none", front) : null) ?? np.onesLike(front, { dtype: "bool" });

/**
 * Rasterize screen-space triangles with SoftRas. attrs: [F, 3, D] per-corner attributes (or
 * null for a silhouette only); fragment maps interpolated attributes to colours (identity by default).
 */
export function softRasterize(
  faces: ScreenFaces,
  attrs: Array | null,
  width: number,
  height: number,
  opts: SoftRasOptions = {},
  fragmentFn?: Fragment,
): SoftRasResult {
  const sigma = opts.sigma ?? 1e-5,
    gamma = opts.gamma ?? 1e-4,
    distEps = opts.distEps ?? 1e-4,
    eps = opts.eps ?? 1e-3;
  const near = opts.near ?? 1,
    far = opts.far ?? 100;
  if (!(sigma > 0) || !(gamma > 0))
    throw new Error(`softRasterize: sigma and gamma must be positive, got σ=${sigma}, γ=${gamma}.`);
  if (!(distEps > 0 && distEps < 0.5)) throw new Error(`softRasterize: distEps must be in (0, 0.5), got ${distEps}.`);
  if (!(far > near)) throw new Error(`softRasterize: far (${far}) must exceed near (${near}).`);
  // Colours interpolated as they are (no fragment function): the fully fused, exact kernel.
  const colourKernel = !fragmentFn && attrs !== null && !opts.perspectiveCorrect;
  if (fusedApplies(opts, colourKernel ? softrasColour.primal : softrasGeometryP)) {
    return colourKernel
      ? fusedColourRasterize(faces, attrs!, width, height, opts)
      : fusedSoftRasterize(faces, attrs, width, height, opts, fragmentFn ?? ((a) => a));
  }
  const fragment = fragmentFn ?? ((a: Array) => a);
  const distFunc = opts.distFunc ?? "euclidean";
  const culling = opts.faceCulling ?? "none";
  const T = pruneThreshold(distEps);
  const setup = setupRaster(faces, width, height, softRasMargin(opts), softRasInclude(opts), opts);
  const bg = toArray(opts.background ?? 0, faces.xy.dtype);
  const frontOk = cullMask(culling, setup.front);

  const joins = distFunc === "euclidean" ? joinFlags(faces, setup.front, opts) : null;
  const bitsPerFace = joins ? flagBits(joins) : null;
  const outs = runTiles(setup, (b) => {
    const { px, py, slots, slotValid } = b;
    const w = barycentrics(slots, px, py);
    const bits = bitsPerFace ? unstack(slotValues(b, bitsPerFace), 3) : null;
    const ins = bits ? insideJoined(w, bits) : insideStrict(w);
    // x = δ·dis/σ and D = sigmoid(x); log D and log(1−D) = log D − x never take log(0).
    let keep: Array, logD: Array, log1mD: Array;
    if (distFunc === "hard") {
      keep = np.logicalAnd(slotValid, ins);
      logD = np.zerosLike(w[0]!);
      log1mD = np.where(keep, -Infinity, 0);
    } else {
      let x: Array;
      if (distFunc === "euclidean") {
        const d2 = bits ? boundaryDistanceSqJoined(slots, px, py, bits) : boundaryDistanceSq(slots, px, py);
        x = np.div(np.where(ins, d2, np.neg(d2)), sigma);
      } else {
        const m = np.minimum(np.minimum(w[0]!, w[1]!), w[2]!); // dis = sign(m)·m²
        x = np.div(np.mul(m, np.abs(m)), sigma);
      }
      keep = np.logicalAnd(slotValid, np.logicalOr(ins, np.greater(x, -T)));
      // Kept pairs have x > −T; the clamp only touches pruned pairs (masked below), so exp never overflows.
      logD = np.neg(np.log1p(np.exp(np.neg(np.maximum(x, -T - 1)))));
      log1mD = np.where(keep, np.sub(logD, x), 0);
    }
    const alpha =
      opts.aggrAlpha === "hard"
        ? np.astype(
            np.greater(np.sum(np.astype(np.logicalAnd(keep, np.greater(logD, Math.log(0.5))), "int32"), 2), 0),
            px.dtype,
          )
        : np.sub(1, np.exp(np.sum(log1mD, 2)));
    if (!attrs) return [alpha];
    let ok = frontOk ? np.logicalAnd(keep, slotValues(b, frontOk)) : keep;
    const wc = clipBarycentrics(w);
    const z = perspectiveDepth(slots, wc); // depth keeps its gradient (SoftRas' C_grad_z_rgb) either way
    ok = np.logicalAnd(ok, np.logicalAnd(np.greaterEqual(z, near), np.lessEqual(z, far)));
    const wcs = opts.colorBaryGradient === false ? wc.map((v) => np.stopGradient(v)) : wc;
    const weights = opts.perspectiveCorrect ? perspectiveWeights(slots, wcs) : wcs;
    const colours = fragment(interpolate(weights, slotCornerAttributes(b, attrs))); // [Tb,Pt,Cb,K]
    const rgb =
      opts.aggrRgb === "hard"
        ? hardColour(b.capacity, ok, ins, z, colours, bg)
        : softmaxColour(ok, logD, z, colours, bg, { near, far, gamma, eps });
    return [alpha, rgb];
  });
  const { grid } = setup;
  return {
    rgb: attrs ? tilesToImage(grid, outs[1]!) : null,
    alpha: tilesToImage(grid, outs[0]!),
    overflow: setup.bins.overflow,
  };
}

/**
 * The joined-edge flags (mesh-edges.ts) of these faces: int32 [F], or null where nothing is joined
 * (no topology, or sharedEdges "split").
 */
function joinFlags(faces: ScreenFaces, front: Array, opts: SoftRasOptions): Array | null {
  if (opts.sharedEdges !== undefined && opts.sharedEdges !== "join" && opts.sharedEdges !== "split")
    throw new Error(`softRasterize: sharedEdges must be "join" or "split", got ${String(opts.sharedEdges)}.`);
  if (!faces.topology || opts.sharedEdges !== "join") return null;
  const include = opts.cullAlpha ? cullMask(opts.faceCulling ?? "none", front) : null;
  return joinedEdgeFlags(faces.xy, faces.z, front, include, faces.topology);
}
/** The fused kernels' flags operand: joinFlags or zeros (every edge a boundary), on the faces' backend. */
const kernelJoins = (faces: ScreenFaces, front: Array, opts: SoftRasOptions): Array =>
  ((opts.distFunc ?? "euclidean") === "euclidean" ? joinFlags(faces, front, opts) : null) ??
  np.mul(np.astype(front, "int32"), 0); // from `front`, not a literal: literals land on the default backend

/** Whether the fused kernels compute this configuration (and this backend runs them). */
function fusedApplies(opts: SoftRasOptions, prim: Primitive): boolean {
  const distFunc = opts.distFunc ?? "euclidean";
  return (
    (opts.fused ?? true) &&
    (distFunc === "euclidean" || distFunc === "barycentric") &&
    opts.aggrAlpha !== "hard" &&
    opts.aggrRgb !== "hard" &&
    fusedBackend(prim)
  );
}

/**
 * SoftRas through the fused geometry primitive: the silhouette from the log transmittance S over
 * every face, colour from the K layers of largest softmax weight — the same depth softmax with
 * the background term as the array program (equal to it when no pixel has more than K faces of
 * non-negligible weight; `overflow` counts pixels where one was left out).
 */
function fusedSoftRasterize(
  faces: ScreenFaces,
  attrs: Array | null,
  width: number,
  height: number,
  opts: SoftRasOptions,
  fragment: Fragment,
): SoftRasResult {
  const { xy, z } = faces;
  checkScreen(xy, z, width, height);
  const layers = opts.layers ?? 8;
  if (!(Number.isInteger(layers) && layers >= 1 && layers <= 64))
    throw new Error(`softRasterize: layers must be a whole number in [1, 64], got ${layers}.`);
  const dtype = xy.dtype === "float64" || z.dtype === "float64" ? "float64" : "float32";
  const gamma = opts.gamma ?? 1e-4,
    eps = opts.eps ?? 1e-3;
  const near = opts.near ?? 1,
    far = opts.far ?? 100;
  const fxy = np.astype(xy, dtype),
    fz = np.astype(z, dtype);
  const front = faces.front ?? frontFacing(fxy);
  const [S, face, bary, depth, logD, overflow] = bind(
    softrasGeometryP,
    [fxy, fz, front, kernelJoins(faces, front, opts)],
    geometryParams(width, height, opts, layers),
  ) as [Array, Array, Array, Array, Array, Array];
  const alpha = np.sub(1, np.exp(S!));
  if (!attrs) return { rgb: null, alpha, overflow };
  if (attrs.ndim !== 3 || attrs.shape[1] !== 3 || attrs.shape[0] !== xy.shape[0])
    throw new Error(`render: per-corner attributes must be [F, 3, D] for ${xy.shape[0]} faces, got [${attrs.shape}].`);
  const valid = np.greaterEqual(face, 0); // [H,W,K]
  const index = np.maximum(face, 0);
  const zn = np.div(np.sub(far, depth), far - near);
  const m = np.stopGradient(np.maximum(np.max(np.where(valid, zn, -Infinity), 2, { keepdims: true }), eps)); // [H,W,1]
  // Empty layers get exponent −inf (exp = 0 with zero slope), so their placeholder values never reach a gradient.
  const e = np.exp(np.where(valid, np.add(logD, np.div(np.sub(zn, m), gamma)), -Infinity)); // [H,W,K]
  const eb = np.exp(np.div(np.sub(eps, m), gamma)); // [H,W,1]
  const wc = unstack(opts.colorBaryGradient === false ? np.stopGradient(bary) : bary, 3); // 3 × [H,W,K]
  let weights: Array[] = wc;
  if (opts.perspectiveCorrect) {
    const invz = unstack(np.take(np.div(1, np.where(np.greater(fz, 0), fz, 1)), index, 0), 3);
    const q = wc.map((w, k) => np.mul(w, invz[k]!));
    const sum = np.add(np.add(q[0]!, q[1]!), q[2]!);
    const safe = np.where(np.greater(np.abs(sum), 1e-12), sum, 1);
    weights = q.map((w) => np.div(w, safe));
  }
  const corners = unstack(np.take(np.astype(attrs, dtype), index, 0), 3); // 3 × [H,W,K,D]
  const colours = fragment(interpolate(weights, corners)); // [H,W,K,C]
  const bg = toArray(opts.background ?? 0, dtype);
  const num = np.add(np.sum(np.mul(np.expandDims(e, -1), colours), 2), np.mul(eb, bg)); // [H,W,C]
  const rgb = np.div(num, np.add(np.sum(e, 2, { keepdims: true }), eb));
  return { rgb, alpha, overflow };
}

/** The fused kernel's geometry parameters for these options. */
function geometryParams(width: number, height: number, opts: SoftRasOptions, layers: number) {
  const sigma = opts.sigma ?? 1e-5,
    distEps = opts.distEps ?? 1e-4;
  return {
    width,
    height,
    sigma,
    prune: pruneThreshold(distEps),
    distFunc: opts.distFunc ?? "euclidean",
    gamma: opts.gamma ?? 1e-4,
    near: opts.near ?? 1,
    far: opts.far ?? 100,
    layers,
    margin: softRasMargin(opts),
    culling: opts.faceCulling ?? "none",
    cullAlpha: opts.cullAlpha ?? false,
  } as const;
}

/**
 * SoftRas with per-corner colours through the fully fused kernel (softras_colour): the silhouette
 * and the depth softmax over every face with the background term, exact; differentiable in the
 * geometry, the colours and the background.
 */
function fusedColourRasterize(
  faces: ScreenFaces,
  attrs: Array,
  width: number,
  height: number,
  opts: SoftRasOptions,
): SoftRasResult {
  const { xy, z } = faces;
  checkScreen(xy, z, width, height);
  const dtype = xy.dtype === "float64" || z.dtype === "float64" ? "float64" : "float32";
  if (attrs.ndim !== 3 || attrs.shape[1] !== 3 || attrs.shape[0] !== xy.shape[0])
    throw new Error(`render: per-corner attributes must be [F, 3, D] for ${xy.shape[0]} faces, got [${attrs.shape}].`);
  const D = attrs.shape[2]!;
  const fxy = np.astype(xy, dtype),
    fz = np.astype(z, dtype);
  const bg = np.broadcastTo(toArray(opts.background ?? 0, dtype), [D]);
  const front = faces.front ?? frontFacing(fxy);
  const [rgb, S] = bind(
    softrasColour.primal,
    [fxy, fz, front, np.astype(attrs, dtype), bg, kernelJoins(faces, front, opts)],
    {
      ...geometryParams(width, height, opts, 1),
      eps: opts.eps ?? 1e-3,
      channels: D,
      baryGradient: opts.colorBaryGradient !== false,
    },
  ) as [Array, Array];
  return { rgb, alpha: np.sub(1, np.exp(S)), overflow: np.zeros([], { dtype: "int32" }) };
}

function checkScreen(xy: Array, z: Array, width: number, height: number): void {
  if (xy.ndim !== 3 || xy.shape[1] !== 3 || xy.shape[2] !== 2)
    throw new Error(`render: screen xy must be [F, 3, 2], got [${xy.shape}].`);
  if (z.ndim !== 2 || z.shape[0] !== xy.shape[0] || z.shape[1] !== 3)
    throw new Error(`render: screen z must be [F, 3] matching xy [${xy.shape}], got [${z.shape}].`);
  if (xy.shape[0] === 0) throw new Error("render: no faces to rasterize.");
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new Error(`render: image size must be positive integers, got ${width}×${height}.`);
}

/** Front-facing in screen space (SoftRas cameras, CCW-outward meshes): signed area < 0, i.e. A > 0. */
export function frontFacing(xy: Array): Array {
  const [v0, v1, v2] = unstack(np.stopGradient(xy), 1) as [Array, Array, Array];
  const [x0, y0] = unstack(v0, 1) as [Array, Array],
    [x1, y1] = unstack(v1, 1) as [Array, Array],
    [x2, y2] = unstack(v2, 1) as [Array, Array];
  return np.greater(np.sub(np.mul(np.sub(x2, x0), np.sub(y1, y0)), np.mul(np.sub(y2, y0), np.sub(x1, x0))), 0);
}

/** Depth softmax with the background term, evaluated with a running max m ≥ ε (anchors §1.2 pseudocode). */
function softmaxColour(
  ok: Array,
  logD: Array,
  z: Array,
  colours: Array,
  bg: Array,
  p: { near: number; far: number; gamma: number; eps: number },
): Array {
  const zn = np.div(np.sub(p.far, z), p.far - p.near);
  const m = np.stopGradient(np.maximum(np.max(np.where(ok, zn, -Infinity), 2, { keepdims: true }), p.eps)); // [T,Pt,1]
  // Masked pairs get exponent −inf (exp = 0 with zero slope), so garbage depths never reach a gradient.
  const e = np.exp(np.where(ok, np.add(logD, np.div(np.sub(zn, m), p.gamma)), -Infinity)); // [T,Pt,C]
  const eb = np.exp(np.div(np.sub(p.eps, m), p.gamma)); // [T,Pt,1]
  const num = np.add(np.sum(np.mul(np.expandDims(e, -1), colours), 2), np.mul(eb, bg)); // [T,Pt,K]
  return np.div(num, np.add(np.sum(e, 2, { keepdims: true }), eb));
}

/** 'hard' colour: the nearest strictly-inside colourable face; background where none. */
function hardColour(C: number, ok: Array, ins: Array, z: Array, colours: Array, bg: Array): Array {
  const cand = np.logicalAnd(ok, ins);
  const zc = np.where(cand, np.stopGradient(z), Infinity);
  const sel = np.equal(np.expandDims(np.argmin(zc, 2), -1), np.reshape(np.arange(C), [1, 1, C]));
  const chosen = np.sum(np.mul(np.expandDims(np.astype(sel, colours.dtype), -1), colours), 2);
  const covered = np.expandDims(np.greater(np.sum(np.astype(cand, "int32"), 2), 0), -1);
  return np.where(covered, chosen, np.broadcastTo(np.astype(bg, colours.dtype), chosen.shape));
}

/** RGBA [H, W, K+1] from a SoftRas result. */
export function toRGBA(r: SoftRasResult): Array {
  if (!r.rgb) return np.expandDims(r.alpha, -1);
  return np.concatenate([r.rgb, np.expandDims(r.alpha, -1)], -1);
}

/**
 * PyTorch3D's sigmoid_alpha_blend on given signed squared distances (§1.4, oracle 6):
 * p_k = sigmoid(−dist_k/σ), A = 1 − Π_k(1 − p_k) (reduced over the last axis).
 */
export function sigmoidAlphaBlend(dists: ArrayLike, sigma: number): Array {
  const d = np.asarray(dists);
  return np.sub(1, np.exp(np.sum(logSigmoid(np.div(d, sigma)), -1)));
}
