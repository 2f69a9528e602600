import type { Array } from "../../core/array.js";

/**
 * Compliant penalty contact against a ground plane {p : n·p = offset} (paper §C.2, eq. 9a):
 * every parameter is an Array, so all of them (ke, kd, kf, μ, plane, smoothing) get gradients
 * (dflex keeps particle contact coefficients as Python floats, anchors §0.4).
 * Coefficients may be scalars or per contact point ([P]).
 */
export interface GroundContact {
  /** Unit plane normal [3], pointing out of the ground. */
  readonly normal: Array;
  /** Plane offset []: the plane is n·p = offset. */
  readonly offset: Array;
  /** Elastic stiffness (N/m): normal force ke·penetration. */
  readonly ke: Array;
  /** Damping (N·s/m) on the approaching normal velocity only (no sticky pull). */
  readonly kd: Array;
  /** Friction stiffness (N·s/m): friction ≈ kf·v_t while sticking. */
  readonly kf: Array;
  /** Coulomb friction coefficient μ: |friction| ≤ μ·f_n. */
  readonly mu: Array;
  /** Smoothing length δ (m) of the penetration hinge (per-point law) or ramp (per-body-mass law). */
  readonly smoothing: Array;
  /**
   * How the coefficients are read. "per-point" (particles, and rigid bodies that ask for it): ke in
   * N/m, kd and kf in N·s/m, for every contact point. "per-body-mass" (`rigidGround`, rigid bodies
   * only): ke in N/m per kg (s⁻²), kd and kf in s⁻¹, shared by a body's touching points, with a rest
   * margin — see rigid-ground.ts. Absent means "per-point".
   */
  readonly scaling?: "per-point" | "per-body-mass";
  /**
   * Which normal force bounds a rigid body's friction at a point ("per-body-mass" only): "point" (the default) its
   * own, so a body pitched by its push loads its leading corners more; "shared" the body's total load split over its
   * touching points in proportion to their contact shares, as if every corner carried alike. How a flat face's load
   * splits over its corners is statically indeterminate for a rigid body, and engines settle it each their own way.
   */
  readonly frictionLoad?: "point" | "shared";
}
