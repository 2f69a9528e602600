/**
 * Ground contact for rigid bodies, in acceleration units: the coefficients are per kilogram of
 * the body and shared by the body's contact points that touch, so a body's contact behaviour
 * (rest, sliding, bounce, tipping) does not depend on its mass — as with a rigid contact, where
 * mass only shows through applied forces. MuJoCo's soft constraints are mass-normalised the same
 * way; a per-point law in N/m (`groundForces`) lets a heavy body sink deeper and settle at a
 * mass-dependent height, which biases mass estimates from video by several per cent.
 *
 * Per point i of body b, with gap φ = n·p − offset − r:
 *   depth d = margin − φ, pen = ramp(d) (0 for d ≤ 0, d²/2δ up to δ, then d − δ/2: C¹),
 *   share s = smoothstep(d / margin) (0 at the margin's edge, 1 from the rest depth on, C¹),
 *   n_b = a C¹ max(Σ_{i∈b} s_i, 1) (exactly Σ s from 1.5 on), w = m_b / n_b,
 *   f_n = w·ramp(ke·pen − kd·s·v_n)   (damping both ways, the total kept ≥ 0 by a C¹ ramp: a
 *         rocking body gets no net lift from damping that only resists approach),
 *   f_t = −v_t·(kf·w) / (1 + x⁶)^⅙, x = kf·w·|v_t|/(μf_n)   (smooth Coulomb, sharper than `groundForces`').
 * The rest margin is the depth at which the push equals the gravity pressing the body into the
 * plane, so a body placed at its geometric rest height carries exactly its
 * weight from the first substep, friction included, and stays there: no hop, no settling.
 * A falling body meets the ramp `margin` (a few mm) above the plane.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { dot } from "../common/vec.js";
import type { GroundContact } from "./types.js";

/** Normal acceleration (m/s²) over which a point's push turns on (≪ g: the resting load is far above it). */
const PUSH_SMOOTHING = 0.05;
/** Normal acceleration (m/s²) over which the implicit damping turns on (g/10: a resting point carries g). */
const DAMPING_ONSET = 1;

/** The C¹ penetration ramp of width δ: 0 below 0, d²/2δ on [0, δ], d − δ/2 beyond. */
export function penetrationRamp(d: Array, delta: Array): Array {
  const c = np.clip(d, 0, delta);
  return np.add(np.div(np.square(c), np.mul(2, delta)), np.maximum(np.sub(d, delta), 0));
}

/** The rest margin: the depth where ke·ramp(depth) = g_n (the inverse of the ramp at g_n/ke). */
export function restMargin(g: GroundContact, gravity: Array): Array {
  const gn = np.maximum(np.neg(dot(gravity, g.normal)), 0);
  // ke·ramp(margin) = g_n + PUSH_SMOOTHING/2: the push's own C¹ ramp then gives exactly g_n.
  const a = np.div(np.add(gn, PUSH_SMOOTHING / 2), g.ke);
  const half = np.mul(0.5, g.smoothing);
  // Quadratic part √(2δ·min(a, δ/2)) (a tiny floor keeps its gradient finite at g = 0) plus the linear part.
  return np.add(
    np.sqrt(np.add(np.mul(np.mul(2, g.smoothing), np.minimum(a, half)), 1e-20)),
    np.maximum(np.sub(a, half), 0),
  );
}

/**
 * The normal part of rigid contact, per point: the normal force magnitude f_n [P], the mass share w [P] (kg), the
 * damping's rate and the load that bounds the point's friction [P] (N): f_n itself, or with `frictionLoad: "shared"`
 * the body's total Σf_n split as the mass shares are, s_i·w_i·Σf_n/m_b.
 */
export function rigidGroundNormal(
  g: GroundContact,
  p: Array,
  pv: Array,
  radius: Array,
  body: Array,
  mass: Array,
  gravity: Array,
): { fn: Array; w: Array; damping: Array; load: Array } {
  const margin = restMargin(g, gravity);
  const gap = np.sub(np.sub(dot(p, g.normal), g.offset), radius);
  const d = np.sub(margin, gap);
  const pen = penetrationRamp(d, g.smoothing);
  const t = np.clip(np.div(d, margin), 0, 1);
  const share = np.mul(np.square(t), np.sub(3, np.mul(2, t)));
  // Smooth max(Σ s, 1): 1 up to 0.5, Σ s from 1.5 on, C¹ between (kinks here make gradients disagree with differences).
  const touching = np.add(
    1,
    penetrationRamp(np.sub(np.scatterAdd(np.zerosLike(mass), body, share, 0), 0.5), np.onesLike(mass)),
  );
  const w = np.take(np.div(mass, touching), body, 0);
  const vn = dot(pv, g.normal);
  // Damping both ways (a rocking body gains no net lift from approach-only damping), the total kept ≥ 0 (no pull) by a
  // C¹ ramp.
  const push = np.add(np.mul(g.ke, pen), np.mul(np.mul(g.kd, share), np.neg(vn)));
  const fn = np.mul(w, penetrationRamp(push, np.full([], PUSH_SMOOTHING, { dtype: vn.dtype })));
  // The damping's rate for the step's implicit damping (N·s/m): w·kd·s while the point pushes, turned off by a C¹
  // smoothstep of the push over DAMPING_ONSET as the point lifts off (wider than the push ramp's own turn, 0.05 m/s²).
  const onset = np.clip(np.div(push, DAMPING_ONSET), 0, 1);
  const slope = np.mul(np.square(onset), np.sub(3, np.mul(2, onset)));
  const damping = np.mul(np.mul(w, np.mul(g.kd, share)), slope);
  const load =
    g.frictionLoad === "shared"
      ? np.mul(np.mul(share, w), np.take(np.div(np.scatterAdd(np.zerosLike(mass), body, fn, 0), mass), body, 0))
      : fn;
  return { fn, w, damping, load };
}

/**
 * The friction [P, 3] on points with normal forces fn and mass shares w, sliding with velocity v
 * [P, 3] (its tangential part counts): the smooth Coulomb law of `groundForces`, kf per kilogram (fn: the load that
 * bounds it, `rigidGroundNormal`'s `load`).
 * The rigid step passes the velocity the points would have at the end of the step without
 * friction, so a push that starts from rest meets Coulomb friction in its first step rather than
 * after the point has built up speed (measured: a box pushed from rest accelerated 11% faster than
 * F/m − μg at 14 substeps per frame with the current velocity).
 */
export function rigidGroundFriction(g: GroundContact, fn: Array, w: Array, v: Array): Array {
  const vt = tangentialVelocity(g, v);
  const r = rigidGroundFrictionSaturation(g, fn, w, np.sum(np.square(vt), -1));
  return np.neg(np.mul(np.expandDims(np.mul(np.mul(g.kf, w), r), -1), vt));
}

/** The tangential part of v [P, 3]. */
export const tangentialVelocity = (g: GroundContact, v: Array): Array =>
  np.sub(v, np.mul(np.expandDims(dot(v, g.normal), -1), g.normal));

/**
 * The friction's saturation r [P] at tangential speed² |v_t|² [P]: the friction is −kf·w·r·v_t, so r = 1 while a
 * point sticks (viscous, kf·w·|v_t|) and r = μ·f_n/(kf·w·|v_t|) while it slides (Coulomb). Its magnitude
 * φ(|v_t|) = kf·w·r·|v_t| rises with slope φ' = kf·w·r⁷ (the rigid step linearises it there,
 * rigid/implicit-contact.ts).
 */
export function rigidGroundFrictionSaturation(g: GroundContact, fn: Array, w: Array, speed2: Array): Array {
  // |f| = b·x/(1 + x⁶)^⅙ with x = kf·w·|v_t|/b and b = μ·f_n: viscous (kf·w·|v_t|) while sticking,
  // Coulomb (b) when sliding, and a sharp turn between — 99.7% of Coulomb at twice the crossover
  // speed, where groundForces' b·x/√(1 + x²) gives 89%: a box pushed from rest lags less.
  // In accelerations (per kg of the point's share), so the sixth powers stay in float32's range:
  // b' = μ·f_n/w, a' = kf·|v_t|, and r = b'/(b'⁶ + a'⁶)^⅙ — finite, with finite
  // derivatives, where a point does not touch (b' = 0) or does not slide (a' = 0).
  const b = np.div(np.mul(g.mu, fn), w);
  const a2 = np.mul(np.square(g.kf), speed2);
  const b2 = np.square(b);
  return np.div(b, np.power(np.add(np.add(np.mul(np.square(b2), b2), np.mul(np.square(a2), a2)), 1e-24), 1 / 6));
}

/**
 * Contact forces [P, 3] on rigid-body points at p [P, 3] moving with pv [P, 3]; `body` int32 [P]
 * names each point's body, `mass` [B] the bodies' masses and `gravity` [3] the field pressing
 * them into the plane. Friction here sees the current velocity (the rigid step predicts it).
 */
export function rigidGroundForces(
  g: GroundContact,
  p: Array,
  pv: Array,
  radius: Array,
  body: Array,
  mass: Array,
  gravity: Array,
): Array {
  const { fn, w, load } = rigidGroundNormal(g, p, pv, radius, body, mass, gravity);
  return np.add(np.mul(np.expandDims(fn, -1), g.normal), rigidGroundFriction(g, load, w, pv));
}
