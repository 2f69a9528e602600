/**
 * Particles with gravity and any mix of springs, tets, membrane triangles, bending, aerodynamics and ground contact.
 */
export type { ParticleSystem, ParticleState, ParticleControls } from "./types.js";
export { potentialEnergy, dissipation, kineticEnergy } from "./energy.js";
export { forces, step, simulate } from "./step.js";
export { particleSystem, particleState, type ParticleSystemOptions } from "./build.js";
export { stableStep } from "./stability.js";
