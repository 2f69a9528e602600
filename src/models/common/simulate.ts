/**
 * Rollouts as `lax.scan` (never a JS loop over time): an outer scan over frames (one
 * control slice per frame, one stored state per frame) and an inner scan over substeps.
 * `checkpoint: true` makes the outer scan store ~√frames states for reverse mode and
 * recompute the rest.
 */
import { lax } from "../../transforms/index.js";
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { flatten, unflatten } from "../../core/tree.js";
import { divergenceError, findDivergence } from "./divergence.js";

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
  /**
   * Check the states of an eager CPU rollout (default true; one pass over host memory): a state
   * that stops being finite raises a DivergenceError naming the frame and what to change. Traced
   * (jit/grad) and GPU rollouts are checked by their callers with findDivergenceAsync.
   */
  readonly checkFinite?: boolean;
}

/** A model's advice when its rollout diverges, e.g. the stable step of its stiffest element. */
export type StabilityAdvice<Sys> = (system: Sys, dt: number) => string | undefined;

/**
 * Run `frames × substeps` steps and return the state after each frame, stacked on a leading
 * axis (the initial state is not included).
 */
export function rollout<Sys, S, C>(
  step: StepFn<Sys, S, C>,
  system: Sys,
  state0: S,
  opts: SimulateOptions<C>,
  advice?: StabilityAdvice<Sys>,
): S {
  const substeps = opts.substeps ?? 1;
  if (!Number.isInteger(opts.frames) || opts.frames < 1)
    throw new Error(`simulate: frames must be a positive integer, got ${opts.frames}.`);
  if (!Number.isInteger(substeps) || substeps < 1)
    throw new Error(`simulate: substeps must be a positive integer, got ${substeps}.`);
  if (!(opts.dt > 0)) throw new Error(`simulate: dt must be a positive number of seconds, got ${opts.dt}.`);
  const frame = (s: S, c: C): [S, S] => {
    const next =
      substeps === 1
        ? step(system, s, c, opts.dt)
        : lax.scan((ss: S) => [step(system, ss, c, opts.dt), null], s, null, { length: substeps })[0];
    return [next, next];
  };
  const controls = (opts.controls ?? null) as C;
  const [, states] = lax.scan(frame, state0, controls, { length: opts.frames, checkpoint: opts.checkpoint ?? false });
  if (opts.checkFinite !== false) {
    const d = findDivergence(states, opts.frames);
    if (d) {
      const estimate = advice?.(system, opts.dt);
      const measured = measuredStableStep(step, system, state0, opts);
      const found = measured
        ? `Measured: the same rollout stays finite with dt ` +
          `= ${measured.dt.toPrecision(3)} s (${measured.substeps} substeps per frame).`
        : "Halving dt did not make the rollout finite within the search: check the initial state and the parameters.";
      const sub = divergentSubstep(step, system, state0, states, d.frame, opts);
      throw divergenceError("simulate", d, {
        frames: opts.frames,
        dt: opts.dt,
        substeps,
        substep: sub ?? undefined,
        advice: `${estimate ? `${estimate} ` : ""}${found}`,
      });
    }
  }
  return states;
}

/**
 * The first substep of `frame` whose state is not finite: that frame rerun one substep per stored state (without
 * per-frame controls).
 */
function divergentSubstep<Sys, S, C>(
  step: StepFn<Sys, S, C>,
  system: Sys,
  state0: S,
  states: S,
  frame: number,
  opts: SimulateOptions<C>,
): number | null {
  const substeps = opts.substeps ?? 1;
  if (substeps === 1 || opts.controls) return null;
  const [leaves, def] = flatten(states);
  const start =
    frame === 0
      ? state0
      : unflatten(
          def,
          leaves.map((l) => np.take(l as Array, frame - 1, 0)),
        );
  const d = findDivergence(
    rollout(step, system, start as S, { dt: opts.dt, frames: substeps, substeps: 1, checkFinite: false }),
    substeps,
  );
  return d ? d.frame : null;
}

/**
 * The longest step dt/2^k (k = 1…14, the frame length kept by 2^k× the substeps) at which the
 * rollout stays finite, searched eagerly on the error path only, for at most ~20 s.
 */
function measuredStableStep<Sys, S, C>(
  step: StepFn<Sys, S, C>,
  system: Sys,
  state0: S,
  opts: SimulateOptions<C>,
): { dt: number; substeps: number } | null {
  const t0 = performance.now();
  for (let k = 1; k <= 14 && performance.now() - t0 < 20_000; k++) {
    const f = 2 ** k,
      trial = { ...opts, dt: opts.dt / f, substeps: (opts.substeps ?? 1) * f, checkFinite: false };
    if (!findDivergence(rollout(step, system, state0, trial), opts.frames))
      return { dt: trial.dt, substeps: trial.substeps };
  }
  return null;
}
