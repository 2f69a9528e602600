/**
 * Mesh validation with errors that list the offending element indices. `checkTetMesh` and
 * `checkTriMesh` return an fp-ts `Either` (Left: every issue found, Right: the mesh), which
 * suits user files; `validateTetMesh`/`validateTriMesh` throw a `MeshValidationError`.
 */
import { either as E } from "fp-ts";
import type { Either } from "fp-ts/Either";
import { tetVolume6, triangleArea2, type TetMesh, type TriMesh } from "./types.js";

export type MeshIssueKind =
  | "bad-length"
  | "non-finite-vertex"
  | "index-out-of-range"
  | "repeated-vertex"
  | "degenerate"
  | "inverted"
  | "non-manifold"
  | "overlapping"
  | "open-boundary"
  | "inconsistent-orientation";

export interface MeshIssue {
  readonly kind: MeshIssueKind;
  /** Offending element (or vertex, for non-finite-vertex) indices. */
  readonly elements: readonly number[];
  readonly detail: string;
}

const LIST_LIMIT = 20;
const listIndices = (xs: readonly number[]): string =>
  xs.slice(0, LIST_LIMIT).join(", ") + (xs.length > LIST_LIMIT ? ` … and ${xs.length - LIST_LIMIT} more` : "");

export const formatIssue = (i: MeshIssue): string => `${i.detail}: ${listIndices(i.elements)}`;

export class MeshValidationError extends Error {
  constructor(
    readonly what: string,
    readonly issues: readonly MeshIssue[],
  ) {
    super(`${what}: invalid mesh —\n${issues.map((i) => `  • ${formatIssue(i)}`).join("\n")}`);
    this.name = "MeshValidationError";
  }
}

function push(out: MeshIssue[], kind: MeshIssueKind, elements: number[], detail: string): void {
  if (elements.length) out.push({ kind, elements, detail: `${elements.length} ${detail}` });
}

/**
 * Length, vertex and index checks; returns the set of elements too broken for geometric checks, or null on bad lengths.
 */
function checkVerticesAndIndices(
  vertices: Float64Array,
  idx: Int32Array,
  k: number,
  name: string,
  out: MeshIssue[],
): Set<number> | null {
  if (vertices.length % 3 !== 0)
    out.push({
      kind: "bad-length",
      elements: [],
      detail: `vertex array length ${vertices.length} is not a multiple of 3`,
    });
  if (idx.length % k !== 0)
    out.push({
      kind: "bad-length",
      elements: [],
      detail: `index array length ${idx.length} is not a multiple of ${k}`,
    });
  if (out.length) return null;
  const nv = vertices.length / 3,
    ne = idx.length / k;
  const nonFinite: number[] = [];
  for (let v = 0; v < nv; v++) if (![0, 1, 2].every((d) => Number.isFinite(vertices[3 * v + d]!))) nonFinite.push(v);
  push(out, "non-finite-vertex", nonFinite, "vertices with NaN/Infinity coordinates (vertex indices)");
  const range: number[] = [],
    repeated: number[] = [];
  for (let e = 0; e < ne; e++) {
    const ids = globalThis.Array.from(idx.subarray(k * e, k * e + k));
    if (ids.some((i) => !Number.isInteger(i) || i < 0 || i >= nv)) range.push(e);
    else if (new Set(ids).size !== k) repeated.push(e);
  }
  push(out, "index-out-of-range", range, `${name} with vertex indices outside [0, ${nv - 1}]`);
  push(out, "repeated-vertex", repeated, `${name} that use the same vertex twice`);
  return new Set([...range, ...repeated]);
}

/** An oriented triangle in canonical rotation (smallest index first, cyclic order kept). */
const orientedKey = (f: readonly number[]): string => {
  const m = f.indexOf(Math.min(...f));
  return [f[m], f[(m + 1) % 3], f[(m + 2) % 3]].join(",");
};

export interface TetCheckOptions {
  /** |volume| below this fraction of (longest edge)³/6 counts as degenerate (default 1e-8). */
  readonly degenerateTolerance?: number;
}

/** Structural and geometric checks of a tet mesh: indices, inverted/degenerate tets, faces shared by > 2 tets. */
export function checkTetMesh(m: TetMesh, opts: TetCheckOptions = {}): Either<readonly MeshIssue[], TetMesh> {
  const out: MeshIssue[] = [];
  const broken = checkVerticesAndIndices(m.vertices, m.tets, 4, "tetrahedra", out);
  if (!broken) return E.left(out);
  const tol = opts.degenerateTolerance ?? 1e-8;
  const v = m.vertices,
    t = m.tets,
    nt = t.length / 4;
  const degenerate: number[] = [],
    inverted: number[] = [];
  const faces = new Map<string, number[]>();
  const orientedFaces = new Map<string, number[]>();
  for (let e = 0; e < nt; e++) {
    if (broken.has(e)) continue;
    const [a, b, c, d] = [t[4 * e]!, t[4 * e + 1]!, t[4 * e + 2]!, t[4 * e + 3]!];
    const vol6 = tetVolume6(v, a, b, c, d);
    let longest = 0;
    for (const [p, q] of [
      [a, b],
      [a, c],
      [a, d],
      [b, c],
      [b, d],
      [c, d],
    ] as const) {
      longest = Math.max(
        longest,
        Math.hypot(v[3 * p]! - v[3 * q]!, v[3 * p + 1]! - v[3 * q + 1]!, v[3 * p + 2]! - v[3 * q + 2]!),
      );
    }
    if (!(Math.abs(vol6) > tol * longest ** 3)) degenerate.push(e);
    else if (vol6 < 0) inverted.push(e);
    // Outward faces of the tet as oriented (flipped if the tet is inverted): two tets that induce the same
    // orientation on a shared face lie on the same side of it, i.e. they overlap.
    for (const f of [
      [a, c, b],
      [a, b, d],
      [a, d, c],
      [b, c, d],
    ]) {
      const oriented = vol6 < 0 ? [f[0]!, f[2]!, f[1]!] : f;
      const okey = orientedKey(oriented);
      (orientedFaces.get(okey) ?? orientedFaces.set(okey, []).get(okey)!).push(e);
      const key = [...f].sort((p, q) => p - q).join(",");
      (faces.get(key) ?? faces.set(key, []).get(key)!).push(e);
    }
  }
  push(out, "degenerate", degenerate, "degenerate tetrahedra (zero or near-zero volume)");
  push(out, "inverted", inverted, "inverted tetrahedra (negative volume; swap two vertices)");
  const nonManifold = [...new Set([...faces.values()].filter((l) => l.length > 2).flat())].sort((p, q) => p - q);
  push(out, "non-manifold", nonManifold, "tetrahedra on a face shared by more than two tetrahedra (non-manifold)");
  const overlapping = [...new Set([...orientedFaces.values()].filter((l) => l.length > 1).flat())].sort(
    (p, q) => p - q,
  );
  push(out, "overlapping", overlapping, "tetrahedra that overlap a neighbour (both on the same side of a shared face)");
  return out.length ? E.left(out) : E.right(m);
}

export interface TriCheckOptions {
  /** Require a closed (watertight), consistently oriented surface, as mass properties need. */
  readonly closed?: boolean;
  /** Area below this fraction of (longest edge)² counts as degenerate (default 1e-10). */
  readonly degenerateTolerance?: number;
}

/**
 * Checks of a triangle mesh: indices, degenerate faces, non-manifold edges, and (if `closed`) holes and orientation.
 */
export function checkTriMesh(m: TriMesh, opts: TriCheckOptions = {}): Either<readonly MeshIssue[], TriMesh> {
  const out: MeshIssue[] = [];
  const broken = checkVerticesAndIndices(m.vertices, m.faces, 3, "triangles", out);
  if (!broken) return E.left(out);
  const tol = opts.degenerateTolerance ?? 1e-10;
  const v = m.vertices,
    f = m.faces,
    nf = f.length / 3;
  const degenerate: number[] = [];
  const edges = new Map<string, number[]>();
  const directed = new Map<string, number[]>();
  for (let e = 0; e < nf; e++) {
    if (broken.has(e)) continue;
    const ids = [f[3 * e]!, f[3 * e + 1]!, f[3 * e + 2]!];
    let longest = 0;
    for (let k = 0; k < 3; k++) {
      const p = ids[k]!,
        q = ids[(k + 1) % 3]!;
      longest = Math.max(
        longest,
        Math.hypot(v[3 * p]! - v[3 * q]!, v[3 * p + 1]! - v[3 * q + 1]!, v[3 * p + 2]! - v[3 * q + 2]!),
      );
      const key = p < q ? `${p},${q}` : `${q},${p}`;
      (edges.get(key) ?? edges.set(key, []).get(key)!).push(e);
      const dkey = `${p}>${q}`;
      (directed.get(dkey) ?? directed.set(dkey, []).get(dkey)!).push(e);
    }
    if (!(triangleArea2(v, ids[0]!, ids[1]!, ids[2]!) > tol * longest * longest)) degenerate.push(e);
  }
  push(out, "degenerate", degenerate, "degenerate triangles (zero or near-zero area)");
  const sortUniq = (xs: number[]) => [...new Set(xs)].sort((p, q) => p - q);
  push(
    out,
    "non-manifold",
    sortUniq([...edges.values()].filter((l) => l.length > 2).flat()),
    "triangles on an edge shared by more than two triangles (non-manifold)",
  );
  if (opts.closed) {
    push(
      out,
      "open-boundary",
      sortUniq([...edges.values()].filter((l) => l.length === 1).flat()),
      "triangles on a boundary edge (the surface is not closed)",
    );
    push(
      out,
      "inconsistent-orientation",
      sortUniq([...directed.values()].filter((l) => l.length > 1).flat()),
      "triangles whose winding disagrees with a neighbour's (an edge is traversed twice in the same direction)",
    );
  }
  return out.length ? E.left(out) : E.right(m);
}

const orThrow = <M>(what: string, r: Either<readonly MeshIssue[], M>): M => {
  if (E.isLeft(r)) throw new MeshValidationError(what, r.left);
  return r.right;
};
/** checkTetMesh, throwing a MeshValidationError that lists the offending element indices. */
export const validateTetMesh = (m: TetMesh, opts: TetCheckOptions & { what?: string } = {}): TetMesh =>
  orThrow(opts.what ?? "tet mesh", checkTetMesh(m, opts));
/** checkTriMesh, throwing a MeshValidationError that lists the offending element indices. */
export const validateTriMesh = (m: TriMesh, opts: TriCheckOptions & { what?: string } = {}): TriMesh =>
  orThrow(opts.what ?? "triangle mesh", checkTriMesh(m, opts));
