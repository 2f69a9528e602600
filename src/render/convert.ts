/**
 * Converters between the three mesh types: models' host TriMesh (flat Float64Array vertices,
 * Int32Array faces: what loadObj and the built-in shapes give, and what rigid bodies are built
 * from), render's host MeshData (nested number arrays: the sphere/box/plane generators) and
 * render's Mesh of Arrays (what render() draws, differentiably).
 */
import type { TriMesh } from "../models/meshes/types.js";
import { np } from "../core/np/index.js";
import { meshFromData, type Mesh, type MeshData } from "./mesh.js";

const rows = (flat: ArrayLike<number>, what: string): number[][] => {
  if (flat.length % 3 !== 0) throw new Error(`${what}: ${flat.length} numbers is not a whole number of triples.`);
  return globalThis.Array.from({ length: flat.length / 3 }, (_, i) => [
    flat[3 * i]!,
    flat[3 * i + 1]!,
    flat[3 * i + 2]!,
  ]);
};

/** A TriMesh's host data as MeshData (positions and faces as rows). */
export const meshDataFromTriMesh = (m: TriMesh): MeshData => ({
  positions: rows(m.vertices, "meshDataFromTriMesh vertices"),
  faces: rows(m.faces, "meshDataFromTriMesh faces"),
});

/** MeshData as a TriMesh (e.g. a generated sphere as a rigid body); texture coordinates are dropped. */
export function triMeshFromData(d: MeshData): TriMesh {
  const bad = d.positions.findIndex((p) => p.length !== 3);
  if (bad >= 0)
    throw new Error(
      `triMeshFromData: position ${bad} has ${d.positions[bad]!.length} coordinates; positions must be [x, y, z].`,
    );
  const badFace = d.faces.findIndex((f) => f.length !== 3);
  if (badFace >= 0)
    throw new Error(
      `triMeshFromData: face ${badFace} has ${d.faces[badFace]!.length} corners; faces must be triangles.`,
    );
  return { vertices: Float64Array.from(d.positions.flat()), faces: Int32Array.from(d.faces.flat()) };
}

/**
 * A TriMesh (e.g. from models.meshes.loadObj) as a Mesh render() can draw, with its per-corner
 * texture coordinates [F, 3, 2] when it has them; colours, a texture etc. from `opts`.
 */
export function meshFromTriMesh(m: TriMesh, opts: Parameters<typeof meshFromData>[1] = {}): Mesh {
  const mesh = meshFromData(meshDataFromTriMesh(m), opts);
  if (!m.uvs) return mesh;
  if (m.uvs.length !== m.faces.length * 2)
    throw new Error(
      `meshFromTriMesh: uvs has ${m.uvs.length} numbers; per-corner texture ` +
        `coordinates of ${m.faces.length / 3} faces need ${m.faces.length * 2}.`,
    );
  return { ...mesh, uvs: np.reshape(np.array(m.uvs, { dtype: opts.dtype ?? "float32" }), [m.faces.length / 3, 3, 2]) };
}
