/**
 * A soft cantilever beam (stable Neo-Hookean FEM, `src/models/fem`) clamped at one end and
 * released straight under gravity, so it sags and swings; the paper's Fig. 4b / 11a scene for
 * the loss landscape over the Lamé parameters (both 1000 in the ground truth).
 */
import { np } from "../../core/np/index.js";
import type { Array } from "../../core/array.js";
import { vmap } from "../../transforms/index.js";
import * as render from "../../render/index.js";
import * as models from "../../models/index.js";
import { SCENE_LIGHTS, premultiply, sigmaFor } from "../video.js";
import { type AngleCamera, renderCamera } from "./camera.js";
type ParticleState = models.particles.ParticleState;
type ParticleSystem = models.particles.ParticleSystem;

const { fem, meshes, particles } = models;

export interface BeamSpec {
  /** Length × height × depth (m) and cells along each. */
  readonly size: readonly [number, number, number];
  readonly cells: readonly [number, number, number];
  /** kg/m³: light, so that μ = λ = 1000 Pa gives a visible sag (gradSim's demo_fem uses 10). */
  readonly density: number;
  readonly mu: number;
  readonly lambda: number;
  readonly damping: number;
  readonly frames: number;
  readonly fps: number;
  readonly substeps: number;
  readonly resolution: number;
  readonly camera: AngleCamera;
}

/**
 * A 0.6 m beam: its static tip deflection ≈ 1.5ρgL⁴/(E h²) ≈ 0.2 m at μ = λ = 1000 (E = 2500 Pa), and it swings about
 * that.
 */
export const defaultBeam = (resolution: number, frames = 60): BeamSpec => ({
  size: [0.6, 0.2, 0.2],
  cells: [6, 2, 2],
  density: 10,
  mu: 1000,
  lambda: 1000,
  damping: 1,
  frames,
  fps: 30,
  substeps: 20,
  resolution,
  camera: { distance: 1.8, elevation: 15, azimuth: 0, at: [0.3, -0.1, 0.1], fovY: 40 },
});

export interface BeamScene {
  readonly spec: BeamSpec;
  readonly system: ParticleSystem;
  readonly state: ParticleState;
  readonly faces: Array;
  readonly faceColors: Array;
  readonly camera: render.Camera;
  readonly tetCount: number;
}

export function buildBeam(spec: BeamSpec): BeamScene {
  const mesh = meshes.tetBeam(spec.size[0], spec.size[1], spec.size[2], spec.cells);
  const pinned: number[] = [];
  for (let i = 0; i < mesh.vertices.length / 3; i++) if (mesh.vertices[3 * i]! < 1e-9) pinned.push(i);
  const { system, state } = fem.softBody(mesh, {
    density: spec.density,
    mu: spec.mu,
    lambda: spec.lambda,
    damping: spec.damping,
    pinned,
    gravity: [0, -9.8, 0],
  });
  const surface = meshes.tetSurface(mesh);
  const F = surface.length / 3;
  // Alternate two warm tones along the beam so bending is visible in the shading.
  const colours = globalThis.Array.from({ length: F }, (_, f) => {
    const x =
      (mesh.vertices[3 * surface[3 * f]!]! +
        mesh.vertices[3 * surface[3 * f + 1]!]! +
        mesh.vertices[3 * surface[3 * f + 2]!]!) /
      3;
    return Math.floor((x / spec.size[0]) * spec.cells[0]) % 2 === 0 ? [0.85, 0.55, 0.3] : [0.75, 0.4, 0.25];
  });
  return {
    spec,
    system,
    state,
    tetCount: mesh.tets.length / 4,
    faces: np.reshape(np.array(surface, { dtype: "int32" }), [F, 3]),
    faceColors: np.array(colours, { dtype: "float32" }),
    camera: renderCamera(spec.camera, spec.resolution, spec.resolution),
  };
}

/** Vertex positions [T, N, 3] for Lamé parameters (μ, λ) as scalar Arrays. */
export function beamVertices(b: BeamScene, mu: Array, lambda: Array): Array {
  const tets = b.system.tets!;
  const system: ParticleSystem = {
    ...b.system,
    tets: { ...tets, mu: np.broadcastTo(mu, [b.tetCount]), lambda: np.broadcastTo(lambda, [b.tetCount]) },
  };
  const dt = 1 / (b.spec.fps * b.spec.substeps);
  return particles.simulate(system, b.state, { dt, substeps: b.spec.substeps, frames: b.spec.frames }).x;
}

/** RGBA frames [T, H, W, 4] of the beam (colour premultiplied by coverage, as the rigid videos). */
export function renderBeam(b: BeamScene, vertices: Array): Array {
  const r = b.spec.resolution;
  const frame = (v: Array): Array => {
    const rgba = render.render(
      { vertices: v, faces: b.faces, faceColors: b.faceColors },
      b.camera,
      SCENE_LIGHTS,
      undefined,
      {
        width: r,
        height: r,
        shading: "flat",
        softras: { sigma: sigmaFor(r), gamma: 0.05, distEps: 1e-6, faceCulling: "back" },
      },
    );
    return premultiply(rgba);
  };
  return vmap(frame)(vertices);
}
