/**
 * Pendulum scenes of the `pendulum` and `double-pendulum` experiments (paper appendix C.3:
 * "estimate the length(s) of the rod(s) and initial angular displacement(s) by comparing the
 * rendered videos with the true videos"): rods and bobs rendered as meshes swinging in the
 * x–y plane in front of the camera, driven by `src/models/pendulum` (RK4).
 *
 * The rod of length L is a unit box stretched along its axis and rotated by θ about the pivot;
 * the bob is an icosahedron at the rod's end — both differentiable in L and θ(t).
 */
import { np } from "../../core/np/index.js";
import type { Array } from "../../core/array.js";
import { vmap } from "../../transforms/index.js";
import * as render from "../../render/index.js";
import * as models from "../../models/index.js";
import type { Problem } from "../objective.js";
import { type DeformingMesh, softFrame } from "../video.js";

const { pendulum } = models;

export interface PendulumSpec {
  /** Number of links: 1 (simple) or 2 (double). */
  readonly links: 1 | 2;
  readonly pivot: readonly [number, number, number];
  readonly mass: readonly number[];
  readonly gravity: number;
  /** Viscous damping per joint. */
  readonly damping: readonly number[];
  readonly rodWidth: number;
  readonly bobRadius: number;
  readonly frames: number;
  readonly fps: number;
  /** RK4 steps per frame. */
  readonly substeps: number;
  readonly every: number;
  readonly resolution: number;
  /** Camera eye and look-at point (m), vertical field of view (degrees). */
  readonly camera: {
    readonly eye: readonly [number, number, number];
    readonly at: readonly [number, number, number];
    readonly fovY: number;
  };
}

export const defaultPendulum = (resolution: number): PendulumSpec => ({
  links: 1,
  pivot: [0, 0.8, 0],
  mass: [1],
  gravity: 9.8,
  damping: [0.1],
  rodWidth: 0.07,
  bobRadius: 0.16,
  frames: 45,
  fps: 30,
  substeps: 4,
  every: 3,
  resolution,
  camera: { eye: [0, 0.15, -3.6], at: [0, 0.15, 0], fovY: 40 },
});

export const defaultDoublePendulum = (resolution: number): PendulumSpec => ({
  links: 2,
  pivot: [0, 0.9, 0],
  mass: [1, 1],
  gravity: 9.8,
  damping: [0, 0],
  rodWidth: 0.07,
  bobRadius: 0.13,
  frames: 30,
  fps: 30,
  substeps: 8,
  every: 2,
  resolution,
  camera: { eye: [0, 0.3, -4.4], at: [0, 0.3, 0], fovY: 45 },
});

export interface PendulumScene {
  readonly spec: PendulumSpec;
  readonly camera: render.Camera;
  readonly rod: { readonly local: Array; readonly mesh: DeformingMesh };
  readonly bob: { readonly local: Array; readonly faces: Array; readonly colors: readonly Array[] };
  /** Frames rendered for the image loss. */
  readonly rendered: readonly number[];
}

/** Bob colours per link (two halves each, so the bob's turning shows): warm for the first, cool for the second. */
const BOB_COLOURS = [
  [
    [0.95, 0.8, 0.3],
    [0.9, 0.35, 0.3],
  ],
  [
    [0.4, 0.85, 0.95],
    [0.3, 0.4, 0.95],
  ],
] as const;

export function buildPendulum(spec: PendulumSpec): PendulumScene {
  // Rod: unit-length box hanging from the origin (y from −1 to 0), scaled by L along y at render time.
  const w = spec.rodWidth / 2;
  const box = render.boxData([w, 0.5, w], [0, -0.5, 0]);
  const ico = render.icosphereData(0, spec.bobRadius);
  // Shade the box and bob ends differently so rotation of the parts is visible.
  const rodColours = box.positions.map((p) => (p[1]! > -0.5 ? [0.85, 0.85, 0.85] : [0.55, 0.55, 0.6]));
  const f32 = (rows: readonly (readonly number[])[]) =>
    np.array(
      rows.map((r) => [...r]),
      { dtype: "float32" },
    );
  const bobColours = BOB_COLOURS.map(([a, b]) => f32(ico.positions.map((p) => (p[0]! > 0 ? a : b))));
  return {
    spec,
    camera: render.perspectiveCamera({ eye: [...spec.camera.eye], at: [...spec.camera.at], fovY: spec.camera.fovY }),
    rod: {
      local: f32(box.positions),
      mesh: { faces: np.array(box.faces, { dtype: "int32" }), colors: f32(rodColours) },
    },
    bob: { local: f32(ico.positions), faces: np.array(ico.faces, { dtype: "int32" }), colors: bobColours },
    rendered: globalThis.Array.from(
      { length: Math.floor(spec.frames / spec.every) },
      (_, k) => (k + 1) * spec.every - 1,
    ),
  };
}

/** Unknowns of a pendulum: lengths [links] and initial angles [links] (rad, from the downward vertical). */
export interface PendulumParams {
  readonly length: Array;
  readonly theta0: Array;
}

/** Joint angles θ [frames, links] (the state after each of the first `frames` frames). */
export function pendulumAngles(scene: PendulumScene, p: PendulumParams, frames = scene.spec.frames): Array {
  const s = scene.spec;
  const opts = { dt: 1 / (s.fps * s.substeps), substeps: s.substeps, frames };
  const f32 = (x: readonly number[]) => np.array([...x], { dtype: "float32" });
  if (s.links === 1) {
    const system = {
      length: np.reshape(p.length, []),
      mass: f32(s.mass).reshape([]),
      gravity: np.array(s.gravity, { dtype: "float32" }),
      damping: f32(s.damping).reshape([]),
    };
    const states = pendulum.simulateSimple(
      system,
      { theta: np.reshape(p.theta0, []), omega: np.zeros([], { dtype: "float32" }) },
      opts,
    );
    return np.reshape(states.theta, [frames, 1]);
  }
  const system = {
    length: p.length,
    mass: f32(s.mass),
    gravity: np.array(s.gravity, { dtype: "float32" }),
    damping: f32(s.damping),
  };
  return pendulum.simulateDouble(system, { theta: p.theta0, omega: np.zeros([2], { dtype: "float32" }) }, opts).theta;
}

/** Bob centres [frames, links, 3]: each link hangs from the previous bob (or the pivot). */
export function bobPositions(scene: PendulumScene, length: Array, theta: Array): Array {
  const rel = np.stack([np.mul(length, np.sin(theta)), np.neg(np.mul(length, np.cos(theta))), np.zerosLike(theta)], -1);
  return np.add(np.cumsum(rel, -2), np.array([...scene.spec.pivot], { dtype: "float32" }));
}

/** One frame: every rod (from its hinge to its bob) and bob, for rod lengths [links] and angles θ [links]. */
function frameParts(scene: PendulumScene, length: Array, theta: Array): { vertices: Array; mesh: DeformingMesh }[] {
  const links = scene.spec.links;
  const bobs = bobPositions(scene, length, theta); // [links, 3]
  const hinges = np.concatenate(
    [np.reshape(np.array([...scene.spec.pivot], { dtype: "float32" }), [1, 3]), np.split(bobs, [links - 1], 0)[0]!],
    0,
  );
  const parts: { vertices: Array; mesh: DeformingMesh }[] = [];
  const [lx, ly, lz] = np.split(scene.rod.local, 3, -1) as [Array, Array, Array];
  for (let k = 0; k < links; k++) {
    const L = np.take(length, k),
      th = np.take(theta, k);
    const c = np.cos(th),
      s = np.sin(th);
    // Rotate (x, y·L, z) by θ about z: (x c − yL s, x s + yL c, z), then move to the hinge.
    const yl = np.mul(ly, L);
    const rotated = np.concatenate(
      [np.sub(np.mul(lx, c), np.mul(yl, s)), np.add(np.mul(lx, s), np.mul(yl, c)), lz],
      -1,
    );
    parts.push({ vertices: np.add(rotated, np.take(hinges, k, 0)), mesh: scene.rod.mesh });
    parts.push({
      vertices: np.add(scene.bob.local, np.take(bobs, k, 0)),
      mesh: { faces: scene.bob.faces, colors: scene.bob.colors[k]! },
    });
  }
  return parts;
}

/** A pendulum's state per frame: the rod lengths (constant) and the joint angles, each [T, links]. */
export interface PendulumStates {
  readonly length: Array;
  readonly theta: Array;
}

/** Frames [K, H, W, 4] of K states. */
export const pendulumVideo = (scene: PendulumScene, states: PendulumStates): Array =>
  vmap((L: Array, th: Array) =>
    softFrame(frameParts(scene, L, th), { resolution: scene.spec.resolution, camera: scene.camera }),
  )(states.length, states.theta);

/**
 * The pendulum as a sysid problem: unknowns L (rod lengths) and theta0 (initial angles); 3-D
 * supervision compares the bob positions.
 */
export function pendulumProblem(scene: PendulumScene): Problem<PendulumStates> {
  return {
    frames: scene.spec.frames,
    simulate: (p, frames) => {
      const theta = pendulumAngles(scene, { length: p.L!, theta0: p.theta0! }, frames);
      return { length: np.broadcastTo(p.L!, theta.shape), theta };
    },
    render: (states) => pendulumVideo(scene, states),
    measure: (states) => bobPositions(scene, states.length, states.theta),
  };
}
