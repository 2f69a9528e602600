/**
 * Geometry shared by the soft rasterizers (the pieces SoftRas, DIB-R and PyTorch3D share), written once as array ops.
 *
 * Work is organised as "pairs": per-pixel arrays of shape [T, Pt, 1] (T tiles, Pt pixels per
 * tile) broadcast against per-face arrays of shape [T, 1, C] (C face slots per tile), giving
 * [T, Pt, C]. Everything that only depends on a face (edge-function coefficients, edge vectors,
 * inverse depths) is computed once per face in `faceGeometry` and gathered into the slots, so
 * gradients flow back to the face data through the gather and the broadcasting reductions.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";

/** Numerical guards (anchors §2 "Array-port numerics"). */
export const AREA_EPS = 1e-10; // |2·area| in NDC² below which a face is degenerate (SoftRas clamps det at 1e-10)
export const EDGE_EPS = 1e-12; // |b−a|² below which an edge is a point (distance to a)

/** Per-face channels packed into one [F, FACE_CHANNELS] array so a single gather moves them. */
export const FACE_CHANNELS = 33;
/** Channel offsets inside the packed face array. */
export const CH = {
  /**
   * w_k = (px − xa)·p_k − (py − ya)·q_k with (a, b) = (v_{k+1}, v_{k+2}), p_k = (yb − ya)/A,
   * q_k = (xb − xa)/A: channels (xa, ya, p_k, q_k) for k = 0,1,2. Written relative to a vertex so
   * that translating a face by an exactly representable offset changes no rounding (oracle 9).
   */
  bary: 0,
  /** Edge e (v_e → v_{e+1}): origin (ax, ay), direction (dx, dy), 1/|d|² (0 for degenerate edges). */
  edge: 12,
  /** 1/z_k (camera depth, > 0 for valid faces). */
  invz: 27,
  /** z_k. */
  z: 30,
} as const;

/** Split `a` into its n slices along `axis`, each with that axis removed. */
export function unstack(a: Array, axis: number): Array[] {
  const ax = axis < 0 ? axis + a.ndim : axis;
  const n = a.shape[ax]!;
  const shape = a.shape.filter((_, i) => i !== ax);
  return np.split(a, n, ax).map((s) => np.reshape(s, shape));
}

export interface FaceGeometry {
  /** [F, FACE_CHANNELS] differentiable per-face data (see CH). */
  readonly packed: Array;
  /** bool [F]: non-degenerate screen area and every vertex in front of the camera (z > 0). */
  readonly valid: Array;
  /** [F] signed screen area (x1−x0)(y2−y0) − (y1−y0)(x2−x0); < 0 is front-facing for SoftRas-convention cameras. */
  readonly signedArea: Array;
}

/**
 * Face data for rasterization from screen-space vertices xy [F,3,2] (NDC) and camera depths z [F,3].
 * Edge function E(p,a,b) = (p.x−a.x)(b.y−a.y) − (p.y−a.y)(b.x−a.x); w_k = E(p, v_{k+1}, v_{k+2}) / E(v2, v0, v1)
 * (§1.1).
 */
export function faceGeometry(xy: Array, z: Array): FaceGeometry {
  const [v0, v1, v2] = unstack(xy, 1) as [Array, Array, Array];
  const [x0, y0] = unstack(v0, 1) as [Array, Array];
  const [x1, y1] = unstack(v1, 1) as [Array, Array];
  const [x2, y2] = unstack(v2, 1) as [Array, Array];
  // A = E(v2, v0, v1); the 2D signed area used for front/back tests is −A.
  const A = np.sub(np.mul(np.sub(x2, x0), np.sub(y1, y0)), np.mul(np.sub(y2, y0), np.sub(x1, x0)));
  const zs = unstack(z, 1);
  const zPositive = np.logicalAnd(np.logicalAnd(np.greater(zs[0]!, 0), np.greater(zs[1]!, 0)), np.greater(zs[2]!, 0));
  const valid = np.logicalAnd(np.greater(np.abs(np.stopGradient(A)), AREA_EPS), np.stopGradient(zPositive));
  // Double-where: degenerate faces divide by 1, so no inf/NaN reaches any gradient (anchors §2).
  const invA = np.div(1, np.where(valid, A, 1));
  // E(p, a, b)/A = (px−xa)·(yb−ya)/A − (py−ya)·(xb−xa)/A
  const coeffs = (xa: Array, ya: Array, xb: Array, yb: Array): Array[] => [
    xa,
    ya,
    np.mul(np.sub(yb, ya), invA),
    np.mul(np.sub(xb, xa), invA),
  ];
  const bary = [...coeffs(x1, y1, x2, y2), ...coeffs(x2, y2, x0, y0), ...coeffs(x0, y0, x1, y1)];
  const edge = (xa: Array, ya: Array, xb: Array, yb: Array): Array[] => {
    const dx = np.sub(xb, xa),
      dy = np.sub(yb, ya);
    const len2 = np.add(np.mul(dx, dx), np.mul(dy, dy));
    const ok = np.greater(np.stopGradient(len2), EDGE_EPS);
    return [xa, ya, dx, dy, np.where(ok, np.div(1, np.where(ok, len2, 1)), 0)];
  };
  const edges = [...edge(x0, y0, x1, y1), ...edge(x1, y1, x2, y2), ...edge(x2, y2, x0, y0)];
  const invz = zs.map((zk) => np.div(1, np.where(np.greater(zk, 0), zk, 1)));
  const packed = np.stack([...bary, ...edges, ...invz, ...zs], 1);
  return { packed, valid, signedArea: np.neg(A) };
}

/** Per-slot face data: gathered channels, each [T, 1, C]. */
export interface SlotFaces {
  readonly ch: readonly Array[];
}

/** Gather packed face data into tile slots: packed [F,K], index int32 [T,C] → K arrays [T,1,C]. */
export function gatherSlots(packed: Array, index: Array): SlotFaces {
  const g = np.take(packed, index, 0); // [T, C, K]
  const [T, C] = index.shape as [number, number];
  return { ch: unstack(g, 2).map((c) => np.reshape(c, [T, 1, C])) };
}

/** Barycentrics from the 12 CH.bary channels (any shapes broadcasting against px, py). */
export function barycentricsFrom(c: readonly Array[], px: Array, py: Array): [Array, Array, Array] {
  const w = (k: number) => {
    const o = CH.bary + 4 * k;
    return np.sub(np.mul(np.sub(px, c[o]!), c[o + 2]!), np.mul(np.sub(py, c[o + 1]!), c[o + 3]!));
  };
  return [w(0), w(1), w(2)];
}

/** Screen barycentrics w_k [T,Pt,C] of every pixel for every slot face (§1.1). */
export const barycentrics = (f: SlotFaces, px: Array, py: Array): [Array, Array, Array] =>
  barycentricsFrom(f.ch, px, py);

/**
 * Squared Euclidean distance from each pixel to each slot face's boundary (min over its three
 * edges of the point–segment distance, §1.1). t is clamped with clip, so ∂d²/∂v = 2λ(q−p) (the
 * envelope gradient all three reference kernels use).
 */
export function boundaryDistanceSq(f: SlotFaces, px: Array, py: Array): Array {
  let best: Array | null = null;
  for (let e = 0; e < 3; e++) {
    const o = CH.edge + 5 * e;
    const [ax, ay, dx, dy, il] = [f.ch[o]!, f.ch[o + 1]!, f.ch[o + 2]!, f.ch[o + 3]!, f.ch[o + 4]!];
    const ex0 = np.sub(px, ax),
      ey0 = np.sub(py, ay);
    const t = np.clip(np.mul(np.add(np.mul(ex0, dx), np.mul(ey0, dy)), il), 0, 1);
    const ex = np.sub(ex0, np.mul(t, dx)),
      ey = np.sub(ey0, np.mul(t, dy));
    const d2 = np.add(np.mul(ex, ex), np.mul(ey, ey));
    best = best ? np.minimum(best, d2) : d2;
  }
  return best!;
}

/**
 * Squared distance to a face's boundary when some of its edges are joined (mesh-edges.ts):
 * bits are 6 bool arrays (edges 0..2 joined, corners 0..2 boundary vertices) broadcasting
 * against the pairs. Joined edges do not count; boundary corners count as points;
 * NO_BOUNDARY_D2 where nothing is left (the face covers its inside fully, nothing outside).
 */
export function boundaryDistanceSqJoined(f: SlotFaces, px: Array, py: Array, bits: readonly Array[]): Array {
  let best: Array | null = null;
  for (let e = 0; e < 3; e++) {
    const o = CH.edge + 5 * e;
    const [ax, ay, dx, dy, il] = [f.ch[o]!, f.ch[o + 1]!, f.ch[o + 2]!, f.ch[o + 3]!, f.ch[o + 4]!];
    const ex0 = np.sub(px, ax),
      ey0 = np.sub(py, ay);
    const t = np.clip(np.mul(np.add(np.mul(ex0, dx), np.mul(ey0, dy)), il), 0, 1);
    const ex = np.sub(ex0, np.mul(t, dx)),
      ey = np.sub(ey0, np.mul(t, dy));
    const d2 = np.where(bits[e]!, NO_BOUNDARY_D2, np.add(np.mul(ex, ex), np.mul(ey, ey)));
    best = best ? np.minimum(best, d2) : d2;
  }
  for (let k = 0; k < 3; k++) {
    const o = CH.edge + 5 * k; // edge k starts at corner k
    const ex = np.sub(px, f.ch[o]!),
      ey = np.sub(py, f.ch[o + 1]!);
    best = np.minimum(best!, np.where(bits[3 + k]!, np.add(np.mul(ex, ex), np.mul(ey, ey)), NO_BOUNDARY_D2));
  }
  return best!;
}
/**
 * The squared "distance" of a face without boundary: far beyond the screen (NDC spans 2), so D = 1 inside and 0
 * outside.
 */
export const NO_BOUNDARY_D2 = 1e4;

/**
 * Inside a face whose joined edges belong to it: w_k > 0, or w_k ≥ 0 where the edge opposite corner k (edge k + 1) is
 * joined.
 */
export const insideJoined = (w: readonly Array[], bits: readonly Array[]): Array =>
  [0, 1, 2]
    .map((k) => np.logicalOr(np.greater(w[k]!, 0), np.logicalAnd(bits[(k + 1) % 3]!, np.greaterEqual(w[k]!, 0))))
    .reduce((a, b) => np.logicalAnd(a, b));

/** Strictly inside (SoftRas: 0 < w_k for all k). */
export const insideStrict = (w: readonly Array[]): Array => np.greater(np.minimum(np.minimum(w[0]!, w[1]!), w[2]!), 0);
/** Inside or on an edge (DIB-R: w_k ≥ 0 for all k). */
export const insideInclusive = (w: readonly Array[]): Array =>
  np.greaterEqual(np.minimum(np.minimum(w[0]!, w[1]!), w[2]!), 0);

/** Clipped barycentrics w̃_k = clamp(w_k,0,1)/max(Σclamp, 1e-5) (§1.1, SoftRas). */
export function clipBarycentrics(w: readonly Array[]): [Array, Array, Array] {
  const c = w.map((wk) => np.clip(wk, 0, 1));
  const s = np.maximum(np.add(np.add(c[0]!, c[1]!), c[2]!), 1e-5);
  return [np.div(c[0]!, s), np.div(c[1]!, s), np.div(c[2]!, s)];
}

/** Perspective-correct depth z = 1/Σ(w̃_k/z_k) (SoftRas). */
export function perspectiveDepth(f: SlotFaces, w: readonly Array[]): Array {
  const s = np.add(
    np.add(np.mul(w[0]!, f.ch[CH.invz]!), np.mul(w[1]!, f.ch[CH.invz + 1]!)),
    np.mul(w[2]!, f.ch[CH.invz + 2]!),
  );
  return np.div(1, np.maximum(s, 1e-12));
}

/** Affine screen-space depth Σ w_k z_k (DIB-R; not perspective-correct). */
export function affineDepth(f: SlotFaces, w: readonly Array[]): Array {
  return np.add(np.add(np.mul(w[0]!, f.ch[CH.z]!), np.mul(w[1]!, f.ch[CH.z + 1]!)), np.mul(w[2]!, f.ch[CH.z + 2]!));
}

/** Perspective-correct weights b_k = (w_k/z_k)/Σ_j(w_j/z_j) (§1.1). */
export function perspectiveWeights(f: SlotFaces, w: readonly Array[]): [Array, Array, Array] {
  const q = w.map((wk, k) => np.mul(wk, f.ch[CH.invz + k]!));
  const s = np.add(np.add(q[0]!, q[1]!), q[2]!);
  const safe = np.where(np.greater(np.abs(s), 1e-12), s, 1);
  return [np.div(q[0]!, safe), np.div(q[1]!, safe), np.div(q[2]!, safe)];
}

/**
 * Interpolate per-face-vertex attributes with per-pair weights: attrs are three arrays
 * [..., D] (one per face corner) broadcastable against w_k[..., None].
 */
export function interpolate(w: readonly Array[], attrs: readonly Array[]): Array {
  const e = (x: Array) => np.expandDims(x, -1);
  return np.add(np.add(np.mul(e(w[0]!), attrs[0]!), np.mul(e(w[1]!), attrs[1]!)), np.mul(e(w[2]!), attrs[2]!));
}

/**
 * log σ(x), exact everywhere and safe under autodiff: each branch only sees inputs where it
 * cannot overflow (double-where), and the x ≤ 0 branch gives the correct slope ½ at 0.
 */
export function logSigmoid(x: Array): Array {
  const pos = np.greater(x, 0);
  const xp = np.where(pos, x, 0),
    xn = np.where(pos, 0, x);
  return np.where(pos, np.neg(np.log1p(np.exp(np.neg(xp)))), np.sub(xn, np.log1p(np.exp(xn))));
}
