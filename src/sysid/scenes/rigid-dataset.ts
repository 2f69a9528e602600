/**
 * The rigid-body scenes of the paper's Tables 1 and 2 (appendix G protocol, scaled to what a
 * 64² video can show): an object from the rigid set with random anisotropic dimensions, pose and
 * velocity, density in [2, 12] kg/m³, a known impulse, 60 frames at 30 fps. The built-in
 * default scene of `npm run demo` is one fixed draw of the same kind. rigid-task.ts makes the
 * tables' dataset tasks of these draws.
 */
import type { Rng } from "../../core/host-rng.js";
import * as models from "../../models/index.js";
import type { AngleCamera, Vec3 } from "./camera.js";
import type { ContactParams, RigidSceneSpec } from "./rigid.js";
import { RIGID_SHAPES, shapeMeshes, type RigidShape } from "./shapes.js";

/** Density range of the paper's dataset and of its initial guesses (kg/m³). */
export const RIGID_DENSITY_RANGE = [2, 12] as const;
/** Frames and frame rate of every video of the dataset (2 s). */
export const RIGID_FRAMES = 60,
  RIGID_FPS = 30;
/** The prior's mass range of an object of the given volume (m³). */
export const rigidMassRange = (volume: number): readonly [number, number] => [
  RIGID_DENSITY_RANGE[0] * volume,
  RIGID_DENSITY_RANGE[1] * volume,
];
/** Impulse duration (s): gradSim's exp01 pushes for t ∈ [0, 0.1]. */
export const RIGID_IMPULSE_SECONDS = 0.1;

/** The cameras of Table 1's free flights and of Table 2's scenes on the ground. */
export const RIGID_FREE_CAMERA: AngleCamera = { distance: 6, elevation: 25, azimuth: 15, at: [0, 0.3, 0], fovY: 40 };
export const RIGID_GROUND_CAMERA: AngleCamera = { distance: 6, elevation: 30, azimuth: 10, at: [0, 0.4, 0], fovY: 40 };

/** Volume (m³) of a shape at the given scale, i.e. its mass per unit density. */
export const shapeVolume = (shape: RigidShape, scale: Vec3): number =>
  models.rigid.meshBody(shapeMeshes(shape, scale).physics, { density: 1 }).mass;

const add = (a: Vec3, b: Vec3, s = 1): Vec3 => [a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]];
const scaled = (a: Vec3, s: number): Vec3 => [a[0] * s, a[1] * s, a[2] * s];

/**
 * The default scene of `npm run demo`: a 0.8 × 0.5 × 0.6 m box of 2.5 kg, pushed off-centre by
 * a known 25 N·s/10 impulse so it drifts across the view while tumbling; no gravity, so it stays
 * in view for the whole 2 s.
 */
export function defaultMassScene(resolution = 64): RigidSceneSpec {
  return {
    shape: "box",
    scale: [0.8, 0.5, 0.6],
    mass: 2.5,
    position: [-1.0, 0.3, 0],
    rotation: [0, 0, 0, 1],
    velocity: [0.1, 0.05, 0.05],
    angularVelocity: [0.3, 0.6, 0.1],
    impulses: [{ force: [22, 10, 4], point: [0.1, -0.2, 0.15], duration: RIGID_IMPULSE_SECONDS }],
    gravity: [0, 0, 0],
    contact: null,
    frames: RIGID_FRAMES,
    fps: RIGID_FPS,
    substeps: 2,
    camera: RIGID_FREE_CAMERA,
    resolution,
  };
}

/** A random scene of the dataset and the gradient methods' starting point. */
export interface SampledRigidScene {
  readonly spec: RigidSceneSpec;
  /** Mass implied by a density drawn from RIGID_DENSITY_RANGE: the optimisation's starting point. */
  readonly initialMass: number;
  readonly volume: number;
}

function sampleShape(
  rng: Rng,
  shapes: readonly RigidShape[],
  lo: number,
  hi: number,
): { shape: RigidShape; scale: Vec3; volume: number } {
  const shape = rng.pick(shapes);
  const scale: Vec3 = [rng.uniform(lo, hi), rng.uniform(lo, hi), rng.uniform(lo, hi)];
  return { shape, scale, volume: shapeVolume(shape, scale) };
}

/**
 * Table 1 (mass from video): free flight without gravity after a known impulse at a random
 * body point. The impulse is sized from the shape's volume (known) so that the object moves
 * 0.25–2.4 m in 2 s whatever its density; it starts where its straight-line path is centred in
 * view.
 */
export function sampleMassScene(
  rng: Rng,
  resolution = 64,
  shapes: readonly RigidShape[] = RIGID_SHAPES,
): SampledRigidScene {
  const { shape, scale, volume } = sampleShape(rng, shapes, 0.6, 1.2);
  const density = rng.uniform(...RIGID_DENSITY_RANGE);
  const mass = density * volume;
  const dir = rng.direction();
  const impulse = 3 * volume * rng.uniform(0.5, 0.8); // N·s; Δv = impulse/mass ∈ [0.12, 1.2] m/s
  const force = scaled([dir[0], 0.5 * dir[1], dir[2]], impulse / RIGID_IMPULSE_SECONDS);
  const v0: Vec3 = scaled(rng.direction(), rng.uniform(0, 0.15));
  const travel = add(v0, scaled(force, RIGID_IMPULSE_SECONDS / mass)); // mean velocity ≈ v0 + Δv
  const seconds = RIGID_FRAMES / RIGID_FPS;
  const jitter: Vec3 = [rng.uniform(-0.3, 0.3), rng.uniform(-0.2, 0.2), rng.uniform(-0.3, 0.3)];
  const position = add(add(RIGID_FREE_CAMERA.at, travel, -seconds / 2), jitter);
  const point = scaled([rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)], 0.25 * Math.cbrt(volume));
  const spec: RigidSceneSpec = {
    shape,
    scale,
    mass,
    position,
    rotation: rng.quaternion(),
    velocity: v0,
    angularVelocity: scaled(rng.direction(), rng.uniform(0, 0.8)),
    impulses: [{ force, point, duration: RIGID_IMPULSE_SECONDS }],
    gravity: [0, 0, 0],
    contact: null,
    frames: RIGID_FRAMES,
    fps: RIGID_FPS,
    substeps: 2,
    camera: RIGID_FREE_CAMERA,
    resolution,
  };
  return { spec, initialMass: rng.uniform(...RIGID_DENSITY_RANGE) * volume, volume };
}

/** A random heading about y composed with a tilt of at most `maxDeg` degrees about a horizontal axis. */
function tiltedHeading(rng: Rng, maxDeg: number): [number, number, number, number] {
  const yaw = rng.uniform(-Math.PI, Math.PI) / 2,
    tilt = (rng.uniform(0, maxDeg) * Math.PI) / 360,
    axis = rng.uniform(0, 2 * Math.PI);
  const [tx, tz, tw] = [Math.cos(axis) * Math.sin(tilt), Math.sin(axis) * Math.sin(tilt), Math.cos(tilt)];
  const [yy, yw] = [Math.sin(yaw), Math.cos(yaw)];
  // tilt ⊗ yaw (x, y, z, w), with yaw = (0, yy, 0, yw) and tilt = (tx, 0, tz, tw).
  return [tx * yw - tz * yy, tw * yy, tz * yw + tx * yy, tw * yw];
}

/**
 * Ranges of the contact coefficients sampled for Table 2, in the scenes' mass-normalised contact
 * (`contact.rigidGround`: ke in N/m per kg of the object, kd and kf in s⁻¹), all inside the
 * documented ranges and stable at the scenes' 16 substeps (1/480 s).
 * (`contact.rigidContactStepLimit`). kf only shows in the video below the crossover speed μg/kf
 * where friction saturates to Coulomb — at 120 s⁻¹ and μ = 0.2, 1.6 cm/s: the slow end of a
 * sliding object's stop.
 */
export const RIGID_CONTACT_RANGES: Readonly<Record<keyof ContactParams, readonly [number, number]>> = {
  ke: [1e4, 3e4],
  kd: [30, 120],
  kf: [20, 120],
  mu: [0.2, 1.0],
};

/** The prior's ranges of the Table 2 unknowns for an object of the given volume (m³). */
export function contactPriorRanges(
  volume: number,
): Readonly<Record<"mass" | keyof ContactParams, readonly [number, number]>> {
  return { mass: rigidMassRange(volume), ...RIGID_CONTACT_RANGES };
}

/** A random Table 2 scene, with the starting point of its contact coefficients. */
export interface SampledContactScene extends SampledRigidScene {
  readonly initialContact: ContactParams;
}

const sampleContact = (rng: Rng): ContactParams => ({
  ke: rng.uniform(...RIGID_CONTACT_RANGES.ke),
  kd: rng.uniform(...RIGID_CONTACT_RANGES.kd),
  kf: rng.uniform(...RIGID_CONTACT_RANGES.kf),
  mu: rng.uniform(...RIGID_CONTACT_RANGES.mu),
});

/**
 * Table 2 (mass and contact from video): the object is dropped from 0.5–1 m with a sideways
 * velocity, gets a known horizontal push (which pins down the mass: contact alone only reveals
 * ke, kd, kf and μ — per kilogram, as the contact is written), bounces and slides on the ground
 * under gravity. 16 substeps per frame keep the stiff penalty contact stable.
 */
export function sampleContactScene(
  rng: Rng,
  resolution = 64,
  shapes: readonly RigidShape[] = RIGID_SHAPES,
): SampledContactScene {
  const { shape, scale, volume } = sampleShape(rng, shapes, 0.5, 0.9);
  const density = rng.uniform(...RIGID_DENSITY_RANGE);
  const mass = density * volume;
  const side = rng.next() < 0.5 ? -1 : 1;
  const push = 3 * volume * rng.uniform(0.5, 0.8);
  const force: Vec3 = [
    (side * push) / RIGID_IMPULSE_SECONDS,
    0,
    (rng.uniform(-0.3, 0.3) * push) / RIGID_IMPULSE_SECONDS,
  ];
  const velocity: Vec3 = [side * rng.uniform(0.3, 0.8), rng.uniform(0, 1), rng.uniform(-0.2, 0.2)];
  const spec: RigidSceneSpec = {
    shape,
    scale,
    mass,
    position: [-side * rng.uniform(0.8, 1.3), 0.5 * Math.max(...scale) + rng.uniform(0.5, 1.0), rng.uniform(-0.3, 0.3)],
    // Upright up to 10° of tilt, any heading, spinning about the vertical: tumbling landings settle
    // on a face chosen by a bifurcation, which no gradient can follow.
    rotation: tiltedHeading(rng, 10),
    velocity,
    angularVelocity: [rng.uniform(-0.2, 0.2), rng.uniform(-1.5, 1.5), rng.uniform(-0.2, 0.2)],
    impulses: [{ force, point: [0, 0, 0], duration: RIGID_IMPULSE_SECONDS }],
    gravity: [0, -9.8, 0],
    contact: sampleContact(rng),
    frames: RIGID_FRAMES,
    fps: RIGID_FPS,
    substeps: 16,
    camera: RIGID_GROUND_CAMERA,
    resolution,
  };
  const initialMass = rng.uniform(...RIGID_DENSITY_RANGE) * volume;
  return { spec, initialMass, volume, initialContact: sampleContact(rng) };
}
