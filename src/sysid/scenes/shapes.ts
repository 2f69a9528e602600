/**
 * The rigid object set of the paper's Table 1 (primitives plus a scanned, non-convex mesh):
 * box, cone, cylinder, icosphere, torus, capsule and the Stanford bunny, at modest face counts
 * (the paper simplified its meshes to ≤ 250 vertices; rendering cost grows with faces × pixels).
 *
 * Each shape comes as two meshes in the same (unscaled) frame:
 *  - `physics`: the closed mesh that mass, centre of mass and inertia are computed from;
 *  - `visual`: what is rendered and where ground contacts sit. For the primitives it is the same
 *    mesh; for the bunny it is a vertex-clustered copy (a few hundred faces instead of 3674).
 */
import * as models from "../../models/index.js";
import type { TriMesh } from "../../models/meshes/types.js";

const { meshes } = models;

export const RIGID_SHAPES = ["box", "cone", "cylinder", "icosphere", "torus", "capsule", "bunny"] as const;
export type RigidShape = (typeof RIGID_SHAPES)[number];

/**
 * The shapes a scene may name: the object set above and "sphere", a smooth ball — its mass properties and ground
 * contact are a true sphere's (one contact at its lowest point, so it rolls without the bumps of a polyhedron's
 * vertices), drawn as a finer icosphere. The icosphere stays the object set's faceted solid.
 */
export const SCENE_SHAPES = [...RIGID_SHAPES, "sphere"] as const;
export type SceneShape = (typeof SCENE_SHAPES)[number];

/** A scale a "sphere" can take: the same on every axis (its diameter). */
export const isUniformScale = (scale: readonly number[]): boolean => scale[0] === scale[1] && scale[1] === scale[2];

/** The radius of a smooth sphere scaled by `scale` (its base diameter is 1 m); an error for unequal axes. */
export function sphereRadius(scale: readonly [number, number, number]): number {
  if (!isUniformScale(scale))
    throw new Error(
      `"sphere" needs the same scale on every axis (its diameter), got [${scale.join(", ")}]; ` +
        `for an ellipsoid use "icosphere" with unequal scales (a faceted solid).`,
    );
  return 0.5 * scale[0];
}

export interface ShapeMeshes {
  readonly physics: TriMesh;
  readonly visual: TriMesh;
}

/** Unscaled meshes of about one metre across, centred near the origin, y up. */
function baseShape(shape: SceneShape): ShapeMeshes {
  const same = (m: TriMesh): ShapeMeshes => ({ physics: m, visual: m });
  switch (shape) {
    case "box":
      return same(meshes.box(0.5, 0.5, 0.5));
    case "cone":
      return same(meshes.cone(0.5, 1, 16));
    case "cylinder":
      return same(meshes.cylinder(0.45, 0.5, 16));
    case "icosphere":
      return same(meshes.icosphere(0.5, 1));
    case "sphere":
      // Drawn with 320 faces: its outline is within 1.5% of the radius of the true circle.
      return same(meshes.icosphere(0.5, 2));
    case "torus":
      return same(meshes.torus(0.38, 0.14, 12, 6));
    case "capsule":
      return same(meshes.capsule(0.3, 0.3, 12, 3));
    case "bunny": {
      const full = meshes.bunny({ size: 1, center: [0, 0, 0] });
      return { physics: full, visual: clusterVertices(full, 8) };
    }
  }
}

/** Scale a mesh's vertices per axis (positive scales keep it closed and outward-wound). */
const scaleMesh = (m: TriMesh, s: readonly [number, number, number]): TriMesh => ({
  vertices: meshes.transformVertices(m.vertices, { scale: s }),
  faces: m.faces,
});

/** The shape's meshes with anisotropic scale factors applied. */
export function shapeMeshes(shape: SceneShape, scale: readonly [number, number, number] = [1, 1, 1]): ShapeMeshes {
  const b = baseShape(shape);
  const physics = scaleMesh(b.physics, scale);
  return { physics, visual: b.visual === b.physics ? physics : scaleMesh(b.visual, scale) };
}

/**
 * Vertex-clustering simplification (Rossignac & Borrel): snap vertices to a grid of `cells`
 * per bounding-box side, average each cell, drop faces that collapse and duplicates. The result
 * may be non-manifold, which is fine for rendering and for contact points, not for mass
 * properties (those use the full mesh).
 */
export function clusterVertices(m: TriMesh, cells: number): TriMesh {
  const v = m.vertices,
    n = v.length / 3;
  const lo = [Infinity, Infinity, Infinity],
    hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < n; i++)
    for (let d = 0; d < 3; d++) {
      lo[d] = Math.min(lo[d]!, v[3 * i + d]!);
      hi[d] = Math.max(hi[d]!, v[3 * i + d]!);
    }
  const size = Math.max(hi[0]! - lo[0]!, hi[1]! - lo[1]!, hi[2]! - lo[2]!) / cells;
  const cellOf = new Map<string, number>();
  const sums: number[][] = [];
  const remap = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const key = [0, 1, 2].map((d) => Math.min(cells - 1, Math.floor((v[3 * i + d]! - lo[d]!) / size))).join(",");
    let c = cellOf.get(key);
    if (c === undefined) {
      c = sums.length;
      cellOf.set(key, c);
      sums.push([0, 0, 0, 0]);
    }
    const s = sums[c]!;
    s[0]! += v[3 * i]!;
    s[1]! += v[3 * i + 1]!;
    s[2]! += v[3 * i + 2]!;
    s[3]! += 1;
    remap[i] = c;
  }
  const faces: number[] = [];
  const seen = new Set<string>();
  for (let f = 0; f < m.faces.length; f += 3) {
    const a = remap[m.faces[f]!]!,
      b = remap[m.faces[f + 1]!]!,
      c = remap[m.faces[f + 2]!]!;
    if (a === b || b === c || a === c) continue;
    const key = [a, b, c].sort((x, y) => x - y).join(",");
    if (seen.has(key)) continue;
    seen.add(key);
    faces.push(a, b, c);
  }
  const vertices = Float64Array.from(sums.flatMap((s) => [s[0]! / s[3]!, s[1]! / s[3]!, s[2]! / s[3]!]));
  return { vertices, faces: Int32Array.from(faces) };
}
