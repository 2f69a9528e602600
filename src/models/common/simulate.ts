/**
 * Rollouts as `lax.scan` (never a JS loop over time): an outer scan over frames (one
 * control slice per frame, one stored state per frame) and an inner scan over substeps.
 * `checkpoint: true` makes the outer scan store ~√frames states for reverse mode and
 * recompute the rest.
 */
import { lax } from "../../transforms/index.js";

/** One time step of a model: pure, `step(system, state, controls, dt) → state`. */
export type StepFn<Sys, S, C> = (system: Sys, state: S, controls: C, dt: number) => S;

export interface SimulateOptions<C = unknown> {
  /** Substep length (s). */
  readonly dt: number;
  /** Stored frames; the result has a leading axis of this size. */
  readonly frames: number;
  /** Steps per frame (default 1); controls are held constant over a frame's substeps. */
  readonly substeps?: number;
  /** Per-frame controls: a pytree whose leaves have a leading axis of size `frames` (or null). */
  readonly controls?: C | null;
  /** Store only ~√frames states for reverse mode (memory O(√T)). */
  readonly checkpoint?: boolean;
}

/**
 * Run `frames × substeps` steps and return the state after each frame, stacked on a leading
 * axis (the initial state is not included).
 */
export function rollout<Sys, S, C>(step: StepFn<Sys, S, C>, system: Sys, state0: S, opts: SimulateOptions<C>): S {
  const substeps = opts.substeps ?? 1;
  if (!Number.isInteger(opts.frames) || opts.frames < 1) throw new Error(`simulate: frames must be a positive integer, got ${opts.frames}.`);
  if (!Number.isInteger(substeps) || substeps < 1) throw new Error(`simulate: substeps must be a positive integer, got ${substeps}.`);
  if (!(opts.dt > 0)) throw new Error(`simulate: dt must be a positive number of seconds, got ${opts.dt}.`);
  const frame = (s: S, c: C): [S, S] => {
    const next = substeps === 1
      ? step(system, s, c, opts.dt)
      : lax.scan((ss: S) => [step(system, ss, c, opts.dt), null], s, null, { length: substeps })[0];
    return [next, next];
  };
  const controls = (opts.controls ?? null) as C;
  const [, states] = lax.scan(frame, state0, controls, { length: opts.frames, checkpoint: opts.checkpoint ?? false });
  return states;
}
