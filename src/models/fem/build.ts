/** Building tet elements and lumped masses from a validated tet mesh (host-side, float64). */
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import { perElementParam, requireParam } from "../common/params.js";
import { validateTetMesh } from "../meshes/validate.js";
import { tetCount, vertexCount, type TetMesh } from "../meshes/types.js";
import type { TetElements } from "./types.js";

export interface TetMaterial {
  /** μ (Pa), scalar or per tet. Default 1e3 (dflex). */
  readonly mu?: number | ArrayLikeNumbers;
  /** λ (Pa), scalar or per tet. Default 1e3 (dflex). */
  readonly lambda?: number | ArrayLikeNumbers;
  /** Damping kd (Pa·s), scalar or per tet. Default 0. */
  readonly damping?: number | ArrayLikeNumbers;
  /** Activation, scalar or per tet. Default 0. */
  readonly activation?: number | ArrayLikeNumbers;
  readonly dtype?: DType;
}
type ArrayLikeNumbers = readonly number[] | Float64Array;

/** Rest-shape inverse Dm [T·9] (row-major) and rest volumes V0 [T] (float64). */
export function restShape(mesh: TetMesh): { invRest: Float64Array; restVolume: Float64Array } {
  const v = mesh.vertices,
    t = mesh.tets,
    nt = tetCount(mesh);
  const invRest = new Float64Array(nt * 9),
    restVolume = new Float64Array(nt);
  for (let e = 0; e < nt; e++) {
    const i0 = t[4 * e]!;
    // Ds columns: X_k − X_0.
    const D = new Float64Array(9);
    for (let k = 0; k < 3; k++)
      for (let d = 0; d < 3; d++) D[3 * d + k] = v[3 * t[4 * e + 1 + k]! + d]! - v[3 * i0 + d]!;
    const c00 = D[4]! * D[8]! - D[5]! * D[7]!,
      c01 = D[5]! * D[6]! - D[3]! * D[8]!,
      c02 = D[3]! * D[7]! - D[4]! * D[6]!;
    const det = D[0]! * c00 + D[1]! * c01 + D[2]! * c02;
    const inv = [
      c00,
      D[2]! * D[7]! - D[1]! * D[8]!,
      D[1]! * D[5]! - D[2]! * D[4]!,
      c01,
      D[0]! * D[8]! - D[2]! * D[6]!,
      D[2]! * D[3]! - D[0]! * D[5]!,
      c02,
      D[1]! * D[6]! - D[0]! * D[7]!,
      D[0]! * D[4]! - D[1]! * D[3]!,
    ];
    for (let k = 0; k < 9; k++) invRest[9 * e + k] = inv[k]! / det;
    restVolume[e] = det / 6;
  }
  return { invRest, restVolume };
}

/** Tet elements of a mesh (validated first: inverted/degenerate/non-manifold tets raise an error listing them). */
export function tetElements(mesh: TetMesh, mat: TetMaterial = {}): TetElements {
  validateTetMesh(mesh, { what: "fem.tetElements" });
  const dtype = mat.dtype ?? "float32";
  const nt = tetCount(mesh);
  const { invRest, restVolume } = restShape(mesh);
  return {
    indices: np.array(mesh.tets, { dtype: "int32" }).reshape([nt, 4]),
    invRest: np.array(invRest, { dtype }).reshape([nt, 3, 3]),
    restVolume: np.array(restVolume, { dtype }),
    mu: perElementParam("fem", "mu", mat.mu ?? 1e3, nt, dtype, "positive", "Pa"),
    lambda: perElementParam("fem", "lambda", mat.lambda ?? 1e3, nt, dtype, "finite", "Pa"),
    damping: perElementParam("fem", "damping", mat.damping ?? 0, nt, dtype, "nonnegative", "Pa·s"),
    activation: perElementParam("fem", "activation", mat.activation ?? 0, nt, dtype, "finite"),
  };
}

/** Lumped vertex masses m_i = Σ_{tets ∋ i} ρ·V0/4 (dflex add_soft_mesh), float64 host array. */
export function lumpedMasses(mesh: TetMesh, density: number): Float64Array {
  requireParam("fem", "density", density, "positive", "kg/m³");
  const { restVolume } = restShape(mesh);
  const m = new Float64Array(vertexCount(mesh));
  for (let e = 0; e < restVolume.length; e++)
    for (let k = 0; k < 4; k++) m[mesh.tets[4 * e + k]!] += (density * restVolume[e]!) / 4;
  return m;
}
