/** Tetrahedral FEM with the stable Neo-Hookean material (per-element μ, λ, damping, activation). */
import type { DType } from "../../core/dtype.js";
import type { GroundContact } from "../contact/types.js";
import { particleState, particleSystem } from "../particles/build.js";
import type { ParticleState, ParticleSystem } from "../particles/types.js";
import type { TetMesh } from "../meshes/types.js";
import { lumpedMasses, tetElements, type TetMaterial } from "./build.js";

export type { TetElements } from "./types.js";
export {
  elasticEnergy,
  energyDensity,
  dissipation,
  lameFromStableNeoHookean,
  stableNeoHookeanFromLame,
  stableNeoHookeanFromYoung,
} from "./energy.js";
export { tetForces } from "./forces.js";
export { invariants, deformationGradientT, restOffset } from "./kinematics.js";
export { tetElements, lumpedMasses, restShape, type TetMaterial } from "./build.js";

export interface SoftBodyOptions extends TetMaterial {
  /** Density (kg/m³) for lumped masses; default 1000. */
  readonly density?: number;
  readonly pinned?: readonly number[];
  readonly gravity?: readonly [number, number, number];
  readonly ground?: GroundContact;
  readonly velocity?: readonly [number, number, number];
  readonly dtype?: DType;
}

/** A deformable solid: particle system with tets and lumped masses, and its rest state. */
export function softBody(mesh: TetMesh, o: SoftBodyOptions = {}): { system: ParticleSystem; state: ParticleState } {
  const dtype = o.dtype ?? "float32";
  const system = particleSystem({
    mass: lumpedMasses(mesh, o.density ?? 1000),
    pinned: o.pinned,
    gravity: o.gravity,
    dtype,
    tets: tetElements(mesh, { ...o, dtype }),
    ground: o.ground,
  });
  return { system, state: particleState(mesh.vertices, { velocity: o.velocity, dtype }) };
}
