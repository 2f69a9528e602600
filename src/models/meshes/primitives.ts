/**
 * Closed rigid primitives (outward, counter-clockwise winding), centred at the origin with y up:
 * box, icosphere, cylinder, cone, capsule (surfaces of revolution of a profile) and torus.
 */
import type { TriMesh } from "./types.js";

/** Box with half-extents (hx, hy, hz): 8 vertices, 12 triangles. */
export function box(hx = 0.5, hy = 0.5, hz = 0.5): TriMesh {
  const v: number[] = [];
  for (let c = 0; c < 8; c++) v.push(c & 1 ? hx : -hx, c & 2 ? hy : -hy, c & 4 ? hz : -hz);
  // Corner c = dx + 2dy + 4dz; each face as two CCW triangles seen from outside.
  const quads = [
    [0, 4, 6, 2],
    [1, 3, 7, 5],
    [0, 1, 5, 4],
    [2, 6, 7, 3],
    [0, 2, 3, 1],
    [4, 5, 7, 6],
  ];
  const f = quads.flatMap(([a, b, c, d]) => [a!, b!, c!, a!, c!, d!]);
  return { vertices: Float64Array.from(v), faces: Int32Array.from(f) };
}

/** Icosphere: an icosahedron subdivided `subdivisions` times, projected to the sphere (20·4ⁿ faces). */
export function icosphere(radius = 1, subdivisions = 2): TriMesh {
  const t = (1 + Math.sqrt(5)) / 2;
  let verts: number[][] = [
    [-1, t, 0],
    [1, t, 0],
    [-1, -t, 0],
    [1, -t, 0],
    [0, -1, t],
    [0, 1, t],
    [0, -1, -t],
    [0, 1, -t],
    [t, 0, -1],
    [t, 0, 1],
    [-t, 0, -1],
    [-t, 0, 1],
  ];
  let faces = [
    [0, 11, 5],
    [0, 5, 1],
    [0, 1, 7],
    [0, 7, 10],
    [0, 10, 11],
    [1, 5, 9],
    [5, 11, 4],
    [11, 10, 2],
    [10, 7, 6],
    [7, 1, 8],
    [3, 9, 4],
    [3, 4, 2],
    [3, 2, 6],
    [3, 6, 8],
    [3, 8, 9],
    [4, 9, 5],
    [2, 4, 11],
    [6, 2, 10],
    [8, 6, 7],
    [9, 8, 1],
  ];
  const unit = (p: number[]) => {
    const l = Math.hypot(...p);
    return p.map((c) => c / l);
  };
  verts = verts.map(unit);
  for (let s = 0; s < subdivisions; s++) {
    const mid = new Map<string, number>();
    const midpoint = (a: number, b: number) => {
      const key = a < b ? `${a},${b}` : `${b},${a}`;
      let id = mid.get(key);
      if (id === undefined) {
        id = verts.length;
        verts.push(unit(verts[a]!.map((c, i) => c + verts[b]![i]!)));
        mid.set(key, id);
      }
      return id;
    };
    faces = faces.flatMap(([a, b, c]) => {
      const ab = midpoint(a!, b!),
        bc = midpoint(b!, c!),
        ca = midpoint(c!, a!);
      return [
        [a!, ab, ca],
        [b!, bc, ab],
        [c!, ca, bc],
        [ab, bc, ca],
      ];
    });
  }
  return { vertices: Float64Array.from(verts.flat().map((c) => c * radius)), faces: Int32Array.from(faces.flat()) };
}

/**
 * Surface of revolution about y of a profile [(r, y)] running from the bottom pole (r = 0) to the
 * top pole (r = 0); poles become single vertices.
 */
export function revolve(profile: readonly (readonly [number, number])[], segments: number): TriMesh {
  const first = profile[0]!,
    last = profile[profile.length - 1]!;
  if (first[0] !== 0 || last[0] !== 0) throw new Error("revolve: the profile must start and end on the axis (r = 0).");
  const rings = profile.slice(1, -1);
  const v: number[] = [0, first[1], 0];
  for (const [r, y] of rings)
    for (let s = 0; s < segments; s++) {
      const a = (2 * Math.PI * s) / segments;
      v.push(r * Math.cos(a), y, -r * Math.sin(a));
    }
  const top = v.length / 3;
  v.push(0, last[1], 0);
  const id = (ring: number, s: number) => 1 + ring * segments + (s % segments);
  const f: number[] = [];
  for (let s = 0; s < segments; s++) {
    f.push(0, id(0, s + 1), id(0, s));
    for (let k = 0; k + 1 < rings.length; k++)
      f.push(id(k, s), id(k + 1, s + 1), id(k + 1, s), id(k, s), id(k, s + 1), id(k + 1, s + 1));
    f.push(top, id(rings.length - 1, s), id(rings.length - 1, s + 1));
  }
  return { vertices: Float64Array.from(v), faces: Int32Array.from(f) };
}

export const cylinder = (radius = 0.5, halfHeight = 0.5, segments = 24): TriMesh =>
  revolve(
    [
      [0, -halfHeight],
      [radius, -halfHeight],
      [radius, halfHeight],
      [0, halfHeight],
    ],
    segments,
  );

/** Cone with its base at y = −height/4 and apex at 3·height/4, so the centroid is at the origin. */
export const cone = (radius = 0.5, height = 1, segments = 24): TriMesh =>
  revolve(
    [
      [0, -height / 4],
      [radius, -height / 4],
      [0, (3 * height) / 4],
    ],
    segments,
  );

/** Capsule: a cylinder of half-height `halfHeight` with hemispherical caps of `radius`. */
export function capsule(radius = 0.25, halfHeight = 0.5, segments = 24, capRings = 6): TriMesh {
  const profile: [number, number][] = [[0, -halfHeight - radius]];
  for (let k = 1; k <= capRings; k++) {
    const a = -Math.PI / 2 + (k * Math.PI) / 2 / capRings;
    profile.push([radius * Math.cos(a), -halfHeight + radius * Math.sin(a)]);
  }
  for (let k = 0; k < capRings; k++) {
    const a = (k * Math.PI) / 2 / capRings;
    profile.push([radius * Math.cos(a), halfHeight + radius * Math.sin(a)]);
  }
  profile.push([0, halfHeight + radius]);
  return revolve(profile, segments);
}

/** Torus around y: major radius R, minor radius r. */
export function torus(R = 0.5, r = 0.2, segments = 24, sides = 12): TriMesh {
  const v: number[] = [];
  for (let s = 0; s < segments; s++)
    for (let k = 0; k < sides; k++) {
      const a = (2 * Math.PI * s) / segments,
        b = (2 * Math.PI * k) / sides;
      const rr = R + r * Math.cos(b);
      v.push(rr * Math.cos(a), r * Math.sin(b), -rr * Math.sin(a));
    }
  const id = (s: number, k: number) => (s % segments) * sides + (k % sides);
  const f: number[] = [];
  for (let s = 0; s < segments; s++)
    for (let k = 0; k < sides; k++) {
      f.push(id(s, k), id(s + 1, k), id(s + 1, k + 1), id(s, k), id(s + 1, k + 1), id(s, k + 1));
    }
  return { vertices: Float64Array.from(v), faces: Int32Array.from(f) };
}
