/**
 * 2-D smoke (Stam stable fluids): semi-Lagrangian bilinear advection, Jacobi pressure projection, periodic or closed
 * boundaries.
 */
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import type { SmokeState, SmokeSystem } from "./types.js";
export type { SmokeSystem, SmokeState, SmokeControls } from "./types.js";
export { advect } from "./advect.js";
export { project, divergence } from "./project.js";
export { step, simulate } from "./step.js";

export interface SmokeGridOptions {
  readonly boundary?: "periodic" | "closed";
  /** Jacobi sweeps per projection (gradSim: 6); default 20. */
  readonly iterations?: number;
  readonly dtype?: DType;
}

/** An N×N grid; the initial state is at rest with gradSim's initial smoke (rows i ≥ 2N/3 set to 1). */
export function smokeGrid(n: number, o: SmokeGridOptions = {}): { system: SmokeSystem; state: SmokeState } {
  if (!Number.isInteger(n) || n < 3) throw new Error(`smokeGrid: n must be an integer ≥ 3, got ${n}.`);
  const dtype = o.dtype ?? "float32",
    closed = o.boundary === "closed";
  const iterations = o.iterations ?? 20;
  if (!Number.isInteger(iterations) || iterations < 1)
    throw new Error(`smokeGrid: iterations must be a positive integer, got ${iterations}.`);
  const idx = (d: number) =>
    Int32Array.from({ length: n }, (_, i) => (closed ? Math.min(Math.max(i + d, 0), n - 1) : (i + d + n) % n));
  const wall = (axis: 0 | 1) =>
    Float64Array.from({ length: n * n }, (_, k) => {
      const i = axis === 0 ? Math.floor(k / n) : k % n;
      return closed && (i === 0 || i === n - 1) ? 0 : 1;
    });
  const system: SmokeSystem = {
    next: np.array(idx(1), { dtype: "int32" }),
    prev: np.array(idx(-1), { dtype: "int32" }),
    periodic: np.array(closed ? 0 : 1, { dtype }),
    maskX: np.array(wall(0), { dtype }).reshape([n, n]),
    maskY: np.array(wall(1), { dtype }).reshape([n, n]),
    relaxation: np.ones([iterations], { dtype }),
  };
  const smoke = Float64Array.from({ length: n * n }, (_, k) => (Math.floor(k / n) >= (2 * n) / 3 ? 1 : 0));
  const zeros = np.zeros([n, n], { dtype });
  return { system, state: { vx: zeros, vy: zeros, smoke: np.array(smoke, { dtype }).reshape([n, n]) } };
}
