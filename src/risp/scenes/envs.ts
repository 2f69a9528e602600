/**
 * RISP's environments (RISP, ICLR 2022, §4.1 and Appendix B.1) as shared definitions: what a
 * state is, the mesh a state poses, how states are drawn for the state-estimation task, and the
 * camera, each a `RispEnv` as a user writes one for their own system. The `risp-state` example
 * (Table 1) trains predictors on them; tasks.ts poses the downstream problems in them.
 *
 *  - quadrotor: a rigid body without contact (models.rigid.quadrotor's layout: four rotors on
 *    two crossed arms); state (x, y, z, sin yaw, sin pitch, sin roll, cos yaw, cos pitch, cos roll)
 *    (the paper's Eq. 18), its rotors painted so no rotation maps it onto itself; the states are
 *    frames of its motions under random mass and rotor thrusts;
 *  - cube: a rigid body with ground contact, resting on or bouncing above the ground; the same
 *    9-d state, faces painted apart;
 *  - rod: a deformable FEM beam (stable Neo-Hookean, models.fem) fixed at both ends, under gravity
 *    and a vertical force at its centre; the states are frames of rollouts with random Young's
 *    modulus and force, state = vertical displacement of 10 sensors along its spine;
 *  - hand: models.articulated's 13-joint hand (RISP part 2's articulated body), state = the joint
 *    angles; the states are frames of its motions under random stiffness and finger torques.
 *
 * Orientation: R = R_y(yaw)·R_x(pitch)·R_z(roll) (body → world). The cube's angle ranges are
 * limited (below) so an image determines its state: the paper does not give its ranges.
 */
import type { Array } from "../../core/array.js";
import type { Rng } from "../../core/host-rng.js";
import { np } from "../../core/np/index.js";
import * as models from "../../models/index.js";
import { jit, vmap } from "../../transforms/index.js";
import { framesOfRollouts, rolloutFrames, type RispEnv } from "../env.js";
import type { Vec3 } from "../psi.js";

/** States per rollout in the motion samplers: n states are random frames of ⌈n/4⌉ rollouts (risp.framesOfRollouts). */
const FRAMES_PER_ROLLOUT = 4;

/** A paper environment: RISP's environment description (`RispEnv`), named, with the rigid bodies' pose map. */
export interface RispPaperEnv extends RispEnv {
  readonly name: "quadrotor" | "cube" | "rod" | "hand";
  /**
   * The world vertices of a state, where the state determines them (the rigid bodies; angles by atan2, as RISP restores
   * them).
   */
  readonly pose?: (state: readonly number[]) => Float64Array;
  /** The rigid bodies' vertices in the body frame, about the centre of mass [V·3]. */
  readonly body?: Float64Array;
}

/** A mesh under construction: vertices, triangles and per-vertex paint. */
interface Parts {
  vertices: number[];
  faces: number[];
  pattern: number[];
}

/**
 * An axis-aligned box with four vertices per face (so each face takes its own flat paint):
 * for the face with normal ±e_a, corners in the (e_u, e_v) plane, u = a+1, v = a+2, wound CCW
 * seen from outside.
 */
function addBox(m: Parts, centre: Vec3, half: Vec3, paint: (face: number) => Vec3): void {
  let face = 0;
  for (let a = 0; a < 3; a++)
    for (const s of [1, -1]) {
      const u = (a + 1) % 3,
        v = (a + 2) % 3,
        base = m.vertices.length / 3;
      const corners =
        s > 0
          ? [
              [-1, -1],
              [1, -1],
              [1, 1],
              [-1, 1],
            ]
          : [
              [-1, -1],
              [-1, 1],
              [1, 1],
              [1, -1],
            ];
      for (const [cu, cv] of corners) {
        const p = [0, 0, 0];
        p[a] = centre[a] + s * half[a];
        p[u] = centre[u] + cu! * half[u];
        p[v] = centre[v] + cv! * half[v];
        m.vertices.push(...p);
        m.pattern.push(...paint(face));
      }
      m.faces.push(base, base + 1, base + 2, base, base + 2, base + 3);
      face++;
    }
}

/** Rotation matrix (row-major) of R_y(yaw)·R_x(pitch)·R_z(roll). */
export function eulerMatrix(yaw: number, pitch: number, roll: number): number[] {
  const [cy, sy, cp, sp, cr, sr] = [
    Math.cos(yaw),
    Math.sin(yaw),
    Math.cos(pitch),
    Math.sin(pitch),
    Math.cos(roll),
    Math.sin(roll),
  ];
  const Ry = [cy, 0, sy, 0, 1, 0, -sy, 0, cy],
    Rx = [1, 0, 0, 0, cp, -sp, 0, sp, cp],
    Rz = [cr, -sr, 0, sr, cr, 0, 0, 0, 1];
  const mul = (A: number[], B: number[]) =>
    globalThis.Array.from(
      { length: 9 },
      (_, k) =>
        A[3 * Math.floor(k / 3)]! * B[k % 3]! +
        A[3 * Math.floor(k / 3) + 1]! * B[3 + (k % 3)]! +
        A[3 * Math.floor(k / 3) + 2]! * B[6 + (k % 3)]!,
    );
  return mul(Ry, mul(Rx, Rz));
}

/** The rotation matrix (row-major, host numbers) of a unit quaternion (x, y, z, w). */
export function quaternionMatrix(q: readonly number[]): number[] {
  const [x, y, z, w] = q as [number, number, number, number];
  return [
    1 - 2 * (y * y + z * z),
    2 * (x * y - z * w),
    2 * (x * z + y * w),
    2 * (x * y + z * w),
    1 - 2 * (x * x + z * z),
    2 * (y * z - x * w),
    2 * (x * z - y * w),
    2 * (y * z + x * w),
    1 - 2 * (x * x + y * y),
  ];
}

/**
 * The 9-d pose state of a rigid body's simulator state (models.rigid: position and unit quaternion
 * x, y, z, w), angles for R = R_y(yaw)·R_x(pitch)·R_z(roll): pitch = asin(−R₁₂), roll = atan2(R₁₀, R₁₁),
 * yaw = atan2(R₀₂, R₂₂).
 */
export function rigidPoseState(position: readonly number[], q: readonly number[]): number[] {
  const R = quaternionMatrix(q);
  const pitch = Math.asin(Math.max(-1, Math.min(1, -R[5]!))),
    roll = Math.atan2(R[3]!, R[4]!),
    yaw = Math.atan2(R[2]!, R[8]!);
  return poseState([position[0]!, position[1]!, position[2]!], yaw, pitch, roll);
}

/** Body vertices [V·3] rotated by R and moved to `position`. */
function pose(body: readonly number[], R: readonly number[], position: Vec3): Float64Array {
  const out = new Float64Array(body.length);
  for (let i = 0; i < body.length; i += 3)
    for (let r = 0; r < 3; r++) {
      out[i + r] = position[r] + R[3 * r]! * body[i]! + R[3 * r + 1]! * body[i + 1]! + R[3 * r + 2]! * body[i + 2]!;
    }
  return out;
}

/** The vertices of a 9-d pose state. */
const poseOfState =
  (body: readonly number[]) =>
  (s: readonly number[]): Float64Array =>
    pose(body, eulerMatrix(Math.atan2(s[3]!, s[6]!), Math.atan2(s[4]!, s[7]!), Math.atan2(s[5]!, s[8]!)), [
      s[0]!,
      s[1]!,
      s[2]!,
    ]);

/** The 9-d pose state of Eq. 18. */
const poseState = (p: Vec3, yaw: number, pitch: number, roll: number): number[] => [
  ...p,
  Math.sin(yaw),
  Math.sin(pitch),
  Math.sin(roll),
  Math.cos(yaw),
  Math.cos(pitch),
  Math.cos(roll),
];

const POSE_NAMES = ["x (m)", "y (m)", "z (m)", "sin yaw", "sin pitch", "sin roll", "cos yaw", "cos pitch", "cos roll"];

function finish(m: Parts): { faces: Int32Array; pattern: Float32Array; body: number[] } {
  return { faces: Int32Array.from(m.faces), pattern: Float32Array.from(m.pattern), body: m.vertices };
}

/** A turn about the vertical axis (x, y, z, w). */
export const yawQuaternion = (yaw: number) => models.rigid.quatFromAxisAngle([0, 1, 0], yaw);

/**
 * Eq. 18's pose state [T, 9] of positions [T, 3] and unit quaternions [T, 4] (x, y, z, w), for
 * R = R_y(yaw)·R_x(pitch)·R_z(roll).
 */
export function poseStates(x: Array, q: Array): Array {
  const [qx, qy, qz, qw] = np.split(q, 4, -1) as [Array, Array, Array, Array];
  const m = (a: Array, b: Array) => np.mul(2, np.mul(a, b));
  const r02 = np.add(m(qx, qz), m(qy, qw)),
    r12 = np.sub(m(qy, qz), m(qx, qw));
  const r22 = np.sub(1, np.add(m(qx, qx), m(qy, qy))),
    r10 = np.add(m(qx, qy), m(qz, qw)),
    r11 = np.sub(1, np.add(m(qx, qx), m(qz, qz)));
  // pitch = asin(−R₁₂); yaw = atan2(R₀₂, R₂₂) and roll = atan2(R₁₀, R₁₁), each pair divided by cos pitch.
  const cp = np.sqrt(np.maximum(np.sub(1, np.square(r12)), 1e-12));
  return np.concatenate([x, np.div(r02, cp), np.neg(r12), np.div(r10, cp), np.div(r22, cp), cp, np.div(r11, cp)], -1);
}

/** World vertices [T, V, 3] of a rigid body's rest vertices `body` under positions [T, 3] and quaternions [T, 4]. */
export function rigidBodyVertices(body: ArrayLike<number>, x: Array, q: Array): Array {
  const local = np.array(
    globalThis.Array.from({ length: body.length / 3 }, (_, i) => [body[3 * i]!, body[3 * i + 1]!, body[3 * i + 2]!]),
    { dtype: x.dtype },
  );
  return vmap((xt: Array, qt: Array) => np.add(xt, np.matmul(local, np.transpose(models.rigid.quatToMatrix(qt)))))(
    x,
    q,
  );
}

/**
 * The quadrotor's motions: 1 s at 10 frames/s (10 steps of 10 ms each). Thrusts are
 * hover·(1 + 0.1·a) per rotor (hover: of the nominal 3 kg) with actions a ∈ [−1, 1] held over
 * pairs of frames (5 knots × 4 rotors); the mass ranges over system identification's box.
 */
export const QUADROTOR = { frames: 10, knots: 5, nominalMass: 3, mass: [2.8, 3.2], thrust: 0.1 } as const;

/**
 * The starts of the quadrotor's motions (the control task's): up to 10 cm from (0, 0.85, 0), upright, turned 0.3 ± 0.3
 * rad.
 */
export const quadrotorStart = (rng: Rng): readonly number[] => [
  rng.uniform(-0.1, 0.1),
  0.85 + rng.uniform(-0.05, 0.05),
  rng.uniform(-0.1, 0.1),
  ...yawQuaternion(0.3 + rng.uniform(-0.3, 0.3)),
];

/** The quadrotor's thrusts [frames, 4] (N) of actions a ∈ [−1, 1]: hover·(1 + 0.1·a) per rotor. */
export const quadrotorThrusts = (actions: Array): Array =>
  np.mul((QUADROTOR.nominalMass * 9.8) / 4, np.add(1, np.mul(QUADROTOR.thrust, actions)));

/** models.rigid.quadrotor at mass [] (arm 0.25 m; inertia scaled with the mass) and its state at rest. */
export function quadrotorOfMass(mass: Array, dtype: "float32" | "float64") {
  const { quad, state } = models.rigid.quadrotor({ mass: 1, arm: 0.25, dtype });
  const system = { ...quad.system, mass: np.mul(quad.system.mass, mass), inertia: np.mul(quad.system.inertia, mass) };
  return { quad: { ...quad, system }, state };
}

/** One frame of the quadrotor's motion: 10 steps of 10 ms (the 10 frames/s of its videos). */
export const QUADROTOR_STEP = { dt: 0.01, substeps: 10 } as const;

/**
 * Pose states [T, 9] and vertices [T, V, 3] of the quadrotor of mass [] under actions [4·knots] from a start [7]
 * (position, quaternion), all of `dtype`: T frames (default the tasks' 10, in 5 knots), each knot's actions held over
 * T/knots frames.
 */
export function quadrotorMotion(
  body: ArrayLike<number>,
  dtype: "float32" | "float64" = "float32",
  { frames: T, knots: K }: { readonly frames: number; readonly knots: number } = QUADROTOR,
): (mass: Array, actions: Array, start: Array) => { states: Array; vertices: Array } {
  if (!(Number.isInteger(T / K) && K >= 1))
    throw new Error(`risp: the quadrotor's ${T} frames must split into whole knots; got ${K} knots.`);
  return (mass, actions, start) => {
    const thrusts = quadrotorThrusts(np.repeat(np.reshape(actions, [K, 4]), T / K, 0));
    const { quad, state } = quadrotorOfMass(mass, dtype);
    const s0 = {
      ...state,
      x: np.reshape(np.take(start, np.arange(0, 3), 0), [1, 3]),
      q: np.reshape(np.take(start, np.arange(3, 7), 0), [1, 4]),
    };
    const r = models.rigid.simulateQuadrotor(quad, s0, {
      ...QUADROTOR_STEP,
      frames: T,
      controls: thrusts,
      checkFinite: false,
    });
    const x = np.squeeze(r.x, 1),
      q = np.squeeze(r.q, 1);
    return { states: poseStates(x, q), vertices: rigidBodyVertices(body, x, q) };
  };
}

/**
 * The quadrotor of models.rigid.quadrotor (arm 0.2 m by default; drawn at 0.25 m) as boxes: hub,
 * two arms, four rotors. The states are random frames of its motions (as the hand's are): the
 * mass anywhere in its box, random actions, from the control task's starts. Not independent poses
 * in a box: system identification's climbs leave y ∈ [0.8, 1.2] (the lightest quadrotor reaches
 * 1.47 m), and the predictors' losses were flat there (a guess at the light end stayed there).
 */
export function quadrotorEnv(): RispPaperEnv {
  const m: Parts = { vertices: [], faces: [], pattern: [] };
  // Chunky parts (thick arms, wide rotor guards): a 32² image still shows them.
  const grey: Vec3 = [0.6, 0.6, 0.65],
    arm = 0.25;
  addBox(m, [0, 0, 0], [0.08, 0.04, 0.08], () => grey);
  addBox(m, [0, 0, 0], [arm, 0.025, 0.035], () => [0.45, 0.45, 0.5]);
  addBox(m, [0, 0, 0], [0.035, 0.025, arm], () => [0.45, 0.45, 0.5]);
  // Front (+x) rotor red, back dark, sides light: no rotation maps the quadrotor onto itself.
  const rotors: [Vec3, Vec3][] = [
    [
      [arm, 0.035, 0],
      [0.95, 0.3, 0.25],
    ],
    [
      [-arm, 0.035, 0],
      [0.25, 0.25, 0.3],
    ],
    [
      [0, 0.035, arm],
      [0.9, 0.9, 0.85],
    ],
    [
      [0, 0.035, -arm],
      [0.9, 0.9, 0.85],
    ],
  ];
  for (const [c, paint] of rotors)
    addBox(m, c, [0.09, 0.02, 0.09], (f) =>
      f === 2 || f === 3 ? paint : [paint[0] * 0.8, paint[1] * 0.8, paint[2] * 0.8],
    );
  const { faces, pattern, body } = finish(m);
  const motion = quadrotorMotion(body, "float64");
  const rollouts = jit(
    vmap((mass: Array, actions: Array, start: Array) => {
      const r = motion(mass, actions, start);
      return [r.states, r.vertices];
    }),
  );
  return {
    name: "quadrotor",
    stateNames: POSE_NAMES,
    faces,
    pattern,
    groundY: 0,
    pose: poseOfState(body),
    body: Float64Array.from(body),
    camera: { eye: [0, 1.5, -1.6], at: [0, 1, 0], fovY: 40, convention: "softras-mirror" },
    sample(rng, n) {
      const count = Math.ceil(n / FRAMES_PER_ROLLOUT),
        A = 4 * QUADROTOR.knots;
      const mass: number[] = [],
        actions: number[][] = [],
        starts: number[][] = [];
      for (let r = 0; r < count; r++) {
        mass.push(rng.uniform(QUADROTOR.mass[0], QUADROTOR.mass[1]));
        // The tasks' thrusts: a collective part over the whole motion (mostly climbs, as the
        // tasks' references: their actions average 0.5), one per knot and one per rotor (tilts).
        const collective = rng.uniform(-0.3, 0.9),
          knot = globalThis.Array.from({ length: QUADROTOR.knots }, () => rng.uniform(-0.3, 0.3));
        actions.push(
          globalThis.Array.from({ length: A }, (_, i) =>
            Math.min(1, Math.max(-1, collective + knot[Math.floor(i / 4)]! + rng.uniform(-0.3, 0.3))),
          ),
        );
        starts.push([...quadrotorStart(rng)]);
      }
      const f64 = (a: unknown) => np.array(a, { dtype: "float64" });
      const [s, x] = (rollouts(f64(mass), f64(actions), f64(starts)) as Array[]).map((a) => a.dataSync());
      return framesOfRollouts(rng, n, QUADROTOR.frames, s!, x!, (r) => `quadrotor: rollout ${r} is not finite.`);
    },
  };
}

/**
 * The cube's drops: a 10 kg, 0.4 m cube released at rest above the ground, 0.6 s at 20 frames/s
 * (0.5 ms steps); contact ke = 10^λ per corner with the damping fixed, so λ sets how much of the
 * impact is given back (RISP's soft contact): dropped flat from 0.3 m it bounces 5 cm at λ = 5.5,
 * 11 cm at 6, 17 cm at 6.5.
 */
export const CUBE = { frames: 12, mass: 10, side: 0.4, logKe: [5.5, 6.5] } as const;

/**
 * Pose states [T, 9] and vertices [T, V, 3] of the cube's drop with contact stiffness log10 ke [] from a start [7]
 * (position, quaternion), all of `dtype`.
 */
export function cubeMotion(
  body: ArrayLike<number>,
  dtype: "float32" | "float64" = "float32",
): (logKe: Array, start: Array) => { states: Array; vertices: Array } {
  const { mass, side } = CUBE,
    h = side / 2,
    I = (mass * 2 * side * side) / 12;
  const corners = [0, 1, 2, 3, 4, 5, 6, 7].flatMap((k) => [k & 1 ? h : -h, k & 2 ? h : -h, k & 4 ? h : -h]);
  const { system, state } = models.rigid.rigidSystem(
    [{ mass, inertia: [I, 0, 0, 0, I, 0, 0, 0, I], contactPoints: corners, contactRadius: 0 }],
    {
      ground: models.contact.ground({ ke: 1e6, kd: 500, kf: 1e3, mu: 0.5, dtype }),
      dtype,
    },
  );
  return (logKe, start) => {
    const sys = { ...system, ground: { ...system.ground!, ke: np.power(10, logKe) } };
    const s0 = {
      ...state,
      x: np.reshape(np.take(start, np.arange(0, 3), 0), [1, 3]),
      q: np.reshape(np.take(start, np.arange(3, 7), 0), [1, 4]),
    };
    const r = models.rigid.simulate(sys, s0, { dt: 5e-4, substeps: 100, frames: CUBE.frames, checkFinite: false });
    const x = np.squeeze(r.x, 1),
      q = np.squeeze(r.q, 1);
    return { states: poseStates(x, q), vertices: rigidBodyVertices(body, x, q) };
  };
}

/**
 * A 0.4 m cube with six differently painted faces. Its states are frames of its drops (as the
 * quadrotor's are of its flights): λ anywhere in system identification's box, released flat
 * 0.2–0.4 m above the ground and turned within ±0.6 rad (beyond, the cube's symmetry would make
 * states alike) — falling, bouncing and settling. Released tilted by as little as 0.02 rad, ~6%
 * of the frames showed it tumbling past 0.3 rad. Independent poses (up to 0.3 m above the ground,
 * tilts within ±0.3 rad) were read to 22% below the average's error: coarser than the bounces
 * (5–17 cm) that identify λ.
 */
export function cubeEnv(): RispPaperEnv {
  const m: Parts = { vertices: [], faces: [], pattern: [] };
  const paints: Vec3[] = [
    [0.95, 0.35, 0.3],
    [0.3, 0.8, 0.35],
    [0.3, 0.4, 0.95],
    [0.95, 0.9, 0.3],
    [0.85, 0.35, 0.85],
    [0.35, 0.9, 0.9],
  ];
  addBox(m, [0, 0, 0], [CUBE.side / 2, CUBE.side / 2, CUBE.side / 2], (f) => paints[f]!);
  const { faces, pattern, body } = finish(m);
  const motion = cubeMotion(body, "float64");
  const rollouts = jit(
    vmap((logKe: Array, start: Array) => {
      const r = motion(logKe, start);
      return [r.states, r.vertices];
    }),
  );
  return {
    name: "cube",
    stateNames: POSE_NAMES,
    faces,
    pattern,
    groundY: 0,
    pose: poseOfState(body),
    body: Float64Array.from(body),
    camera: { eye: [0, 1.2, -2], at: [0, 0.25, 0], fovY: 40, convention: "softras-mirror" },
    sample(rng, n) {
      const count = Math.ceil(n / FRAMES_PER_ROLLOUT),
        logKe: number[] = [],
        starts: number[][] = [];
      for (let r = 0; r < count; r++) {
        logKe.push(rng.uniform(CUBE.logKe[0], CUBE.logKe[1]));
        starts.push([
          rng.uniform(-0.3, 0.3),
          CUBE.side / 2 + rng.uniform(0.2, 0.4),
          rng.uniform(-0.3, 0.3),
          ...yawQuaternion(rng.uniform(-0.6, 0.6)),
        ]);
      }
      const f64 = (a: unknown) => np.array(a, { dtype: "float64" });
      const [s, x] = (rollouts(f64(logKe), f64(starts)) as Array[]).map((a) => a.dataSync());
      return framesOfRollouts(rng, n, CUBE.frames, s!, x!, (r) => `cube: rollout ${r} is not finite.`);
    },
  };
}

/** The rod's physics: a 1 m × 8 cm × 8 cm beam, 11 × 2 × 2 cells, fixed at both ends. */
export const ROD = {
  length: 1,
  thickness: 0.08,
  cells: [11, 2, 2] as const,
  height: 1,
  density: 500,
  poisson: 0.3,
  damping: 0.5,
  /** log10 of Young's modulus (Pa) and the central force (N), drawn uniformly. */
  logE: [4.3, 5] as const,
  force: [-15, 15] as const,
  fps: 30,
  substeps: 60,
  frames: 30,
};

/** The rod's FEM model: its mesh, surface, sensors and a differentiable rollout. */
export interface RodModel {
  readonly faces: Int32Array;
  readonly pattern: Float32Array;
  /** Vertex count, and the spine vertices whose vertical displacement is the state. */
  readonly vertices: number;
  readonly sensors: readonly number[];
  /**
   * Vertices [ROD.frames, V, 3] of a rollout from rest: log10 E [] and the central vertical force per frame
   * [ROD.frames] (N).
   */
  rollout(logE: Array, force: Array): Array;
}

/** The rod's FEM model (ROD's beam, its sensors, its paint and a differentiable rollout). */
export function rodModel(): RodModel {
  const { length: L, thickness: h, cells } = ROD;
  const mesh = models.meshes.tetBeam(L, h, h, cells, [-L / 2, ROD.height - h / 2, -h / 2]);
  const V = mesh.vertices.length / 3;
  const at = (i: number, d: number) => mesh.vertices[3 * i + d]!;
  const pinned: number[] = [],
    centre: number[] = [],
    sensors: number[] = [];
  const station = (i: number) => Math.round(((at(i, 0) + L / 2) / L) * cells[0]);
  for (let i = 0; i < V; i++) {
    if (station(i) === 0 || station(i) === cells[0]) pinned.push(i);
    if (station(i) === Math.floor(cells[0] / 2) || station(i) === Math.ceil(cells[0] / 2)) centre.push(i);
    // The spine: the axis of the beam, at the interior stations 1…10.
    if (Math.abs(at(i, 1) - ROD.height) < 1e-6 && Math.abs(at(i, 2)) < 1e-6 && station(i) > 0 && station(i) < cells[0])
      sensors.push(i);
  }
  sensors.sort((a, b) => at(a, 0) - at(b, 0));
  const { system, state } = models.fem.softBody(mesh, {
    density: ROD.density,
    mu: 1,
    lambda: 1,
    damping: ROD.damping,
    pinned,
    gravity: [0, -9.8, 0],
  });
  const tets = mesh.tets.length / 4;
  // Light and dark bands by station, so bending shows in the shading as well as the outline.
  const pattern = Float32Array.from(
    { length: 3 * V },
    (_, k) => (station(Math.floor(k / 3)) % 2 ? [0.45, 0.4, 0.35] : [0.95, 0.9, 0.8])[k % 3]!,
  );
  const dt = 1 / (ROD.fps * ROD.substeps);
  // The force spread over the central stations' vertices, vertical.
  const mask = np.array(
    globalThis.Array.from({ length: V }, (_, i) => (centre.includes(i) ? [0, 1, 0] : [0, 0, 0])),
    { dtype: "float32" },
  );
  return {
    faces: models.meshes.tetSurface(mesh),
    pattern,
    vertices: V,
    sensors,
    rollout(logE, force) {
      const E = np.power(10, logE),
        nu = ROD.poisson;
      const mu = np.div(E, 2 * (1 + nu)),
        lambda = np.div(np.mul(E, nu), (1 + nu) * (1 - 2 * nu));
      const sys = {
        ...system,
        tets: { ...system.tets!, mu: np.broadcastTo(mu, [tets]), lambda: np.broadcastTo(lambda, [tets]) },
      };
      const f = np.mul(np.reshape(np.div(force, centre.length), [ROD.frames, 1, 1]), mask);
      return models.particles.simulate(sys, state, {
        dt,
        substeps: ROD.substeps,
        frames: ROD.frames,
        controls: { force: f },
        checkFinite: false,
      }).x;
    },
  };
}

/**
 * Rollouts of the rod with random stiffness and central force (held), each `ROD.frames` frames
 * from rest; the states are random frames of them.
 */
export function rodEnv(): RispPaperEnv {
  const rod = rodModel();
  const V = rod.vertices;
  // One rollout per (log10 E, force); vmapped and compiled once.
  const rollouts = jit(vmap((logE: Array, force: Array) => rod.rollout(logE, np.broadcastTo(force, [ROD.frames]))));
  return {
    name: "rod",
    stateNames: rod.sensors.map((_, k) => `sensor ${k + 1} dy (m)`),
    faces: rod.faces,
    pattern: rod.pattern,
    groundY: 0.45,
    camera: { eye: [0, 1.05, -1.6], at: [0, 0.95, 0], fovY: 45, convention: "softras-mirror" },
    sample(rng, n) {
      const count = Math.ceil(n / FRAMES_PER_ROLLOUT);
      const logE = globalThis.Array.from({ length: count }, () => rng.uniform(ROD.logE[0], ROD.logE[1]));
      const force = globalThis.Array.from({ length: count }, () => rng.uniform(ROD.force[0], ROD.force[1]));
      // [count, frames, V, 3]
      const x = rollouts(np.array(logE, { dtype: "float32" }), np.array(force, { dtype: "float32" })) as Array;
      const data = x.dataSync();
      const states: number[][] = [],
        vertices: Float64Array[] = [];
      // Frames after the first third of a second: the rod has left its straight start.
      const frames = rolloutFrames(rng, n, ROD.frames, { first: Math.ceil(ROD.frames / 3) });
      for (let i = 0; i < n; i++) {
        const r = Math.floor(i / FRAMES_PER_ROLLOUT),
          t = frames[i]!;
        const v = Float64Array.from(data.subarray((r * ROD.frames + t) * V * 3, (r * ROD.frames + t + 1) * V * 3));
        if (!v.every(Number.isFinite))
          throw new Error(
            `rod: the rollout with log10 E = ${logE[r]!.toFixed(2)}, force ${force[r]!.toFixed(1)} N diverged; ` +
              `lower ROD.logE or raise ROD.substeps.`,
          );
        states.push(rod.sensors.map((s) => v[3 * s + 1]! - ROD.height));
        vertices.push(v);
      }
      return { states, vertices };
    },
  };
}

/**
 * The hand's motion (RISP Appendix B.1.3): 0.3 s at 1 ms steps, 10 frames. Finger j (its three
 * joints; the thumb's one) is driven by RISP's torque τ_j(t) = 0.35·m_j·sin(2π·clamp((t − δ_j)/P,
 * 0, 1)) N·m with P the video's length, m_j ∈ [0, 1] and δ_j = d_j·P/2, d_j ∈ [0, 1]; each
 * finger's joints share a stiffness k_j ∈ [0, 1] N·m/rad (RISP's range); joint damping 2e-3.
 * `start`: the random starts' joint angles are within ±start rad (control's, and the training's).
 */
export const HAND = {
  frames: 10,
  substeps: 30,
  dt: 1e-3,
  torque: 0.35,
  damping: 2e-3,
  fingers: 5,
  start: 0.3,
} as const;

/** The hand's model and motion under RISP's finger torques. */
export interface HandMotion {
  readonly mesh: ReturnType<typeof models.articulated.handMesh>;
  /**
   * Joint angles [HAND.frames, 13] from start angles [13] (at rest), under per-finger stiffness, torque magnitude and
   * delay [5] each (the dtype of `start`).
   */
  rollout(stiffness: Array, magnitude: Array, delay: Array, start: Array, o?: { checkpoint?: boolean }): Array;
}

/** The hand of models.articulated driven as HAND describes, in `dtype`. */
export function handMotion(dtype: "float32" | "float64" = "float32"): HandMotion {
  const { frames: T, fingers: F } = HAND,
    J = models.articulated.HAND_JOINTS;
  const { hand, state } = models.articulated.hand({ damping: HAND.damping, dtype });
  const fingerOf = globalThis.Array.from({ length: J }, (_, j) => Math.min(Math.floor(j / 3), F - 1));
  const spread = np.array(
    globalThis.Array.from({ length: F }, (_, f) => fingerOf.map((g) => (g === f ? 1 : 0))),
    { dtype },
  ); // [5, 13]
  const t = np.array(
    globalThis.Array.from({ length: T }, (_, i) => [i + 0.5]),
    { dtype },
  ); // [T, 1], in frames
  return {
    mesh: models.articulated.handMesh(hand),
    rollout(stiffness, magnitude, delay, start, o = {}) {
      const phase = np.clip(np.div(np.sub(t, np.mul(delay, T / 2)), T), 0, 1); // [T, 5]
      // [T, 13]
      const torques = np.matmul(np.mul(HAND.torque, np.mul(magnitude, np.sin(np.mul(2 * Math.PI, phase)))), spread);
      const sys = { ...hand.system, stiffness: np.matmul(stiffness, spread) };
      const s0 = { q: start, qd: np.zerosLike(state.qd) };
      return models.articulated.simulate(sys, s0, {
        dt: HAND.dt,
        substeps: HAND.substeps,
        frames: T,
        controls: torques,
        checkFinite: false,
        checkpoint: o.checkpoint ?? false,
      }).q;
    },
  };
}

/**
 * The hand of models.articulated, seen obliquely from the palm's side. The states are random
 * frames of its motions (as the rod's are of its rollouts): random per-finger stiffness, torque
 * magnitude and delay in their boxes, from starts within ±HAND.start rad. Not 13 independent
 * angles in [−π/4, π/4]: in the tasks a finger's joints bend together, and swing past π/4.
 */
export function handEnv(): RispPaperEnv {
  const motion = handMotion("float64");
  const J = models.articulated.HAND_JOINTS,
    F = HAND.fingers;
  const faces = Int32Array.from(motion.mesh.faces.dataSync());
  // Palm light; along each finger dark, light, dark; the thumb warm: which finger bends shows.
  const paints: Vec3[] = [
    [0.9, 0.85, 0.8],
    ...globalThis.Array.from({ length: 12 }, (_, j) => (j % 3 === 1 ? [0.9, 0.8, 0.6] : [0.45, 0.4, 0.4]) as Vec3),
    [0.9, 0.45, 0.3],
  ];
  const pattern = Float32Array.from(paints.flatMap((p) => globalThis.Array.from({ length: 8 }, () => [...p]).flat()));
  const rollouts = jit(
    vmap((k: Array, m: Array, d: Array, s: Array) => {
      const q = motion.rollout(k, m, d, s);
      return [q, vmap((qt: Array) => motion.mesh.vertices(qt))(q)];
    }),
  );
  return {
    name: "hand",
    stateNames: globalThis.Array.from({ length: J }, (_, j) => `joint ${j + 1} (rad)`),
    faces,
    pattern,
    groundY: 0.75,
    // At least 1.3 m away: the rasterizer's near plane is at 1 m. Framed on the fingers and the
    // thumb (the palm's lower half out of view): at fovY 19 with the whole palm, the same network
    // read the joints to 0.198 rad on the traced test images, at 14° to 0.180 (average: 0.202).
    camera: { eye: [-1.2, 1.42, -1.05], at: [0.02, 1.14, 0], fovY: 14, convention: "softras-mirror" },
    sample(rng, n) {
      const count = Math.ceil(n / FRAMES_PER_ROLLOUT);
      const draw = (k: number, lo: number, hi: number) =>
        np.array(
          globalThis.Array.from({ length: count }, () =>
            globalThis.Array.from({ length: k }, () => rng.uniform(lo, hi)),
          ),
          { dtype: "float64" },
        );
      const [k, m, d, s] = [draw(F, 0, 1), draw(F, 0, 1), draw(F, 0, 1), draw(J, -HAND.start, HAND.start)];
      const [q, x] = (rollouts(k, m, d, s) as Array[]).map((a) => a.dataSync());
      return framesOfRollouts(rng, n, HAND.frames, q!, x!, (r) => `hand: rollout ${r} diverged; lower HAND.dt.`);
    },
  };
}

/** The paper's four environments by name (each built on call: its rollouts are compiled then). */
export const RISP_ENVS = { quadrotor: quadrotorEnv, cube: cubeEnv, rod: rodEnv, hand: handEnv } as const;
export type RispEnvName = keyof typeof RISP_ENVS;
