/** Compliant penalty contact with a ground plane, for particles and rigid-body vertices. */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import type { DType } from "../../core/dtype.js";
import type { GroundContact } from "./types.js";
import { requireParam } from "../common/params.js";
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
  if (!(len > 0 && Number.isFinite(len))) throw new Error(`contact.ground: the plane normal must be finite and non-zero, got [${n}].`);
  const s = (x: number): Array => np.array(x, { dtype });
  const at = (name: string, v: number, range: "nonnegative" | "finite", unit: string) => s(requireParam("contact.ground", name, v, range, unit));
  return {
    normal: np.array(n.map((c) => c / len), { dtype }), offset: at("offset", o.offset ?? 0, "finite", "m"),
    ke: at("ke", o.ke ?? 1e3, "nonnegative", "N/m"), kd: at("kd", o.kd ?? 10, "nonnegative", "N·s/m"), kf: at("kf", o.kf ?? 1e3, "nonnegative", "N·s/m"),
    mu: at("mu", o.mu ?? 0.5, "nonnegative", ""), smoothing: at("smoothing", o.smoothing ?? 1e-4, "nonnegative", "m"),
  };
}
