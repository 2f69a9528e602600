/** Cloth / thin shells: membrane triangles, dihedral bending, aerodynamic lift and drag, pinned particles. */
import type { DType } from "../../core/dtype.js";
import type { GroundContact } from "../contact/types.js";
import { particleState, particleSystem } from "../particles/build.js";
import type { ParticleState, ParticleSystem } from "../particles/types.js";
import type { TriMesh } from "../meshes/types.js";
import {
  bendingElements,
  clothMasses,
  triangleElements,
  type BendingMaterial,
  type TriangleMaterial,
} from "./build.js";

export type { TriangleElements, BendingElements } from "./types.js";
export { membraneEnergy, membraneDissipation, membraneForces } from "./membrane.js";
export { bendingEnergy, bendingDissipation, bendingForces, dihedralAngle } from "./bending.js";
export { aeroForces } from "./aero.js";
export {
  triangleElements,
  bendingElements,
  clothMasses,
  triangleRestShape,
  type TriangleMaterial,
  type BendingMaterial,
} from "./build.js";

export interface ClothOptions extends TriangleMaterial {
  /** Area density (kg/m²); default 1. */
  readonly density?: number;
  /** Bending material; `false` for no bending. */
  readonly bending?: BendingMaterial | false;
  readonly pinned?: readonly number[];
  readonly gravity?: readonly [number, number, number];
  readonly ground?: GroundContact;
  readonly velocity?: readonly [number, number, number];
  readonly dtype?: DType;
}

/** A cloth: particle system with membrane triangles and bending hinges, and its rest state. */
export function clothBody(mesh: TriMesh, o: ClothOptions = {}): { system: ParticleSystem; state: ParticleState } {
  const dtype = o.dtype ?? "float32";
  const system = particleSystem({
    mass: clothMasses(mesh, o.density ?? 1),
    pinned: o.pinned,
    gravity: o.gravity,
    dtype,
    triangles: triangleElements(mesh, { ...o, dtype }),
    bending: o.bending === false ? undefined : bendingElements(mesh, { ...(o.bending ?? {}), dtype }),
    ground: o.ground,
  });
  return { system, state: particleState(mesh.vertices, { velocity: o.velocity, dtype }) };
}
