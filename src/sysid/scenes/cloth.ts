/**
 * The thin-shell scene of the `cloth` experiment (paper §4.1.2, Table 3 "per-particle
 * velocity"): a square cloth (membrane triangles + dihedral bending, `src/models/cloth`) thrown
 * upward with a per-particle initial velocity field, flying free under gravity (no ground, no
 * pins), seen obliquely from above so that motion along every axis changes the image.
 *
 * The unknowns are the initial velocities of all particles (3 per particle). A smooth part
 * (translation + rotation) moves and turns the sheet; the per-particle part stretches and folds
 * it, which the membrane damping then dissipates — so the early frames carry most of it and the
 * loss compares every second frame.
 */
import { np } from "../../core/np/index.js";
import type { Array } from "../../core/array.js";
import * as render from "../../render/index.js";
import * as models from "../../models/index.js";
import type { Problem } from "../objective.js";
import { type DeformingMesh, softVideo } from "../video.js";
type ParticleState = models.particles.ParticleState;
type ParticleSystem = models.particles.ParticleSystem;

const { cloth, meshes, particles } = models;

export interface ClothSpec {
  readonly cells: number;
  /** Edge length of one cell (m). */
  readonly cellSize: number;
  /** Centre of the sheet at rest (m). */
  readonly center: readonly [number, number, number];
  /** Area density (kg/m²). */
  readonly density: number;
  readonly frames: number;
  readonly fps: number;
  readonly substeps: number;
  readonly every: number;
  readonly resolution: number;
}

export const defaultCloth = (resolution: number): ClothSpec => ({
  cells: 6,
  cellSize: 0.15,
  center: [0, 0.3, 0],
  density: 1,
  frames: 18,
  fps: 30,
  substeps: 12,
  every: 2,
  resolution,
});

export interface ClothScene {
  readonly spec: ClothSpec;
  readonly particles: number;
  readonly system: ParticleSystem;
  readonly rest: Array;
  /** Rest positions [N·3] on the host. */
  readonly restHost: Float64Array;
  readonly surface: DeformingMesh;
  readonly camera: render.Camera;
  /** Frames rendered for the image loss. */
  readonly rendered: readonly number[];
}

export function buildCloth(spec: ClothSpec): ClothScene {
  const half = (spec.cells * spec.cellSize) / 2;
  const mesh = meshes.clothGrid({
    cells: [spec.cells, spec.cells],
    cellSize: spec.cellSize,
    plane: "xz",
    origin: [spec.center[0] - half, spec.center[1], spec.center[2] + half],
  });
  const n = mesh.vertices.length / 3;
  // dflex's membrane defaults (μ = λ = 100, damping 10) and a soft bending stiffness.
  const { system } = cloth.clothBody(mesh, {
    density: spec.density,
    mu: 100,
    lambda: 100,
    damping: 0.1,
    bending: { stiffness: 0.05, damping: 0.001 },
  });
  return {
    spec,
    particles: n,
    system,
    rest: np.reshape(np.array(mesh.vertices, { dtype: "float32" }), [n, 3]),
    restHost: mesh.vertices,
    surface: {
      faces: np.reshape(np.array(mesh.faces, { dtype: "int32" }), [-1, 3]),
      colors: checkerColors(spec.cells),
    },
    camera: render.perspectiveCamera({ eye: [0.7, 1.9, -1.9], at: [0, 0.3, 0], fovY: 38 }),
    rendered: globalThis.Array.from(
      { length: Math.floor(spec.frames / spec.every) },
      (_, k) => (k + 1) * spec.every - 1,
    ),
  };
}

/**
 * Per-vertex colours of the (cells+1)² grid: a hue per quadrant (so turning and folding show)
 * modulated by a vertex checkerboard (so that each particle's own motion moves the pattern).
 */
function checkerColors(cells: number): Array {
  const rows: number[][] = [];
  for (let j = 0; j <= cells; j++)
    for (let i = 0; i <= cells; i++) {
      const hue = [i * 2 < cells ? 0.9 : 0.3, 0.45, j * 2 < cells ? 0.9 : 0.35];
      const shade = (i + j) % 2 === 0 ? 1 : 0.55;
      rows.push(hue.map((c) => c * shade));
    }
  return np.array(rows, { dtype: "float32" });
}

/** Positions [frames, N, 3] for initial velocities [N, 3] over the first `frames` frames. */
export function clothPositions(scene: ClothScene, velocity: Array, frames = scene.spec.frames): Array {
  const s = scene.spec;
  const state: ParticleState = { x: scene.rest, v: velocity };
  return particles.simulate(scene.system, state, { dt: 1 / (s.fps * s.substeps), substeps: s.substeps, frames }).x;
}

/** The cloth as a sysid problem: the unknown "velocity" is every particle's initial velocity [N·3]. */
export function clothProblem(scene: ClothScene): Problem<Array> {
  return {
    frames: scene.spec.frames,
    simulate: (p, frames) => clothPositions(scene, np.reshape(p.velocity!, [scene.particles, 3]), frames),
    render: (x) => softVideo(x, scene.surface, { resolution: scene.spec.resolution, camera: scene.camera }),
  };
}

/** Host-side velocity field: v_i = base + ω × (x_i − c) + perturbation_i, flattened [N·3]. */
export function velocityField(
  scene: ClothScene,
  base: readonly number[],
  omega: readonly number[],
  perturbation: readonly number[],
): number[] {
  const x = scene.restHost;
  const c = scene.spec.center;
  const out: number[] = [];
  for (let i = 0; i < scene.particles; i++) {
    const r = [x[3 * i]! - c[0], x[3 * i + 1]! - c[1], x[3 * i + 2]! - c[2]];
    const w = [
      omega[1]! * r[2]! - omega[2]! * r[1]!,
      omega[2]! * r[0]! - omega[0]! * r[2]!,
      omega[0]! * r[1]! - omega[1]! * r[0]!,
    ];
    for (let k = 0; k < 3; k++) out.push(base[k]! + w[k]! + perturbation[3 * i + k]!);
  }
  return out;
}
