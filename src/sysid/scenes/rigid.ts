/**
 * A rigid-body video scene for system identification: one object (a built-in shape or a user's
 * mesh) with a pose and velocity, known impulses (constant forces over time windows, gradSim's
 * ConstantForce), optional ground contact, a camera and a static background. Its unknowns —
 * mass and the contact coefficients ke, kd, kf, μ — enter as Arrays, so the rollout is
 * differentiable in them; `rigidProblem` turns a scene into a `sysid.Problem`.
 *
 * Mass is the density scale of a known shape: inertia = mass × (inertia per kg of the shape).
 */
import { Array, type ArrayLike } from "../../core/array.js";
import { ConcreteArray } from "../../core/concrete.js";
import { np } from "../../core/np/index.js";
import * as models from "../../models/index.js";
import type { TriMesh } from "../../models/meshes/types.js";
import type { BodySpec } from "../../models/rigid/build.js";
import type { RigidState, RigidSystem } from "../../models/rigid/types.js";
import * as render from "../../render/index.js";
import { vmap } from "../../transforms/index.js";
import type { Problem } from "../objective.js";
import type { Params } from "../unknowns.js";
import { overBackground, premultiply, SCENE_LIGHTS, sigmaFor } from "../video.js";
import { hostCamera, pixelRay, renderCamera, type CameraSpec, type Vec3 } from "./camera.js";
import { shapeMeshes, sphereRadius, type SceneShape, type ShapeMeshes } from "./shapes.js";

const { rigid, contact } = models;

export type Quat = readonly [number, number, number, number];
export interface ContactParams {
  readonly ke: number;
  readonly kd: number;
  readonly kf: number;
  readonly mu: number;
}

/** A constant force (N, world frame) at `point` (body frame, about the COM) from `start` for `duration` seconds. */
export interface Impulse {
  readonly force: Vec3;
  readonly point: Vec3;
  readonly start?: number;
  readonly duration: number;
}

/**
 * What the object looks like behind it: "ground" (a checkerboard ground plane y = 0 under a dark
 * sky, cast by rays from the camera), a colour [r, g, b] in [0, 1], or an image [H, W, 3] at the
 * rendered resolution (e.g. a video's background plate).
 */
export type Background = "ground" | readonly [number, number, number] | Array;

export interface RigidSceneSpec {
  /** A built-in shape (scaled per axis by `scale`) or a closed triangle mesh (metres). */
  readonly shape: SceneShape | { readonly mesh: TriMesh; readonly name?: string };
  readonly scale: Vec3;
  /** The true mass (kg). */
  readonly mass: number;
  readonly position: Vec3;
  /** Orientation quaternion (x, y, z, w). */
  readonly rotation: Quat;
  readonly velocity: Vec3;
  readonly angularVelocity: Vec3;
  readonly impulses: readonly Impulse[];
  readonly gravity: Vec3;
  /** Ground plane y = 0 with these true coefficients, or none. */
  readonly contact: ContactParams | null;
  readonly frames: number;
  readonly fps: number;
  readonly substeps: number;
  readonly camera: CameraSpec;
  /** Image size in pixels: a number for square frames, or [width, height]. */
  readonly resolution: number | readonly [number, number];
  /** Default: "ground" with contact, black without. */
  readonly background?: Background;
  /**
   * "rgba" (default): premultiplied colour over the background plus the silhouette; "rgb": what a
   * camera sees; "alpha": the soft silhouette alone [H, W, 1] (compared with a video's foreground mask).
   */
  readonly channels?: "rgba" | "rgb" | "alpha";
  /** A factor on the soft rasterizer's edge width σ (default 1): how soft the model's outline is drawn. */
  readonly edgeSoftness?: number;
  /**
   * Where the body touches the ground: "vertices" (default), the rendered mesh's vertices; "edges", those and the
   * midpoints of the mesh's edges (a box's faces as 3 × 3 grids). How a flat face's load spreads over its contacts
   * is not settled by rigid-body mechanics (it is statically indeterminate): corners alone carry it at the face's
   * rim, a grid spreads it inward, which changes the friction's torque on a box that turns while it slides.
   */
  readonly contactSampling?: "vertices" | "edges";
  /**
   * Which load bounds the friction at a contact: "point" (default), the contact's own normal force, so corners that
   * a pitching body presses harder grip harder; "shared", the body's load split evenly over its touching contacts.
   * Also statically indeterminate: a box that turns while it slides ends in different places under the two (Bullet's
   * spun box drifts sideways between them), a box pushed straight in the same one.
   */
  readonly frictionLoad?: "point" | "shared";
}

/** The mesh's vertices [V·3] and the midpoints of its faces' edges (each edge once), flat. */
function withEdgeMidpoints(vertices: readonly number[], faces: Int32Array): number[] {
  const out = [...vertices];
  const edges = models.meshes.uniqueEdges(faces);
  for (let e = 0; e < edges.length; e += 2)
    for (let d = 0; d < 3; d++) out.push((vertices[3 * edges[e]! + d]! + vertices[3 * edges[e + 1]! + d]!) / 2);
  return out;
}

/**
 * The unknowns a rigid scene can estimate: mass and the ground contact's coefficients; what a user
 * may not know about the clip — the initial position (x0, y0, z0) and heading (yaw0, radians about
 * +y, applied before the scene's rotation), the initial velocity (vx0, vy0, vz0), and the pushes'
 * magnitude (pushScale, a factor on every impulse's force) and start (pushStart, seconds added to
 * every impulse's start: what a frame offset between the video and the push amounts to), and
 * frameOffset (seconds: video frame k shows the state at k/fps + frameOffset — a clip cut between
 * two of the simulation's frame times).
 */
export const RIGID_UNKNOWNS = [
  "mass",
  "ke",
  "kd",
  "kf",
  "mu",
  "x0",
  "y0",
  "z0",
  "yaw0",
  "vx0",
  "vy0",
  "vz0",
  "pushScale",
  "pushStart",
  "frameOffset",
] as const;
export type RigidUnknown = (typeof RIGID_UNKNOWNS)[number];
export const RIGID_UNITS: Readonly<Record<RigidUnknown, string>> = {
  mass: "kg",
  ke: "N/m per kg",
  kd: "1/s",
  kf: "1/s",
  mu: "",
  x0: "m",
  y0: "m",
  z0: "m",
  yaw0: "rad",
  vx0: "m/s",
  vy0: "m/s",
  vz0: "m/s",
  pushScale: "",
  pushStart: "s",
  frameOffset: "s",
};
/**
 * The scene's own value of every unknown (its truth, for a scene that describes the true system;
 * the first guess, for a user's scene file): undefined for contact coefficients without a ground
 * and for the pushes' unknowns without impulses.
 */
export function sceneValues(
  s: Pick<RigidSceneSpec, "mass" | "contact" | "position" | "velocity" | "impulses">,
): Record<RigidUnknown, number | undefined> {
  const pushes = s.impulses.length > 0;
  return {
    mass: s.mass,
    ke: s.contact?.ke,
    kd: s.contact?.kd,
    kf: s.contact?.kf,
    mu: s.contact?.mu,
    x0: s.position[0],
    y0: s.position[1],
    z0: s.position[2],
    yaw0: 0,
    vx0: s.velocity[0],
    vy0: s.velocity[1],
    vz0: s.velocity[2],
    pushScale: pushes ? 1 : undefined,
    pushStart: pushes ? 0 : undefined,
    frameOffset: 0,
  };
}

/** Unknowns that are positive (estimated in log space); the others are estimated as they are. */
export const POSITIVE_RIGID_UNKNOWNS: readonly RigidUnknown[] = ["mass", "ke", "kd", "kf", "mu", "pushScale"];

export interface RigidScene {
  readonly spec: RigidSceneSpec;
  readonly width: number;
  readonly height: number;
  readonly meshes: ShapeMeshes;
  /** Inertia about the COM per kg of mass, row-major 3×3. */
  readonly unitInertia: readonly number[];
  /** Rendered vertices about the COM in the body frame [V, 3] and faces int32 [F, 3]. */
  readonly local: Array;
  /**
   * Ground-contact points about the COM [P·3] (body frame) and their radius: the rendered vertices with radius 0, or
   * a smooth sphere's centre with its radius.
   */
  readonly contactPoints: readonly number[];
  readonly contactRadius: number;
  readonly faces: Array;
  /** Per-face albedo [F, 3], coloured by body-frame normal so rotation is visible. */
  readonly faceColors: Array;
  readonly camera: render.Camera;
  /** The static image behind the object [H, W, 3], or a colour. */
  readonly background: ArrayLike;
  readonly dt: number;
}

const size = (r: RigidSceneSpec["resolution"]): [number, number] => (typeof r === "number" ? [r, r] : [r[0], r[1]]);

/** Prepare a scene: mass properties of the shape, render mesh about the COM, camera, background. */
export function buildRigidScene(spec: RigidSceneSpec): RigidScene {
  const [width, height] = size(spec.resolution);
  const meshes =
    typeof spec.shape === "string" ? shapeMeshes(spec.shape, spec.scale) : scaledMesh(spec.shape.mesh, spec.scale);
  const radius = spec.shape === "sphere" ? sphereRadius(spec.scale) : 0;
  const unit = radius > 0 ? rigid.sphereBody(radius, { density: 1 }) : rigid.meshBody(meshes.physics, { density: 1 });
  if (!(unit.mass > 0))
    throw new Error(
      `rigid scene: the mesh encloses no volume (${unit.mass} m³); it ` +
        `must be closed and wound counter-clockwise seen from outside.`,
    );
  // meshBody places the mesh's COM at the origin of the body frame; shift the visual mesh the same way (a sphere's
  // mesh is centred on its COM).
  const com = radius > 0 ? [0, 0, 0] : [0, 1, 2].map((d) => meshes.physics.vertices[d]! - unit.contactPoints[d]!);
  const v = meshes.visual.vertices;
  const localFlat = globalThis.Array.from(v, (c, i) => c - com[i % 3]!);
  const local = np.reshape(np.array(localFlat, { dtype: "float32" }), [v.length / 3, 3]);
  const faces = np.reshape(np.array(meshes.visual.faces, { dtype: "int32" }), [meshes.visual.faces.length / 3, 3]);
  const bg = spec.background ?? (spec.contact ? "ground" : [0, 0, 0]);
  checkContactStep(spec, 1 / (spec.fps * spec.substeps));
  if (spec.edgeSoftness !== undefined && !(spec.edgeSoftness > 0 && Number.isFinite(spec.edgeSoftness)))
    throw new Error(`rigid scene: edgeSoftness must be a finite factor > 0, got ${spec.edgeSoftness}.`);
  if (spec.contactSampling !== undefined && spec.contactSampling !== "vertices" && spec.contactSampling !== "edges")
    throw new Error(
      `rigid scene: contactSampling must be "vertices" or "edges", got ${JSON.stringify(spec.contactSampling)}.`,
    );
  if (spec.frictionLoad !== undefined && spec.frictionLoad !== "point" && spec.frictionLoad !== "shared")
    throw new Error(`rigid scene: frictionLoad must be "point" or "shared", got ${JSON.stringify(spec.frictionLoad)}.`);
  return {
    spec,
    width,
    height,
    meshes,
    local,
    faces,
    contactPoints:
      radius > 0
        ? unit.contactPoints
        : spec.contactSampling === "edges"
          ? withEdgeMidpoints(localFlat, meshes.visual.faces)
          : localFlat,
    contactRadius: radius,
    unitInertia: unit.inertia.map((x) => x / unit.mass),
    faceColors: normalColours(localFlat, meshes.visual.faces),
    camera: renderCamera(spec.camera, width, height),
    background:
      bg === "ground"
        ? groundImage(spec.camera, width, height)
        : bg instanceof Array
          ? checkBackground(bg, width, height)
          : [...bg],
    dt: 1 / (spec.fps * spec.substeps),
  };
}

function checkBackground(img: Array, width: number, height: number): Array {
  if (img.shape.join() !== [height, width, 3].join())
    throw new Error(
      `rigid scene: the background image is [${img.shape}], ` +
        `expected [${height}, ${width}, 3] (the rendered resolution).`,
    );
  return img;
}

const scaledMesh = (m: TriMesh, s: Vec3): ShapeMeshes => {
  const physics = { vertices: models.meshes.transformVertices(m.vertices, { scale: s }), faces: m.faces };
  return { physics, visual: physics };
};

function normalColours(v: readonly number[], f: Int32Array): Array {
  const rows: number[][] = [];
  for (let k = 0; k < f.length; k += 3) {
    const p = [0, 1, 2].map((j) => [0, 1, 2].map((d) => v[3 * f[k + j]! + d]!)) as number[][];
    const e1 = p[1]!.map((c, d) => c - p[0]![d]!),
      e2 = p[2]!.map((c, d) => c - p[0]![d]!);
    const n = [e1[1]! * e2[2]! - e1[2]! * e2[1]!, e1[2]! * e2[0]! - e1[0]! * e2[2]!, e1[0]! * e2[1]! - e1[1]! * e2[0]!];
    const len = Math.hypot(n[0]!, n[1]!, n[2]!) || 1;
    rows.push(n.map((c) => 0.55 + 0.4 * (c / len)));
  }
  return np.array(rows, { dtype: "float32" });
}

/**
 * A scene's ground contact is `contact.rigidGround` (mass-normalised: ke in N/m per kg of the
 * object, kd and kf in s⁻¹; see RIGID_GROUND_DEFAULTS): a body placed at its rest height stays
 * there, friction acts from the first substep, and gradients agree with central differences.
 */
export const RIGID_CONTACT_DEFAULTS: ContactParams = {
  ke: contact.RIGID_GROUND_DEFAULTS.ke,
  kd: contact.RIGID_GROUND_DEFAULTS.kd,
  kf: contact.RIGID_GROUND_DEFAULTS.kf,
  mu: contact.RIGID_GROUND_DEFAULTS.mu,
};

/** The scene's contact must be resolved by its substeps: an error naming how many it needs. */
function checkContactStep(spec: RigidSceneSpec, dt: number): void {
  if (!spec.contact) return;
  const limit = contact.rigidContactStepLimit(spec.contact);
  if (dt > limit) {
    const need = Math.ceil(1 / (limit * spec.fps));
    throw new Error(
      `rigid scene: ${spec.substeps} substeps at ${spec.fps} fps (dt = ${(dt * 1e3).toFixed(2)} ms) cannot ` +
        `resolve ground contact with ke ${spec.contact.ke}, kd ${spec.contact.kd}, kf ${spec.contact.kf} ` +
        `(stable up to dt = ${(limit * 1e3).toFixed(2)} ms); use "substeps": ${need} or more, or a softer contact.`,
    );
  }
}

const f32 = (x: unknown): Array => np.array(x, { dtype: "float32" });

/** The rigid system for parameter values `p` (unknowns as Arrays, everything else from the spec). */
export function systemFor(scene: RigidScene, p: Params): { system: RigidSystem; state: RigidState } {
  const s = scene.spec;
  const ground = s.contact
    ? contact.rigidGround({
        ke: s.contact.ke,
        kd: s.contact.kd,
        kf: s.contact.kf,
        mu: s.contact.mu,
        ...(s.frictionLoad ? { frictionLoad: s.frictionLoad } : {}),
      })
    : undefined;
  const unknown = Object.keys(p).filter((k) => !(RIGID_UNKNOWNS as readonly string[]).includes(k));
  if (unknown.length)
    throw new Error(
      `rigid scene: cannot estimate ${unknown.join(", ")}; a rigid scene's unknowns are ${RIGID_UNKNOWNS.join(", ")}.`,
    );
  if (!s.contact && ["ke", "kd", "kf", "mu"].some((k) => p[k]))
    throw new Error("rigid scene: contact coefficients are unknowns, but the scene has no ground contact.");
  const body: BodySpec = {
    mass: s.mass,
    inertia: scene.unitInertia.map((x) => x * s.mass),
    contactPoints: scene.contactPoints,
    contactRadius: scene.contactRadius,
    position: s.position,
    rotation: s.rotation,
    velocity: s.velocity,
    angularVelocity: s.angularVelocity,
  };
  const built = rigid.rigidSystem([body], {
    gravity: s.gravity,
    ...(ground ? { ground } : {}),
    // A constant force over [start, start + duration] (its impulse force·duration wherever the start lies).
    forceWindows: s.impulses.map((i) => ({
      body: 0,
      force: i.force,
      point: i.point,
      start: i.start ?? 0,
      end: (i.start ?? 0) + i.duration,
    })),
  });
  const mass = p.mass ? np.reshape(p.mass, [1]) : built.system.mass;
  const unitI = np.reshape(f32(scene.unitInertia), [1, 3, 3]);
  const g = built.system.ground;
  const w = built.system.forceWindows;
  const system: RigidSystem = {
    ...built.system,
    mass,
    inertia: np.mul(np.reshape(mass, [1, 1, 1]), unitI),
    ...(g ? { ground: { ...g, ke: p.ke ?? g.ke, kd: p.kd ?? g.kd, kf: p.kf ?? g.kf, mu: p.mu ?? g.mu } } : {}),
    ...(w
      ? {
          forceWindows: {
            ...w,
            force: p.pushScale ? np.mul(w.force, p.pushScale) : w.force,
            start: p.pushStart ? np.add(w.start, p.pushStart) : w.start,
            end: p.pushStart ? np.add(w.end, p.pushStart) : w.end,
          },
        }
      : {}),
  };
  if (!w && (p.pushScale || p.pushStart))
    throw new Error("rigid scene: pushScale and pushStart are unknowns of the scene's impulses, but it has none.");
  return { system, state: initialStateFor(built.state, p) };
}

/** The initial state with the unknown parts of it (x0, y0, z0, yaw0, vx0, vy0, vz0) from `p`. */
function initialStateFor(state: RigidState, p: Params): RigidState {
  const pick = (base: Array, names: readonly string[]): Array => {
    if (!names.some((n) => p[n])) return base;
    const parts = np
      .split(np.reshape(base, [3]), 3, 0)
      .map((c, i) => (p[names[i]!] ? np.reshape(p[names[i]!]!, [1]) : c));
    return np.reshape(np.concatenate(parts, 0), [1, 3]);
  };
  let q = state.q;
  if (p.yaw0) {
    // Heading: a rotation by yaw0 about +y before the scene's orientation (q' = q_yaw ⊗ q).
    const half = np.mul(0.5, np.reshape(p.yaw0, [1]));
    const yawQ = np.stack([np.zerosLike(half), np.sin(half), np.zerosLike(half), np.cos(half)], -1);
    q = rigid.quatMul(yawQ, q);
  }
  return { ...state, x: pick(state.x, ["x0", "y0", "z0"]), v: pick(state.v, ["vx0", "vy0", "vz0"]), q };
}

/**
 * World positions of the rendered vertices [T, V, 3] for parameters `p` over the first `frames`
 * frames. Video frame k shows the state at t = k/fps: frame 0 is the scene's initial state (before
 * any push acts), frame 1 the state one frame period later — or at k/fps + frameOffset where that
 * is an unknown.
 */
export function rigidVertices(scene: RigidScene, p: Params, frames: number): Array {
  const { frameOffset, ...rest } = p;
  if (!frameOffset) return verticesAtFrames(scene, rest, frames);
  // Frame k at k/fps + δ: the quadratic through the simulation's frames k, k + 1, k + 2 at
  // s = δ·fps (exact for constant acceleration — a slide, a flight; δ < 0 extrapolates backwards).
  const all = verticesAtFrames(scene, rest, frames + 2);
  const [f0, f1, f2] = [0, 1, 2].map((j) => np.split(all, [j, j + frames], 0)[1]!) as [Array, Array, Array];
  const sOff = np.mul(frameOffset, scene.spec.fps);
  const curve = np.add(np.sub(f2, np.mul(2, f1)), f0);
  return np.add(np.add(f0, np.mul(sOff, np.sub(f1, f0))), np.mul(np.mul(0.5, np.mul(sOff, np.sub(sOff, 1))), curve));
}

function verticesAtFrames(scene: RigidScene, p: Params, frames: number): Array {
  const { system, state } = systemFor(scene, p);
  const first = { x: state.x, q: state.q };
  const later =
    frames > 1
      ? rigid.simulate(system, state, { dt: scene.dt, substeps: scene.spec.substeps, frames: frames - 1 })
      : null;
  const q = later ? np.concatenate([np.expandDims(first.q, 0), later.q], 0) : np.expandDims(first.q, 0);
  const R = rigid.quatToMatrix(np.squeeze(q, 1)); // [T, 3, 3]
  const xs = later ? np.concatenate([np.expandDims(first.x, 0), later.x], 0) : np.expandDims(first.x, 0);
  const x = np.squeeze(xs, 1); // [T, 3]
  return np.add(np.matmul(scene.local, np.transpose(R, [0, 2, 1])), np.expandDims(x, 1));
}

/** Faces kept per screen tile and non-empty tiles rasterized under jit (see `measureTiling`). */
export interface Tiling {
  readonly capacity: number;
  readonly activeTiles: number;
}

/**
 * Colour aggregation settings: back faces never colour a pixel, the depth softmax is mild
 * (γ = 0.05 of the near–far range: front faces of one object blend smoothly, the background weight
 * stays below 1e-7), and faces are pruned only below coverage 1e-6.
 */
const DIST_EPS = 1e-6,
  GAMMA = 0.05,
  TILE = 8;

/** The soft rasterizer's σ for the scene's resolution, times its edgeSoftness. */
const edgeSigma = (scene: RigidScene): number =>
  sigmaFor(Math.min(scene.width, scene.height)) * (scene.spec.edgeSoftness ?? 1);

/**
 * One frame [H, W, C] of the object at world vertices [V, 3], premultiplied by its soft silhouette
 * and composited over the background (C = 4 keeps the silhouette as the last channel).
 *
 * Why premultiplied, back-face culled and a mild depth softmax: SoftRas normalises its colour
 * softmax over the faces near a pixel, so a pixel just outside the silhouette takes the full
 * colour of a face whose coverage is tiny and drops to the background when that face is pruned;
 * and with a sharp depth softmax a face seen edge-on (whose clipped-barycentric depth jumps as it
 * turns) takes over pixels along its edge. Both make the loss step-like at the 1e-4 scale the
 * mass estimate needs; rgb·alpha, culling and γ = 0.05 leave steps of ~1e-6 there.
 *
 * The ground is a static image rather than rasterized triangles: the object never goes behind
 * it, so compositing is exact, costs nothing per iteration and has no seam between triangles.
 */
export function rigidFrame(scene: RigidScene, vertices: Array, tiling?: Tiling): Array {
  const rgba = render.render(
    { vertices, faces: scene.faces, faceColors: scene.faceColors },
    scene.camera,
    SCENE_LIGHTS,
    undefined,
    {
      width: scene.width,
      height: scene.height,
      shading: "flat",
      tile: TILE,
      ...(tiling ? { ...tiling, onOverflow: "ignore" as const } : {}),
      softras: { sigma: edgeSigma(scene), gamma: GAMMA, distEps: DIST_EPS, faceCulling: "back" },
    },
  );
  const channels = scene.spec.channels ?? "rgba";
  if (channels === "alpha") return np.split(rgba, [3], -1)[1]!;
  return overBackground(premultiply(rgba), scene.background, channels);
}

/** Frames [T, H, W, C] for world vertices [T, V, 3] (batched over frames with vmap). */
export const rigidVideo = (scene: RigidScene, vertices: Array, tiling?: Tiling): Array =>
  vmap((v: Array) => rigidFrame(scene, v, tiling))(vertices);

/**
 * Tiling for jitted renders of the given vertex trajectories ([T, V, 3] each, on the CPU): a tile
 * capacity that holds every face overlapping any tile, with `slack`× headroom for the motion
 * between iterates, rounded up to a power of two and capped at the face count; and the number of
 * non-empty tiles, with the same headroom. Undefined where values cannot be read synchronously
 * (WebGPU). Only the array-program rasterizers (`fused: false`) use it: the fused kernels, the
 * default on both backends, bin faces themselves.
 */
export function measureTiling(scene: RigidScene, trajectories: readonly Array[], slack = 2): Tiling | undefined {
  if (trajectories.some((t) => !(t instanceof ConcreteArray) || t.backend.name !== "cpu")) return undefined;
  const grid = render.makeTileGrid(scene.width, scene.height, TILE, "float32");
  const margin = Math.sqrt(Math.log(1 / DIST_EPS - 1) * edgeSigma(scene));
  let most = 1,
    active = 1;
  for (const verts of trajectories) {
    const proj = render.projectPoints(scene.camera, verts); // xy [T, V, 2]
    for (const frame of np.split(proj.xy, verts.shape[0]!, 0)) {
      const xy = np.take(np.squeeze(frame, 0), scene.faces, 0); // [F, 3, 2]
      const include = np.ones([scene.faces.shape[0]!], { dtype: "bool" });
      const counts = render.binFaces(grid, xy, include, margin).counts.dataSync();
      let nonEmpty = 0;
      for (const c of counts) {
        most = Math.max(most, c);
        if (c > 0) nonEmpty++;
      }
      active = Math.max(active, nonEmpty);
    }
  }
  let cap = 1;
  while (cap < most * slack) cap *= 2;
  return { capacity: Math.min(cap, scene.faces.shape[0]!), activeTiles: Math.min(Math.ceil(active * slack), grid.T) };
}

/** A scene as a sysid problem: states are the object's world vertices per frame, frames its video. */
export function rigidProblem(scene: RigidScene, o: { tiling?: Tiling } = {}): Problem<Array> {
  return {
    frames: scene.spec.frames,
    simulate: (p, frames) => rigidVertices(scene, p, frames),
    render: (vertices) => rigidVideo(scene, vertices, o.tiling),
  };
}

/** Half-size of the square ground (m) and the side of its checker squares. */
const GROUND_HALF = 4,
  CHECKER = 0.5;

/**
 * The ground plane y = 0 as seen by the camera, [H, W, 3]: a grey checkerboard (for a sense of
 * motion and depth) under a dark sky, by casting each pixel centre's ray.
 */
export function groundImage(camera: CameraSpec, width: number, height: number): Array {
  const h = hostCamera(camera, width, height);
  const sky = [0.12, 0.13, 0.16],
    light = [0.42, 0.44, 0.47],
    dark = [0.33, 0.35, 0.38];
  const data = new Float32Array(width * height * 3);
  for (let row = 0; row < height; row++)
    for (let col = 0; col < width; col++) {
      const d = pixelRay(h, col, row, width, height);
      const t = d[1] < 0 ? -h.eye[1] / d[1] : Infinity;
      const px = h.eye[0] + t * d[0],
        pz = h.eye[2] + t * d[2];
      const onGround = Number.isFinite(t) && Math.abs(px) <= GROUND_HALF && Math.abs(pz) <= GROUND_HALF;
      const colour = !onGround ? sky : (Math.floor(px / CHECKER) + Math.floor(pz / CHECKER)) % 2 === 0 ? light : dark;
      data.set(colour, 3 * (row * width + col));
    }
  return np.reshape(np.array(data, { dtype: "float32" }), [height, width, 3]);
}
