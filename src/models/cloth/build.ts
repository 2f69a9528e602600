/** Building membrane triangles and bending hinges from a triangle mesh (host-side, float64). */
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import { perElementParam, requireParam } from "../common/params.js";
import { bendingHinges } from "../meshes/topology.js";
import { faceCount, vertexCount, type TriMesh } from "../meshes/types.js";
import { validateTriMesh } from "../meshes/validate.js";
import type { BendingElements, TriangleElements } from "./types.js";

type Numbers = readonly number[] | Float64Array;

export interface TriangleMaterial {
  /** dflex defaults: μ (tri_ke) 100, λ (tri_ka) 100, kd 10, drag 0, lift 0. */
  readonly mu?: number | Numbers;
  readonly lambda?: number | Numbers;
  readonly damping?: number | Numbers;
  readonly activation?: number | Numbers;
  readonly drag?: number | Numbers;
  readonly lift?: number | Numbers;
  readonly dtype?: DType;
}

/** Rest frames: Dm [F·4] (row-major 2×2) and rest areas A0 [F] (dflex add_triangle). */
export function triangleRestShape(mesh: TriMesh): { invRest: Float64Array; restArea: Float64Array } {
  const v = mesh.vertices,
    f = mesh.faces,
    nf = faceCount(mesh);
  const invRest = new Float64Array(nf * 4),
    restArea = new Float64Array(nf);
  const sub = (i: number, j: number) => [0, 1, 2].map((d) => v[3 * i + d]! - v[3 * j + d]!);
  const dotv = (a: number[], b: number[]) => a[0]! * b[0]! + a[1]! * b[1]! + a[2]! * b[2]!;
  const crossv = (a: number[], b: number[]) => [
    a[1]! * b[2]! - a[2]! * b[1]!,
    a[2]! * b[0]! - a[0]! * b[2]!,
    a[0]! * b[1]! - a[1]! * b[0]!,
  ];
  for (let t = 0; t < nf; t++) {
    const [p, q, r] = [f[3 * t]!, f[3 * t + 1]!, f[3 * t + 2]!];
    const qp = sub(q, p),
      rp = sub(r, p);
    const lq = Math.hypot(...qp);
    const e1 = qp.map((c) => c / lq);
    const n = crossv(qp, rp);
    const ln = Math.hypot(...n);
    const e2 = crossv(
      n.map((c) => c / ln),
      e1,
    );
    // D = [[e1·qp, e1·rp], [e2·qp, e2·rp]]; Dm = D⁻¹; A0 = det(D)/2.
    const d00 = dotv(e1, qp),
      d01 = dotv(e1, rp),
      d10 = dotv(e2, qp),
      d11 = dotv(e2, rp);
    const det = d00 * d11 - d01 * d10;
    invRest.set([d11 / det, -d01 / det, -d10 / det, d00 / det], 4 * t);
    restArea[t] = det / 2;
  }
  return { invRest, restArea };
}

/** Membrane elements of a triangle mesh (validated: bad indices or degenerate triangles raise an error). */
export function triangleElements(mesh: TriMesh, mat: TriangleMaterial = {}): TriangleElements {
  validateTriMesh(mesh, { what: "cloth.triangleElements" });
  const dtype = mat.dtype ?? "float32";
  const nf = faceCount(mesh);
  const { invRest, restArea } = triangleRestShape(mesh);
  return {
    indices: np.array(mesh.faces, { dtype: "int32" }).reshape([nf, 3]),
    invRest: np.array(invRest, { dtype }).reshape([nf, 2, 2]),
    restArea: np.array(restArea, { dtype }),
    mu: perElementParam("cloth", "mu", mat.mu ?? 100, nf, dtype, "positive", "N/m"),
    lambda: perElementParam("cloth", "lambda", mat.lambda ?? 100, nf, dtype, "finite", "N/m"),
    damping: perElementParam("cloth", "damping", mat.damping ?? 10, nf, dtype, "nonnegative"),
    activation: perElementParam("cloth", "activation", mat.activation ?? 0, nf, dtype, "finite"),
    drag: perElementParam("cloth", "drag", mat.drag ?? 0, nf, dtype, "nonnegative"),
    lift: perElementParam("cloth", "lift", mat.lift ?? 0, nf, dtype, "nonnegative"),
  };
}

export interface BendingMaterial {
  /** dflex defaults: ke 100, kd 0; rest angle measured from the mesh unless given. */
  readonly stiffness?: number | Numbers;
  readonly damping?: number | Numbers;
  readonly restAngle?: number | Numbers;
  readonly dtype?: DType;
}

/** Bending hinges on every interior edge; θ0 defaults to the mesh's own dihedral angles. */
export function bendingElements(mesh: TriMesh, mat: BendingMaterial = {}): BendingElements {
  const dtype = mat.dtype ?? "float32";
  const h = bendingHinges(mesh);
  const nh = h.length / 4;
  const v = mesh.vertices;
  const restLength = new Float64Array(nh),
    angle = new Float64Array(nh);
  for (let k = 0; k < nh; k++) {
    const [x1, x2, x3, x4] = [0, 1, 2, 3].map((s) => [0, 1, 2].map((d) => v[3 * h[4 * k + s]! + d]!)) as number[][];
    const sub = (a: number[], b: number[]) => a.map((c, i) => c - b[i]!);
    const crossv = (a: number[], b: number[]) => [
      a[1]! * b[2]! - a[2]! * b[1]!,
      a[2]! * b[0]! - a[0]! * b[2]!,
      a[0]! * b[1]! - a[1]! * b[0]!,
    ];
    const dotv = (a: number[], b: number[]) => a.reduce((s, c, i) => s + c * b[i]!, 0);
    const n1 = crossv(sub(x3!, x1!), sub(x4!, x1!)),
      n2 = crossv(sub(x4!, x2!), sub(x3!, x2!)),
      e = sub(x4!, x3!);
    const le = Math.hypot(...e);
    restLength[k] = le;
    angle[k] = Math.atan2(dotv(crossv(n2, n1), e) / le, dotv(n1, n2));
  }
  return {
    indices: np.array(h, { dtype: "int32" }).reshape([nh, 4]),
    restLength: np.array(restLength, { dtype }),
    stiffness: perElementParam("cloth", "stiffness", mat.stiffness ?? 100, nh, dtype, "nonnegative"),
    damping: perElementParam("cloth", "damping", mat.damping ?? 0, nh, dtype, "nonnegative"),
    restAngle:
      mat.restAngle === undefined
        ? np.array(angle, { dtype })
        : perElementParam("cloth", "restAngle", mat.restAngle, nh, dtype, "finite", "rad"),
  };
}

/** Lumped cloth masses m_i = Σ ρ·A0/3 (dflex add_cloth_mesh); ρ in kg/m². */
export function clothMasses(mesh: TriMesh, density: number): Float64Array {
  requireParam("cloth", "density", density, "positive", "kg/m²");
  const { restArea } = triangleRestShape(mesh);
  const m = new Float64Array(vertexCount(mesh));
  for (let t = 0; t < restArea.length; t++)
    for (let k = 0; k < 3; k++) m[mesh.faces[3 * t + k]!] += (density * restArea[t]!) / 3;
  return m;
}
