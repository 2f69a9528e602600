/**
 * The objects of the `imperfect-models` experiment (gradSim §4.3, Table 4 left): rigid bodies,
 * deformable solids and cloths dropped onto the ground and pushed sideways by a known force, so
 * that the landing (contact elasticity), the slide (friction) and the push (mass) all show in the
 * video. Each object can be simulated by several *models* — the correct one, or one that is wrong
 * in a single way — all producing the positions [T, V, 3] of the same surface mesh, so that one
 * renderer draws every model's video and the image loss compares like with like.
 *
 *  - rigid: a Table 1 primitive (box, cone, cylinder, icosphere), Newton–Euler with vertex contacts;
 *    as a deformable solid it is the same surface filled by a centroid fan of tets (exact for these
 *    convex shapes) with a stiff stable Neo-Hookean material;
 *  - deformable: a soft tet block or ball (stable Neo-Hookean FEM, lumped masses); as a rigid body
 *    it is its rest surface with the inertia of the uniform solid;
 *  - cloth: a square sheet (membrane + bending), seen only by the contact rows.
 *
 * How they look is in imperfect-looks.ts. The `imperfect-models` example runs the table on them.
 *
 * The push acts on every particle in proportion to its rest mass (m_i/M·F), so its net force and
 * torque about the centre of mass are the rigid body's force F at the centre of mass.
 */
import type { Array } from "../../core/array.js";
import type { Rng } from "../../core/host-rng.js";
import { np } from "../../core/np/index.js";
import { DivergenceError } from "../../models/common/divergence.js";
import * as models from "../../models/index.js";
import type { LookAtCamera, Vec3 } from "./camera.js";
import { buildRigidScene, rigidVertices } from "./rigid.js";
import { shapeMeshes, type RigidShape } from "./shapes.js";
type ParticleState = models.particles.ParticleState;
type ParticleSystem = models.particles.ParticleSystem;
type TetMesh = models.meshes.TetMesh;
type TriMesh = models.meshes.TriMesh;
const { stableStep } = models.particles;

const { fem, cloth, meshes, particles, contact, rigid } = models;

/** The kinds of object in the dataset (a third each in the table). */
export const OBJECT_KINDS = ["rigid", "deformable", "cloth"] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

/** The estimator's model, right or wrong in one way. */
export interface ModelChoice {
  /** How the object's body is simulated. */
  readonly body: ObjectKind;
  /** Contact with friction (false: frictionless, μ = 0). */
  readonly friction: boolean;
  /** Contact with damping (false: perfectly elastic collisions, kd = 0). */
  readonly damping: boolean;
}

/** One object of the dataset: its shape, pose, true mass, push and contact (and material, for a deformable one). */
export interface ObjectSpec {
  readonly kind: ObjectKind;
  /** Shape name (rigid: a primitive; deformable: "block" or "ball"; cloth: "sheet"). */
  readonly shape: string;
  /** Extent (m) along x, y, z (cloth: side, –, side). */
  readonly size: Vec3;
  /** True total mass (kg). */
  readonly mass: number;
  /** Centre of the object at t = 0 (the lowest point is above the ground). */
  readonly position: Vec3;
  /** Rotation about y then a tilt about x (radians) of the rest shape. */
  readonly yaw: number;
  readonly tilt: number;
  /** Total push (N, world frame), on from t = 0 for `pushFrames` frames. */
  readonly push: Vec3;
  readonly pushFrames: number;
  /** Ground contact coefficients (per contact point), friction coefficient μ. */
  readonly contact: { readonly ke: number; readonly kd: number; readonly kf: number; readonly mu: number };
  /** Deformable material (stable Neo-Hookean Lamé parameters, Pa) and damping. */
  readonly material?: { readonly mu: number; readonly lambda: number; readonly damping: number };
}

/** The video of an object: its length, frame rate and (square) resolution. */
export interface ObjectSceneSettings {
  readonly frames: number;
  readonly fps: number;
  readonly resolution: number;
}

/** The camera: obliquely from the front, over the strip the objects slide along (+x). */
export const IMPERFECT_CAMERA: LookAtCamera = { eye: [0, 1.2, -2.1], at: [0, 0.1, 0.1], fovY: 38 };

const GRAVITY: Vec3 = [0, -9.8, 0];
/**
 * Width (m) of the contact's smooth penetration hinge: this experiment keeps the per-point contact
 * law (coefficients in N/m per point) it was run with, and its 2 cm hinge.
 */
const SMOOTHING = 0.02;

/** The object's rest surface in world coordinates at t = 0 and, for solids, its tets. */
export interface ObjectGeometry {
  readonly surface: TriMesh;
  /** Tets over the surface's vertices (plus interior ones appended): the deformable model's mesh. */
  readonly tets: TetMesh | null;
}

function rotation(yaw: number, tilt: number): (p: Vec3) => Vec3 {
  const cy = Math.cos(yaw),
    sy = Math.sin(yaw),
    ct = Math.cos(tilt),
    st = Math.sin(tilt);
  return ([x, y, z]) => {
    const x1 = cy * x + sy * z,
      z1 = -sy * x + cy * z; // about y
    return [x1, ct * y - st * z1, st * y + ct * z1]; // about x
  };
}

function placed(v: Float64Array, spec: ObjectSpec, center: Vec3): Float64Array {
  const R = rotation(spec.yaw, spec.tilt),
    out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i += 3) {
    const p = R([v[i]! - center[0], v[i + 1]! - center[1], v[i + 2]! - center[2]]);
    for (let d = 0; d < 3; d++) out[i + d] = p[d]! + spec.position[d]!;
  }
  return out;
}

/**
 * A centroid fan: one tet per surface triangle and the centroid (valid for shapes star-shaped about it, e.g. convex
 * ones).
 */
export function centroidFan(surface: TriMesh): TetMesh {
  const v = surface.vertices,
    n = v.length / 3,
    c = [0, 0, 0];
  for (let i = 0; i < n; i++) for (let d = 0; d < 3; d++) c[d]! += v[3 * i + d]! / n;
  const vertices = Float64Array.from([...v, ...c]);
  const tets: number[] = [];
  for (let f = 0; f < surface.faces.length; f += 3)
    meshes.pushOriented(vertices, tets, n, surface.faces[f]!, surface.faces[f + 1]!, surface.faces[f + 2]!);
  return { vertices, tets: Int32Array.from(tets) };
}

/** The object's geometry: rest shape placed at its pose. */
export function objectGeometry(spec: ObjectSpec): ObjectGeometry {
  const [sx, sy, sz] = spec.size;
  if (spec.kind === "rigid") {
    const m = shapeMeshes(spec.shape as RigidShape, [sx, sy, sz]).physics;
    const surface = { vertices: placed(m.vertices, spec, [0, 0, 0]), faces: m.faces };
    return { surface, tets: centroidFan(surface) };
  }
  if (spec.kind === "deformable") {
    const t =
      spec.shape === "ball"
        ? meshes.tetSphere(sx / 2, 2)
        : meshes.tetBox({ cells: [3, 2, 2], size: [sx, sy, sz], origin: [-sx / 2, -sy / 2, -sz / 2] });
    const tets = { vertices: placed(t.vertices, spec, [0, 0, 0]), tets: t.tets };
    return { surface: { vertices: tets.vertices, faces: meshes.tetSurface(tets) }, tets };
  }
  const cells = 5;
  const sheet = meshes.clothGrid({
    cells: [cells, cells],
    cellSize: sx / cells,
    plane: "xz",
    origin: [-sx / 2, 0, sx / 2],
  });
  return { surface: { vertices: placed(sheet.vertices, spec, [0, 0, 0]), faces: sheet.faces }, tets: null };
}

/**
 * A model of an object: positions [frames, V, 3] of its surface's vertices (extra interior ones may follow) for a
 * mass.
 */
export interface ObjectModel {
  readonly describe: string;
  readonly substeps: number;
  positions(mass: Array, frames: number): Array;
}

const f32 = (x: unknown): Array => np.array(x, { dtype: "float32" });

/** The ground with the object's coefficients, as the model sees them. */
const groundOf = (spec: ObjectSpec, m: ModelChoice) =>
  contact.ground({
    ke: spec.contact.ke,
    kd: m.damping ? spec.contact.kd : 0,
    kf: spec.contact.kf,
    mu: m.friction ? spec.contact.mu : 0,
    smoothing: SMOOTHING,
  });

/**
 * Substeps per frame for a particle system: from 0.3 of its most restrictive element's stable-step
 * estimate (at least 16), doubled until a rollout at a quarter of the true mass stays finite (the
 * estimator tries lighter masses than the truth, and elements sharing particles — a centroid
 * fan's slivers — lower the limit below the per-element estimate).
 */
function stableSubsteps(system: ParticleSystem, fps: number, probe: (substeps: number) => unknown): number {
  const limit = stableStep({ ...system, mass: np.mul(system.mass, MASS_MARGIN) });
  let n = Math.max(16, limit ? Math.ceil(1 / (fps * 0.3 * limit.dt)) : 16);
  for (;;) {
    try {
      probe(n);
      return n;
    } catch (e) {
      if (!(e instanceof DivergenceError) || n > 4096) throw e;
      n *= 2;
    }
  }
}

/** Lightest mass, as a fraction of the truth, that an estimator's rollout must stay stable at. */
const MASS_MARGIN = 0.25;

/** Per-vertex coefficients (N/m, N·s/m) of a vertex carrying `share` kg as the rigid scenes' per-kilogram ones. */
const perKilogram = (c: ObjectSpec["contact"], share: number): ObjectSpec["contact"] => ({
  ke: c.ke / share,
  kd: c.kd / share,
  kf: c.kf / share,
  mu: c.mu,
});

/** The object simulated as a rigid body with vertex contacts (its rest surface, uniform density). */
function rigidModel(spec: ObjectSpec, g: ObjectGeometry, m: ModelChoice, s: ObjectSceneSettings): ObjectModel {
  // meshBody puts the body frame at the centre of mass: the first contact point is vertex 0 − COM.
  const unit = rigid.meshBody(g.surface, { density: 1 });
  const com = [0, 1, 2].map((d) => g.surface.vertices[d]! - unit.contactPoints[d]!) as unknown as Vec3;
  const substeps = 16;
  const scene = buildRigidScene({
    shape: { mesh: g.surface, name: spec.shape },
    scale: [1, 1, 1],
    mass: spec.mass,
    position: com,
    rotation: [0, 0, 0, 1],
    velocity: [0, 0, 0],
    angularVelocity: [0, 0, 0],
    impulses: [{ force: spec.push, point: [0, 0, 0], start: 0, duration: spec.pushFrames / s.fps }],
    // The scene's contact is mass-normalised (per kg of the body, shared by its touching points):
    // the sampled per-vertex coefficients are per eighth of the mass (8 vertices' worth).
    gravity: GRAVITY,
    contact: perKilogram(
      { ...spec.contact, kd: m.damping ? spec.contact.kd : 0, mu: m.friction ? spec.contact.mu : 0 },
      spec.mass / 8,
    ),
    frames: s.frames,
    fps: s.fps,
    substeps,
    camera: IMPERFECT_CAMERA,
    resolution: s.resolution,
  });
  return {
    describe: "rigid body",
    substeps,
    positions: (mass, frames) => rigidVertices(scene, { mass }, frames),
  };
}

/** The object simulated as a particle system (tets, or cloth triangles) with per-particle contact. */
function particleModel(
  spec: ObjectSpec,
  g: ObjectGeometry,
  m: ModelChoice,
  s: ObjectSceneSettings,
  stiff: boolean,
): ObjectModel {
  const ground = groundOf(spec, m);
  let built: { system: ParticleSystem; state: ParticleState }, lumped: Float64Array, describe: string;
  if (m.body === "cloth") {
    const area = spec.size[0] * spec.size[2];
    lumped = cloth.clothMasses(g.surface, spec.mass / area);
    built = cloth.clothBody(g.surface, {
      density: spec.mass / area,
      mu: 60,
      lambda: 60,
      damping: 0.2,
      bending: { stiffness: 0.02, damping: 0.001 },
      gravity: GRAVITY,
      ground,
    });
    describe = "cloth (membrane + bending)";
  } else {
    const mesh = g.tets!;
    const volume = fem.lumpedMasses(mesh, 1).reduce((a, b) => a + b, 0);
    // A "rigid" solid as FEM: stiff enough that it deforms by well under a pixel, soft enough for a few dozen substeps.
    const mat = stiff
      ? { mu: (500 * spec.mass) / volume, lambda: (500 * spec.mass) / volume, damping: 2 }
      : spec.material!;
    lumped = fem.lumpedMasses(mesh, spec.mass / volume);
    built = fem.softBody(mesh, { density: spec.mass / volume, ...mat, gravity: GRAVITY, ground });
    describe = stiff
      ? `stiff FEM solid (μ = λ = ${mat.mu.toPrecision(3)} Pa)`
      : `FEM solid (μ ${mat.mu.toPrecision(3)} Pa, λ ${mat.lambda.toPrecision(3)} Pa)`;
  }
  const total = lumped.reduce((a, b) => a + b, 0);
  const share = globalThis.Array.from(lumped, (x) => x / total); // m_i / M
  const unitMass = f32(share);
  // Per-frame external force [frames, N, 3]: m_i/M · F during the push, zero after (host constants).
  const force = (frames: number) =>
    f32(
      globalThis.Array.from({ length: frames }, (_, t) =>
        share.map((w) => spec.push.map((c) => (t < spec.pushFrames ? w * c : 0))),
      ),
    );
  const rollout = (mass: Array, frames: number, substeps: number, checkFinite = false) =>
    particles.simulate({ ...built.system, mass: np.mul(unitMass, mass) }, built.state, {
      dt: 1 / (s.fps * substeps),
      substeps,
      frames,
      controls: { force: force(frames) },
      checkFinite,
    }).x;
  const substeps = stableSubsteps(built.system, s.fps, (n) => rollout(f32(MASS_MARGIN * spec.mass), s.frames, n, true));
  return { describe, substeps, positions: (mass, frames) => rollout(mass, frames, substeps) };
}

/**
 * The estimator's simulation of `spec` under a model choice (the true one: body = spec.kind, friction and damping
 * on).
 */
export function objectModel(spec: ObjectSpec, g: ObjectGeometry, m: ModelChoice, s: ObjectSceneSettings): ObjectModel {
  if (m.body === "cloth" && spec.kind !== "cloth")
    throw new Error(
      `sysid.objectModel: a ${spec.kind} object cannot be modelled as cloth (a cloth model needs a sheet).`,
    );
  if (m.body !== "cloth" && spec.kind === "cloth")
    throw new Error(
      `sysid.objectModel: a cloth cannot be modelled as a ` +
        `${m.body === "rigid" ? "rigid body" : "deformable solid"} (it encloses no volume).`,
    );
  if (m.body === "rigid") return rigidModel(spec, g, m, s);
  return particleModel(spec, g, m, s, m.body === "deformable" && spec.kind === "rigid");
}

/** The correct model of an object: its own kind of body, with friction and contact damping. */
export const TRUE_MODEL = (spec: ObjectSpec): ModelChoice => ({ body: spec.kind, friction: true, damping: true });

/** Mass range (kg) of a kind: the prior of the random baseline and of initial guesses. */
export const OBJECT_MASS_RANGE: Readonly<Record<ObjectKind, readonly [number, number]>> = {
  rigid: [0.5, 4],
  deformable: [0.5, 4],
  cloth: [0.1, 0.8],
};

/**
 * A random object of a kind (the dataset's distribution: shape, size, pose, mass, push and contact drawn from `rng`).
 */
export function sampleObject(rng: Rng, kind: ObjectKind): ObjectSpec {
  const mass = Math.exp(rng.uniform(Math.log(OBJECT_MASS_RANGE[kind][0]), Math.log(OBJECT_MASS_RANGE[kind][1])));
  const x0 = rng.uniform(-0.55, -0.3),
    z0 = rng.uniform(-0.1, 0.2);
  const push: Vec3 = [mass * rng.uniform(8, 14), 0, mass * rng.uniform(-2, 2)]; // Δv ≈ 0.8–1.4 m/s over 0.1 s
  const common = { mass, yaw: rng.uniform(-0.6, 0.6), push, pushFrames: 3 };
  if (kind === "rigid") {
    const shape = rng.pick(["box", "cone", "cylinder", "icosphere"] as const);
    const size: Vec3 = [rng.uniform(0.25, 0.4), rng.uniform(0.25, 0.4), rng.uniform(0.25, 0.4)];
    const perPoint = mass / 8; // contact coefficients per vertex, scaled like the rigid dataset's per kg
    return {
      ...common,
      kind,
      shape,
      size,
      tilt: rng.uniform(-0.3, 0.3),
      position: [x0, 0.5 * Math.max(...size) + rng.uniform(0.1, 0.25), z0],
      contact: {
        ke: 4000 * perPoint * rng.uniform(0.7, 1.4),
        kd: 20 * perPoint * rng.uniform(0.7, 1.4),
        kf: 100 * perPoint,
        mu: rng.uniform(0.3, 0.7),
      },
    };
  }
  if (kind === "deformable") {
    const shape = rng.pick(["block", "ball"] as const);
    const a = rng.uniform(0.3, 0.4);
    const size: Vec3 = shape === "ball" ? [a, a, a] : [a, rng.uniform(0.2, 0.3), rng.uniform(0.25, 0.35)];
    const volume = shape === "ball" ? (Math.PI / 6) * a ** 3 : size[0] * size[1] * size[2];
    const density = mass / volume,
      // wave speed √(μ/ρ) ≈ 4–5.5 m/s: it sags 10–20% under its weight and squashes on landing
      soft = rng.uniform(15, 30);
    const perPoint = mass / 20;
    return {
      ...common,
      kind,
      shape,
      size,
      tilt: rng.uniform(-0.2, 0.2),
      position: [x0, 0.5 * size[1] + rng.uniform(0.1, 0.25), z0],
      material: { mu: soft * density, lambda: soft * density, damping: 1 },
      contact: {
        ke: 4000 * perPoint * rng.uniform(0.7, 1.4),
        kd: 20 * perPoint * rng.uniform(0.7, 1.4),
        kf: 100 * perPoint,
        mu: rng.uniform(0.3, 0.7),
      },
    };
  }
  const side = rng.uniform(0.45, 0.6);
  const perPoint = mass / 36;
  return {
    ...common,
    kind,
    shape: "sheet",
    size: [side, 0, side],
    tilt: rng.uniform(-0.35, 0.35),
    position: [x0 + 0.1, 0.25 + rng.uniform(0, 0.15), z0],
    contact: {
      ke: 4000 * perPoint * rng.uniform(0.7, 1.4),
      kd: 20 * perPoint * rng.uniform(0.7, 1.4),
      kf: 100 * perPoint,
      mu: rng.uniform(0.3, 0.7),
    },
  };
}
