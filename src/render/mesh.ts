/**
 * Triangle meshes for rendering: the Mesh record, differentiable normals, and a few generators
 * (icosphere, UV sphere, ground plane, box). Faces are CCW seen from outside (right-hand rule
 * normal points outward), which the SoftRas-convention camera shows as front faces.
 */
import type { Array, ArrayLike } from "../core/array.js";
import { np } from "../core/np/index.js";
import type { DType } from "../core/dtype.js";
import { normalize } from "./camera.js";
import { rememberHostFaces } from "./mesh-edges.js";
import type { Material } from "./shading.js";
import { icosphere } from "../models/meshes/primitives.js";

export interface Mesh {
  /** [V, 3] world positions (differentiable). */
  readonly vertices: Array;
  /** int32 [F, 3] vertex indices, CCW seen from outside. */
  readonly faces: Array;
  /** Albedo: [3] uniform, or [V, 3] per vertex. Default 0.7 grey. Ignored where a texture is given. */
  readonly colors?: ArrayLike;
  /** [F, 3] per-face albedo (flat colours; takes precedence over `colors`). */
  readonly faceColors?: Array;
  /** Texture coordinates: [V, 2] per vertex or [F, 3, 2] per face corner (u right, v up, in [0, 1]). */
  readonly uvs?: Array;
  /** [Ht, Wt, 3] texture, row 0 = top (v = 1). */
  readonly texture?: Array;
  /** Reflectance for this mesh (overrides the material passed to render). */
  readonly material?: Material;
}

/** Unnormalised face normals (v1−v0)×(v2−v0) [F, 3]: length = 2·area, direction by the right-hand rule. */
export function faceNormals(vertices: Array, faces: Array): Array {
  const c = np.take(vertices, faces, 0); // [F,3,3]
  const [v0, v1, v2] = np.split(c, 3, 1).map((s) => np.squeeze(s, 1)) as [Array, Array, Array];
  return np.cross(np.sub(v1, v0), np.sub(v2, v0));
}

/** Area-weighted vertex normals normalize(Σ incident face cross products) [V, 3] (anchors §4). */
export function vertexNormals(vertices: Array, faces: Array): Array {
  const fn = faceNormals(vertices, faces); // [F,3]
  const F = faces.shape[0]!;
  const upd = np.broadcastTo(np.reshape(fn, [F, 1, 3]), [F, 3, 3]);
  const acc = np.scatterAdd(np.zerosLike(vertices), np.reshape(faces, [F * 3]), np.reshape(upd, [F * 3, 3]), 0);
  return normalize(acc, 1e-12);
}

// ---------------------------------------------------------------- generators (host-side, constant topology)

export interface MeshData {
  readonly positions: number[][];
  readonly faces: number[][];
  readonly uvs?: number[][];
}

/** Wrap host data as a Mesh (vertices in `dtype`, faces int32). */
export function meshFromData(
  d: MeshData,
  opts: { dtype?: DType } & Omit<Mesh, "vertices" | "faces" | "uvs"> = {},
): Mesh {
  const { dtype, ...rest } = opts;
  const faces = np.array(d.faces, { dtype: "int32" });
  // Kept on the host too: joining shared edges (mesh-edges.ts) reads them without a device read-back.
  rememberHostFaces(faces, d.faces.flat());
  return {
    ...rest,
    vertices: np.array(d.positions, { dtype: dtype ?? "float32" }),
    faces,
    ...(d.uvs ? { uvs: np.array(d.uvs, { dtype: dtype ?? "float32" }) } : {}),
  };
}

/** Icosphere: 20·4^subdivisions faces (3 → 1,280), unit radius scaled by `radius`. */
export function icosphereData(subdivisions: number, radius = 1, center: readonly number[] = [0, 0, 0]): MeshData {
  const m = icosphere(radius, subdivisions);
  const positions = globalThis.Array.from({ length: m.vertices.length / 3 }, (_, i) =>
    [0, 1, 2].map((k) => m.vertices[3 * i + k]! + center[k]!),
  );
  const faces = globalThis.Array.from({ length: m.faces.length / 3 }, (_, i) => [
    m.faces[3 * i]!,
    m.faces[3 * i + 1]!,
    m.faces[3 * i + 2]!,
  ]);
  return { positions, faces };
}

/** Latitude–longitude sphere with a UV seam (so it can be textured): 2·segments·(rings−1) faces. */
export function uvSphereData(
  rings: number,
  segments: number,
  radius = 1,
  center: readonly number[] = [0, 0, 0],
): MeshData {
  const positions: number[][] = [],
    uvs: number[][] = [],
    faces: number[][] = [];
  for (let r = 0; r <= rings; r++) {
    const th = (Math.PI * r) / rings; // 0 at the north pole (+y)
    for (let s = 0; s <= segments; s++) {
      const ph = (2 * Math.PI * s) / segments;
      positions.push([
        radius * Math.sin(th) * Math.cos(ph) + center[0]!,
        radius * Math.cos(th) + center[1]!,
        radius * Math.sin(th) * Math.sin(ph) + center[2]!,
      ]);
      uvs.push([s / segments, 1 - r / rings]);
    }
  }
  const id = (r: number, s: number) => r * (segments + 1) + s;
  for (let r = 0; r < rings; r++)
    for (let s = 0; s < segments; s++) {
      // Outward CCW: (r,s) → (r+1,s) → (r+1,s+1) with φ increasing towards −z… checked by the normals test.
      if (r > 0) faces.push([id(r, s), id(r, s + 1), id(r + 1, s)]);
      if (r < rings - 1) faces.push([id(r, s + 1), id(r + 1, s + 1), id(r + 1, s)]);
    }
  return { positions, faces, uvs };
}

/** A square in the plane y = height, side `size`, n×n quads, normal +y, uv over [0,1]². */
export function planeData(size: number, n = 1, height = 0, center: readonly [number, number] = [0, 0]): MeshData {
  const positions: number[][] = [],
    uvs: number[][] = [],
    faces: number[][] = [];
  for (let j = 0; j <= n; j++)
    for (let i = 0; i <= n; i++) {
      positions.push([center[0] + size * (i / n - 0.5), height, center[1] + size * (j / n - 0.5)]);
      uvs.push([i / n, j / n]);
    }
  const id = (i: number, j: number) => j * (n + 1) + i;
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++) {
      // (x right, z forward) seen from +y: (i,j) → (i,j+1) → (i+1,j) is CCW about +y.
      faces.push([id(i, j), id(i, j + 1), id(i + 1, j)], [id(i + 1, j), id(i, j + 1), id(i + 1, j + 1)]);
    }
  return { positions, faces, uvs };
}

/** Axis-aligned box with half-extents `half`, 12 faces, CCW outward. */
export function boxData(
  half: readonly [number, number, number] = [0.5, 0.5, 0.5],
  center: readonly number[] = [0, 0, 0],
): MeshData {
  const positions: number[][] = [];
  for (let k = 0; k < 8; k++)
    positions.push([
      (k & 1 ? 1 : -1) * half[0] + center[0]!,
      (k & 2 ? 1 : -1) * half[1] + center[1]!,
      (k & 4 ? 1 : -1) * half[2] + center[2]!,
    ]);
  const quads = [
    [0, 4, 6, 2],
    [1, 3, 7, 5],
    [0, 1, 5, 4],
    [2, 6, 7, 3],
    [0, 2, 3, 1],
    [4, 5, 7, 6],
  ]; // −x +x −y +y −z +z
  const faces = quads.flatMap(([a, b, c, d]) => [
    [a!, b!, c!],
    [a!, c!, d!],
  ]);
  return { positions, faces };
}
