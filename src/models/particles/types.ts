import type { Array } from "../../core/array.js";
import type { BendingElements, TriangleElements } from "../cloth/types.js";
import type { GroundContact } from "../contact/types.js";
import type { TetElements } from "../fem/types.js";
import type { SpringElements } from "../springs/types.js";

/**
 * A particle system (dflex's `Model` for particles): masses, gravity, and any of the element
 * sets below acting on the same particles. Static topology is int32 Arrays; every physical
 * parameter is a float Array, so `grad` reaches all of them. Absent element sets are skipped
 * (a structural choice fixed when the system is built, not a branch on values).
 */
export interface ParticleSystem {
  /** Particle masses [N] (kg), > 0. */
  readonly mass: Array;
  /** Pinned mask [N]: 1 = kinematic (no acceleration, keeps its velocity), 0 = free. */
  readonly fixed: Array;
  /** Contact radius [N] (or a scalar). */
  readonly radius: Array;
  /** Gravity [3] (m/s²). */
  readonly gravity: Array;
  readonly springs?: SpringElements;
  readonly tets?: TetElements;
  readonly triangles?: TriangleElements;
  readonly bending?: BendingElements;
  readonly ground?: GroundContact;
}

/** Positions and velocities [N, 3]. */
export interface ParticleState {
  readonly x: Array;
  readonly v: Array;
}

/** Per-step inputs; each replaces (activations, rest angles) or adds to (force) the system's value. */
export interface ParticleControls {
  /** External force [N, 3] (N). */
  readonly force?: Array;
  /** Tet activations [T]. */
  readonly tetActivation?: Array;
  /** Triangle area activations [F]. */
  readonly triActivation?: Array;
  /** Bending rest angles [E] (actuation). */
  readonly restAngle?: Array;
}
