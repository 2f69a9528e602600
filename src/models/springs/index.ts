/** Damped springs (rest length, stiffness, damping per spring). */
import type { DType } from "../../core/dtype.js";
import { requireParam } from "../common/params.js";
import { np } from "../../core/np/index.js";
import type { SpringElements } from "./types.js";
export type { SpringElements } from "./types.js";
export { springEnergy, springForces } from "./energy.js";

/** Springs between index pairs; rest lengths default to the distances in `positions`. */
export function springElements(
  pairs: readonly (readonly [number, number])[],
  positions: Float64Array | readonly number[],
  o: { stiffness?: number; damping?: number; restLength?: readonly number[]; dtype?: DType } = {},
): SpringElements {
  const dtype = o.dtype ?? "float32";
  const p = positions;
  const rest =
    o.restLength ??
    pairs.map(([i, j]) =>
      Math.hypot(p[3 * i]! - p[3 * j]!, p[3 * i + 1]! - p[3 * j + 1]!, p[3 * i + 2]! - p[3 * j + 2]!),
    );
  if (rest.length !== pairs.length)
    throw new Error(`springElements: ${rest.length} rest lengths for ${pairs.length} springs.`);
  rest.forEach((r, k) => requireParam("springElements", `restLength[${k}]`, r, "nonnegative", "m"));
  const n = pairs.length;
  return {
    indices: np.array(
      pairs.map(([i, j]) => [i, j]),
      { dtype: "int32" },
    ),
    restLength: np.array([...rest], { dtype }),
    stiffness: np.full([n], requireParam("springElements", "stiffness", o.stiffness ?? 100, "nonnegative", "N/m"), {
      dtype,
    }),
    damping: np.full([n], requireParam("springElements", "damping", o.damping ?? 0, "nonnegative", "N·s/m"), { dtype }),
  };
}
