/** Shared plumbing of the public transforms: pytree flattening of arguments and results. */
import { Array } from "../core/array.js";
import { fromTyped } from "../core/create.js";
import { scalar } from "../core/constants.js";
import { getBackend } from "../core/backends/backend.js";
import { flatten, unflatten, type TreeDef } from "../core/tree.js";

/** A pytree leaf as an Array: JS numbers become weakly typed float32 scalars, booleans bool scalars. */
export function leafToArray(x: unknown, what: string): Array {
  if (x instanceof Array) return x;
  // Weak scalars on the CPU keep the exact JS number (see ConstantArray); promotion rebuilds them per dtype.
  if (typeof x === "number")
    return getBackend().name === "cpu"
      ? scalar(x, "float32", true)
      : fromTyped(Float32Array.of(x), [], "float32", { weak: true });
  if (typeof x === "boolean") return fromTyped(Uint8Array.of(x ? 1 : 0), [], "bool", { weak: true });
  throw new Error(
    `${what}: a pytree leaf of type ` +
      `${typeof x === "object" ? ((x as object).constructor?.name ?? "object") : typeof x} ` +
      `is not an Array or number; ` +
      `transforms accept pytrees (nested JS arrays and plain objects) of Arrays and numbers.`,
  );
}

export interface FlatFn {
  /** The function on flat leaves. */
  readonly f: (...xs: Array[]) => Array[];
  /** Structure of the outputs, known after the first call. */
  outDef: () => TreeDef;
}

/** Wrap a function of pytrees as a function of flat arrays (JAX's flatten_fun). */
export function flattenFun(fn: (...args: any[]) => unknown, inDef: TreeDef, what: string): FlatFn {
  let outDef: TreeDef | null = null;
  return {
    f: (...xs: Array[]) => {
      const args = unflatten(inDef, xs) as unknown[];
      const out = fn(...args);
      const [leaves, def] = flatten(out);
      outDef = def;
      return leaves.map((l) => leafToArray(l, `${what} (output)`));
    },
    outDef: () => {
      if (!outDef) throw new Error(`internal: ${what} output structure requested before tracing.`);
      return outDef;
    },
  };
}

export function flattenArgs(args: readonly unknown[], what: string): [Array[], TreeDef] {
  const [leaves, def] = flatten([...args]);
  return [leaves.map((l) => leafToArray(l, what)), def];
}

export function normArgnums(argnums: number | readonly number[] | undefined, nargs: number, what: string): number[] {
  const list = argnums === undefined ? [0] : typeof argnums === "number" ? [argnums] : [...argnums];
  return list.map((a) => {
    const b = a < 0 ? a + nargs : a;
    if (!Number.isInteger(b) || b < 0 || b >= nargs) {
      throw new Error(`${what}: argnums ${a} is out of range for a call with ${nargs} argument(s).`);
    }
    return b;
  });
}
