import type { Array } from "../../core/array.js";

/**
 * A tree of links joined by revolute joints to a fixed base, in reduced (joint-angle) coordinates.
 * Joint j turns link j about `axis[j]` (unit, in its parent's frame) at `offset[j]` (the joint's
 * position in its parent's frame); its parent is `parent[j]` (−1: the base). Mass is carried by
 * point masses fixed in the links (`pointLink`, positions in the link's frame), so the inertia of
 * a link is that of its points.
 */
export interface ArticulatedSystem {
  /** Host topology: parent link of each joint (−1 = base); parents come before children. */
  readonly parent: readonly number[];
  /** [J, 3] joint positions in the parent's frame, [J, 3] unit joint axes in the parent's frame. */
  readonly offset: Array;
  readonly axis: Array;
  /** Point masses: the link each belongs to (host), positions in that link's frame [P, 3], masses [P]. */
  readonly pointLink: readonly number[];
  readonly points: Array;
  readonly mass: Array;
  /** Joint springs τ = −k(q − rest) − b·q̇: stiffness, damping, rest angles [J]. */
  readonly stiffness: Array;
  readonly damping: Array;
  readonly rest: Array;
  /** Joint limits (rad) enforced by a stiff one-sided spring `limitStiffness` beyond them; null: none. */
  readonly limits: { readonly lower: Array; readonly upper: Array; readonly stiffness: Array } | null;
  readonly gravity: Array;
  /** The base's (fixed) position [3]. */
  readonly base: Array;
}

/** Joint angles q [J] and velocities q̇ [J]. */
export interface ArticulatedState {
  readonly q: Array;
  readonly qd: Array;
}

/** Motor torques on the joints [J] (per frame in a rollout), or null. */
export type ArticulatedControls = Array | null;

/** World frames of the links: rotations [J, 3, 3] and origins [J, 3] (at the joints). */
export interface LinkFrames {
  readonly rotation: Array;
  readonly origin: Array;
}
