/** Cloth grids and the planar 2-D walker (triangle meshes). */
import type { TriMesh } from "./types.js";

export interface ClothGridOptions {
  /** Cells along the grid's two axes. */
  readonly cells: readonly [number, number];
  /** Cell edge length (default 0.1, as gradSim's demo_cloth). */
  readonly cellSize?: number;
  readonly origin?: readonly [number, number, number];
  /** "xy": vertical sheet with normal +z (default); "xz": horizontal sheet with normal +y. */
  readonly plane?: "xy" | "xz";
}

/** A (cx+1)×(cy+1) particle grid, two triangles per cell, consistently wound. Vertex (i, j) has index i + (cx+1)·j. */
export function clothGrid(o: ClothGridOptions): TriMesh {
  const [cx, cy] = o.cells;
  if (![cx, cy].every((n) => Number.isInteger(n) && n >= 1))
    throw new Error(`clothGrid: cells must be positive integers, got [${o.cells}].`);
  const h = o.cellSize ?? 0.1,
    org = o.origin ?? [0, 0, 0],
    plane = o.plane ?? "xy";
  const v = new Float64Array((cx + 1) * (cy + 1) * 3);
  for (let j = 0; j <= cy; j++)
    for (let i = 0; i <= cx; i++) {
      const p = 3 * (i + (cx + 1) * j);
      v[p] = org[0] + i * h;
      if (plane === "xy") {
        v[p + 1] = org[1] + j * h;
        v[p + 2] = org[2];
      } else {
        v[p + 1] = org[1];
        v[p + 2] = org[2] - j * h;
      }
    }
  const f: number[] = [];
  for (let j = 0; j < cy; j++)
    for (let i = 0; i < cx; i++) {
      const a = i + (cx + 1) * j,
        b = a + 1,
        c = a + cx + 1,
        d = c + 1;
      f.push(a, b, d, a, d, c);
    }
  return { vertices: v, faces: Int32Array.from(f) };
}

/** Triangulate the filled cells of a 2-D cell mask (rows from the bottom, y up) in the z = 0 plane. */
export function planarMeshFromCells(mask: readonly string[], cellSize: number): TriMesh {
  const rows = mask.length,
    cols = Math.max(...mask.map((r) => r.length));
  const filled = (i: number, j: number) => mask[rows - 1 - j]?.[i] === "#";
  const ids = new Map<number, number>();
  const verts: number[] = [];
  const vid = (i: number, j: number) => {
    const key = i + (cols + 1) * j;
    let id = ids.get(key);
    if (id === undefined) {
      ids.set(key, (id = verts.length / 3));
      verts.push(i * cellSize, j * cellSize, 0);
    }
    return id;
  };
  const f: number[] = [];
  for (let j = 0; j < rows; j++)
    for (let i = 0; i < cols; i++) {
      if (!filled(i, j)) continue;
      const a = vid(i, j),
        b = vid(i + 1, j),
        c = vid(i, j + 1),
        d = vid(i + 1, j + 1);
      // Alternate the diagonal in a checkerboard so the mesh has no preferred shear direction.
      if ((i + j) % 2 === 0) f.push(a, b, d, a, d, c);
      else f.push(a, b, c, b, d, c);
    }
  return { vertices: Float64Array.from(verts), faces: Int32Array.from(f) };
}

/**
 * The 2-D walker of gradSim's control_walker (a planar triangle mesh, z = 0, y up): a body on
 * four legs. Its shape follows the paper's figure; it is generated rather than read from
 * walker.usda (74 particles / 104 triangles there).
 */
export function walker(cellSize = 0.1): TriMesh {
  return planarMeshFromCells(
    ["##########", "##########", "##########", "##..##..##", "##..##..##", "##..##..##"],
    cellSize,
  );
}
