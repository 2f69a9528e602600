/**
 * The deformable-solid scene of the `deformable` experiment (paper §4.1.2, Table 3): a soft
 * stable-Neo-Hookean beam (`src/models/fem`) clamped at one end, released straight under gravity
 * with a twisting initial velocity, so it sags, swings and twists.
 *
 * Why the twist: bending alone constrains Young's modulus, one combination of μ and λ (the
 * loss has a long valley); torsion depends on the shear modulus only, so the two together pin
 * down μ and λ separately.
 *
 * The mesh is coarse (4×1×1 cubes, 20 particles, 20 tets, 36 surface triangles) so that a
 * gradient through 600 FEM steps and 10 rendered frames takes about a second on a CPU.
 * Explicit integration needs dt below the element's wave-crossing time: with density 3 kg/m³
 * the default μ = λ = 1000 Pa is stable from 12 substeps per 1/30 s frame; we use 20 so that
 * the stiffest materials of the dataset (and optimiser trial points) stay stable.
 */
import { np } from "../../core/np/index.js";
import type { Array } from "../../core/array.js";
import * as render from "../../render/index.js";
import * as models from "../../models/index.js";
import type { Problem } from "../objective.js";
import type { Params } from "../unknowns.js";
import { type DeformingMesh, octantColors, softVideo } from "../video.js";
type ParticleState = models.particles.ParticleState;
type ParticleSystem = models.particles.ParticleSystem;
type TetMesh = models.meshes.TetMesh;

const { fem, meshes, particles } = models;

export interface TwistBeamSpec {
  /** Length × height × depth (m), centred on the origin with the clamped end at x = −length/2. */
  readonly size: readonly [number, number, number];
  readonly cells: readonly [number, number, number];
  /** Uniform density (kg/m³) for lumped masses when `masses` is not given. */
  readonly density: number;
  /** Per-particle masses (kg), one per mesh vertex (clamped ones are ignored); overrides density. */
  readonly masses?: readonly number[];
  /** Lamé parameters of the stable Neo-Hookean model (Pa), used raw as in gradSim. */
  readonly mu: number;
  readonly lambda: number;
  /** Rayleigh damping (Pa·s). */
  readonly damping: number;
  /** Initial twist rate: angular velocity about the beam's axis at the free end (rad/s), linear in x. */
  readonly twist: number;
  readonly frames: number;
  readonly fps: number;
  readonly substeps: number;
  /** Every `every`-th frame is rendered for the image loss. */
  readonly every: number;
  readonly resolution: number;
}

export const defaultTwistBeam = (resolution: number): TwistBeamSpec => ({
  size: [1, 0.25, 0.25],
  cells: [4, 1, 1],
  density: 3,
  mu: 1000,
  lambda: 1000,
  damping: 2,
  twist: 6,
  frames: 30,
  fps: 30,
  substeps: 20,
  every: 3,
  resolution,
});

export interface TwistBeamScene {
  readonly spec: TwistBeamSpec;
  readonly mesh: TetMesh;
  readonly system: ParticleSystem;
  readonly state: ParticleState;
  /** Indices of the free (unclamped) particles: the per-particle mass unknowns. */
  readonly free: readonly number[];
  /** Lumped masses of the uniform-density beam (host). */
  readonly lumped: readonly number[];
  readonly surface: DeformingMesh;
  readonly camera: render.Camera;
  /** Frames rendered for the image loss. */
  readonly rendered: readonly number[];
}

export function buildTwistBeam(spec: TwistBeamSpec): TwistBeamScene {
  const [L, H, D] = spec.size;
  const mesh = meshes.tetBeam(L, H, D, spec.cells, [-L / 2, -H / 2, -D / 2]);
  const n = mesh.vertices.length / 3;
  const clamped = (i: number) => mesh.vertices[3 * i]! < -L / 2 + 1e-9;
  const pinned = globalThis.Array.from({ length: n }, (_, i) => i).filter(clamped);
  const free = globalThis.Array.from({ length: n }, (_, i) => i).filter((i) => !clamped(i));
  const lumped = globalThis.Array.from(fem.lumpedMasses(mesh, spec.density));
  const { system } = fem.softBody(mesh, {
    density: spec.density,
    mu: spec.mu,
    lambda: spec.lambda,
    damping: spec.damping,
    pinned,
  });
  const masses = spec.masses ?? lumped;
  if (masses.length !== n) throw new Error(`twist beam: ${masses.length} masses for ${n} particles.`);
  // v = ω(x) e_x × r with ω growing linearly from 0 at the clamp to `twist` at the tip.
  const v = new Float64Array(3 * n);
  for (let i = 0; i < n; i++) {
    const w = (spec.twist * (mesh.vertices[3 * i]! + L / 2)) / L;
    v[3 * i + 1] = -w * mesh.vertices[3 * i + 2]!;
    v[3 * i + 2] = w * mesh.vertices[3 * i + 1]!;
  }
  const surface = meshes.tetSurface(mesh);
  return {
    spec,
    mesh,
    free,
    lumped,
    system: { ...system, mass: np.array([...masses], { dtype: "float32" }) },
    state: {
      x: np.reshape(np.array(mesh.vertices, { dtype: "float32" }), [n, 3]),
      v: np.reshape(np.array(v, { dtype: "float32" }), [n, 3]),
    },
    surface: {
      faces: np.reshape(np.array(surface, { dtype: "int32" }), [-1, 3]),
      colors: octantColors(mesh.vertices, [0, 0, 0]),
    },
    camera: render.perspectiveCamera({ eye: [0.45, 0.35, -1.25], at: [0.05, -0.15, 0], fovY: 50 }),
    rendered: globalThis.Array.from(
      { length: Math.floor(spec.frames / spec.every) },
      (_, k) => (k + 1) * spec.every - 1,
    ),
  };
}

/** Overrides of the scene's physical parameters as Arrays (absent: the scene's own values). */
export interface BeamParams {
  readonly mu?: Array;
  readonly lambda?: Array;
  /** Masses of the free particles [free.length]. */
  readonly freeMass?: Array;
}

/** Positions of every particle after each of the first `frames` frames, [frames, N, 3]. */
export function beamPositions(scene: TwistBeamScene, p: BeamParams, frames = scene.spec.frames): Array {
  const tets = scene.system.tets!;
  const nt = tets.mu.shape[0]!;
  let mass = scene.system.mass;
  if (p.freeMass) {
    // Scatter the free masses into the full vector; clamped particles keep theirs (they never accelerate).
    const idx = np.array([...scene.free], { dtype: "int32" });
    mass = np.add(
      np.mul(
        mass,
        np.array(
          scene.lumped.map((_, i) => (scene.free.includes(i) ? 0 : 1)),
          { dtype: "float32" },
        ),
      ),
      np.scatterAdd(np.zerosLike(mass), idx, p.freeMass),
    );
  }
  const system: ParticleSystem = {
    ...scene.system,
    mass,
    tets: {
      ...tets,
      mu: p.mu ? np.broadcastTo(p.mu, [nt]) : tets.mu,
      lambda: p.lambda ? np.broadcastTo(p.lambda, [nt]) : tets.lambda,
    },
  };
  const s = scene.spec;
  return particles.simulate(system, scene.state, { dt: 1 / (s.fps * s.substeps), substeps: s.substeps, frames }).x;
}

/** Frames [K, H, W, 4] of beam positions [K, N, 3]. */
export const beamVideo = (scene: TwistBeamScene, positions: Array): Array =>
  softVideo(positions, scene.surface, { resolution: scene.spec.resolution, camera: scene.camera });

/** The beam as a sysid problem whose unknowns `p` are overrides of its parameters (mu, lambda, mass). */
export function beamProblem(scene: TwistBeamScene, params: (p: Params) => BeamParams): Problem<Array> {
  return {
    frames: scene.spec.frames,
    simulate: (p, frames) => beamPositions(scene, params(p), frames),
    render: (x) => beamVideo(scene, x),
  };
}
