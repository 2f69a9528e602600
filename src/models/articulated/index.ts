/** Articulated bodies in reduced coordinates (revolute joint trees on a fixed base) and RISP's hand. */
export type { ArticulatedSystem, ArticulatedState, ArticulatedControls, LinkFrames } from "./types.js";
export { articulatedSystem, type JointSpec, type ArticulatedOptions } from "./build.js";
export { linkFrames, pointsInWorld, massPositions } from "./kinematics.js";
export { acceleration, energy, massMatrix, simulate, solveSpd, step } from "./dynamics.js";
export { hand, handMesh, HAND_JOINTS, type Hand, type HandMesh, type HandOptions } from "./hand.js";
