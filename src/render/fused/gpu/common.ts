/**
 * WGSL shared by the fused rasterizers' WebGPU kernels: the parameter block, the face table
 * (faces.ts's per-face constants, one thread per face), the binning of faces into 8×8 pixel tiles
 * as bitmasks (one thread per tile and 32 faces: no atomics, and a pixel visits its faces in face
 * order, as on the CPU), and SoftRas's per pixel–face evaluation (softras-pair.ts) in float32.
 * Structural choices (distance function, culling, channels) are baked into the source; sizes and
 * scalar parameters are uniforms.
 */
import type { ShapedArray } from "../../../core/aval.js";
import { gpu } from "../../../core/backends/webgpu/context.js";
import type { DeviceBuffer } from "../../../core/backends/webgpu/buffers.js";
import { grid, uniformParams, type BindingResource } from "../../../core/backends/webgpu/pipelines.js";
import { AREA_EPS, EDGE_EPS, NO_BOUNDARY_D2 } from "../../raster-common.js";

/** Floats per face in the face table. */
export const STRIDE = 45;
/** Offsets in a face's row of the table. */
export const AT = { xy: 0, z: 6, area: 9, lo: 10, hi: 12, bary: 14, edges: 26, height: 41, flags: 44 } as const;
export const TILE = 8;

/** Scalar parameters of every kernel (uniform): u32 sizes then f32 values, as u32 words. */
export const PARAMS_STRUCT = `struct Params {
  W: u32, H: u32, F: u32, NW: u32, TX: u32, TY: u32, knum: u32, _u1: u32,
  sigma: f32, prune: f32, gamma: f32, near: f32, far: f32, eps: f32, margin: f32, _f0: f32,
}`;

const f32Word = (x: number): number => new Uint32Array(new Float32Array([x]).buffer)[0]!;

export interface KernelScalars {
  readonly width: number;
  readonly height: number;
  readonly faces: number;
  /** DIB-R: faces shaping a pixel's soft silhouette (capped at 2³¹). */
  readonly knum?: number;
  readonly sigma: number;
  readonly prune: number;
  readonly gamma: number;
  readonly near: number;
  readonly far: number;
  readonly eps: number;
  readonly margin: number;
}

/**
 * What every rule starts with: float32 geometry (WebGPU has no float64), the face count, the
 * kernels' scalars and their uniform block (made once per compiled program).
 */
export function kernelSetup(
  prim: string,
  inAvals: readonly ShapedArray[],
  scalarsOf: (faces: number) => KernelScalars,
): { F: number; s: KernelScalars; uniform: BindingResource } {
  if (inAvals[0]!.dtype !== "float32")
    throw new Error(`${prim} on WebGPU computes in float32; render float32 geometry (WebGPU has no float64).`);
  const F = inAvals[0]!.shape[0]!,
    s = scalarsOf(F);
  return { F, s, uniform: uniformParams(gpu().device, paramWords(s)) };
}

/** The uniform words of a Params block. */
function paramWords(s: KernelScalars): number[] {
  const TX = Math.ceil(s.width / TILE),
    TY = Math.ceil(s.height / TILE),
    NW = Math.ceil(s.faces / 32);
  return [
    s.width,
    s.height,
    s.faces,
    NW,
    TX,
    TY,
    Math.min(s.knum ?? 0, 2 ** 31),
    0,
    ...[s.sigma, s.prune, s.gamma, s.near, s.far, s.eps, s.margin, 0].map(f32Word),
  ];
}

/** Thread index from a 2-D grid of 64-wide workgroups. */
export const MAIN = `@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * (nwg.x * 64u);`;

/** MAIN for a thread per pixel: its row, column and NDC centre (px, py). */
export const PIXEL_MAIN = `${MAIN}
  if (i >= P.W * P.H) { return; }
  let row = i / P.W; let col = i % P.W;
  let px = px_of(col); let py = py_of(row);`;

/** Face culling baked into the face-table kernel. */
export interface Culling {
  readonly culling: "none" | "back" | "front";
  readonly cullAlpha: boolean;
}

/**
 * Face table: T[STRIDE·f ..] (screen xy, z, area, padded box, barycentric coefficients, edges,
 * heights, and flags as a small float: 1 valid, 2 include in the silhouette, 4 may colour, bits
 * 3..8 the joined-edge flags of mesh-edges.ts), from xy [F·6], z [F·3], front [F] (u32 booleans)
 * and, for SoftRas, joins [F] (i32). One buffer for all of it keeps every kernel
 * within WebGPU's default 8 storage buffers per stage (browsers' SwiftShader allows 10).
 */
export const faceTableSource = (c: Culling, withJoins: boolean): string => {
  const colour = c.culling === "none" ? "true" : c.culling === "back" ? "front[f] != 0u" : "front[f] == 0u";
  return `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> xy: array<f32>;
@group(0) @binding(1) var<storage, read> zs: array<f32>;
@group(0) @binding(2) var<storage, read> front: array<u32>;
@group(0) @binding(3) var<storage, read_write> T: array<f32>;
@group(0) @binding(4) var<uniform> P: Params;
${withJoins ? "@group(0) @binding(5) var<storage, read> joins: array<i32>;" : ""}
${MAIN}
  if (i >= P.F) { return; }
  let f = i;
  let joined = ${withJoins ? "u32(joins[f]) & 63u" : "0u"};
  _ = front[f];
  var vx: array<f32, 3>; var vy: array<f32, 3>;
  for (var k = 0u; k < 3u; k++) { vx[k] = xy[6u * f + 2u * k]; vy[k] = xy[6u * f + 2u * k + 1u]; }
  let z0 = zs[3u * f]; let z1 = zs[3u * f + 1u]; let z2 = zs[3u * f + 2u];
  let A = (vx[2] - vx[0]) * (vy[1] - vy[0]) - (vy[2] - vy[0]) * (vx[1] - vx[0]);
  let ok = abs(A) > ${AREA_EPS}f && z0 > 0.0f && z1 > 0.0f && z2 > 0.0f;
  let o = ${STRIDE}u * f;
  for (var k = 0u; k < 3u; k++) { T[o + 2u * k] = vx[k]; T[o + 2u * k + 1u] = vy[k]; }
  T[o + 6u] = z0; T[o + 7u] = z1; T[o + 8u] = z2;
  T[o + ${AT.area}u] = A;
  T[o + ${AT.lo}u] = min(vx[0], min(vx[1], vx[2])) - P.margin;
  T[o + ${AT.hi}u] = max(vx[0], max(vx[1], vx[2])) + P.margin;
  T[o + ${AT.lo + 1}u] = min(vy[0], min(vy[1], vy[2])) - P.margin;
  T[o + ${AT.hi + 1}u] = max(vy[0], max(vy[1], vy[2])) + P.margin;
  let invA = select(0.0f, 1.0f / A, ok);
  for (var k = 0u; k < 3u; k++) {
    let a = (k + 1u) % 3u; let b = (k + 2u) % 3u;
    let xa = vx[a]; let ya = vy[a]; let xb = vx[b]; let yb = vy[b];
    let ob = o + ${AT.bary}u + 4u * k;
    T[ob] = xa; T[ob + 1u] = ya; T[ob + 2u] = (yb - ya) * invA; T[ob + 3u] = (xb - xa) * invA;
    let dx = vx[a] - vx[k]; let dy = vy[a] - vy[k]; let len2 = dx * dx + dy * dy;
    let oe = o + ${AT.edges}u + 5u * k;
    T[oe] = vx[k]; T[oe + 1u] = vy[k]; T[oe + 2u] = dx; T[oe + 3u] = dy;
    T[oe + 4u] = select(0.0f, 1.0f / len2, len2 > ${EDGE_EPS}f);
    let opp = sqrt((xb - xa) * (xb - xa) + (yb - ya) * (yb - ya));
    T[o + ${AT.height}u + k] = select(0.0f, abs(A) / opp, ok && opp > 0.0f);
  }
  let colour = ${colour};
  let include = ${c.cullAlpha ? "colour" : "true"};
  T[o + ${AT.flags}u] = f32(select(0u, 1u, ok) | select(0u, 2u, include) | select(0u, 4u, colour) | (joined << 3u));
}
`;
};

/** A face's flags from its table row (WGSL). */
export const FLAGS_FN = `fn faceFlags(f: u32) -> u32 { return u32(T[${STRIDE}u * f + ${AT.flags}u]); }`;

/**
 * Bins: masks[(tile·NW + w)] has bit b set when face 32w + b is valid, shapes the silhouette and
 * its padded box overlaps the tile's pixel centres.
 */
export const BINS_SOURCE = `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read_write> masks: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;
${FLAGS_FN}
${MAIN}
  if (i >= P.TX * P.TY * P.NW) { return; }
  let tile = i / P.NW; let w = i % P.NW;
  let c0 = (tile % P.TX) * ${TILE}u; let r0 = (tile / P.TX) * ${TILE}u;
  let c1 = min(P.W, c0 + ${TILE}u) - 1u; let r1 = min(P.H, r0 + ${TILE}u) - 1u;
  let W = f32(P.W); let H = f32(P.H);
  let xmin = (2.0f * f32(c0) + 1.0f - W) / W; let xmax = (2.0f * f32(c1) + 1.0f - W) / W;
  let ymax = (H - 2.0f * f32(r0) - 1.0f) / H; let ymin = (H - 2.0f * f32(r1) - 1.0f) / H;
  var bits = 0u;
  for (var b = 0u; b < 32u; b++) {
    let f = 32u * w + b;
    if (f >= P.F) { break; }
    if ((faceFlags(f) & 3u) != 3u) { continue; }
    let o = ${STRIDE}u * f;
    if (T[o + ${AT.lo}u] <= xmax && T[o + ${AT.hi}u] >= xmin
      && T[o + ${AT.lo + 1}u] <= ymax && T[o + ${AT.hi + 1}u] >= ymin) { bits |= 1u << b; }
  }
  masks[i] = bits;
}
`;

/**
 * Screen geometry over the face table T (a storage buffer in scope), shared by SoftRas and DIB-R
 * (faces.ts): pixel centres, box test, barycentrics and their tangent and adjoint maps, and the
 * squared distance to a face's boundary with the edge and parameter where it is attained (and its
 * envelope tangent and adjoint), with the cheap lower bound that rejects far pairs first.
 */
export const GEOMETRY_WGSL = `
${FLAGS_FN}

fn px_of(col: u32) -> f32 { let W = f32(P.W); return (2.0f * f32(col) + 1.0f - W) / W; }
fn py_of(row: u32) -> f32 { let H = f32(P.H); return (H - 2.0f * f32(row) - 1.0f) / H; }

fn inBox(f: u32, px: f32, py: f32) -> bool {
  let o = ${STRIDE}u * f;
  return px >= T[o + ${AT.lo}u] && px <= T[o + ${AT.hi}u] && py >= T[o + ${AT.lo + 1}u] && py <= T[o + ${AT.hi + 1}u];
}

fn bary(f: u32, px: f32, py: f32) -> vec3<f32> {
  let o = ${STRIDE}u * f + ${AT.bary}u;
  return vec3<f32>((px - T[o]) * T[o + 2u] - (py - T[o + 1u]) * T[o + 3u],
                   (px - T[o + 4u]) * T[o + 6u] - (py - T[o + 5u]) * T[o + 7u],
                   (px - T[o + 8u]) * T[o + 10u] - (py - T[o + 9u]) * T[o + 11u]);
}

/**
 * A lower bound of the distance (not squared) from a point with barycentrics w to face f (faces.ts
 * distanceLowerBound2).
 */
fn distanceLowerBound(f: u32, w: vec3<f32>) -> f32 {
  let oh = ${STRIDE}u * f + ${AT.height}u;
  return max(max(-w.x * T[oh], -w.y * T[oh + 1u]), max(-w.z * T[oh + 2u], 0.0f));
}

/** Squared distance to face f's boundary, the edge (0: v0→v1, …), the parameter t and e = (p − a) − t(b − a). */
struct Dist { d2: f32, edge: u32, t: f32, ex: f32, ey: f32 }

/** faces.ts boundaryDistance: strictly smaller wins, so the earliest edge takes ties. */
fn boundaryDistance(f: u32, px: f32, py: f32) -> Dist {
  var d: Dist;
  d.d2 = 3.0e38f;
  for (var e = 0u; e < 3u; e++) {
    let k = ${STRIDE}u * f + ${AT.edges}u + 5u * e;
    let qx = px - T[k]; let qy = py - T[k + 1u]; let dx = T[k + 2u]; let dy = T[k + 3u];
    let tt = min(1.0f, max(0.0f, (qx * dx + qy * dy) * T[k + 4u]));
    let ex = qx - tt * dx; let ey = qy - tt * dy;
    let d2 = ex * ex + ey * ey;
    if (d2 < d.d2) { d.d2 = d2; d.edge = e; d.t = tt; d.ex = ex; d.ey = ey; }
  }
  return d;
}

/**
 * boundaryDistance over face f's unjoined edges and boundary corners (joined-edge flags j; faces.ts
 * boundaryDistanceJoined).
 */
fn boundaryDistanceJoined(f: u32, px: f32, py: f32, j: u32) -> Dist {
  var d: Dist;
  d.d2 = ${NO_BOUNDARY_D2}.0f; d.edge = 0u; d.t = 0.0f; d.ex = 0.0f; d.ey = 0.0f;
  for (var e = 0u; e < 3u; e++) {
    if ((j & (1u << e)) != 0u) { continue; }
    let k = ${STRIDE}u * f + ${AT.edges}u + 5u * e;
    let qx = px - T[k]; let qy = py - T[k + 1u]; let dx = T[k + 2u]; let dy = T[k + 3u];
    let tt = min(1.0f, max(0.0f, (qx * dx + qy * dy) * T[k + 4u]));
    let ex = qx - tt * dx; let ey = qy - tt * dy;
    let d2 = ex * ex + ey * ey;
    if (d2 < d.d2) { d.d2 = d2; d.edge = e; d.t = tt; d.ex = ex; d.ey = ey; }
  }
  for (var c = 0u; c < 3u; c++) {
    if ((j & (8u << c)) == 0u) { continue; }
    let k = ${STRIDE}u * f + ${AT.edges}u + 5u * c;
    let ex = px - T[k]; let ey = py - T[k + 1u];
    let d2 = ex * ex + ey * ey;
    if (d2 < d.d2) { d.d2 = d2; d.edge = c; d.t = 0.0f; d.ex = ex; d.ey = ey; }
  }
  return d;
}

/** Inside with joined edges belonging to the face (faces.ts insideJoined): edge k + 1 is opposite corner k. */
fn insideJoined(w: vec3<f32>, j: u32) -> bool {
  return (w.x > 0.0f || (w.x >= 0.0f && (j & 2u) != 0u)) && (w.y > 0.0f || (w.y >= 0.0f && (j & 4u) != 0u))
    && (w.z > 0.0f || (w.z >= 0.0f && (j & 1u) != 0u));
}

/** Envelope tangent of d² for vertex tangents dv: ∂d²/∂a = −2e(1 − t), ∂d²/∂b = −2e·t. */
fn distTangent(d: Dist, dv: array<f32, 6>) -> f32 {
  let a = 2u * d.edge; let b = 2u * ((d.edge + 1u) % 3u);
  var v = dv;
  return -2.0f * ((1.0f - d.t) * (d.ex * v[a] + d.ey * v[a + 1u]) + d.t * (d.ex * v[b] + d.ey * v[b + 1u]));
}

/** g += gd·∂d²/∂v. */
fn addDistGradient(d: Dist, gd: f32, g: ptr<function, array<f32, 6>>) {
  let a = 2u * d.edge; let b = 2u * ((d.edge + 1u) % 3u);
  let ga = -2.0f * gd * (1.0f - d.t); let gb = -2.0f * gd * d.t;
  (*g)[a] += ga * d.ex; (*g)[a + 1u] += ga * d.ey; (*g)[b] += gb * d.ex; (*g)[b + 1u] += gb * d.ey;
}

fn vtx(f: u32) -> array<f32, 6> {
  let o = ${STRIDE}u * f;
  return array<f32, 6>(T[o], T[o + 1u], T[o + 2u], T[o + 3u], T[o + 4u], T[o + 5u]);
}

/** dw = ∂w/∂v · dv (faces.ts baryTangent). */
fn baryTangent(f: u32, px: f32, py: f32, w: vec3<f32>, d: array<f32, 6>) -> vec3<f32> {
  let v = vtx(f); let A = T[${STRIDE}u * f + ${AT.area}u];
  let x0 = v[0]; let y0 = v[1]; let x1 = v[2]; let y1 = v[3]; let x2 = v[4]; let y2 = v[5];
  let dA = (y2 - y1) * d[0] + (x1 - x2) * d[1] + (y0 - y2) * d[2] + (x2 - x0) * d[3]
    + (y1 - y0) * d[4] + (x0 - x1) * d[5];
  let dN0 = (py - y2) * d[2] + (x2 - px) * d[3] + (y1 - py) * d[4] + (px - x1) * d[5];
  let dN1 = (py - y0) * d[4] + (x0 - px) * d[5] + (y2 - py) * d[0] + (px - x2) * d[1];
  let dN2 = (py - y1) * d[0] + (x1 - px) * d[1] + (y0 - py) * d[2] + (px - x0) * d[3];
  return (vec3<f32>(dN0, dN1, dN2) - w * dA) / A;
}

/** g += Σ_k gw_k ∂w_k/∂v (faces.ts addBaryGradient). */
fn addBaryGradient(f: u32, px: f32, py: f32, w: vec3<f32>, gw: vec3<f32>, g: ptr<function, array<f32, 6>>) {
  let v = vtx(f); let iA = 1.0f / T[${STRIDE}u * f + ${AT.area}u];
  let x0 = v[0]; let y0 = v[1]; let x1 = v[2]; let y1 = v[3]; let x2 = v[4]; let y2 = v[5];
  let a = gw * iA;
  let gA = -dot(a, w);
  (*g)[0] += a.y * (y2 - py) + a.z * (py - y1) + gA * (y2 - y1);
  (*g)[1] += a.y * (px - x2) + a.z * (x1 - px) + gA * (x1 - x2);
  (*g)[2] += a.x * (py - y2) + a.z * (y0 - py) + gA * (y0 - y2);
  (*g)[3] += a.x * (x2 - px) + a.z * (px - x0) + gA * (x2 - x0);
  (*g)[4] += a.x * (y1 - py) + a.y * (py - y0) + gA * (y1 - y0);
  (*g)[5] += a.x * (px - x1) + a.y * (x0 - px) + gA * (x0 - x1);
}
`;

/**
 * SoftRas's pair evaluation (softras-pair.ts), on the shared screen geometry: the coverage
 * exponent x and whether the pair is kept, with the boundary distance for the derivatives;
 * sigmoids, log σ; the clipped barycentrics and perspective depth; and their tangent and adjoint maps.
 */
export const pairSource = (distFunc: "euclidean" | "barycentric"): string => `
${GEOMETRY_WGSL}
struct Pair {
  keep: bool, inside: bool, x: f32, w: vec3<f32>,
  dist: Dist, minK: u32,
  sx: f32, snx: f32, logD: f32,
  c: vec3<f32>, wc: vec3<f32>, s: f32, sum: f32, q: f32,
}

fn pairAt(f: u32, px: f32, py: f32) -> Pair {
  var pr: Pair;
  pr.keep = false;
  let w = bary(f, px, py);
  pr.w = w;
  pr.inside = w.x > 0.0f && w.y > 0.0f && w.z > 0.0f;
${
  distFunc === "euclidean"
    ? `
  let j = (faceFlags(f) >> 3u) & 63u;
  if (j != 0u) { pr.inside = insideJoined(w, j); }
  let lb = distanceLowerBound(f, w);
  if (!pr.inside && lb * lb > P.prune * P.sigma) { return pr; }
  if (j != 0u) { pr.dist = boundaryDistanceJoined(f, px, py, j); } else { pr.dist = boundaryDistance(f, px, py); }
  pr.x = select(-pr.dist.d2, pr.dist.d2, pr.inside) / P.sigma;`
    : `
  var k = 2u;
  if (w.x <= w.y) { if (w.x <= w.z) { k = 0u; } } else if (w.y <= w.z) { k = 1u; }
  pr.minK = k;
  var wv = w;
  pr.x = wv[k] * abs(wv[k]) / P.sigma;`
}
  pr.keep = pr.inside || pr.x > -P.prune;
  return pr;
}

/** σ(x), σ(−x) and log σ(x). */
fn activations(pr: ptr<function, Pair>) {
  let x = (*pr).x;
  let ex = exp(-abs(x)); let inv = 1.0f / (1.0f + ex);
  if (x >= 0.0f) { (*pr).sx = inv; (*pr).snx = ex * inv; } else { (*pr).sx = ex * inv; (*pr).snx = inv; }
  let u = 1.0f + ex;
  let l = select(log(u) * (ex / (u - 1.0f)), ex, u == 1.0f);
  (*pr).logD = select(x - l, -l, x >= 0.0f);
}

fn zinv(f: u32) -> vec3<f32> {
  let o = ${STRIDE}u * f + ${AT.z}u;
  return vec3<f32>(1.0f / T[o], 1.0f / T[o + 1u], 1.0f / T[o + 2u]);
}

/** Clipped barycentrics and perspective depth (returned). */
fn colourGeometry(f: u32, pr: ptr<function, Pair>) -> f32 {
  let c = clamp((*pr).w, vec3<f32>(0.0f), vec3<f32>(1.0f));
  let sum = c.x + c.y + c.z; let s = max(sum, 1e-5f);
  (*pr).c = c; (*pr).sum = sum; (*pr).s = s; (*pr).wc = c / s;
  (*pr).q = dot((*pr).wc, zinv(f));
  return 1.0f / max((*pr).q, 1e-12f);
}

fn depthTerm(z: f32) -> f32 { return (P.far - z) / (P.far - P.near) / P.gamma; }

/** Tangent of d² (or m|m|) for vertex tangents d (softras-pair.ts distanceTangent). */
fn distanceTangent(f: u32, px: f32, py: f32, pr: ptr<function, Pair>, d: array<f32, 6>) -> f32 {
${
  distFunc === "euclidean"
    ? `
  return distTangent((*pr).dist, d);`
    : `
  var dw = baryTangent(f, px, py, (*pr).w, d);
  var w = (*pr).w;
  let k = (*pr).minK;
  return 2.0f * abs(w[k]) * dw[k];`
}
}

/** g += gd·∂(d² or m|m|)/∂v. */
fn addDistanceGradient(f: u32, px: f32, py: f32, pr: ptr<function, Pair>, gd: f32, g: ptr<function, array<f32, 6>>) {
${
  distFunc === "euclidean"
    ? `
  addDistGradient((*pr).dist, gd, g);`
    : `
  var w = (*pr).w;
  let k = (*pr).minK; let m2 = 2.0f * abs(w[k]) * gd;
  var gw = vec3<f32>(0.0f); gw[k] = m2;
  addBaryGradient(f, px, py, (*pr).w, gw, g);`
}
}

/**
 * Tangent of the depth (returned) and of w̃ (into dwc) for tangents dw of w and dz of the vertex depths (layerTangent).
 */
fn layerTangent(f: u32, pr: ptr<function, Pair>, dw: vec3<f32>, dz: vec3<f32>, dwc: ptr<function, vec3<f32>>) -> f32 {
  let w = (*pr).w; let c = (*pr).c; let wc = (*pr).wc; let s = (*pr).s;
  let live = (w > vec3<f32>(0.0f)) & (w < vec3<f32>(1.0f));
  let dc = select(vec3<f32>(0.0f), dw, live);
  let ds = select(0.0f, dc.x + dc.y + dc.z, (*pr).sum > 1e-5f);
  *dwc = dc / s - c * ds / (s * s);
  let iz = zinv(f);
  let dq = dot(*dwc, iz) - dot(wc * dz, iz * iz);
  return select(0.0f, -dq / ((*pr).q * (*pr).q), (*pr).q > 1e-12f);
}

/** Cotangents of w̃ and the depth pulled back to w (returned) and the vertex depths (into gz) (layerAdjoint). */
fn layerAdjoint(
  f: u32, pr: ptr<function, Pair>, gwc: vec3<f32>, gDepth: f32, gz: ptr<function, vec3<f32>>
) -> vec3<f32> {
  let q = (*pr).q; let s = (*pr).s; let c = (*pr).c; let wc = (*pr).wc; let w = (*pr).w;
  let gq = select(0.0f, -gDepth / (q * q), q > 1e-12f);
  let iz = zinv(f);
  let g = gwc + gq * iz;
  *gz = -gq * wc * iz * iz;
  let gs = select(0.0f, -dot(g, c) / (s * s), (*pr).sum > 1e-5f);
  let live = (w > vec3<f32>(0.0f)) & (w < vec3<f32>(1.0f));
  return select(vec3<f32>(0.0f), g / s + gs, live);
}
`;

/** WebGPU's default maxStorageBuffersPerShaderStage: what every browser's adapter allows. */
const STORAGE_LIMIT = 8;
/** Sources already checked against it (each once, not on every dispatch). */
const withinLimit = new Set<string>();

/** Records `source` over `threads` threads with these bindings (pipelines cached by source). */
export function dispatch(source: string, bindings: readonly BindingResource[], threads: number): void {
  const ctx = gpu();
  if (threads <= 0) return;
  // Checked here, not by the adapter: lavapipe allows more, so a kernel over the default would pass every test and fail
  // in browsers.
  if (!withinLimit.has(source)) {
    const storage = source.split("var<storage").length - 1;
    if (storage > STORAGE_LIMIT)
      throw new Error(
        `internal: a fused rasterizer kernel binds ${storage} storage buffers, ` +
          `more than WebGPU's default ${STORAGE_LIMIT}.`,
      );
    withinLimit.add(source);
  }
  const p = ctx.pipelines.get(source);
  ctx.stream.dispatch(
    p.pipeline,
    ctx.pipelines.bindGroup(p, bindings),
    grid(Math.ceil(threads / 64), ctx.limits.maxComputeWorkgroupsPerDimension),
  );
}

/** Face table (and bins) of xy, z, front: [T] or [T, masks] (new references; release them). */
export function faceTableAndBins(
  c: Culling,
  xy: DeviceBuffer,
  z: DeviceBuffer,
  front: DeviceBuffer,
  joins: DeviceBuffer | null,
  uniform: BindingResource,
  s: KernelScalars,
  withBins: boolean,
): DeviceBuffer[] {
  const pool = gpu().pool;
  const T = pool.allocate(STRIDE * s.faces);
  dispatch(
    faceTableSource(c, joins !== null),
    joins ? [xy, z, front, T, uniform, joins] : [xy, z, front, T, uniform],
    s.faces,
  );
  if (!withBins) return [T];
  const tiles = Math.ceil(s.width / TILE) * Math.ceil(s.height / TILE),
    NW = Math.ceil(s.faces / 32);
  const masks = pool.allocate(tiles * NW);
  dispatch(BINS_SOURCE, [T, masks, uniform], tiles * NW);
  return [T, masks];
}

const COPY_SOURCE = `struct Copy { n: u32, offset: u32, _a: u32, _b: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> C: Copy;
${MAIN}
  if (i >= C.n) { return; }
  dst[C.offset + i] = src[i];
}
`;

/**
 * A packer of float buffers of the given lengths into one (in order), so kernels that read many
 * operands stay within the storage-buffer limit; the offsets are where each part starts.
 */
export function packer(lengths: readonly number[]): {
  offsets: number[];
  pack: (parts: readonly DeviceBuffer[]) => DeviceBuffer;
} {
  const ctx = gpu();
  const offsets: number[] = [];
  let total = 0;
  for (const n of lengths) {
    offsets.push(total);
    total += n;
  }
  const uniforms = lengths.map((n, k) => uniformParams(ctx.device, [n, offsets[k]!, 0, 0]));
  return {
    offsets,
    pack: (parts) => {
      const out = ctx.pool.allocate(total);
      parts.forEach((b, k) => dispatch(COPY_SOURCE, [b, out, uniforms[k]!], lengths[k]!));
      return out;
    },
  };
}

/** Pixel rectangle c0..c1 × r0..r1 (i32) whose centres lie in face f's padded box (faces.ts pixelBox), as WGSL lets. */
export const PIXEL_BOX = `
    let ob = ${STRIDE}u * f;
    let Wf = f32(P.W); let Hf = f32(P.H);
    let c0 = i32(max(0.0f, ceil((T[ob + ${AT.lo}u] * Wf + Wf - 1.0f) / 2.0f)));
    let c1 = min(i32(P.W) - 1, i32(floor((T[ob + ${AT.hi}u] * Wf + Wf - 1.0f) / 2.0f)));
    let r0 = i32(max(0.0f, ceil((Hf - 1.0f - T[ob + ${AT.hi + 1}u] * Hf) / 2.0f)));
    let r1 = min(i32(P.H) - 1, i32(floor((Hf - 1.0f - T[ob + ${AT.lo + 1}u] * Hf) / 2.0f)));`;

/** The faces of pixel (row, col)'s tile in face order: WGSL loop header over `f` (close with two braces). */
export const FOR_TILE_FACES = (row: string, col: string) => `
  let tile = (${row} / ${TILE}u) * P.TX + (${col} / ${TILE}u);
  for (var wi = 0u; wi < P.NW; wi++) {
    var bits = masks[tile * P.NW + wi];
    loop {
      if (bits == 0u) { break; }
      let f = 32u * wi + countTrailingZeros(bits);
      bits &= bits - 1u;`;
