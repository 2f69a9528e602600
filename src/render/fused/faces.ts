/**
 * Host-side face tables for the fused rasterizer kernels: per face the screen vertices, depths,
 * twice the signed area, validity and padded bounding box, and a binning of faces into screen
 * tiles (in face order, so per-pixel loops visit faces in the same order as the array program).
 *
 * Geometry conventions are raster-common.ts's: w_k = N_k/A with
 *   N_k = (px − xa)(yb − ya) − (py − ya)(xb − xa), (a, b) = (v_{k+1}, v_{k+2}),
 *   A = N_2 at p = v_2 = (x2 − x0)(y1 − y0) − (y2 − y0)(x1 − x0).
 */
import { AREA_EPS, EDGE_EPS, NO_BOUNDARY_D2 } from "../raster-common.js";

export interface FaceTable {
  readonly n: number;
  /** x0 y0 x1 y1 x2 y2 per face. */
  readonly xy: Float64Array;
  /** z0 z1 z2 per face, and their reciprocals (perspective-correct interpolation weighs by them). */
  readonly z: Float64Array;
  readonly iz: Float64Array;
  readonly area: Float64Array;
  /** Non-degenerate screen area and every vertex in front of the camera. */
  readonly valid: Uint8Array;
  /** Bounding box padded by the margin, NDC. */
  readonly lo: Float64Array;
  readonly hi: Float64Array;
  /**
   * 12 per face: (xa, ya, p_k, q_k) for k = 0, 1, 2 with (a, b) = (v_{k+1}, v_{k+2}), p_k = (yb − ya)/A,
   * q_k = (xb − xa)/A, so w_k = (px − xa)·p_k − (py − ya)·q_k (0 for degenerate faces).
   */
  readonly bary: Float64Array;
  /** 15 per face: edge e = v_e → v_{e+1} as (ax, ay, dx, dy, 1/|d|² or 0 for a point). */
  readonly edges: Float64Array;
  /** 3 per face: |A|/|edge opposite v_k| (the distance to edge k's line is −w_k times it outside), or 0. */
  readonly height: Float64Array;
  /**
   * Joined-edge flags per face (mesh-edges.ts: bits 0..2 joined edges, 3..5 boundary corners; 0 = SoftRas' own
   * boundary).
   */
  readonly joins: Uint8Array;
}

/**
 * A half-open range [start, end) of image rows (the kernels that loop over pixels) or of faces (the
 * adjoints, face by face): the piece of a kernel's loop that one thread runs (raster-threads.ts).
 */
export type Piece = readonly [start: number, end: number];

export function faceTable(
  xy: ArrayLike<number>,
  z: ArrayLike<number>,
  n: number,
  margin: number,
  joins?: ArrayLike<number>,
): FaceTable {
  // (The constructor copies a typed array directly; Float64Array.from would go through its iterator.)
  const fxy = new Float64Array(xy as ArrayLike<number>),
    fz = new Float64Array(z as ArrayLike<number>);
  const area = new Float64Array(n),
    valid = new Uint8Array(n),
    lo = new Float64Array(2 * n),
    hi = new Float64Array(2 * n);
  const bary = new Float64Array(12 * n),
    edges = new Float64Array(15 * n),
    height = new Float64Array(3 * n);
  const vx = new Float64Array(3),
    vy = new Float64Array(3);
  for (let f = 0; f < n; f++) {
    const o = 6 * f;
    for (let i = 0; i < 3; i++) {
      vx[i] = fxy[o + 2 * i]!;
      vy[i] = fxy[o + 2 * i + 1]!;
    }
    const A = (vx[2]! - vx[0]!) * (vy[1]! - vy[0]!) - (vy[2]! - vy[0]!) * (vx[1]! - vx[0]!);
    area[f] = A;
    const ok = Math.abs(A) > AREA_EPS && fz[3 * f]! > 0 && fz[3 * f + 1]! > 0 && fz[3 * f + 2]! > 0;
    valid[f] = ok ? 1 : 0;
    lo[2 * f] = Math.min(vx[0]!, vx[1]!, vx[2]!) - margin;
    hi[2 * f] = Math.max(vx[0]!, vx[1]!, vx[2]!) + margin;
    lo[2 * f + 1] = Math.min(vy[0]!, vy[1]!, vy[2]!) - margin;
    hi[2 * f + 1] = Math.max(vy[0]!, vy[1]!, vy[2]!) + margin;
    const invA = ok ? 1 / A : 0;
    for (let k = 0; k < 3; k++) {
      const a = (k + 1) % 3,
        b = (k + 2) % 3;
      const xa = vx[a]!,
        ya = vy[a]!,
        xb = vx[b]!,
        yb = vy[b]!;
      const ob = 12 * f + 4 * k;
      bary[ob] = xa;
      bary[ob + 1] = ya;
      bary[ob + 2] = (yb - ya) * invA;
      bary[ob + 3] = (xb - xa) * invA;
      const dx = vx[a]! - vx[k]!,
        dy = vy[a]! - vy[k]!,
        len2 = dx * dx + dy * dy;
      const oe = 15 * f + 5 * k;
      edges[oe] = vx[k]!;
      edges[oe + 1] = vy[k]!;
      edges[oe + 2] = dx;
      edges[oe + 3] = dy;
      edges[oe + 4] = len2 > EDGE_EPS ? 1 / len2 : 0;
      const opp = Math.sqrt((xb - xa) * (xb - xa) + (yb - ya) * (yb - ya));
      height[3 * f + k] = ok && opp > 0 ? Math.abs(A) / opp : 0;
    }
  }
  const iz = fz.map((v) => 1 / v);
  return {
    n,
    xy: fxy,
    z: fz,
    iz,
    area,
    valid,
    lo,
    hi,
    bary,
    edges,
    height,
    joins: joins ? Uint8Array.from(joins) : new Uint8Array(n),
  };
}

/** NDC centre of pixel column i / row r (row 0 = top), src/render/CONVENTIONS.md. */
export const ndcX = (i: number, W: number): number => (2 * i + 1 - W) / W;
export const ndcY = (r: number, H: number): number => (H - 2 * r - 1) / H;

/**
 * Faces per size×size pixel tile whose padded box overlaps the tile's pixel centres, in face order, for the tile rows
 * row0, row0 + 1, … (a thread's piece of pixel rows bins only those): tile (ty, tx)'s faces are
 * faces[start[k]], …, faces[start[k + 1] − 1] with k = tileOf(bins, r, c).
 */
export interface TileBins {
  readonly size: number;
  readonly nx: number;
  readonly row0: number;
  readonly start: Int32Array;
  readonly faces: Int32Array;
}

/** Index into bins.start of the tile holding pixel (r, c). */
export const tileOf = (bins: TileBins, r: number, c: number): number =>
  (Math.floor(r / bins.size) - bins.row0) * bins.nx + Math.floor(c / bins.size);

/**
 * The tile bins of the pixel rows `rows` (default: all): a face is listed in the tiles its box overlaps within those
 * rows — a pixel's faces are the same either way, those whose box holds the pixel.
 */
export function binTiles(
  t: FaceTable,
  W: number,
  H: number,
  include: (f: number) => boolean,
  size = 8,
  rows: Piece = [0, H],
): TileBins {
  const nx = Math.ceil(W / size),
    row0 = Math.floor(rows[0] / size),
    T = nx * (Math.floor((Math.max(rows[1], rows[0] + 1) - 1) / size) - row0 + 1);
  // A counting sort: faces per tile (pass 0), their prefix sums, then the faces written in face order (pass 1).
  const start = new Int32Array(T + 1);
  let faces = new Int32Array(0),
    next = start;
  for (let pass = 0; pass < 2; pass++) {
    for (let f = 0; f < t.n; f++) {
      if (!include(f)) continue;
      // Columns whose centre x lies in [lo, hi]: x = (2i + 1 − W)/W ⇒ i = (xW + W − 1)/2.
      const c0 = firstCol(t, f, W),
        c1 = lastCol(t, f, W);
      // Rows whose centre y lies in [lo, hi]: y = (H − 2r − 1)/H ⇒ r = (H − 1 − yH)/2.
      const r0 = Math.max(firstRow(t, f, H), rows[0]),
        r1 = Math.min(lastRow(t, f, H), rows[1] - 1);
      if (c0 > c1 || r0 > r1) continue;
      for (let ty = Math.floor(r0 / size); ty <= Math.floor(r1 / size); ty++)
        for (let tx = Math.floor(c0 / size); tx <= Math.floor(c1 / size); tx++) {
          const k = (ty - row0) * nx + tx;
          if (pass === 0) start[k + 1]!++;
          else faces[next[k]!++] = f;
        }
    }
    if (pass === 0) {
      for (let k = 0; k < T; k++) start[k + 1]! += start[k]!;
      faces = new Int32Array(start[T]!);
      next = start.slice(0, T);
    }
  }
  return { size, nx, row0, start, faces };
}

/** Pixel rectangle [c0, c1] × [r0, r1] whose centres lie in face f's padded box (empty when c0 > c1). */
export function pixelBox(t: FaceTable, f: number, W: number, H: number): [number, number, number, number] {
  return [firstCol(t, f, W), lastCol(t, f, W), firstRow(t, f, H), lastRow(t, f, H)];
}
/** The first and last pixel columns of face f's padded box (pixelBox's c0 and c1). */
const firstCol = (t: FaceTable, f: number, W: number): number => Math.max(0, Math.ceil((t.lo[2 * f]! * W + W - 1) / 2));
const lastCol = (t: FaceTable, f: number, W: number): number =>
  Math.min(W - 1, Math.floor((t.hi[2 * f]! * W + W - 1) / 2));
/** The first and last pixel rows of face f's padded box (pixelBox's r0 and r1). */
export const firstRow = (t: FaceTable, f: number, H: number): number =>
  Math.max(0, Math.ceil((H - 1 - t.hi[2 * f + 1]! * H) / 2));
export const lastRow = (t: FaceTable, f: number, H: number): number =>
  Math.min(H - 1, Math.floor((H - 1 - t.lo[2 * f + 1]! * H) / 2));

/**
 * Squared distance from p to the boundary of face f (min over its three edges of the
 * point–segment distance, t clamped to [0, 1]) and where it is attained: out[0] = d², out[1] =
 * edge (0: v0→v1, 1: v1→v2, 2: v2→v0), out[2] = t, out[3..4] = e = (p − a) − t(b − a).
 */
export function boundaryDistance(t: FaceTable, f: number, px: number, py: number, out: Float64Array): void {
  const E = t.edges,
    o = 15 * f;
  let best = Infinity;
  for (let e = 0; e < 3; e++) {
    const k = o + 5 * e;
    const qx = px - E[k]!,
      qy = py - E[k + 1]!,
      dx = E[k + 2]!,
      dy = E[k + 3]!;
    const tt = Math.min(1, Math.max(0, (qx * dx + qy * dy) * E[k + 4]!));
    const ex = qx - tt * dx,
      ey = qy - tt * dy;
    const d2 = ex * ex + ey * ey;
    // Strictly smaller: the earliest edge wins ties, as np.minimum folded over edges 0, 1, 2 does.
    if (d2 < best) {
      best = d2;
      out[0] = d2;
      out[1] = e;
      out[2] = tt;
      out[3] = ex;
      out[4] = ey;
    }
  }
}

/**
 * boundaryDistance for a face with joined edges (flags j, mesh-edges.ts): the nearest of its
 * unjoined edges and boundary corners (corner k reported as edge k at t = 0); NO_BOUNDARY_D2 with
 * e = 0 (no derivative) when it has none.
 */
export function boundaryDistanceJoined(
  t: FaceTable,
  f: number,
  px: number,
  py: number,
  j: number,
  out: Float64Array,
): void {
  const E = t.edges,
    o = 15 * f;
  let best = NO_BOUNDARY_D2;
  out[0] = best;
  out[1] = 0;
  out[2] = 0;
  out[3] = 0;
  out[4] = 0;
  for (let e = 0; e < 3; e++) {
    if (j & (1 << e)) continue;
    const k = o + 5 * e;
    const qx = px - E[k]!,
      qy = py - E[k + 1]!,
      dx = E[k + 2]!,
      dy = E[k + 3]!;
    const tt = Math.min(1, Math.max(0, (qx * dx + qy * dy) * E[k + 4]!));
    const ex = qx - tt * dx,
      ey = qy - tt * dy;
    const d2 = ex * ex + ey * ey;
    if (d2 < best) {
      best = d2;
      out[0] = d2;
      out[1] = e;
      out[2] = tt;
      out[3] = ex;
      out[4] = ey;
    }
  }
  for (let c = 0; c < 3; c++) {
    if (!(j & (8 << c))) continue;
    const k = o + 5 * c,
      ex = px - E[k]!,
      ey = py - E[k + 1]!,
      d2 = ex * ex + ey * ey;
    if (d2 < best) {
      best = d2;
      out[0] = d2;
      out[1] = c;
      out[2] = 0;
      out[3] = ex;
      out[4] = ey;
    }
  }
}

/** Inside face f with joined-edge flags j: w_k > 0, or w_k ≥ 0 where edge k + 1 (opposite corner k) is joined. */
export function insideJoined(w: Float64Array, j: number): boolean {
  for (let k = 0; k < 3; k++) if (!(w[k]! > 0 || (w[k]! >= 0 && j & (1 << ((k + 1) % 3))))) return false;
  return true;
}

/** Screen barycentrics of p for face f into w (from the precomputed coefficients). */
export function barycentricsAt(t: FaceTable, f: number, px: number, py: number, w: Float64Array): void {
  const B = t.bary,
    o = 12 * f;
  w[0] = (px - B[o]!) * B[o + 2]! - (py - B[o + 1]!) * B[o + 3]!;
  w[1] = (px - B[o + 4]!) * B[o + 6]! - (py - B[o + 5]!) * B[o + 7]!;
  w[2] = (px - B[o + 8]!) * B[o + 10]! - (py - B[o + 9]!) * B[o + 11]!;
}

/**
 * A lower bound of the squared distance from p to face f's triangle, from its barycentrics: outside
 * edge k's line the distance is at least −w_k·height_k. Cheap enough to reject far pairs before
 * the exact point–segment distances.
 */
export function distanceLowerBound2(t: FaceTable, f: number, w: Float64Array): number {
  const h = t.height,
    o = 3 * f;
  const d = Math.max(-w[0]! * h[o]!, -w[1]! * h[o + 1]!, -w[2]! * h[o + 2]!, 0);
  return d * d;
}

/*
 * Derivatives of the barycentrics w_k = N_k/A with respect to the vertices (x0 y0 x1 y1 x2 y2):
 * ∂w_k = (∂N_k − w_k ∂A)/A, with ∂N/∂xa = py − yb, ∂N/∂ya = xb − px, ∂N/∂xb = ya − py,
 * ∂N/∂yb = px − xa for (a, b) = (v_{k+1}, v_{k+2}), and ∂A (A = N_2 at p = v2):
 * x0 → y2 − y1, y0 → x1 − x2, x1 → y0 − y2, y1 → x2 − x0, x2 → y1 − y0, y2 → x0 − x1.
 * Applied as products (tangents dw = ∂w·dv, adjoints g += Σ_k gw_k ∂w_k) rather than stored.
 */

/** dw_k = ∂w_k/∂v · dv for vertex tangents dv = d[o..o+5], into out[0..2]. */
export function baryTangent(
  t: FaceTable,
  f: number,
  px: number,
  py: number,
  w: Float64Array,
  d: ArrayLike<number>,
  o: number,
  out: Float64Array,
): void {
  const x = t.xy,
    ox = 6 * f,
    A = t.area[f]!;
  const x0 = x[ox]!,
    y0 = x[ox + 1]!,
    x1 = x[ox + 2]!,
    y1 = x[ox + 3]!,
    x2 = x[ox + 4]!,
    y2 = x[ox + 5]!;
  const dx0 = d[o]!,
    dy0 = d[o + 1]!,
    dx1 = d[o + 2]!,
    dy1 = d[o + 3]!,
    dx2 = d[o + 4]!,
    dy2 = d[o + 5]!;
  const dA = (y2 - y1) * dx0 + (x1 - x2) * dy0 + (y0 - y2) * dx1 + (x2 - x0) * dy1 + (y1 - y0) * dx2 + (x0 - x1) * dy2;
  // k = 0: (a, b) = (1, 2); k = 1: (2, 0); k = 2: (0, 1).
  const dN0 = (py - y2) * dx1 + (x2 - px) * dy1 + (y1 - py) * dx2 + (px - x1) * dy2;
  const dN1 = (py - y0) * dx2 + (x0 - px) * dy2 + (y2 - py) * dx0 + (px - x2) * dy0;
  const dN2 = (py - y1) * dx0 + (x1 - px) * dy0 + (y0 - py) * dx1 + (px - x0) * dy1;
  out[0] = (dN0 - w[0]! * dA) / A;
  out[1] = (dN1 - w[1]! * dA) / A;
  out[2] = (dN2 - w[2]! * dA) / A;
}

/** g[0..5] += Σ_k gw_k ∂w_k/∂v. */
export function addBaryGradient(
  t: FaceTable,
  f: number,
  px: number,
  py: number,
  w: Float64Array,
  gw0: number,
  gw1: number,
  gw2: number,
  g: Float64Array,
): void {
  const x = t.xy,
    ox = 6 * f,
    iA = 1 / t.area[f]!;
  const x0 = x[ox]!,
    y0 = x[ox + 1]!,
    x1 = x[ox + 2]!,
    y1 = x[ox + 3]!,
    x2 = x[ox + 4]!,
    y2 = x[ox + 5]!;
  const a0 = gw0 * iA,
    a1 = gw1 * iA,
    a2 = gw2 * iA;
  const gA = -(a0 * w[0]! + a1 * w[1]! + a2 * w[2]!);
  g[0] += a1 * (y2 - py) + a2 * (py - y1) + gA * (y2 - y1);
  g[1] += a1 * (px - x2) + a2 * (x1 - px) + gA * (x1 - x2);
  g[2] += a0 * (py - y2) + a2 * (y0 - py) + gA * (y0 - y2);
  g[3] += a0 * (x2 - px) + a2 * (px - x0) + gA * (x2 - x0);
  g[4] += a0 * (y1 - py) + a1 * (py - y0) + gA * (y1 - y0);
  g[5] += a0 * (px - x1) + a1 * (x0 - px) + gA * (x0 - x1);
}
