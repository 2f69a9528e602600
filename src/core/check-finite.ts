/**
 * A cheap opt-in check that a function's outputs are finite: `jit(f, { checkFinite: true })`
 * reads each float output once after the call (one pass over the results, no re-run) and throws
 * a NonFiniteError naming the function, the output and the first NaN or infinity — instead of a
 * user's own unstable rollout returning NaN with no word. To find the primitive that produced it,
 * turn on debug-NaN mode (setDebugNans(true), slower: it checks every operation).
 *
 * Synchronous on the CPU backend. GPU arrays can only be read asynchronously: there
 * `await assertFinite(outputs, name)` does the same check.
 */
import type { Array } from "./array.js";
import { ConcreteArray } from "./concrete.js";
import { flatten } from "./tree.js";

export class NonFiniteError extends Error {
  constructor(
    message: string,
    readonly output: number,
    readonly index: number,
    readonly value: number,
  ) {
    super(message);
    this.name = "NonFiniteError";
  }
}

const isFloat = (a: Array) => a.dtype.startsWith("float");

function firstNonFinite(d: ArrayLike<number>): number {
  for (let i = 0; i < d.length; i++) if (!Number.isFinite(d[i]!)) return i;
  return -1;
}

function error(what: string, k: number, count: number, a: Array, i: number, value: number): NonFiniteError {
  return new NonFiniteError(
    `${what}: output ${k}${count > 1 ? ` of ${count}` : ""} ` +
      `(${a.dtype}[${a.shape}]) holds ${value} at flat index ${i}. ` +
      "The computation diverged or took an invalid value (log or sqrt of a negative, 0/0, an overflow); " +
      "turn on setDebugNans(true) (or GRADSIM_DEBUG_NANS=1) to name the operation that produced it.",
    k,
    i,
    value,
  );
}

/** Check concrete CPU float leaves now (others are skipped: see assertFinite). */
export function checkFiniteSync(leaves: readonly Array[], what: string): void {
  leaves.forEach((a, k) => {
    if (!(a instanceof ConcreteArray) || a.backend.name !== "cpu" || !isFloat(a)) return;
    const d = a.dataSync(),
      i = firstNonFinite(d);
    if (i >= 0) throw error(what, k, leaves.length, a, i, d[i]!);
  });
}

/** Every float leaf of `tree` finite, on any backend (reads asynchronously); else a NonFiniteError. */
export async function assertFinite(tree: unknown, what = "assertFinite"): Promise<void> {
  const leaves = (flatten(tree)[0] as unknown[]).filter((l): l is Array => l instanceof ConcreteArray);
  const values = await Promise.all(leaves.map((a) => (isFloat(a) ? a.data() : Promise.resolve(null))));
  values.forEach((d, k) => {
    if (!d) return;
    const i = firstNonFinite(d);
    if (i >= 0) throw error(what, k, leaves.length, leaves[k]!, i, d[i]!);
  });
}
