/**
 * A quadrotor (RISP's first environment): one rigid body whose four rotors, at (±arm, 0, 0) and
 * (0, 0, ±arm) in the body frame, push along the body's up axis (+y) with thrusts f₁…f₄ (N, the
 * actions), and turn it about that axis with reaction torques ±k·fᵢ (rotors 1, 3 spin one way,
 * 2, 4 the other). Each step turns the thrusts into a world force and torque at the centre of
 * mass with the current orientation and takes one Newton–Euler step (rigid/step.ts), so the
 * rollout is differentiable in the thrusts, the mass, the arm and k.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { requireParam } from "../common/params.js";
import { quatRotate } from "../common/quat.js";
import { rollout, type SimulateOptions } from "../common/simulate.js";
import { rigidSystem } from "./build.js";
import { step } from "./step.js";
import type { RigidState, RigidSystem } from "./types.js";

export interface Quadrotor {
  readonly system: RigidSystem;
  /** Rotor positions about the COM in the body frame [4, 3] and the torque per newton of thrust about +y [4]. */
  readonly rotors: Array;
  readonly spin: Array;
}

export interface QuadrotorOptions {
  /** Total mass (kg); default 1. */
  readonly mass?: number;
  /** Rotor distance from the centre (m); default 0.2. */
  readonly arm?: number;
  /** Reaction torque per newton of thrust (m); default 0.02. */
  readonly yawCoefficient?: number;
  readonly position?: readonly [number, number, number];
  readonly rotation?: readonly [number, number, number, number];
  readonly velocity?: readonly [number, number, number];
  readonly angularVelocity?: readonly [number, number, number];
  readonly gravity?: readonly [number, number, number];
  readonly dtype?: "float32" | "float64";
}

/**
 * A quadrotor body (a flat cross: inertia of four point masses at the rotors plus a central hub) and its initial state.
 */
export function quadrotor(o: QuadrotorOptions = {}): { quad: Quadrotor; state: RigidState } {
  const m = requireParam("quadrotor", "mass", o.mass ?? 1, "positive", "kg");
  const arm = requireParam("quadrotor", "arm", o.arm ?? 0.2, "positive", "m");
  const k = requireParam("quadrotor", "yawCoefficient", o.yawCoefficient ?? 0.02, "finite", "m");
  const dtype = o.dtype ?? "float32";
  // Half the mass in the hub (a 2·arm/3 wide sphere), a quarter of the other half at each rotor.
  const hub = 0.4 * (m / 2) * (arm / 3) ** 2,
    rotor = (m / 8) * arm * arm;
  const ix = hub + 2 * rotor,
    iy = hub + 4 * rotor;
  const { system, state } = rigidSystem(
    [
      {
        mass: m,
        inertia: [ix, 0, 0, 0, iy, 0, 0, 0, ix],
        contactPoints: [0, 0, 0],
        contactRadius: 0,
        position: o.position ?? [0, 1, 0],
        rotation: o.rotation ?? [0, 0, 0, 1],
        velocity: o.velocity ?? [0, 0, 0],
        angularVelocity: o.angularVelocity ?? [0, 0, 0],
      },
    ],
    { gravity: o.gravity ?? [0, -9.8, 0], dtype },
  );
  return {
    quad: {
      system,
      rotors: np.array(
        [
          [arm, 0, 0],
          [0, 0, arm],
          [-arm, 0, 0],
          [0, 0, -arm],
        ],
        { dtype },
      ),
      spin: np.array([k, -k, k, -k], { dtype }),
    },
    state,
  };
}

/** World force and torque [1, 3] of thrusts [4] on a quadrotor in state s. */
export function rotorWrench(quad: Quadrotor, s: RigidState, thrusts: Array): { force: Array; torque: Array } {
  const up = np.array([0, 1, 0], { dtype: thrusts.dtype });
  const f = np.mul(np.expandDims(thrusts, -1), up); // body-frame rotor forces [4, 3]
  const bodyForce = np.sum(f, 0);
  const bodyTorque = np.add(np.sum(np.cross(quad.rotors, f), 0), np.mul(np.sum(np.mul(quad.spin, thrusts)), up));
  const q = np.squeeze(s.q, 0);
  return { force: np.expandDims(quatRotate(q, bodyForce), 0), torque: np.expandDims(quatRotate(q, bodyTorque), 0) };
}

/** One step with thrusts [4] held over it. */
export const quadrotorStep = (quad: Quadrotor, s: RigidState, thrusts: Array, dt: number): RigidState =>
  step(quad.system, s, rotorWrench(quad, s, thrusts), dt);

/** Per-frame states of a rollout with per-frame thrusts `controls` [frames, 4]. */
export function simulateQuadrotor(quad: Quadrotor, state0: RigidState, opts: SimulateOptions<Array>): RigidState {
  if (
    opts.controls &&
    (opts.controls.ndim !== 2 || opts.controls.shape[1] !== 4 || opts.controls.shape[0] !== opts.frames)
  ) {
    throw new Error(
      `quadrotor: thrusts must be [frames, 4] = [${opts.frames}, ` +
        `4] (one per rotor per frame), got [${opts.controls.shape}].`,
    );
  }
  if (!opts.controls)
    throw new Error("quadrotor: give the thrusts as controls [frames, 4] (N); hovering needs m·g/4 each.");
  return rollout(quadrotorStep, quad, state0, opts);
}
