import type { Array } from "../../core/array.js";
import type { GroundContact } from "../contact/types.js";

/** Contact points fixed to bodies (mesh vertices, or sphere centres with a radius). */
export interface RigidContactPoints {
  /** int32 [P]: body of each point. */
  readonly body: Array;
  /** Body-frame offsets from the body's centre of mass [P, 3]. */
  readonly local: Array;
  /** Contact radius [P] (0 for mesh vertices, r for a sphere's centre). */
  readonly radius: Array;
}

/**
 * External forces on body points over time windows (gradSim's ConstantForce: active on the closed
 * interval [start, end]). Force magnitudes and application points are differentiable.
 */
export interface ForceWindows {
  /** int32 [K]. */
  readonly body: Array;
  /** World-frame force [K, 3] (N). */
  readonly force: Array;
  /** Body-frame application point relative to the COM [K, 3]. */
  readonly local: Array;
  readonly start: Array;
  readonly end: Array;
}

/** B independent rigid bodies (no body–body collision), each with mass and body-frame inertia about its COM. */
export interface RigidSystem {
  /** [B] (kg). */
  readonly mass: Array;
  /** Body-frame inertia tensors about the COM [B, 3, 3]. */
  readonly inertia: Array;
  /** [3] (m/s²). */
  readonly gravity: Array;
  readonly contacts?: RigidContactPoints;
  readonly ground?: GroundContact;
  readonly forceWindows?: ForceWindows;
}

export interface RigidState {
  /** COM positions [B, 3]. */
  readonly x: Array;
  /** Orientations [B, 4], unit quaternions (x, y, z, w). */
  readonly q: Array;
  /** Linear velocities [B, 3]. */
  readonly v: Array;
  /** World-frame angular velocities [B, 3]. */
  readonly w: Array;
  /** Time [] (s): drives the force windows. */
  readonly t: Array;
}

export interface RigidControls {
  /** Extra world force [B, 3] and torque [B, 3] applied at the COM during the frame. */
  readonly force?: Array;
  readonly torque?: Array;
}
