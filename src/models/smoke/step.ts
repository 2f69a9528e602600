/**
 * One stable-fluids step (gradSim demo_smoke2d order): add sources, self-advect the velocity,
 * project, then advect the smoke with the projected velocity. No buoyancy, diffusion or
 * dissipation unless given as controls.
 */
import { np } from "../../core/np/index.js";
import { rollout, type SimulateOptions } from "../common/simulate.js";
import { advect } from "./advect.js";
import { project } from "./project.js";
import type { SmokeControls, SmokeState, SmokeSystem } from "./types.js";

export function step(sys: SmokeSystem, s: SmokeState, controls: SmokeControls | null, dt: number): SmokeState {
  const vx0 = controls?.vx ? np.add(s.vx, controls.vx) : s.vx;
  const vy0 = controls?.vy ? np.add(s.vy, controls.vy) : s.vy;
  const smoke0 = controls?.smoke ? np.add(s.smoke, controls.smoke) : s.smoke;
  const vx1 = np.mul(advect(sys, vx0, vx0, vy0, dt), sys.maskX);
  const vy1 = np.mul(advect(sys, vy0, vx0, vy0, dt), sys.maskY);
  const [vx, vy] = project(sys, vx1, vy1);
  return { vx, vy, smoke: advect(sys, smoke0, vx, vy, dt) };
}

export const simulate = (sys: SmokeSystem, s0: SmokeState, opts: SimulateOptions<SmokeControls | null>): SmokeState =>
  rollout(step, sys, s0, opts);
