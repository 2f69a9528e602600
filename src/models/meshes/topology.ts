/** Mesh connectivity: unique edges, bending hinges of a triangle mesh, boundary surface of a tet mesh. */
import type { TetMesh, TriMesh } from "./types.js";
import { tetVolume6 } from "./types.js";

/** Unique undirected edges [E·2] (smaller index first), in first-seen order. */
export function uniqueEdges(faces: Int32Array, k = 3): Int32Array {
  const seen = new Set<string>();
  const out: number[] = [];
  for (let f = 0; f < faces.length / k; f++) {
    for (let a = 0; a < k; a++)
      for (let b = a + 1; b < k; b++) {
        const i = faces[k * f + a]!,
          j = faces[k * f + b]!;
        const [p, q] = i < j ? [i, j] : [j, i];
        const key = `${p},${q}`;
        if (!seen.has(key)) {
          seen.add(key);
          out.push(p, q);
        }
      }
  }
  return Int32Array.from(out);
}

/**
 * Bending hinges [H·4] = (wing of face A, wing of face B, v0, v1) for every interior edge shared by
 * exactly two triangles, with face A traversing v0 → v1 (so a flat, consistently wound sheet has
 * dihedral angle 0). Boundary and non-manifold edges get no hinge.
 */
export function bendingHinges(mesh: TriMesh): Int32Array {
  const f = mesh.faces;
  const byEdge = new Map<string, { a: number; b: number; opp: number }[]>();
  for (let t = 0; t < f.length / 3; t++) {
    for (let k = 0; k < 3; k++) {
      const a = f[3 * t + k]!,
        b = f[3 * t + ((k + 1) % 3)]!,
        opp = f[3 * t + ((k + 2) % 3)]!;
      const key = a < b ? `${a},${b}` : `${b},${a}`;
      (byEdge.get(key) ?? byEdge.set(key, []).get(key)!).push({ a, b, opp });
    }
  }
  const out: number[] = [];
  for (const sides of byEdge.values()) {
    if (sides.length !== 2) continue;
    const [A, B] = sides as [{ a: number; b: number; opp: number }, { a: number; b: number; opp: number }];
    out.push(A.opp, B.opp, A.a, A.b);
  }
  return Int32Array.from(out);
}

/** Boundary triangles of a tet mesh (faces used by one tet), wound outward. */
export function tetSurface(mesh: TetMesh): Int32Array {
  const t = mesh.tets,
    v = mesh.vertices;
  const count = new Map<string, { face: [number, number, number]; n: number }>();
  for (let e = 0; e < t.length / 4; e++) {
    const [a, b, c, d] = [t[4 * e]!, t[4 * e + 1]!, t[4 * e + 2]!, t[4 * e + 3]!];
    const flip = tetVolume6(v, a, b, c, d) < 0;
    // Outward faces of a positively oriented tet (a, b, c, d).
    const faces: [number, number, number][] = [
      [a, c, b],
      [a, b, d],
      [a, d, c],
      [b, c, d],
    ];
    for (const fc of faces) {
      const face: [number, number, number] = flip ? [fc[0], fc[2], fc[1]] : fc;
      const key = [...fc].sort((p, q) => p - q).join(",");
      const entry = count.get(key);
      if (entry) entry.n++;
      else count.set(key, { face, n: 1 });
    }
  }
  const out: number[] = [];
  for (const { face, n } of count.values()) if (n === 1) out.push(...face);
  return Int32Array.from(out);
}
