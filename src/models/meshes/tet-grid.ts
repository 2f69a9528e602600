/** Procedural tet meshes: box/beam grids (5 tets per cube, alternating split, dflex add_soft_grid) and a tet sphere. */
import { tetVolume6, type TetMesh } from "./types.js";

export interface TetGridOptions {
  /** Cells along x, y, z. */
  readonly cells: readonly [number, number, number];
  /** Size of the whole box along x, y, z (default: one unit per cell). */
  readonly size?: readonly [number, number, number];
  /** Position of the box's minimum corner (default origin). */
  readonly origin?: readonly [number, number, number];
}

// Cube corners c = dx + 2·dy + 4·dz. Even cells cut corners 0, 3, 5, 6 off a central tet (1, 2, 4, 7);
// odd cells use the mirror image, so neighbouring cells split their shared face the same way.
const EVEN: readonly (readonly number[])[] = [
  [1, 2, 4, 7],
  [0, 1, 2, 4],
  [3, 1, 2, 7],
  [5, 1, 4, 7],
  [6, 2, 4, 7],
];
const ODD: readonly (readonly number[])[] = [
  [0, 3, 5, 6],
  [1, 0, 3, 5],
  [2, 0, 3, 6],
  [4, 0, 5, 6],
  [7, 3, 5, 6],
];

/** Append tet (a, b, c, d) positively oriented (swap the last two vertices if needed). */
export function pushOriented(v: Float64Array, out: number[], a: number, b: number, c: number, d: number): void {
  if (tetVolume6(v, a, b, c, d) < 0) out.push(a, b, d, c);
  else out.push(a, b, c, d);
}

/** A box of nx·ny·nz cubes, 5 tets each: (nx+1)(ny+1)(nz+1) vertices, 5·nx·ny·nz tets. */
export function tetBox(o: TetGridOptions): TetMesh {
  const [nx, ny, nz] = o.cells;
  if (![nx, ny, nz].every((n) => Number.isInteger(n) && n >= 1))
    throw new Error(`tetBox: cells must be positive integers, got [${o.cells}].`);
  const size = o.size ?? [nx, ny, nz];
  const origin = o.origin ?? [0, 0, 0];
  const id = (i: number, j: number, k: number) => i + (nx + 1) * (j + (ny + 1) * k);
  const v = new Float64Array((nx + 1) * (ny + 1) * (nz + 1) * 3);
  for (let k = 0; k <= nz; k++)
    for (let j = 0; j <= ny; j++)
      for (let i = 0; i <= nx; i++) {
        const p = 3 * id(i, j, k);
        v[p] = origin[0] + (size[0] * i) / nx;
        v[p + 1] = origin[1] + (size[1] * j) / ny;
        v[p + 2] = origin[2] + (size[2] * k) / nz;
      }
  const tets: number[] = [];
  for (let k = 0; k < nz; k++)
    for (let j = 0; j < ny; j++)
      for (let i = 0; i < nx; i++) {
        const corner = (c: number) => id(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
        for (const t of (i + j + k) % 2 === 0 ? EVEN : ODD)
          pushOriented(v, tets, corner(t[0]!), corner(t[1]!), corner(t[2]!), corner(t[3]!));
      }
  return { vertices: v, tets: Int32Array.from(tets) };
}

/** A cantilever-style beam along x: length × height × depth with the given cells (a `tetBox`). */
export const tetBeam = (
  length: number,
  height: number,
  depth: number,
  cells: readonly [number, number, number],
  origin: readonly [number, number, number] = [0, 0, 0],
): TetMesh => tetBox({ cells, size: [length, height, depth], origin });

/**
 * A tet ball: a `tetBox` over [−1, 1]³ with `n` cells per side, mapped radially onto the ball by
 * p ↦ r·p·‖p‖∞/‖p‖₂ (cube shells become sphere shells, so every tet keeps its orientation).
 */
export function tetSphere(radius: number, n: number, center: readonly [number, number, number] = [0, 0, 0]): TetMesh {
  const box = tetBox({ cells: [n, n, n], size: [2, 2, 2], origin: [-1, -1, -1] });
  const v = box.vertices;
  for (let i = 0; i < v.length; i += 3) {
    const [x, y, z] = [v[i]!, v[i + 1]!, v[i + 2]!];
    const l2 = Math.hypot(x, y, z),
      linf = Math.max(Math.abs(x), Math.abs(y), Math.abs(z));
    const s = l2 > 0 ? (radius * linf) / l2 : 0;
    v[i] = center[0] + x * s;
    v[i + 1] = center[1] + y * s;
    v[i + 2] = center[2] + z * s;
  }
  return box;
}
