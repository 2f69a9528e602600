import type { Array } from "../../core/array.js";

/** Damped springs between particle pairs (dflex/warp `eval_springs`); every coefficient per spring. */
export interface SpringElements {
  /** int32 [E, 2]: the two particles of each spring. */
  readonly indices: Array;
  /** Rest length L0 [E]. */
  readonly restLength: Array;
  /** Stiffness ke [E] (N/m). */
  readonly stiffness: Array;
  /** Damping kd [E] (N·s/m) on the rate of change of length. */
  readonly damping: Array;
}
