import type { Array } from "../../core/array.js";

/** Simple pendulum (gradSim bodies.SimplePendulum): θ̈ = −(b/m)·θ̇ − (g/L)·sin θ + τ/(m·L²). */
export interface SimplePendulum {
  readonly length: Array;
  readonly mass: Array;
  /** Gravity magnitude g []. */
  readonly gravity: Array;
  /** Damping b [] (gradSim: θ̈ ∋ −(b/m)θ̇). */
  readonly damping: Array;
}
export interface SimplePendulumState {
  readonly theta: Array;
  readonly omega: Array;
}

/** Double pendulum (gradSim bodies.DoublePendulum), absolute angles from the downward vertical, plus joint damping. */
export interface DoublePendulum {
  /** [2]. */
  readonly length: Array;
  /** [2]. */
  readonly mass: Array;
  readonly gravity: Array;
  /** Viscous damping on θ̇1, θ̇2 [2] (0 in gradSim). */
  readonly damping: Array;
}
/** θ = (θ1, θ2) [2], ω = (θ̇1, θ̇2) [2]. */
export interface DoublePendulumState {
  readonly theta: Array;
  readonly omega: Array;
}

/** Generalised torques on the angles ([] for the simple pendulum, [2] for the double); null for none. */
export type PendulumControls = Array | null;
