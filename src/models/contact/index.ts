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

export interface RigidGroundOptions extends GroundOptions {
  /** Which normal force bounds a point's friction: its own ("point", the default) or the body's, shared (types.ts). */
  readonly frictionLoad?: "point" | "shared";
}

/**
 * A ground plane for rigid bodies with mass-normalised coefficients (see RIGID_GROUND_DEFAULTS and
 * rigid-ground.ts): ke in N/m per kg of body (s⁻²), kd and kf in s⁻¹, μ, and the ramp width δ (m).
 */
export function rigidGround(o: RigidGroundOptions = {}): GroundContact {
  const d = RIGID_GROUND_DEFAULTS;
  const where = "contact.rigidGround";
  if (o.smoothing !== undefined && !(o.smoothing > 0))
    throw new Error(
      `${where}: smoothing must be > 0 (the width of the contact ` +
        `ramp, m), got ${o.smoothing}; the default is ${d.smoothing}.`,
    );
  if (o.ke !== undefined && !(o.ke > 0))
    throw new Error(`${where}: ke must be > 0 (N/m per kg of body, s⁻²), got ${o.ke}; the default is ${d.ke}.`);
  const { frictionLoad, ...rest } = o;
  if (frictionLoad !== undefined && frictionLoad !== "point" && frictionLoad !== "shared")
    throw new Error(`${where}: frictionLoad must be "point" or "shared", got ${JSON.stringify(frictionLoad)}.`);
  const g = ground({ ke: d.ke, kd: d.kd, kf: d.kf, mu: d.mu, smoothing: d.smoothing, ...rest });
  return { ...g, scaling: "per-body-mass", ...(frictionLoad === "shared" ? { frictionLoad } : {}) };
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

/** The restitutions `rigidGroundDamping` maps to a damping (critical damping gives about 0.135). */
export const RIGID_RESTITUTION_RANGE = [0.15, 0.95] as const;

/**
 * The coefficient of restitution of rigid contact with stiffness ke (s⁻²) and damping kd (s⁻¹), both per kg: the
 * ratio of a body's normal speed after and before an impact. The contact is a spring–damper that never pulls
 * (Kelvin–Voigt without attraction: the body leaves when the push reaches zero, before the spring is relaxed), whose
 * restitution is e = exp(−(β/ω)·(π − atan2(2βω, ω² − β²))) with β = kd/2 and ω = √(ke − β²) (Schwager & Pöschel,
 * "Coefficient of restitution and linear dashpot model revisited", Granular Matter 2007, arXiv cond-mat/0701278),
 * for kd < 2√ke (underdamped; 0 is returned beyond, where the formula does not hold). Measured on a ball dropped
 * at 1.7 and 3.1 m/s at the defaults' stiffness and the scenes' step: 0.279 and 0.296 for 0.3, 0.583 and 0.595 for
 * 0.6, 0.842 and 0.845 for 0.85 (tests/models-rigid-contact.test.ts) — a little less at slow impacts, where the
 * penetration ramp's few millimetres and gravity during the impact weigh more.
 */
export function rigidGroundRestitution(c: { readonly ke: number; readonly kd: number }): number {
  const beta = c.kd / 2;
  if (!(beta * beta < c.ke)) return 0;
  const omega = Math.sqrt(c.ke - beta * beta);
  return Math.exp(-(beta / omega) * (Math.PI - Math.atan2(2 * beta * omega, omega * omega - beta * beta)));
}

/**
 * The damping kd (s⁻¹ per kg) that gives rigid contact of stiffness ke the coefficient of restitution e (the inverse of
 * `rigidGroundRestitution`): what a scene file's `"restitution"` sets. e in RIGID_RESTITUTION_RANGE.
 */
export function rigidGroundDamping(restitution: number, c: { readonly ke: number }): number {
  const [lo, hi] = RIGID_RESTITUTION_RANGE;
  if (!(restitution >= lo && restitution <= hi))
    throw new Error(
      `contact.rigidGroundDamping: restitution must be in [${lo}, ${hi}] (the ratio of the speeds after and before a ` +
        `bounce), got ${restitution}; below ${lo} give the damping kd directly ` +
        `(the default ${RIGID_GROUND_DEFAULTS.kd} s⁻¹ does not bounce).`,
    );
  // Bisection on kd ∈ [0, 2√ke): the restitution falls from 1 to about e⁻² = 0.135 there.
  let a = 0,
    b = 2 * Math.sqrt(c.ke);
  for (let i = 0; i < 60; i++) {
    const m = 0.5 * (a + b);
    if (rigidGroundRestitution({ ke: c.ke, kd: m }) > restitution) a = m;
    else b = m;
  }
  return 0.5 * (a + b);
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
