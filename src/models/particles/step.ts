/**
 * Particle dynamics with semi-implicit (symplectic) Euler, paper eq. 4 / dflex
 * `integrate_particles`:  v' = v + dt·(f/m)·(1 − fixed),  x' = x + dt·v'.
 * Gravity enters as the force m·g, so the free-fall closed form is
 * x_n = x0 + n·dt·v0 + g·dt²·n(n+1)/2.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { aeroForces } from "../cloth/aero.js";
import { bendingForces } from "../cloth/bending.js";
import { membraneForces } from "../cloth/membrane.js";
import { rollout, type SimulateOptions } from "../common/simulate.js";
import { particleAdvice } from "./stability.js";
import { groundForces } from "../contact/ground.js";
import { tetForces } from "../fem/forces.js";
import { springForces } from "../springs/energy.js";
import type { ParticleControls, ParticleState, ParticleSystem } from "./types.js";

/** Total force [N, 3] on every particle (gravity, elements, aerodynamics, contact, external). */
export function forces(sys: ParticleSystem, state: ParticleState, controls: ParticleControls | null = null): Array {
  const { x, v } = state;
  let f = np.mul(np.expandDims(sys.mass, -1), sys.gravity);
  if (sys.springs) f = np.add(f, springForces(sys.springs, x, v));
  if (sys.tets) f = np.add(f, tetForces(sys.tets, x, v, controls?.tetActivation ?? sys.tets.activation));
  if (sys.triangles) {
    f = np.add(f, membraneForces(sys.triangles, x, v, controls?.triActivation ?? sys.triangles.activation));
    f = np.add(f, aeroForces(sys.triangles, x, v));
  }
  if (sys.bending) f = np.add(f, bendingForces(sys.bending, x, v, controls?.restAngle ?? sys.bending.restAngle));
  if (sys.ground) f = np.add(f, groundForces(sys.ground, x, v, sys.radius));
  if (controls?.force) f = np.add(f, controls.force);
  return f;
}

/** One semi-implicit Euler step of length dt. */
export function step(
  sys: ParticleSystem,
  state: ParticleState,
  controls: ParticleControls | null,
  dt: number,
): ParticleState {
  const accel = np.mul(
    np.div(forces(sys, state, controls), np.expandDims(sys.mass, -1)),
    np.expandDims(np.sub(1, sys.fixed), -1),
  );
  const v = np.add(state.v, np.mul(accel, dt));
  return { x: np.add(state.x, np.mul(v, dt)), v };
}

/** Per-frame states ({x, v} with a leading frames axis) of a rollout built on lax.scan. */
export const simulate = (
  sys: ParticleSystem,
  state0: ParticleState,
  opts: SimulateOptions<ParticleControls | null>,
): ParticleState => rollout(step, sys, state0, opts, particleAdvice);
