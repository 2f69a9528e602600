/**
 * A hand-crafted controller for the quadrotor (RISP App. C.2's initial guess for a long imitation): it flies gradsim's
 * own model along a target trajectory of pose states, frame by frame, and returns the actions it used. Cascaded, as a
 * pilot flies: a PD on position (velocities from the targets' differences) gives the thrust vector, a PD on the
 * rotation towards that vector and the target's yaw gives the torques, and the rotors share them within their box,
 * giving up yaw before tilt when they cannot do both. Host code around a compiled one-frame step (it is not
 * differentiated: its output is a starting point).
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { jit } from "../../transforms/index.js";
import * as models from "../../models/index.js";
import { QUADROTOR, QUADROTOR_STEP, quadrotorOfMass, quadrotorThrusts, quaternionMatrix } from "./envs.js";

type V3 = [number, number, number];

export interface TrackingGains {
  /** Position stiffness and damping (1/s², 1/s). */
  readonly position: number;
  readonly velocity: number;
  /** Attitude stiffness and damping (per unit inertia: 1/s², 1/s). */
  readonly attitude: number;
  readonly rate: number;
}
/**
 * Gains that hold with one action per 0.1 s frame (the zero-order hold bounds them): the best of a grid on a 10 s
 * figure of gradsim's own model (1.6 cm mean position error; the first guess, 3, 2.6, 14, 6, left 15 cm).
 */
export const TRACKING_GAINS: TrackingGains = { position: 1, velocity: 2.6, attitude: 50, rate: 8 };

const cross = (a: readonly number[], b: readonly number[]): V3 => [
  a[1]! * b[2]! - a[2]! * b[1]!,
  a[2]! * b[0]! - a[0]! * b[2]!,
  a[0]! * b[1]! - a[1]! * b[0]!,
];
const norm = (a: readonly number[]) => Math.hypot(...a);
const scaled = (a: readonly number[], s: number): V3 => [a[0]! * s, a[1]! * s, a[2]! * s];
/** Rᵀ·v and R·v for R as rows. */
const tmul = (R: number[][], v: readonly number[]): V3 =>
  [0, 1, 2].map((j) => R[0]![j]! * v[0]! + R[1]![j]! * v[1]! + R[2]![j]! * v[2]!) as V3;

/** Position [3] and yaw of a pose state (x, y, z, sin yaw, sin pitch, sin roll, cos yaw, cos pitch, cos roll). */
const targetOf = (s: readonly number[]) => ({ p: s.slice(0, 3), yaw: Math.atan2(s[3]!, s[6]!) });

/**
 * The actions [T·4] in [−1, 1] (frame by frame, rotor by rotor) with which the controller flies the quadrotor of
 * `mass` from `start` (position, quaternion; at rest) along `targets` (pose states [T][9], frame k the pose after
 * k + 1 frames).
 */
export function trackingActions(
  targets: readonly (readonly number[])[],
  start: readonly number[],
  mass: number = QUADROTOR.nominalMass,
  gains: TrackingGains = TRACKING_GAINS,
): number[] {
  const T = targets.length;
  if (!T || targets.some((s) => s.length !== 9 || !s.every(Number.isFinite)))
    throw new Error("risp: the tracking targets are pose states [T][9] of finite numbers, at least one frame.");
  const { quad, state } = quadrotorOfMass(np.array(mass, { dtype: "float64" }), "float64");
  const frame = jit((s: models.rigid.RigidState, a: Array) => {
    const r = models.rigid.simulateQuadrotor(quad, s, {
      ...QUADROTOR_STEP,
      frames: 1,
      controls: quadrotorThrusts(np.reshape(a, [1, 4])),
      checkFinite: false,
    });
    return { x: np.index(r.x, 0), q: np.index(r.q, 0), v: np.index(r.v, 0), w: np.index(r.w, 0), t: np.index(r.t, 0) };
  });
  const f64 = (x: readonly number[], shape: number[]) => np.array([...x], { dtype: "float64" }).reshape(shape);
  let s: models.rigid.RigidState = { ...state, x: f64(start.slice(0, 3), [1, 3]), q: f64(start.slice(3, 7), [1, 4]) };
  const J = quad.system.inertia.dataSync();
  const inertia = [J[0]!, J[4]!, J[8]!];
  // The model's rotors sit at ±arm on x and z; each turns the body about its up axis by spin·thrust.
  const arm = quad.rotors.dataSync()[0]!,
    k = Math.abs(quad.spin.dataSync()[0]!),
    hover = (QUADROTOR.nominalMass * 9.8) / 4,
    span = QUADROTOR.thrust;
  const frameSeconds = QUADROTOR_STEP.dt * QUADROTOR_STEP.substeps;
  // Positions at times 0, 1, …, T frames (the start, then the targets); the target velocity by central differences.
  const along = [start.slice(0, 3), ...targets.map((t) => targetOf(t).p)];
  const velocity = (i: number) => {
    const a = Math.max(0, i),
      b = Math.min(T, i + 2);
    return [0, 1, 2].map((d) => (along[b]![d]! - along[a]![d]!) / ((b - a) * frameSeconds));
  };
  const actions: number[] = [];
  for (let i = 0; i < T; i++) {
    const x = globalThis.Array.from(s.x.dataSync()),
      q = globalThis.Array.from(s.q.dataSync()),
      v = globalThis.Array.from(s.v.dataSync()),
      w = globalThis.Array.from(s.w.dataSync());
    // Aim at the frame's target, with the targets' acceleration fed forward.
    const { p, yaw } = targetOf(targets[i]!);
    const vd = velocity(i),
      ad = [0, 1, 2].map(
        (d) => (velocity(Math.min(T - 1, i + 1))[d]! - velocity(Math.max(0, i - 1))[d]!) / (2 * frameSeconds),
      );
    const a = [0, 1, 2].map((d) => ad[d]! + gains.position * (p[d]! - x[d]!) + gains.velocity * (vd[d]! - v[d]!));
    const F = scaled([a[0]!, a[1]! + 9.8, a[2]!], mass);
    const flat = quaternionMatrix(q),
      R = [0, 1, 2].map((r) => flat.slice(3 * r, 3 * r + 3));
    const up = scaled(F, 1 / norm(F));
    const heading = [Math.cos(yaw), 0, -Math.sin(yaw)];
    const bz = cross(heading, up);
    const bzn = scaled(bz, 1 / norm(bz));
    const bx = cross(up, bzn);
    // Rd's columns are the body axes wanted; e_R = vee(½(Rdᵀ R − Rᵀ Rd)).
    const Rd = [0, 1, 2].map((r) => [bx[r]!, up[r]!, bzn[r]!]);
    const E = (r: number, c: number) =>
      0.5 * [0, 1, 2].reduce((acc, j) => acc + Rd[j]![r]! * R[j]![c]! - R[j]![r]! * Rd[j]![c]!, 0);
    const eR = [E(2, 1), E(0, 2), E(1, 0)];
    const wb = tmul(R, w);
    const tau = [0, 1, 2].map((d) => inertia[d]! * (-gains.attitude * eR[d]! - gains.rate * wb[d]!));
    const bodyUp = [R[0]![1]!, R[1]![1]!, R[2]![1]!];
    const lo = hover * (1 - span),
      hi = hover * (1 + span);
    const total = Math.min(4 * hi, Math.max(4 * lo, F[0] * bodyUp[0]! + F[1] * bodyUp[1]! + F[2] * bodyUp[2]!));
    // Rotors at +x, +z, −x, −z, spinning +, −, +, −: τx = arm(T3 − T1), τy = k(T0 − T1 + T2 − T3), τz = arm(T0 − T2).
    const allocate = (tilt: number, turn: number) => {
      const c = total / 4,
        tx = (tilt * tau[0]!) / (2 * arm),
        tz = (tilt * tau[2]!) / (2 * arm),
        ty = (turn * tau[1]!) / (4 * k);
      return [c + tz + ty, c - tx - ty, c - tz + ty, c + tx - ty];
    };
    // The most tilt, then the most yaw, that the box allows (bisection on the shares).
    const fits = (t: number[]) => t.every((f) => f >= lo - 1e-12 && f <= hi + 1e-12);
    const largest = (ok: (share: number) => boolean) => {
      if (ok(1)) return 1;
      let [a, b] = [0, 1];
      for (let n = 0; n < 20; n++) [a, b] = ok((a + b) / 2) ? [(a + b) / 2, b] : [a, (a + b) / 2];
      return a;
    };
    const tilt = largest((share) => fits(allocate(share, 0))),
      turn = largest((share) => fits(allocate(tilt, share)));
    const thrusts = allocate(tilt, turn);
    const act = thrusts.map((f) => Math.min(1, Math.max(-1, (f / hover - 1) / span)));
    actions.push(...act);
    s = frame(s, np.array(act, { dtype: "float64" })) as models.rigid.RigidState;
  }
  return actions;
}
