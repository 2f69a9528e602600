/**
 * Divergence detection for rollouts: the first frame at which a simulated state stops being
 * finite (or leaves a bound), reported as a DivergenceError with what to change, instead of NaNs
 * flowing silently into a loss, a gradient and an optimiser.
 */
import type { Array } from "../../core/array.js";
import { ConcreteArray } from "../../core/concrete.js";
import { isArray } from "../../core/array.js";
import { flatten, isPlainObject } from "../../core/tree.js";

export interface Divergence {
  /** Index of the first bad frame (0-based; frame k is the state after k + 1 frames). */
  readonly frame: number;
  /** Which state leaf (e.g. "x", "v") and the flat index within the frame. */
  readonly leaf: string;
  readonly index: number;
  readonly value: number;
}

export class DivergenceError extends Error {
  constructor(
    message: string,
    readonly divergence: Divergence,
  ) {
    super(message);
    this.name = "DivergenceError";
  }
}

/** Names of the leaves in flatten's order when the state is a flat record of arrays ({x, v}), else positions. */
const leafNames = (states: unknown): string[] =>
  isPlainObject(states) && Object.values(states).every(isArray)
    ? Object.keys(states).sort()
    : isArray(states)
      ? ["state"]
      : [];

/**
 * The first frame of `states` (leaves with a leading frames axis) holding a non-finite value or a
 * magnitude above `bound`, read from host values; null when all are fine. Leaves that are not
 * concrete CPU arrays (traced, or on a GPU, where reading is asynchronous) are skipped: checkAsync covers those.
 */
export function findDivergence(
  states: unknown,
  frames: number,
  bound = Infinity,
  values?: readonly ArrayLike<number>[],
): Divergence | null {
  const leaves = flatten(states)[0] as Array[];
  const names = leafNames(states);
  let first: Divergence | null = null;
  leaves.forEach((leaf, li) => {
    let d: ArrayLike<number>;
    if (values) d = values[li]!;
    else if (leaf instanceof ConcreteArray && leaf.backend.name === "cpu" && !leaf.disposed) d = leaf.dataSync();
    else return;
    if (!leaf.dtype.startsWith("float")) return;
    const per = d.length / frames;
    const stop = first ? (first.frame + 1) * per : d.length;
    for (let i = 0; i < stop; i++) {
      const v = d[i]!;
      // Finite first: with the default bound (Infinity), ±Infinity would pass `<= bound`.
      if (!(Number.isFinite(v) && Math.abs(v) <= bound)) {
        const frame = Math.floor(i / per);
        if (!first || frame < first.frame)
          first = { frame, leaf: names[li] ?? `leaf ${li}`, index: i - frame * per, value: v };
        break;
      }
    }
  });
  return first;
}

/** findDivergence on any backend (reads the states asynchronously). */
export async function findDivergenceAsync(
  states: unknown,
  frames: number,
  bound = Infinity,
): Promise<Divergence | null> {
  const leaves = flatten(states)[0] as Array[];
  const values = await Promise.all(
    leaves.map(async (l) => (l.dtype.startsWith("float") ? l.data() : new Float32Array(0))),
  );
  return findDivergence(
    states,
    frames,
    bound,
    values.map((v, i) => (leaves[i]!.dtype.startsWith("float") ? v : new Float32Array(frames))),
  );
}

/** The error for a divergence: where it happened, the step used (when known), and the model's advice. */
export function divergenceError(
  where: string,
  d: Divergence,
  o: { frames: number; dt?: number; substeps?: number; substep?: number; advice?: string },
): DivergenceError {
  const what = Number.isFinite(d.value)
    ? `left the bound (|value| ${Math.abs(d.value).toExponential(2)})`
    : `stopped being finite (${d.value})`;
  const steps =
    o.dt === undefined || o.substeps === undefined
      ? ""
      : o.substep !== undefined
        ? `, at substep ${o.substep} of that frame's ${o.substeps} (dt = ${o.dt} s)`
        : `, within that frame's ${o.substeps} substep${o.substeps > 1 ? "s" : ""} of dt = ${o.dt} s`;
  return new DivergenceError(
    `${where}: the simulation diverged — the state ${what} at ` +
      `frame ${d.frame} of ${o.frames} (${d.leaf}[${d.index}])${steps}. ` +
      "Explicit time stepping is unstable when the step is too long for the stiffest or most damped element" +
      (o.advice
        ? `: ${o.advice}`
        : ", or when a parameter leaves its physical range: lower dt (more " +
          "substeps), soften or damp less, or narrow the unknowns' prior.") +
      " (Pass checkFinite: false to get the raw states.)",
    d,
  );
}
