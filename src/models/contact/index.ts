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
  rigidGroundFrictionSaturation,
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
 * ke 3e4 s⁻² (a contact frequency of ≈ 28 Hz, in MuJoCo's default time constant's range), kd 600 s⁻¹
 * (≈ 1.7 of critical damping: no bounce, as MuJoCo's and PyBullet's defaults), kf 1500 s⁻¹ (friction
 * saturates to Coulomb above ≈ μ·6.5 mm/s), ramp δ 5 mm. With them a resting body stays within a
 * fraction of a millimetre of its geometric rest height for any mass, sliding follows Coulomb's law
 * closely, and gradients agree with central differences on sliding, bouncing and tipping scenes
 * (tests/models-rigid-contact.test.ts). Measured against MuJoCo and PyBullet on the outside set's
 * pushed boxes, cylinders and frustum at 30 substeps per frame: within 0.1–4.2 mm over 1.5 s, where
 * kd = kf = 150 left up to 40 mm (kd and kf are implicit in the step: stiffer values stay stable).
 * Steps up to `rigidContactStepLimit` (≈ 1/430 s for these: 15 substeps at 30 fps); scenes default to twice that.
 */
export const RIGID_GROUND_DEFAULTS = { ke: 3e4, kd: 600, kf: 1500, mu: 0.5, smoothing: 5e-3 } as const;

/** Ranges in which the rigid contact's rest and gradient guarantees are tested. */
export const RIGID_GROUND_RANGES = { ke: [1e4, 1e5], kd: [0, 2000], kf: [0, 5000], smoothing: [1e-3, 2e-2] } as const;

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
 * numbers): 0.7 of the semi-implicit Euler limit of a contact of frequency √(3·ke) — the factor 3
 * bounds how much stiffer a box's rotation about an edge is than its translation. The damping kd
 * and the friction kf do not limit the step: the rigid step takes them implicitly
 * (rigid/implicit-contact.ts), where explicit friction needed dt < 0.8/(3·kf) (a spinning box
 * dropped on the ground slid a trajectory rugged in μ at 14 substeps per frame with kf = 150).
 */
export function rigidContactStepLimit(c: { readonly ke: number }): number {
  return 0.7 / Math.sqrt(3 * c.ke);
}

/**
 * The substeps per frame a scene uses when it names none: twice what `rigidContactStepLimit` needs (at least 4).
 * Stability is not accuracy: a tall box that tips over and lands on its side came to rest 62 mm from MuJoCo's at the
 * limit's 15 substeps (30 fps, the defaults) and 10–15 mm from 30 on, as at 120; pushed boxes and cylinders move by
 * under 2 mm between 15 and 30.
 */
export function rigidContactSubsteps(c: { readonly ke: number }, fps: number): number {
  return Math.max(4, 2 * Math.ceil(1 / (rigidContactStepLimit(c) * fps)));
}
