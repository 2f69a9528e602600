/**
 * Text mesh formats. Wavefront OBJ (v / f, polygon faces fan-triangulated, `v/vt/vn` and negative
 * indices supported) and gradSim's `.tet` (`v x y z` / `t i j k l`, 0-based). Parsers return an
 * fp-ts `Either` with every problem and its line number; `load*` throw one Error listing them.
 */
import { either as E } from "fp-ts";
import type { Either } from "fp-ts/Either";
import type { TetMesh, TriMesh } from "./types.js";

export interface ParseIssue {
  readonly line: number;
  readonly message: string;
}

const failure = (what: string, issues: readonly ParseIssue[]): Error =>
  new Error(
    `${what}: ${issues.length} problem(s):\n${issues
      .slice(0, 20)
      .map((i) => `  line ${i.line}: ${i.message}`)
      .join("\n")}${issues.length > 20 ? `\n  … and ${issues.length - 20} more` : ""}`,
  );

/** Decimal numbers as the formats write them (JavaScript's Number would also take "0x10", "0b1", "Infinity", ""). */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/,
  INTEGER = /^[+-]?\d+$/;
const decimal = (tok: string): number => (DECIMAL.test(tok) ? Number(tok) : NaN);

function numbers(
  parts: readonly string[],
  n: number,
  line: number,
  what: string,
  issues: ParseIssue[],
): number[] | null {
  const xs = parts.slice(0, n).map(decimal);
  if (parts.length < n || xs.some((x) => !Number.isFinite(x))) {
    issues.push({ line, message: `${what} needs ${n} numbers, got "${parts.join(" ")}"` });
    return null;
  }
  return xs;
}

/**
 * Parse OBJ text into a triangle mesh: v and f records, and vt texture coordinates when every face
 * corner names one (then `uvs` holds them per face corner); other records are ignored.
 */
export function parseObj(text: string): Either<readonly ParseIssue[], TriMesh> {
  const issues: ParseIssue[] = [];
  const verts: number[] = [],
    faces: number[] = [],
    texcoords: number[] = [],
    cornerUvs: number[] = [];
  const lines = text.split(/\r?\n/);
  let nv = 0,
    nvt = 0,
    everyCornerTextured = true;
  lines.forEach((raw, k) => {
    const line = k + 1;
    const parts = raw.replace(/#.*/, "").trim().split(/\s+/);
    if (parts[0] === "v") {
      const xs = numbers(parts.slice(1), 3, line, "vertex", issues);
      if (xs) {
        verts.push(...xs);
        nv++;
      }
    } else if (parts[0] === "vt") {
      const uv = numbers(parts.slice(1), 2, line, "texture coordinate", issues);
      if (uv) {
        texcoords.push(uv[0]!, uv[1]!);
        nvt++;
      }
    } else if (parts[0] === "f") {
      const ids = parts.slice(1).map((tok) => {
        const head = tok.split("/")[0]!;
        const i = INTEGER.test(head) ? Number(head) : NaN;
        return Number.isInteger(i) && i !== 0 ? (i < 0 ? nv + i : i - 1) : NaN;
      });
      if (ids.length < 3 || ids.some((i) => !Number.isInteger(i) || i < 0 || i >= nv)) {
        issues.push({
          line,
          message: `face "${parts.slice(1).join(" ")}" needs ≥ 3 vertex indices in 1..${nv} (or negative, relative)`,
        });
        return;
      }
      const tids = parts.slice(1).map((tok) => {
        const field = tok.split("/")[1];
        if (field === undefined || field === "") return null;
        const t = Number(field);
        return Number.isInteger(t) && t !== 0 ? (t < 0 ? nvt + t : t - 1) : NaN;
      });
      if (tids.some((t) => t !== null && !(Number.isInteger(t) && t >= 0 && t < nvt))) {
        issues.push({
          line,
          message: `face "${parts.slice(1).join(" ")}" names texture coordinates outside 1..${nvt}`,
        });
        return;
      }
      if (tids.some((t) => t === null)) everyCornerTextured = false;
      for (let j = 1; j + 1 < ids.length; j++) {
        faces.push(ids[0]!, ids[j]!, ids[j + 1]!);
        if (everyCornerTextured)
          for (const t of [tids[0], tids[j], tids[j + 1]]) cornerUvs.push(texcoords[2 * t!]!, texcoords[2 * t! + 1]!);
      }
    }
  });
  if (!issues.length && !faces.length) issues.push({ line: lines.length, message: "no faces (f records) found" });
  if (issues.length) return E.left(issues);
  const uvs = everyCornerTextured && nvt > 0 ? { uvs: Float64Array.from(cornerUvs) } : {};
  return E.right({ vertices: Float64Array.from(verts), faces: Int32Array.from(faces), ...uvs });
}

export function loadObj(text: string): TriMesh {
  const r = parseObj(text);
  if (E.isLeft(r)) throw failure("loadObj", r.left);
  return r.right;
}

export function formatObj(m: TriMesh): string {
  const out: string[] = [];
  for (let i = 0; i < m.vertices.length; i += 3)
    out.push(`v ${m.vertices[i]} ${m.vertices[i + 1]} ${m.vertices[i + 2]}`);
  for (let i = 0; i < m.faces.length; i += 3)
    out.push(`f ${m.faces[i]! + 1} ${m.faces[i + 1]! + 1} ${m.faces[i + 2]! + 1}`);
  return out.join("\n") + "\n";
}

/** Parse gradSim's `.tet` text: `v x y z` and `t i j k l` (0-based) records. */
export function parseTet(text: string): Either<readonly ParseIssue[], TetMesh> {
  const issues: ParseIssue[] = [];
  const verts: number[] = [],
    tets: number[] = [];
  text.split(/\r?\n/).forEach((raw, k) => {
    const parts = raw.replace(/#.*/, "").trim().split(/\s+/);
    if (parts[0] === "v") {
      const xs = numbers(parts.slice(1), 3, k + 1, "vertex", issues);
      if (xs) verts.push(...xs);
    } else if (parts[0] === "t") {
      const xs = numbers(parts.slice(1), 4, k + 1, "tetrahedron", issues);
      if (xs?.some((i) => !Number.isInteger(i) || i < 0))
        issues.push({
          line: k + 1,
          message: `tetrahedron indices must be non-negative integers, got "${parts.slice(1).join(" ")}"`,
        });
      else if (xs) tets.push(...xs);
    } else if (parts[0] !== "" && parts[0] !== undefined) {
      issues.push({ line: k + 1, message: `unknown record "${parts[0]}" (expected "v" or "t")` });
    }
  });
  const nv = verts.length / 3;
  const bad = tets.findIndex((i) => i >= nv);
  if (bad >= 0)
    issues.push({
      line: 0,
      message: `tetrahedron ${Math.floor(bad / 4)} refers to vertex ${tets[bad]}, but there are ${nv} vertices`,
    });
  return issues.length ? E.left(issues) : E.right({ vertices: Float64Array.from(verts), tets: Int32Array.from(tets) });
}

export function loadTet(text: string): TetMesh {
  const r = parseTet(text);
  if (E.isLeft(r)) throw failure("loadTet", r.left);
  return r.right;
}

export function formatTet(m: TetMesh): string {
  const out: string[] = [];
  for (let i = 0; i < m.vertices.length; i += 3)
    out.push(`v ${m.vertices[i]} ${m.vertices[i + 1]} ${m.vertices[i + 2]}`);
  for (let i = 0; i < m.tets.length; i += 4)
    out.push(`t ${m.tets[i]} ${m.tets[i + 1]} ${m.tets[i + 2]} ${m.tets[i + 3]}`);
  return out.join("\n") + "\n";
}
