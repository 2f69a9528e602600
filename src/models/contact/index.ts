/** Compliant penalty contact with a ground plane, for particles and rigid-body vertices. */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import type { DType } from "../../core/dtype.js";
import type { GroundContact } from "./types.js";
export type { GroundContact } from "./types.js";
export { groundEnergy, groundForces, groundGap } from "./ground.js";

export interface GroundOptions {
  /** Plane normal (normalised here); default +y. */
  readonly normal?: readonly [number, number, number];
  readonly offset?: number;
  readonly ke?: number; readonly kd?: number; readonly kf?: number; readonly mu?: number;
  readonly smoothing?: number;
  readonly dtype?: DType;
}

/** A ground plane with dflex's particle defaults (ke 1e3, kf 1e3, μ 0.5) and warp's kd 10. */
export function ground(o: GroundOptions = {}): GroundContact {
  const dtype = o.dtype ?? "float32";
  const n = o.normal ?? [0, 1, 0];
  const len = Math.hypot(n[0], n[1], n[2]);
  if (!(len > 0)) throw new Error(`contact.ground: the plane normal must be non-zero, got [${n}].`);
  const s = (x: number): Array => np.array(x, { dtype });
  return {
    normal: np.array(n.map((c) => c / len), { dtype }), offset: s(o.offset ?? 0),
    ke: s(o.ke ?? 1e3), kd: s(o.kd ?? 10), kf: s(o.kf ?? 1e3), mu: s(o.mu ?? 0.5), smoothing: s(o.smoothing ?? 1e-4),
  };
}
