/**
 * Physical parameters checked where they enter a model (host values, at construction time, so
 * nothing here runs under jit): a NaN, an infinity or a negative stiffness is named with the value
 * it got, instead of surfacing later as a silent NaN in a rollout, a loss or a gradient.
 */
import type { Array } from "../../core/array.js";
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";

/**
 * positive: finite and > 0 (masses, densities, Lamé μ); nonnegative: finite and ≥ 0 (damping, stiffness); finite: any
 * finite value.
 */
export type ParamRange = "positive" | "nonnegative" | "finite";

const RULE: Record<ParamRange, { ok: (v: number) => boolean; text: string }> = {
  positive: { ok: (v) => Number.isFinite(v) && v > 0, text: "a finite number > 0" },
  nonnegative: { ok: (v) => Number.isFinite(v) && v >= 0, text: "a finite number ≥ 0" },
  finite: { ok: (v) => Number.isFinite(v), text: "a finite number" },
};

type Numbers = readonly number[] | Float64Array;

/** `v` if it is in `range`, else an error naming `where`, the parameter, its unit and the value. */
export function requireParam(where: string, name: string, v: number, range: ParamRange, unit = ""): number {
  if (typeof v !== "number" || !RULE[range].ok(v)) {
    throw new Error(
      `${where}: ${name} must be ${RULE[range].text}${unit ? ` (${unit})` : ""}, ` +
        `got ${typeof v === "number" ? v : JSON.stringify(v)}.`,
    );
  }
  return v;
}

/** One value per element (a single number is broadcast), each checked against `range`. */
export function perElementParam(
  where: string,
  name: string,
  v: number | Numbers,
  n: number,
  dtype: DType,
  range: ParamRange,
  unit = "",
): Array {
  if (typeof v === "number") return np.full([n], requireParam(where, name, v, range, unit), { dtype });
  if (v.length !== n)
    throw new Error(
      `${where}: ${name} has ${v.length} values for ${n} elements; give one per element or a single number.`,
    );
  for (let i = 0; i < v.length; i++) requireParam(where, `${name}[${i}]`, v[i]!, range, unit);
  return np.array(Float64Array.from(v), { dtype });
}
