/**
 * The walker of control-walker (gradSim §4.2.1, Figs. 5–6): a planar soft walker — a triangle-FEM body on four
 * legs (models.meshes.walker) — driven by a policy a = 0.2·tanh(W·φ(t)) of per-triangle area
 * activations over sinusoidal phase inputs φ_p(t) = sin(ω t + 2πp/P), trained so that the last
 * frame matches a target image of the walker at a goal pose (further along the ground).
 *
 * From control_walker.py (physics-anchors §3): 1 kg particles, membrane μ = λ = 1e4 with damping 100,
 * no bending, contact ke 1e4, kd 1e3, kf 1e3, μ 0.5, amplitude 0.2, ω = 20. Done differently:
 *  - its 4 "phases" sin(20(t + 0.5pπ)) differ by multiples of π, so they are ±sin(20t): one input.
 *    Here P phases are spread over the period (default 8, the paper's count), so each triangle's
 *    activation can take any phase;
 *  - the horizon: 3 s at 60 frames/s × 16 substeps (2,880 steps; the script: 5 s × 32 = 9,600).
 *    dt = 1/960 s: at 1/480 s the contact damping kd = 1e3 on 1 kg particles sits at the explicit
 *    scheme's stability limit (2m/kd = 1/500 s).
 *
 */
import type { Array } from "../../core/array.js";
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import * as models from "../../models/index.js";
import { renderCamera, type LookAtCamera } from "../../sysid/scenes/camera.js";
import { groundImage } from "../../sysid/scenes/rigid.js";
import { octantColors, overBackground, softFrame } from "../../sysid/video.js";
import { centreOfMassGoal, linearPolicyInit, phaseInputs, sinusoidPolicy, type ControlScene } from "../scene.js";

const { cloth, meshes, particles, contact } = models;

const FPS = 60,
  SUBSTEPS = 16,
  AMPLITUDE = 0.2,
  OMEGA = 20;
export const WALKER_CAMERA: LookAtCamera = { eye: [0.8, 0.45, -3.2], at: [0.8, 0.3, 0], fovY: 34 };

/** The walker as a particle system: membrane triangles, 1 kg per particle on average, ground contact. */
export function walkerBody(dtype: DType = "float32") {
  const mesh = meshes.walker();
  const n = mesh.vertices.length / 3;
  const area = cloth.clothMasses(mesh, 1).reduce((a, b) => a + b, 0);
  const ground = contact.ground({ ke: 1e4, kd: 1e3, kf: 1e3, mu: 0.5, smoothing: 0.01, dtype });
  const { system, state } = cloth.clothBody(mesh, {
    density: n / area,
    mu: 1e4,
    lambda: 1e4,
    damping: 100,
    bending: false,
    gravity: [0, -9.8, 0],
    ground,
    dtype,
  });
  return { mesh, system, state, particles: n, triangles: mesh.faces.length / 3 };
}

export interface WalkerOptions {
  /** Horizon (s) and how far right of its rest the goal is (m). */
  readonly seconds: number;
  readonly goal: number;
  readonly resolution: number;
  /** Phase inputs of the policy (default 8, the paper's count). */
  readonly phases?: number;
  /** The target image from the scene's background (default: the walker drawn at its goal). */
  readonly target?: (background: Array) => Array;
}

export function walkerScene(cfg: WalkerOptions): ControlScene {
  const P = cfg.phases ?? 8;
  const { mesh, system, state, particles: n, triangles: F } = walkerBody();
  const frames = cfg.seconds * FPS;
  const phases = phaseInputs(frames, FPS, P, OMEGA);
  const r = cfg.resolution;
  const camera = renderCamera(WALKER_CAMERA, r, r);
  const background = groundImage(WALKER_CAMERA, r, r);
  const look = {
    faces: np.reshape(np.array(mesh.faces, { dtype: "int32" }), [-1, 3]),
    colors: octantColors(mesh.vertices, [0.5, 0.3, -1]),
  };
  // The walker is planar (z = 0) and its image is drawn from its in-plane coordinates: a membrane
  // without bending is unstable out of its plane, and a depth-dependent image would pass reverse
  // mode a z cotangent that this instability amplifies until float32 overflows (measured: the
  // gradient became NaN after 1.75 s; activations, gravity and contact never excite z).
  const inPlane = np.array([1, 1, 0], { dtype: "float32" });
  const frame = (x: Array) =>
    overBackground(
      softFrame([{ vertices: np.mul(x, inPlane), mesh: look }], { resolution: r, camera, lights: { ambient: 1 } }),
      background,
      "rgb",
    );
  const rest = state.x;
  const goalShift = np.array([cfg.goal, 0, 0], { dtype: "float32" });
  const goalCom = np.add(np.mean(rest, 0), goalShift);
  const target = cfg.target ? cfg.target(background) : frame(np.add(rest, goalShift));
  return {
    name: "control-walker",
    describe:
      `walker of ${n} particles and ${F} triangles, ${cfg.seconds} s at ${FPS} fps × ${SUBSTEPS} substeps, ` +
      `policy 0.2·tanh(W·φ) with ${P} phases (${F * P} weights), ` +
      `goal ${cfg.goal} m to the right, ${r}² images`,
    fps: FPS,
    frames,
    target,
    initialParams: (seed) => linearPolicyInit(F, P, seed),
    positions: (W) =>
      particles.simulate(system, state, {
        dt: 1 / (FPS * SUBSTEPS),
        substeps: SUBSTEPS,
        frames,
        controls: { triActivation: sinusoidPolicy(W, phases, AMPLITUDE) },
        checkpoint: true,
        checkFinite: false,
      }).x,
    frame,
    ...centreOfMassGoal(goalCom, frames),
  };
}
