import type { Array } from "../../core/array.js";

/**
 * A 2-D N×N stable-fluids grid (Stam 1999; gradSim demo_smoke2d). Boundaries are data, not
 * flags, so one code path serves both and everything stays a pytree of Arrays (jit/vmap-able).
 */
export interface SmokeSystem {
  /** int32 [N]: index of the next/previous cell along an axis — wrapped (periodic) or clamped (closed walls). */
  readonly next: Array;
  readonly prev: Array;
  /** [] 1 = periodic sampling (indices wrap), 0 = closed box (sample positions clamp to the grid). */
  readonly periodic: Array;
  /** [N, N] multipliers on vx and vy: 0 on the wall cells normal to each component (closed), else 1. */
  readonly maskX: Array;
  readonly maskY: Array;
  /** [K] weights of the K Jacobi pressure sweeps (1 = plain Jacobi; the length sets the sweep count). */
  readonly relaxation: Array;
}

/** Velocity in cells per unit time: vx along axis 0 (i), vy along axis 1 (j), as gradSim; smoke density. */
export interface SmokeState {
  readonly vx: Array;
  readonly vy: Array;
  readonly smoke: Array;
}

/** Per-step additive sources (any subset), [N, N] each. */
export interface SmokeControls {
  readonly vx?: Array;
  readonly vy?: Array;
  readonly smoke?: Array;
}
