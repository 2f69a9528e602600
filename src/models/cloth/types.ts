import type { Array } from "../../core/array.js";

/** Constant-strain triangles (membrane) with per-triangle material and aerodynamics. */
export interface TriangleElements {
  /** int32 [F, 3]: (p, q, r). */
  readonly indices: Array;
  /** Dm [F, 2, 2]: inverse of the rest edge matrix in the triangle's own 2-D frame. */
  readonly invRest: Array;
  /** Rest area A0 [F]. */
  readonly restArea: Array;
  /** In-plane shear stiffness μ [F] (dflex tri_ke). */
  readonly mu: Array;
  /** Area stiffness λ [F] (dflex tri_ka), > 0. */
  readonly lambda: Array;
  /** Rayleigh damping kd [F] on the in-plane strain rate and area rate (dflex tri_kd). */
  readonly damping: Array;
  /** Area activation a [F]: target area ratio α − a. */
  readonly activation: Array;
  /** Aerodynamic drag coefficient [F]. */
  readonly drag: Array;
  /** Aerodynamic lift coefficient [F]. */
  readonly lift: Array;
}

/** Dihedral bending hinges: (wing of face A, wing of face B, edge v0, edge v1), face A traversing v0→v1. */
export interface BendingElements {
  /** int32 [E, 4]. */
  readonly indices: Array;
  /** Rest edge length ē [E] (energy scale). */
  readonly restLength: Array;
  /** Bending stiffness ke [E]. */
  readonly stiffness: Array;
  /** Bending damping kd [E]. */
  readonly damping: Array;
  /** Rest dihedral angle θ0 [E] (rad); modulate it over time to actuate (control_jellyfish). */
  readonly restAngle: Array;
}
