/**
 * Mesh data as flat typed arrays (host-side preprocessing, not differentiated): vertices are
 * [V·3] float64, element indices [E·k] int32, 0-based. `toArrays` turns them into `np` Arrays.
 */
export interface TriMesh {
  /** [V·3] xyz. */
  readonly vertices: Float64Array;
  /** [F·3] vertex indices, counter-clockwise seen from outside for closed meshes. */
  readonly faces: Int32Array;
  /** [F·3·2] texture coordinates (u right, v up) per face corner, where the source had them (OBJ `vt`). */
  readonly uvs?: Float64Array;
}

export interface TetMesh {
  /** [V·3] xyz. */
  readonly vertices: Float64Array;
  /** [T·4] vertex indices, positively oriented: (x1−x0)·((x2−x0)×(x3−x0)) > 0. */
  readonly tets: Int32Array;
}

export const vertexCount = (m: { vertices: Float64Array }): number => m.vertices.length / 3;
export const faceCount = (m: TriMesh): number => m.faces.length / 3;
export const tetCount = (m: TetMesh): number => m.tets.length / 4;

/** Vertex k as [x, y, z]. */
export const vertexAt = (v: Float64Array, k: number): [number, number, number] => [
  v[3 * k]!,
  v[3 * k + 1]!,
  v[3 * k + 2]!,
];

/** Signed volume ×6 of the tet (a, b, c, d): (b−a)·((c−a)×(d−a)). */
export function tetVolume6(v: Float64Array, a: number, b: number, c: number, d: number): number {
  const ax = v[3 * a]!,
    ay = v[3 * a + 1]!,
    az = v[3 * a + 2]!;
  const ux = v[3 * b]! - ax,
    uy = v[3 * b + 1]! - ay,
    uz = v[3 * b + 2]! - az;
  const px = v[3 * c]! - ax,
    py = v[3 * c + 1]! - ay,
    pz = v[3 * c + 2]! - az;
  const qx = v[3 * d]! - ax,
    qy = v[3 * d + 1]! - ay,
    qz = v[3 * d + 2]! - az;
  return ux * (py * qz - pz * qy) + uy * (pz * qx - px * qz) + uz * (px * qy - py * qx);
}

/** Twice the area of triangle (a, b, c). */
export function triangleArea2(v: Float64Array, a: number, b: number, c: number): number {
  const ux = v[3 * b]! - v[3 * a]!,
    uy = v[3 * b + 1]! - v[3 * a + 1]!,
    uz = v[3 * b + 2]! - v[3 * a + 2]!;
  const wx = v[3 * c]! - v[3 * a]!,
    wy = v[3 * c + 1]! - v[3 * a + 1]!,
    wz = v[3 * c + 2]! - v[3 * a + 2]!;
  return Math.hypot(uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx);
}

/** Axis-aligned extent of a vertex set: the longest side (used to scale tolerances). */
export function boundingSize(v: Float64Array): number {
  let size = 0;
  for (let d = 0; d < 3; d++) {
    let lo = Infinity,
      hi = -Infinity;
    for (let i = d; i < v.length; i += 3) {
      lo = Math.min(lo, v[i]!);
      hi = Math.max(hi, v[i]!);
    }
    if (hi > lo) size = Math.max(size, hi - lo);
  }
  return size;
}

/** Affine transform of a mesh's vertices: scale, then translate. */
export function transformVertices(
  v: Float64Array,
  opts: { scale?: number | readonly [number, number, number]; translate?: readonly [number, number, number] },
): Float64Array {
  const s = typeof opts.scale === "number" ? [opts.scale, opts.scale, opts.scale] : (opts.scale ?? [1, 1, 1]);
  const t = opts.translate ?? [0, 0, 0];
  const out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * s[i % 3]! + t[i % 3]!;
  return out;
}
