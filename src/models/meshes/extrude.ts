/** Extruding planar triangle meshes into tet prisms; the gear profile. */
import { pushOriented } from "./tet-grid.js";
import type { TetMesh, TriMesh } from "./types.js";

/**
 * Extrude a planar (xy) triangle mesh along z into `layers` prism layers of total `depth`, each prism
 * split into 3 tets. Prisms are split by sorted global vertex index, so the diagonal of every shared
 * quad face runs from the top copy of its smaller vertex to the bottom copy of the larger one: the
 * mesh is conforming.
 */
export function extrude(profile: TriMesh, depth: number, layers: number): TetMesh {
  const nv = profile.vertices.length / 3;
  const v = new Float64Array(nv * (layers + 1) * 3);
  for (let l = 0; l <= layers; l++)
    for (let i = 0; i < nv; i++) {
      v[3 * (l * nv + i)] = profile.vertices[3 * i]!;
      v[3 * (l * nv + i) + 1] = profile.vertices[3 * i + 1]!;
      v[3 * (l * nv + i) + 2] = -depth / 2 + (depth * l) / layers;
    }
  const tets: number[] = [];
  const f = profile.faces;
  for (let l = 0; l < layers; l++)
    for (let t = 0; t < f.length / 3; t++) {
      const [s0, s1, s2] = [f[3 * t]!, f[3 * t + 1]!, f[3 * t + 2]!].sort((a, b) => a - b) as [number, number, number];
      const bot = (i: number) => l * nv + i,
        top = (i: number) => (l + 1) * nv + i;
      pushOriented(v, tets, bot(s0), bot(s1), bot(s2), top(s0));
      pushOriented(v, tets, bot(s1), bot(s2), top(s0), top(s1));
      pushOriented(v, tets, bot(s2), top(s0), top(s1), top(s2));
    }
  return { vertices: v, tets: Int32Array.from(tets) };
}

export interface GearOptions {
  readonly teeth?: number;
  readonly rootRadius?: number;
  readonly tipRadius?: number;
  /** Radius of the inner ring that separates the centre fan from the tooth band. */
  readonly hubRadius?: number;
  readonly depth?: number;
  readonly layers?: number;
}

/** A planar gear profile (xy, counter-clockwise): centre fan → hub ring → tooth band. */
export function gearProfile(o: GearOptions = {}): TriMesh {
  const teeth = o.teeth ?? 8,
    r0 = o.rootRadius ?? 1.4,
    r1 = o.tipRadius ?? 1.8,
    rh = o.hubRadius ?? 0.8;
  // Four outline points per tooth: root start, tip start, tip end, root end.
  const outline: [number, number][] = [];
  for (let k = 0; k < teeth; k++) {
    const a = (2 * Math.PI * k) / teeth,
      w = (2 * Math.PI) / teeth;
    for (const [frac, r] of [
      [0, r0],
      [0.2, r1],
      [0.5, r1],
      [0.7, r0],
    ] as const)
      outline.push([r * Math.cos(a + frac * w), r * Math.sin(a + frac * w)]);
  }
  const m = outline.length;
  const verts: number[] = [0, 0, 0];
  for (const [x, y] of outline) {
    const l = Math.hypot(x, y);
    verts.push((rh * x) / l, (rh * y) / l, 0);
  }
  for (const [x, y] of outline) verts.push(x, y, 0);
  const hub = (i: number) => 1 + (i % m),
    rim = (i: number) => 1 + m + (i % m);
  const faces: number[] = [];
  for (let i = 0; i < m; i++) {
    faces.push(0, hub(i), hub(i + 1));
    faces.push(hub(i), rim(i), rim(i + 1), hub(i), rim(i + 1), hub(i + 1));
  }
  return { vertices: Float64Array.from(verts), faces: Int32Array.from(faces) };
}

/** The gear of control_fem (tet version): an extruded gear profile. */
export const tetGear = (o: GearOptions = {}): TetMesh => extrude(gearProfile(o), o.depth ?? 0.8, o.layers ?? 2);
