/**
 * Per-tet kinematics, batched over elements: F = Ds·Dm with Ds = [x1−x0, x2−x0, x3−x0]. We
 * carry Fᵀ ([T, 3, 3], row j = column f_j of F) because the rows of Fᵀ are what the cofactor
 * and the vertex gradients are built from.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { gatherVertices, vertexSlots } from "../common/elements.js";
import { detAndCofactorColumns, matmul, mT, unstack } from "../common/vec.js";
import type { TetElements } from "./types.js";

/** Rows (x_k − x_0), k = 1..3, of every tet: Dsᵀ [T, 3, 3]. */
export function edgeRows(tets: TetElements, x: Array): Array {
  const [p0, p1, p2, p3] = vertexSlots(gatherVertices(x, tets.indices));
  return np.stack([np.sub(p1!, p0!), np.sub(p2!, p0!), np.sub(p3!, p0!)], 1);
}

/** Fᵀ = Dmᵀ·Dsᵀ [T, 3, 3] for positions (or Ḟᵀ for velocities). */
export const deformationGradientT = (tets: TetElements, x: Array): Array => matmul(mT(tets.invRest), edgeRows(tets, x));

export interface TetInvariants {
  /** Fᵀ [T, 3, 3]. */
  readonly FT: Array;
  /** I_C = ‖F‖²_F [T] (full Frobenius norm: rotation-invariant, unlike dflex's diagonal-only sum, anchors §0.1). */
  readonly Ic: Array;
  /** J = det F [T]. */
  readonly J: Array;
  /** cof(F)ᵀ = ∂J/∂F transposed [T, 3, 3]. */
  readonly cofT: Array;
}

export function invariants(tets: TetElements, x: Array): TetInvariants {
  const FT = deformationGradientT(tets, x);
  const [f0, f1, f2] = unstack(FT, 1) as [Array, Array, Array];
  const { det, cof } = detAndCofactorColumns(f0, f1, f2);
  return { FT, Ic: np.sum(np.square(FT), [1, 2]), J: det, cofT: np.stack(cof, 1) };
}

/** Rest-state offset α = 1 + 3μ/(4λ) that makes the rest shape stress-free (Smith et al. 2018 §3.4). */
export const restOffset = (mu: Array, lambda: Array): Array => np.add(1, np.div(np.mul(0.75, mu), lambda));
