/**
 * A rigid-body video scene: one object from the rigid set with a pose and velocity, a known
 * impulse (a constant force over a short window, gradSim's ConstantForce), optional ground
 * contact, and a camera. Unknown physical parameters (mass, contact coefficients) enter as
 * Arrays, so the rollout is differentiable with respect to them.
 *
 * Mass is the density scale of a known shape: inertia = mass × (inertia per kg of the shape).
 */
import { jit, np, render, models, type Array } from "../../src/index.js";
import type { RigidState, RigidSystem } from "../../src/models/rigid/types.js";
import type { BodySpec } from "../../src/models/rigid/build.js";
import { shapeMeshes, type RigidShape, type ShapeMeshes } from "./rigid-shapes.js";

const { rigid, contact } = models;

export type Vec3 = readonly [number, number, number];
export type Quat = readonly [number, number, number, number];

export interface ContactParams { readonly ke: number; readonly kd: number; readonly kf: number; readonly mu: number }

export interface CameraSpec {
  /** SoftRas angles (degrees) around the point `at`. */
  readonly distance: number;
  readonly elevation: number;
  readonly azimuth: number;
  readonly at: Vec3;
  readonly fovY: number;
}

export interface RigidSceneSpec {
  readonly shape: RigidShape;
  readonly scale: Vec3;
  /** The true mass (kg). */
  readonly mass: number;
  readonly position: Vec3;
  readonly rotation: Quat;
  readonly velocity: Vec3;
  readonly angularVelocity: Vec3;
  /** Known impulse: `force` (N, world frame) at `point` (body frame about the COM) for `duration` s from t = 0. */
  readonly impulse: { readonly force: Vec3; readonly point: Vec3; readonly duration: number };
  readonly gravity: Vec3;
  /** Ground plane y = 0 with these true coefficients, or none. */
  readonly contact: ContactParams | null;
  readonly frames: number;
  readonly fps: number;
  readonly substeps: number;
  readonly camera: CameraSpec;
  /** Square image side in pixels. */
  readonly resolution: number;
}

/** The unknowns of a rigid scene as (constrained) Arrays; absent ones take the scene's true values. */
export interface RigidParams {
  readonly mass?: Array;
  readonly ke?: Array;
  readonly kd?: Array;
  readonly kf?: Array;
  readonly mu?: Array;
}

export interface RigidScene {
  readonly spec: RigidSceneSpec;
  readonly meshes: ShapeMeshes;
  /** Inertia about the COM per kg of mass, row-major 3×3. */
  readonly unitInertia: readonly number[];
  /** Rendered vertices about the COM in the body frame [V, 3] (also the ground-contact points) and faces int32 [F, 3]. */
  readonly local: Array;
  readonly localPoints: readonly number[];
  readonly faces: Array;
  /** Per-face albedo [F, 3], coloured by body-frame normal so rotation is visible. */
  readonly faceColors: Array;
  readonly camera: render.Camera;
  readonly dt: number;
}

/** Prepare a scene: mass properties of the shape, render mesh about the COM, camera. */
export function buildScene(spec: RigidSceneSpec): RigidScene {
  const meshes = shapeMeshes(spec.shape, spec.scale);
  const unit = rigid.meshBody(meshes.physics, { density: 1 });
  // meshBody places the mesh's COM at the origin of the body frame; shift the visual mesh the same way.
  const com = [0, 1, 2].map((d) => meshes.physics.vertices[d]! - unit.contactPoints[d]!);
  const v = meshes.visual.vertices;
  const localFlat = globalThis.Array.from(v, (c, i) => c - com[i % 3]!);
  const local = np.reshape(np.array(localFlat, { dtype: "float32" }), [v.length / 3, 3]);
  const faces = np.reshape(np.array(meshes.visual.faces, { dtype: "int32" }), [meshes.visual.faces.length / 3, 3]);
  return {
    spec, meshes, local, faces, localPoints: localFlat,
    unitInertia: unit.inertia.map((x) => x / unit.mass),
    faceColors: normalColours(localFlat, meshes.visual.faces),
    camera: cameraFor(spec.camera, 1),
    dt: 1 / (spec.fps * spec.substeps),
  };
}

function normalColours(v: readonly number[], f: Int32Array): Array {
  const rows: number[][] = [];
  for (let k = 0; k < f.length; k += 3) {
    const p = [0, 1, 2].map((j) => [0, 1, 2].map((d) => v[3 * f[k + j]! + d]!)) as number[][];
    const e1 = p[1]!.map((c, d) => c - p[0]![d]!), e2 = p[2]!.map((c, d) => c - p[0]![d]!);
    const n = [e1[1]! * e2[2]! - e1[2]! * e2[1]!, e1[2]! * e2[0]! - e1[0]! * e2[2]!, e1[0]! * e2[1]! - e1[1]! * e2[0]!];
    const len = Math.hypot(n[0]!, n[1]!, n[2]!) || 1;
    rows.push(n.map((c) => 0.55 + 0.4 * (c / len)));
  }
  return np.array(rows, { dtype: "float32" });
}

/** A look-at camera at SoftRas angles around `at`. */
export function cameraFor(c: CameraSpec, aspect: number): render.Camera {
  const el = (c.elevation * Math.PI) / 180, az = (c.azimuth * Math.PI) / 180;
  const eye = [
    c.at[0] + c.distance * Math.cos(el) * Math.sin(az),
    c.at[1] + c.distance * Math.sin(el),
    c.at[2] - c.distance * Math.cos(el) * Math.cos(az),
  ];
  return render.perspectiveCamera({ eye, at: [...c.at], fovY: c.fovY, aspect, near: 1, far: 30 });
}

const f32 = (x: unknown): Array => np.array(x, { dtype: "float32" });

/**
 * Width (m) of the contact's smooth penetration hinge. It must exceed the distance a contact
 * point travels in one step (up to ≈ 3 m/s × 1/480 s ≈ 6 mm on landing): with the model's
 * default 1e-4 the onset of contact happens inside one step, the discrete rollout is nearly
 * discontinuous in the parameters, and its exact derivative disagrees in sign with finite
 * differences for ke, kf and μ. At 2 cm gradients and central differences agree to ~1%; the
 * price is a softer touch-down (the object rests ~1 cm above the plane, a fraction of a pixel).
 */
export const CONTACT_SMOOTHING = 0.02;

/** The rigid system for parameter values `p` (unknowns as Arrays, everything else from the spec). */
export function systemFor(scene: RigidScene, p: RigidParams): { system: RigidSystem; state: RigidState } {
  const s = scene.spec;
  const end = s.impulse.duration - scene.dt / 2; // active on exactly duration/dt steps
  const ground = s.contact ? contact.ground({ ke: s.contact.ke, kd: s.contact.kd, kf: s.contact.kf, mu: s.contact.mu, smoothing: CONTACT_SMOOTHING }) : undefined;
  const body: BodySpec = {
    mass: s.mass, inertia: scene.unitInertia.map((x) => x * s.mass),
    contactPoints: scene.localPoints, contactRadius: 0,
    position: s.position, rotation: s.rotation, velocity: s.velocity, angularVelocity: s.angularVelocity,
  };
  const built = rigid.rigidSystem([body], {
    gravity: s.gravity, ...(ground ? { ground } : {}),
    forceWindows: [{ body: 0, force: s.impulse.force, point: s.impulse.point, start: 0, end }],
  });
  const mass = p.mass ? np.reshape(p.mass, [1]) : built.system.mass;
  const unitI = np.reshape(f32(scene.unitInertia), [1, 3, 3]);
  const g = built.system.ground;
  const system: RigidSystem = {
    ...built.system,
    mass,
    inertia: np.mul(np.reshape(mass, [1, 1, 1]), unitI),
    ...(g ? { ground: { ...g, ke: p.ke ?? g.ke, kd: p.kd ?? g.kd, kf: p.kf ?? g.kf, mu: p.mu ?? g.mu } } : {}),
  };
  return { system, state: built.state };
}

/** Per-frame states (leading frames axis) for parameter values `p`. */
export function simulateScene(scene: RigidScene, p: RigidParams): RigidState {
  const { system, state } = systemFor(scene, p);
  return rigid.simulate(system, state, { dt: scene.dt, substeps: scene.spec.substeps, frames: scene.spec.frames });
}

/** World positions of the rendered vertices [T, V, 3] from per-frame states of the scene's one body. */
export function worldVertices(scene: RigidScene, states: RigidState): Array {
  const R = rigid.quatToMatrix(np.squeeze(states.q, 1)); // [T, 3, 3]
  const x = np.squeeze(states.x, 1); // [T, 3]
  return np.add(np.matmul(scene.local, np.transpose(R, [0, 2, 1])), np.expandDims(x, 1));
}

/** Keep frames `indices` (static) of a [T, ...] array. */
export const takeFrames = (x: Array, indices: readonly number[]): Array =>
  np.take(x, np.array(indices, { dtype: "int32" }), 0);

/** World vertices of the frames in `indices` for parameters `p`: the physics half of render(simulate(θ)). */
export const sceneVertices = (scene: RigidScene, p: RigidParams, indices: readonly number[]): Array =>
  takeFrames(worldVertices(scene, simulateScene(scene, p)), indices);

const compiled = new WeakMap<RigidScene, Map<string, (p: RigidParams) => Array>>();
/**
 * `sceneVertices` for fixed frame indices as a jitted function (cached per scene and indices):
 * one compiled rollout instead of a few thousand small dispatches per call on WebGPU.
 */
export function verticesFn(scene: RigidScene, indices: readonly number[]): (p: RigidParams) => Array {
  let m = compiled.get(scene);
  if (!m) compiled.set(scene, (m = new Map()));
  const key = indices.join(",");
  let f = m.get(key);
  if (!f) m.set(key, (f = jit((p: RigidParams) => sceneVertices(scene, p, indices))));
  return f;
}

/** Parameter values as float32 scalar Arrays. */
export const paramArrays = (v: Partial<Record<keyof RigidParams, number>>): RigidParams =>
  Object.fromEntries(Object.entries(v).map(([k, x]) => [k, np.array(x, { dtype: "float32" })]));
