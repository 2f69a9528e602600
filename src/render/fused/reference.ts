/**
 * The fused rasterizer primitives' differentiable outputs as array programs, with the forward
 * pass's discrete choices fixed (which face sits in which layer, which face wins a pixel, which
 * pairs are kept or pruned — all piecewise constant in the geometry). First derivatives use the
 * hand-written kernels; these programs are what second derivatives differentiate
 * (linearized.ts): equal to the kernels' outputs, so their derivatives are the kernels' too.
 *
 * Every pixel meets every face ([H·W, F] pairs), which is what the kernels' tiles avoid: memory
 * and time grow with pixels × faces, the price of second order only.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import {
  barycentricsFrom,
  boundaryDistanceSq,
  boundaryDistanceSqJoined,
  clipBarycentrics,
  faceGeometry,
  insideJoined,
  insideStrict,
  logSigmoid,
  perspectiveDepth,
  unstack,
  type SlotFaces,
} from "../raster-common.js";
import { flagBits } from "../mesh-edges.js";
import type { DibrKernelParams } from "./dibr-cpu.js";
import type { SoftRasColourGeometryParams } from "./softras-prim.js";
import type { SoftRasGeometryParams } from "./softras-pair.js";

/** Pixel centres in NDC, [H·W, 1] each, row-major from the top row (CONVENTIONS.md). */
function pixelCentres(W: number, H: number, dtype: "float32" | "float64"): [Array, Array] {
  const px = new Float64Array(W * H),
    py = new Float64Array(W * H);
  for (let r = 0; r < H; r++)
    for (let c = 0; c < W; c++) {
      px[r * W + c] = (2 * c + 1 - W) / W;
      py[r * W + c] = (H - 2 * r - 1) / H;
    }
  // On the CPU: a computation on another backend uploads them (trace.ts), and float64 exists only here.
  return [
    np.reshape(np.array(px, { dtype, backend: "cpu" }), [W * H, 1]),
    np.reshape(np.array(py, { dtype, backend: "cpu" }), [W * H, 1]),
  ];
}

const floatDType = (x: Array): "float32" | "float64" => (x.dtype === "float64" ? "float64" : "float32");

/** Every face as a slot: channels [1, F], broadcasting against pixels [P, 1] to pairs [P, F]. */
const allFaces = (packed: Array): SlotFaces => ({ ch: unstack(packed, 1).map((c) => np.expandDims(c, 0)) });
/** The faces of `index` (int32 [P, ...]) as slots, channels [P, ...]. */
const facesAt = (packed: Array, index: Array): SlotFaces => ({
  ch: unstack(np.take(packed, np.maximum(index, 0), 0), -1),
});

/** Pixels [P, 1] inside face boxes padded by `margin` ([P, F] bool; from the primal values, a fixed choice). */
function inBoxes(xy: Array, px: Array, py: Array, margin: number): Array {
  const v = np.stopGradient(xy);
  const [x, y] = unstack(v, 2) as [Array, Array]; // [F, 3] each
  const lo = (a: Array) => np.expandDims(np.sub(np.min(a, 1), margin), 0),
    hi = (a: Array) => np.expandDims(np.add(np.max(a, 1), margin), 0);
  return np.logicalAnd(
    np.logicalAnd(np.greaterEqual(px, lo(x)), np.lessEqual(px, hi(x))),
    np.logicalAnd(np.greaterEqual(py, lo(y)), np.lessEqual(py, hi(y))),
  );
}

/**
 * SoftRas' coverage exponent x = δ·d²/σ (euclidean) or m|m|/σ (barycentric) and insideness
 * (strict; with joined edges, mesh-edges.ts, their bits broadcasting against the pairs).
 */
function coverage(
  f: SlotFaces,
  px: Array,
  py: Array,
  p: SoftRasGeometryParams,
  bits: Array[],
): { x: Array; w: [Array, Array, Array]; inside: Array } {
  const w = barycentricsFrom(f.ch, px, py);
  if (p.distFunc === "euclidean") {
    const inside = insideJoined(w, bits);
    const d2 = boundaryDistanceSqJoined(f, px, py, bits);
    return { x: np.div(np.where(inside, d2, np.neg(d2)), p.sigma), w, inside };
  }
  const m = np.minimum(np.minimum(w[0], w[1]), w[2]);
  return { x: np.div(np.mul(m, np.abs(m)), p.sigma), w, inside: insideStrict(w) };
}

/** Per face: may it colour a pixel, does it shape the silhouette (softras-prim's masksOf); null: every face. */
function masks(front: Array, p: SoftRasGeometryParams): { colour: Array | null; include: Array | null } {
  const colour = p.culling === "none" ? null : p.culling === "back" ? front : np.logicalNot(front);
  return { colour, include: p.cullAlpha ? colour : null };
}

/** Every pixel–face pair of SoftRas: x, the kept mask and the log transmittance S [P]. */
function softrasPairs(xy: Array, z: Array, front: Array, joins: Array, p: SoftRasGeometryParams) {
  const dtype = floatDType(xy);
  const [px, py] = pixelCentres(p.width, p.height, dtype);
  const geo = faceGeometry(xy, z);
  const all = allFaces(geo.packed);
  const bits = flagBits(joins);
  const { x, w, inside } = coverage(
    all,
    px,
    py,
    p,
    unstack(bits, 1).map((b) => np.expandDims(b, 0)),
  );
  const m = masks(front, p);
  const faceOk = np.expandDims(m.include ? np.logicalAnd(geo.valid, m.include) : geo.valid, 0);
  const keep = np.logicalAnd(
    np.logicalAnd(faceOk, inBoxes(xy, px, py, p.margin)),
    np.logicalOr(inside, np.greater(np.stopGradient(x), -p.prune)),
  );
  // log(1 − σ(x)) = log σ(−x); pruned pairs contribute exactly 0.
  const S = np.sum(np.where(keep, logSigmoid(np.neg(x)), 0), 1);
  return { px, py, geo, bits, all, x, w, keep, S, colour: m.colour };
}

/** softras_geometry's (S, bary, depth, logD) for the layers `face` [H, W, K] of the forward pass. */
export function softrasGeometryReference(
  [xy, z, front, joins]: readonly Array[],
  [face]: readonly Array[],
  p: SoftRasGeometryParams,
): Array[] {
  const { width: W, height: H, layers: K } = p;
  const { px, py, geo, bits, S } = softrasPairs(xy!, z!, front!, joins!, p);
  const layerFace = np.reshape(face!, [W * H, K]);
  const slots = facesAt(geo.packed, layerFace);
  const { x, w } = coverage(slots, px, py, p, unstack(np.take(bits, np.maximum(layerFace, 0), 0), -1));
  const filled = np.greaterEqual(layerFace, 0);
  const wc = clipBarycentrics(w);
  const depth = np.where(filled, perspectiveDepth(slots, wc), 1);
  const logD = np.where(filled, logSigmoid(x), 0);
  const bary = np.stack(
    wc.map((v) => np.where(filled, v, 0)),
    -1,
  );
  return [
    np.reshape(S, [H, W]),
    np.reshape(bary, [H, W, K, 3]),
    np.reshape(depth, [H, W, K]),
    np.reshape(logD, [H, W, K]),
  ];
}

/**
 * softras_colour's (rgb, S): the depth softmax over every pair, its maximum exponent M [H, W] fixed by the forward
 * pass.
 */
export function softrasColourReference(
  [xy, z, front, attrs, bg, joins]: readonly Array[],
  [, M]: readonly Array[],
  p: SoftRasColourGeometryParams,
): Array[] {
  const { width: W, height: H, channels: D } = p;
  const { all, x, w, keep, S, colour } = softrasPairs(xy!, z!, front!, joins!, p);
  const wc = clipBarycentrics(w);
  const depth = perspectiveDepth(all, wc); // [P, F]
  const zd = np.stopGradient(depth);
  const ok = np.logicalAnd(
    colour ? np.logicalAnd(keep, np.expandDims(colour, 0)) : keep,
    np.logicalAnd(np.greaterEqual(zd, p.near), np.lessEqual(zd, p.far)),
  );
  const m = np.reshape(M!, [W * H, 1]);
  const u = np.add(logSigmoid(x), np.div(np.sub(p.far, depth), (p.far - p.near) * p.gamma));
  // Left-out pairs get exponent −inf: weight 0 with zero slope (no inf·0 in any derivative).
  const e = np.exp(np.where(ok, np.sub(u, m), -Infinity)); // [P, F]
  const eb = np.exp(np.sub(p.eps / p.gamma, m)); // [P, 1]
  const wi = p.baryGradient ? wc : wc.map((v) => np.stopGradient(v));
  const corners = unstack(attrs!, 1); // 3 × [F, D]
  const c = wi
    .map((v, k) => np.mul(np.expandDims(v, -1), np.expandDims(corners[k]!, 0)))
    .reduce((a, b) => np.add(a, b)); // [P, F, D]
  const num = np.add(np.sum(np.mul(np.expandDims(e, -1), c), 1), np.mul(eb, np.reshape(bg!, [1, D])));
  const rgb = np.div(num, np.add(np.sum(e, 1, { keepdims: true }), eb));
  return [np.reshape(rgb, [H, W, D]), np.reshape(S, [H, W])];
}

/** A soft-silhouette term with s = d²·sigmaInv above this is left out by the kernels (dibr-cpu.ts FAR_S). */
const DIBR_FAR_S = 50;

/** dibr_geometry's (logT, bary) for the winning faces `face` [H, W] of the forward pass. */
export function dibrGeometryReference(
  [xy, z]: readonly Array[],
  [face]: readonly Array[],
  p: DibrKernelParams,
): Array[] {
  const { width: W, height: H } = p;
  const dtype = floatDType(xy!);
  const [px, py] = pixelCentres(W, H, dtype);
  const geo = faceGeometry(xy!, z!);
  const winner = np.reshape(face!, [W * H, 1]);
  const covered = np.greaterEqual(winner, 0);
  const w = barycentricsFrom(facesAt(geo.packed, winner).ch, px, py); // 3 × [P, 1]
  const bary = np.stack(
    w.map((v) => np.where(covered, v, 0)),
    -1,
  );
  // The soft silhouette: the first knum valid faces (face order) whose padded box holds the pixel.
  let near = np.logicalAnd(np.expandDims(geo.valid, 0), inBoxes(xy!, px, py, p.boxLen));
  if (p.knum < xy!.shape[0]!) near = np.logicalAnd(near, np.lessEqual(np.cumsum(np.astype(near, "int32"), 1), p.knum));
  const s = np.mul(boundaryDistanceSq(allFaces(geo.packed), px, py), p.sigmaInv);
  const term = np.where(
    np.logicalAnd(near, np.lessEqual(np.stopGradient(s), DIBR_FAR_S)),
    np.log(np.neg(np.expm1(np.neg(np.maximum(s, 1e-12))))),
    0,
  );
  const logT = np.where(np.reshape(covered, [W * H]), 0, np.sum(term, 1));
  return [np.reshape(logT, [H, W]), np.reshape(bary, [H, W, 3])];
}
