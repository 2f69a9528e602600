/**
 * Rigid bodies: Newton–Euler with quaternions, mass properties from closed meshes, force windows, ground contact
 * through vertices.
 */
export type { RigidSystem, RigidState, RigidControls, RigidContactPoints, ForceWindows } from "./types.js";
export { step, simulate, wrench, angularMomentum, kineticEnergy } from "./step.js";
export { massProperties, type MassProperties } from "./mass-properties.js";
export {
  meshBody,
  sphereBody,
  rigidSystem,
  type BodySpec,
  type MeshBodyOptions,
  type ForceWindow,
  type RigidSystemOptions,
} from "./build.js";
export {
  quadrotor,
  quadrotorStep,
  rotorWrench,
  simulateQuadrotor,
  type Quadrotor,
  type QuadrotorOptions,
} from "./quadrotor.js";
export { quatFromAxisAngle, quatToMatrix, quatRotate, quatMul, quatFromRotationVector } from "../common/quat.js";
