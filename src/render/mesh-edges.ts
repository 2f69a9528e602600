/**
 * Which face edges are interior to a mesh's coverage, so SoftRas does not draw them as seams.
 *
 * SoftRas aggregates coverage as A = 1 − Π_j (1 − D_j) with D_j a sigmoid of the distance to face
 * j's boundary: on an edge shared by two triangles of one mesh each gives D = ½, so A = ¾ and the
 * background shows through along every interior edge. An edge is *joined* when the two faces that
 * hold it (the same two vertex indices in opposite order: a manifold, consistently wound edge) are
 * both rasterized and wind the same way on screen (both front- or both back-facing): then they lie
 * on opposite sides of it and it is interior to their union. An edge between a front and a back face
 * (a closed mesh's silhouette) folds the surface over and stays an edge, soft as before, so outline
 * gradients flow. The rasterizers (softras.ts and the fused kernels) then measure a face's
 * coverage distance to its *boundary*: its unjoined edges and its corners that lie on the mesh's
 * boundary (a vertex touching an unjoined edge somewhere), with joined edges inclusive of the face.
 * A face with no boundary at all covers its inside fully and nothing outside (its neighbours do).
 *
 * Closed surfaces (every edge of an edge-connected part held by exactly two faces: boxes, spheres,
 * the rigid bodies) join nothing: behind every front face lies a back face, so the silhouette shows no seams there
 * (1 − ¼(1 − D_back) ≈ 1), and their outline, colours and gradients stay exactly SoftRas'. Open
 * surfaces (ground planes, terrain, cloth) are where the seams show, and where edges are joined.
 * Joining also sharpens colour steps across joined creases (the two faces no longer blend there),
 * which is why closed meshes, whose creases carry pose information, are left alone.
 *
 * Flags per face (int32 [F]): bit e (0..2) edge e = v_e → v_{e+1} is joined; bit 3 + k corner k is
 * a boundary vertex whose two edges are both joined (its distance counts on its own).
 */
import type { Array } from "../core/array.js";
import { ConcreteArray } from "../core/concrete.js";
import { np } from "../core/np/index.js";
import { Tracer } from "../core/trace.js";
import { AREA_EPS } from "./raster-common.js";

/** Face topology for joining edges: per face and edge the face across it (−1: none), per corner its vertex. */
export interface FaceTopology {
  /** int32 [F, 3]: the face holding edge e reversed, or −1 (boundary, non-manifold or inconsistently wound). */
  readonly neighbours: Array;
  /** int32 [F, 3]: vertex index of each corner (any numbering shared by the faces). */
  readonly corners: Array;
  readonly vertexCount: number;
}

/**
 * Host copies of face index arrays made from host data (e.g. meshFromData), for arrays on a device that cannot read
 * back synchronously.
 */
const hostFaces = new WeakMap<Array, Int32Array>();
export function rememberHostFaces(faces: Array, data: ArrayLike<number>): void {
  hostFaces.set(faces, Int32Array.from(data));
}

/** The face indices as host data when they are known without a device read-back; null when traced or device-only. */
export function facesOnHost(faces: Array): Int32Array | null {
  const known = hostFaces.get(faces);
  if (known) return known;
  let a: unknown = faces;
  if (a instanceof Tracer) a = a.concrete() ?? null;
  if (a instanceof ConcreteArray && a.backend.name === "cpu") return Int32Array.from(a.dataSync());
  return null;
}

/**
 * Per face and edge e (v_e → v_{e+1}) the face holding the reversed edge, when exactly one face holds each direction;
 * else −1.
 */
export function edgeNeighbours(faces: ArrayLike<number>, F: number): Int32Array {
  const directed = new Map<string, number>(); // "a,b" → face, or −2 when held more than once
  for (let f = 0; f < F; f++)
    for (let e = 0; e < 3; e++) {
      const key = `${faces[3 * f + e]},${faces[3 * f + ((e + 1) % 3)]}`;
      directed.set(key, directed.has(key) ? -2 : f);
    }
  const out = new Int32Array(3 * F).fill(-1);
  for (let f = 0; f < F; f++)
    for (let e = 0; e < 3; e++) {
      const a = faces[3 * f + e]!,
        b = faces[3 * f + ((e + 1) % 3)]!;
      if (a === b || directed.get(`${a},${b}`) !== f) continue;
      const g = directed.get(`${b},${a}`);
      if (g !== undefined && g >= 0 && g !== f) out[3 * f + e] = g;
    }
  return out;
}

const neighboursOf = new WeakMap<Array, Int32Array>();
/** edgeNeighbours of a face index array [F, 3] (cached per array), or null when its indices are not on the host. */
export function meshNeighbours(faces: Array): Int32Array | null {
  const known = neighboursOf.get(faces);
  if (known) return known;
  const host = facesOnHost(faces);
  if (!host) return null;
  const nb = withoutClosedParts(edgeNeighbours(host, faces.shape[0]!));
  neighboursOf.set(faces, nb);
  return nb;
}

/**
 * Neighbours with every closed part's edges unjoined: a closed surface joins nothing (its back faces
 * already cover its front faces' seams, and its outline stays SoftRas' exactly). Parts are the
 * edge-connected components, so a ball and a ground plane render alike as two meshes or as one.
 */
function withoutClosedParts(nb: Int32Array): Int32Array {
  const F = nb.length / 3;
  const parent = Int32Array.from({ length: F }, (_, f) => f);
  const root = (f: number): number => {
    while (parent[f] !== f) f = parent[f] = parent[parent[f]!]!;
    return f;
  };
  for (let i = 0; i < nb.length; i++) if (nb[i]! >= 0) parent[root(Math.floor(i / 3))] = root(nb[i]!);
  const open = new Uint8Array(F);
  for (let i = 0; i < nb.length; i++) if (nb[i]! < 0) open[root(Math.floor(i / 3))] = 1;
  return nb.map((g, i) => (open[root(Math.floor(i / 3))] ? g : -1));
}

/**
 * The topology of meshes concatenated in order (faces [F_i, 3] over vertexCounts[i] vertices each;
 * `corners` their faces with vertex offsets applied). A mesh whose indices are not on the host
 * (traced, or on a device) joins no edges.
 */
export function concatTopology(faces: readonly Array[], corners: Array, vertexCount: number): FaceTopology {
  const total = faces.reduce((n, f) => n + f.shape[0]!, 0);
  const nb = new Int32Array(3 * total).fill(-1);
  let offset = 0;
  for (const f of faces) {
    const local = meshNeighbours(f);
    if (local) for (let i = 0; i < local.length; i++) nb[3 * offset + i] = local[i]! < 0 ? -1 : local[i]! + offset;
    offset += f.shape[0]!;
  }
  return { neighbours: np.array(nb, { dtype: "int32", backend: "cpu" }).reshape([total, 3]), corners, vertexCount };
}

/**
 * The joined-edge flags (see the header) of faces xy [F,3,2], z [F,3] with front flags and the
 * faces that shape the silhouette (`include`, null: all), as int32 [F]. Piecewise constant in the
 * geometry (no gradient).
 */
export function joinedEdgeFlags(xy: Array, z: Array, front: Array, include: Array | null, topo: FaceTopology): Array {
  const F = xy.shape[0]!;
  if (topo.neighbours.shape.join() !== `${F},3` || topo.corners.shape.join() !== `${F},3`) {
    throw new Error(
      `render: the face topology must be [${F}, 3] neighbours and corners for ${F} faces, ` +
        `got [${topo.neighbours.shape}] and [${topo.corners.shape}].`,
    );
  }
  const v = np.stopGradient(xy),
    zs = np.stopGradient(z);
  const c = (k: number, i: number) => np.reshape(np.take(np.take(v, k, 1), i, 1), [F]);
  const A = np.sub(
    np.mul(np.sub(c(2, 0), c(0, 0)), np.sub(c(1, 1), c(0, 1))),
    np.mul(np.sub(c(2, 1), c(0, 1)), np.sub(c(1, 0), c(0, 0))),
  );
  let ok = np.logicalAnd(np.greater(np.abs(A), AREA_EPS), np.greater(np.min(zs, 1), 0));
  if (include) ok = np.logicalAnd(ok, include);
  const nb = topo.neighbours,
    at = np.maximum(nb, 0); // [F, 3]
  const joined = np.logicalAnd(
    np.logicalAnd(np.greaterEqual(nb, 0), np.expandDims(ok, 1)),
    np.logicalAnd(np.take(ok, at, 0), np.equal(np.take(front, at, 0), np.expandDims(front, 1))),
  ); // [F, 3]
  const edge = (e: number) => np.reshape(np.take(joined, e, 1), [F]);
  // A vertex is on the boundary when an unjoined edge of a rasterized face touches it (edge k runs from corner k to
  // k + 1).
  const open = (e: number) => np.astype(np.logicalAnd(ok, np.logicalNot(edge(e))), "int32");
  const touching = np.stack(
    [0, 1, 2].map((k) => np.add(open(k), open((k + 2) % 3))),
    1,
  ); // [F, 3] per corner
  const count = np.scatterAdd(
    np.zeros([topo.vertexCount], { dtype: "int32" }),
    np.reshape(topo.corners, [F * 3]),
    np.reshape(touching, [F * 3]),
  );
  const boundary = np.greater(np.take(count, topo.corners, 0), 0); // [F, 3]
  let flags = np.zeros([F], { dtype: "int32" });
  for (let k = 0; k < 3; k++) {
    const corner = np.logicalAnd(np.reshape(np.take(boundary, k, 1), [F]), np.logicalAnd(edge(k), edge((k + 2) % 3)));
    flags = np.add(
      flags,
      np.add(np.mul(np.astype(edge(k), "int32"), 1 << k), np.mul(np.astype(corner, "int32"), 8 << k)),
    );
  }
  return flags;
}

/** Flag bits [F, 6] (edges 0..2 joined, corners 0..2 boundary) of int32 flags [F], for array programs. */
export function flagBits(flags: Array): Array {
  if (flags instanceof ConcreteArray && flags.backend.name === "cpu") {
    // On the host: ops with literal operands would run on the default backend (WebGPU), not the flags' CPU.
    const d = flags.dataSync();
    const bits = new Uint8Array(6 * d.length);
    for (let i = 0; i < d.length; i++) for (let k = 0; k < 6; k++) bits[6 * i + k] = (d[i]! >> k) & 1;
    return np.reshape(np.array(bits, { dtype: "bool", backend: "cpu" }), [...flags.shape, 6]);
  }
  const bit = (k: number) => np.equal(np.remainder(np.floorDivide(flags, 2 ** k), 2), 1);
  return np.stack([0, 1, 2, 3, 4, 5].map(bit), -1);
}
