/**
 * Potential energy of a particle system: gravity plus every conservative element term. The
 * conservative part of `forces` equals −∂energy/∂x (property-tested), and the damping part
 * equals −∂dissipation/∂v.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { bendingDissipation, bendingEnergy } from "../cloth/bending.js";
import { membraneDissipation, membraneEnergy } from "../cloth/membrane.js";
import { groundEnergy } from "../contact/ground.js";
import { dissipation as tetDissipation, elasticEnergy } from "../fem/energy.js";
import { springEnergy } from "../springs/energy.js";
import type { ParticleControls, ParticleSystem } from "./types.js";
import { dot } from "../common/vec.js";
import { gatherVertices, vertexSlots } from "../common/elements.js";

/** U(x) = −Σ m·g·x (free particles) + springs + tets + membrane + bending + ground penalty. */
export function potentialEnergy(sys: ParticleSystem, x: Array, controls: ParticleControls | null = null): Array {
  const free = np.sub(1, sys.fixed);
  let u = np.neg(np.sum(np.mul(np.mul(sys.mass, free), dot(x, sys.gravity))));
  if (sys.springs) u = np.add(u, springEnergy(sys.springs, x));
  if (sys.tets) u = np.add(u, elasticEnergy(sys.tets, x, controls?.tetActivation ?? sys.tets.activation));
  if (sys.triangles)
    u = np.add(u, membraneEnergy(sys.triangles, x, controls?.triActivation ?? sys.triangles.activation));
  if (sys.bending) u = np.add(u, bendingEnergy(sys.bending, x, controls?.restAngle ?? sys.bending.restAngle));
  if (sys.ground) u = np.add(u, groundEnergy(sys.ground, x, sys.radius));
  return u;
}

/** Rayleigh dissipation of the internal damping (springs, tets, membrane, bending). */
export function dissipation(sys: ParticleSystem, x: Array, v: Array): Array {
  let d = np.zerosLike(np.sum(v));
  if (sys.springs) {
    const s = sys.springs;
    const [xi, xj] = vertexSlots(gatherVertices(x, s.indices));
    const [vi, vj] = vertexSlots(gatherVertices(v, s.indices));
    const dx = np.sub(xi!, xj!);
    const rate = np.div(dot(dx, np.sub(vi!, vj!)), np.sqrt(np.add(dot(dx, dx), 1e-24)));
    d = np.add(d, np.sum(np.mul(np.mul(0.5, s.damping), np.square(rate))));
  }
  if (sys.tets) d = np.add(d, tetDissipation(sys.tets, x, v));
  if (sys.triangles) d = np.add(d, membraneDissipation(sys.triangles, x, v));
  if (sys.bending) d = np.add(d, bendingDissipation(sys.bending, x, v));
  return d;
}

/** Kinetic energy ½Σ m|v|². */
export const kineticEnergy = (sys: ParticleSystem, v: Array): Array => np.mul(0.5, np.sum(np.mul(sys.mass, dot(v, v))));
