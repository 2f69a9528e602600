/**
 * The soft gear of control-fem (gradSim §4.2.1, Figs. 5–6): a soft gear of 1,152 tets (an extruded 8-tooth profile,
 * stable Neo-Hookean FEM with per-tet activation) rolls on the ground; a policy
 * a = 0.3·tanh(W·φ(t)) over sinusoidal phase inputs actuates every tet so that the gear ends where
 * a target image shows it.
 *
 * From control_fem.py (physics-anchors §3): density 1, μ = λ = 1000, damping 1, contact ke 1e4,
 * kd 1, kf 10, μ 0.5, initial velocity 1.5 m/s, amplitude 0.3, ω = 2.5, 8 phases. Done differently:
 *  - phase offsets evenly spread over one period, 2πp/P (the script's 2.5·p·2π/8 are multiples of
 *    5π/8: also 8 distinct sinusoids, unevenly spaced);
 *  - its Adam learning rate 10 would move a tanh's input by 10 per step; here 0.03 with clipping;
 *  - the target is the gear resting on the ground (the script's floats at y = 2) 0.6 m further than
 *    the untrained gear rolls;
 *  - the horizon: 2 s at 60 frames/s × 16 substeps (1,920 steps; the script: 3 s × 32 = 5,760).
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import * as models from "../../models/index.js";
import { renderCamera, type LookAtCamera } from "../../sysid/scenes/camera.js";
import { groundImage } from "../../sysid/scenes/rigid.js";
import { overBackground, softFrame } from "../../sysid/video.js";
import { centreOfMassGoal, linearPolicyInit, phaseInputs, sinusoidPolicy, type ControlScene } from "../scene.js";

const { fem, meshes, particles, contact } = models;

const FPS = 60,
  SUBSTEPS = 16,
  AMPLITUDE = 0.3,
  OMEGA = 2.5,
  GOAL_AHEAD = 0.6;
export const GEAR_CAMERA: LookAtCamera = { eye: [-2, 2.6, -11], at: [-2, 1.8, 0], fovY: 40 };

export interface GearOptions {
  /** Layers of tets through the gear's thickness. */
  readonly layers: number;
  readonly seconds: number;
  readonly resolution: number;
  /** Phase inputs of the policy (default 8). */
  readonly phases?: number;
  /** The target image from the scene's background (default: the gear drawn at its goal). */
  readonly target?: (background: Array) => Array;
}

export function gearScene(cfg: GearOptions): ControlScene {
  const P = cfg.phases ?? 8;
  const gear = meshes.tetGear({ layers: cfg.layers });
  // Axis along z, centred at (−3, 2, 0): it drops 0.2 m onto the ground and rolls towards +x.
  const mesh = {
    vertices: Float64Array.from(gear.vertices, (x, i) => (i % 3 === 0 ? x - 3 : i % 3 === 1 ? x + 2 : x - 0.4)),
    tets: gear.tets,
  };
  const ground = contact.ground({ ke: 1e4, kd: 1, kf: 10, mu: 0.5, smoothing: 0.01 });
  const { system, state } = fem.softBody(mesh, {
    density: 1,
    mu: 1000,
    lambda: 1000,
    damping: 1,
    gravity: [0, -9.8, 0],
    ground,
    velocity: [1.5, 0, 0],
  });
  const T = mesh.tets.length / 4,
    n = mesh.vertices.length / 3;
  const frames = cfg.seconds * FPS;
  const phases = phaseInputs(frames, FPS, P, OMEGA);
  const simulate = (activation: Array) =>
    particles.simulate(system, state, {
      dt: 1 / (FPS * SUBSTEPS),
      substeps: SUBSTEPS,
      frames,
      controls: { tetActivation: activation },
      checkpoint: true,
      checkFinite: false,
    }).x;
  const r = cfg.resolution;
  const camera = renderCamera(GEAR_CAMERA, r, r);
  const background = groundImage(GEAR_CAMERA, r, r);
  // One paint, shaded: the goal is a place, and an 8-tooth gear turned by 45° looks the same.
  const look = {
    faces: np.reshape(np.array(meshes.tetSurface(mesh), { dtype: "int32" }), [-1, 3]),
    colors: np.array([0.85, 0.55, 0.25], { dtype: "float32" }),
  };
  const frame = (x: Array) =>
    overBackground(softFrame([{ vertices: x, mesh: look }], { resolution: r, camera }), background, "rgb");
  // The goal: the gear at rest on the ground, GOAL_AHEAD further along than the unactuated gear ends.
  const passive = np.mean(np.index(simulate(np.zeros([frames, T])), frames - 1), 0).dataSync();
  const rest = state.x;
  const lowest = Math.min(...globalThis.Array.from(mesh.vertices).filter((_, i) => i % 3 === 1));
  const shift = np.array([passive[0]! + GOAL_AHEAD - -3, -lowest, 0], { dtype: "float32" });
  const goal = np.add(rest, shift);
  const goalCom = np.mean(goal, 0);
  const target = cfg.target ? cfg.target(background) : frame(goal);
  return {
    name: "control-fem",
    describe:
      `soft gear of ${n} particles and ${T} tets, ${cfg.seconds} s at ${FPS} fps × ${SUBSTEPS} substeps, ` +
      `policy 0.3·tanh(W·φ) with ${P} phases (${T * P} weights), ` +
      `goal ${GOAL_AHEAD} m beyond the unactuated roll, ${r}² images`,
    fps: FPS,
    frames,
    target,
    initialParams: (seed) => linearPolicyInit(T, P, seed),
    positions: (W) => simulate(sinusoidPolicy(W, phases, AMPLITUDE)),
    frame,
    ...centreOfMassGoal(goalCom, frames),
  };
}
