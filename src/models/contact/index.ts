/** Compliant penalty contact with a ground plane, for particles and rigid-body vertices. */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import type { DType } from "../../core/dtype.js";
import type { GroundContact } from "./types.js";
import { requireParam } from "../common/params.js";
export type { GroundContact } from "./types.js";
export { groundEnergy, groundForces, groundGap } from "./ground.js";
export {
  penetrationRamp,
  restMargin,
  rigidGroundForces,
  rigidGroundFriction,
  rigidGroundNormal,
} from "./rigid-ground.js";

export interface GroundOptions {
  /** Plane normal (normalised here); default +y. */
  readonly normal?: readonly [number, number, number];
  readonly offset?: number;
  readonly ke?: number;
  readonly kd?: number;
  readonly kf?: number;
  readonly mu?: number;
  readonly smoothing?: number;
  readonly dtype?: DType;
}

/** A ground plane with dflex's particle defaults (ke 1e3, kf 1e3, μ 0.5) and warp's kd 10. */
export function ground(o: GroundOptions = {}): GroundContact {
  const dtype = o.dtype ?? "float32";
  const n = o.normal ?? [0, 1, 0];
  const len = Math.hypot(n[0], n[1], n[2]);
  if (!(len > 0 && Number.isFinite(len)))
    throw new Error(`contact.ground: the plane normal must be finite and non-zero, got [${n}].`);
  const s = (x: number): Array => np.array(x, { dtype });
  const at = (name: string, v: number, range: "positive" | "nonnegative" | "finite", unit: string) =>
    s(requireParam("contact.ground", name, v, range, unit));
  return {
    normal: np.array(
      n.map((c) => c / len),
      { dtype },
    ),
    offset: at("offset", o.offset ?? 0, "finite", "m"),
    ke: at("ke", o.ke ?? 1e3, "nonnegative", "N/m"),
    kd: at("kd", o.kd ?? 10, "nonnegative", "N·s/m"),
    kf: at("kf", o.kf ?? 1e3, "nonnegative", "N·s/m"),
    mu: at("mu", o.mu ?? 0.5, "nonnegative", ""),
    smoothing: at("smoothing", o.smoothing ?? 1e-4, "positive", "m"),
  };
}

/**
 * The documented defaults of rigid-body ground contact (`rigidGround`), per kilogram of the body:
 * ke 3e4 s⁻² (a contact frequency of ≈ 28 Hz, in MuJoCo's default time constant's range), kd 150 s⁻¹
 * (≈ 0.43 of critical damping: a little bounce), kf 150 s⁻¹ (friction saturates to Coulomb above
 * ≈ μ·6.5 cm/s), ramp δ 5 mm. With them a resting body stays within a fraction of a millimetre of
 * its geometric rest height for any mass, and gradients agree with central differences on
 * sliding, bouncing and tipping scenes (tests/models-rigid-contact.test.ts). Steps up to
 * `rigidContactStepLimit` (≈ 1/570 s for these: 19 substeps at 30 fps).
 */
export const RIGID_GROUND_DEFAULTS = { ke: 3e4, kd: 150, kf: 150, mu: 0.5, smoothing: 5e-3 } as const;

/** Ranges in which the rigid contact's rest and gradient guarantees are tested. */
export const RIGID_GROUND_RANGES = { ke: [1e4, 1e5], kd: [0, 600], kf: [0, 600], smoothing: [1e-3, 2e-2] } as const;

/**
 * A ground plane for rigid bodies with mass-normalised coefficients (see RIGID_GROUND_DEFAULTS and
 * rigid-ground.ts): ke in N/m per kg of body (s⁻²), kd and kf in s⁻¹, μ, and the ramp width δ (m).
 */
export function rigidGround(o: GroundOptions = {}): GroundContact {
  const d = RIGID_GROUND_DEFAULTS;
  const where = "contact.rigidGround";
  if (o.smoothing !== undefined && !(o.smoothing > 0))
    throw new Error(
      `${where}: smoothing must be > 0 (the width of the contact ` +
        `ramp, m), got ${o.smoothing}; the default is ${d.smoothing}.`,
    );
  if (o.ke !== undefined && !(o.ke > 0))
    throw new Error(`${where}: ke must be > 0 (N/m per kg of body, s⁻²), got ${o.ke}; the default is ${d.ke}.`);
  const g = ground({ ke: d.ke, kd: d.kd, kf: d.kf, mu: d.mu, smoothing: d.smoothing, ...o });
  return { ...g, scaling: "per-body-mass" };
}

/**
 * The largest time step (s) at which rigid contact with these coefficients behaves (host
 * numbers): 0.7 of the semi-implicit Euler limit of a contact of frequency √(3·ke), and 0.8/(3·rate)
 * for the damping and friction rates kd and kf — the factor 3 bounds how much stiffer a box's
 * rotation about an edge or its spin is than its translation. Measured: a spinning box dropped on
 * the ground (rigid-contact's built-in scene, kd = kf = 150) has a trajectory that is smooth in μ
 * at 18 substeps per frame (30 fps) and rugged — a loss no descent can follow — at 14, inside the
 * plain linear limit.
 */
export function rigidContactStepLimit(c: { readonly ke: number; readonly kd: number; readonly kf: number }): number {
  return Math.min(0.7 / Math.sqrt(3 * c.ke), 0.8 / (3 * Math.max(c.kd, c.kf, 1e-9)));
}
