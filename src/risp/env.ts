/**
 * What RISP needs to know about a system (RISP, ICLR 2022, §3): the mesh a state poses (its
 * triangles and paint), the camera, what a state is, and how training states are drawn. A user
 * writes one of these for their own system; the training set (training-set.ts), the predictor
 * (predictor.ts) and the tasks (tasks.ts) take it.
 */
import type { TypedArray } from "../core/dtype.js";
import type { Rng } from "../core/host-rng.js";
import type { LookAtCamera } from "../sysid/scenes/camera.js";

/** States and the world vertices [V·3] they pose, one entry per state. */
export interface PosedStates {
  readonly states: number[][];
  readonly vertices: Float64Array[];
}

export interface RispEnv {
  /** For messages and file names. */
  readonly name: string;
  /** What each state component is (with units): the predictor reads one number per name. */
  readonly stateNames: readonly string[];
  /** Triangles [F·3] (counter-clockwise seen from outside) over the vertices a state poses. */
  readonly faces: Int32Array;
  /**
   * Per-vertex paint [V·3] in [0, 1], multiplied by the rendering's albedo: paint the body so that no motion maps it
   * onto itself.
   */
  readonly pattern: Float32Array;
  /** The camera of every image (training and target). */
  readonly camera: LookAtCamera;
  /** Height of the ground plane the training grounds and the traced targets lie on (below the body). */
  readonly groundY: number;
  /** Draw n states and the vertices they pose (seeded by `rng`): the training distribution of states. */
  sample(rng: Rng, n: number): PosedStates;
}

/** The vertex count of an environment's mesh (its paint has one colour per vertex), checking its faces. */
export function vertexCount(env: RispEnv): number {
  if (env.pattern.length % 3 !== 0)
    throw new Error(
      `risp: ${env.name}'s pattern has ${env.pattern.length} entries; give one RGB colour per vertex ([V·3]).`,
    );
  if (env.faces.length % 3 !== 0 || env.faces.length === 0)
    throw new Error(
      `risp: ${env.name}'s faces have ${env.faces.length} entries; give triangles as vertex indices [F·3].`,
    );
  const V = env.pattern.length / 3;
  const bad = env.faces.find((i) => !(i >= 0 && i < V));
  if (bad !== undefined)
    throw new Error(`risp: ${env.name}'s faces use vertex ${bad}, but its pattern colours ${V} vertices (0…${V - 1}).`);
  return V;
}

/** Check posed vertices against the environment's mesh: V·3 finite numbers each. */
export function checkPosed(env: RispEnv, vertices: readonly ArrayLike<number>[], what = "vertices"): void {
  const V = vertexCount(env);
  vertices.forEach((v, i) => {
    if (v.length !== 3 * V)
      throw new Error(
        `risp: ${env.name}'s ${what} ${i} has ${v.length} numbers; its mesh has ${V} vertices (${3 * V} numbers).`,
      );
    for (let k = 0; k < v.length; k++)
      if (!Number.isFinite(v[k]!))
        throw new Error(
          `risp: ${env.name}'s ${what} ${i} is not finite (entry ${k} is ${v[k]}); ` +
            `the simulation that posed it diverged.`,
        );
  });
}

/**
 * The frame of each of n states: state i is a frame of rollout ⌊i/perRollout⌋ in [first, T), the
 * `perRollout` of a rollout distinct, so that no training image repeats another.
 */
export function rolloutFrames(
  rng: Rng,
  n: number,
  T: number,
  o: { first?: number; perRollout?: number } = {},
): number[] {
  const first = o.first ?? 0,
    per = o.perRollout ?? 4;
  if (!(T - first >= per))
    throw new Error(
      `risp: ${per} distinct frames per rollout need at least ${per} frames from frame ${first}, got ${T - first}.`,
    );
  const frames: number[] = [];
  const range = Array.from({ length: T - first }, (_, k) => first + k);
  while (frames.length < n) frames.push(...rng.shuffle(range).slice(0, Math.min(per, n - frames.length)));
  return frames;
}

/**
 * n states, each a random frame of rollout ⌊i/perRollout⌋ (`rolloutFrames`), and their vertices,
 * from ⌈n/perRollout⌉ rollouts' states [count·T·S] and vertices [count·T·V·3]: a sampler whose
 * states are frames of the system's motions. A frame whose state is not finite throws
 * `diverged(rollout)`.
 */
export function framesOfRollouts(
  rng: Rng,
  n: number,
  T: number,
  states: TypedArray,
  vertices: TypedArray,
  diverged: (rollout: number) => string,
  perRollout = 4,
): PosedStates {
  const count = Math.ceil(n / perRollout),
    S = states.length / (count * T),
    V3 = vertices.length / (count * T);
  if (!Number.isInteger(S) || !Number.isInteger(V3))
    throw new Error(
      `risp: ${count} rollouts of ${T} frames do not divide ${states.length} state and ` +
        `${vertices.length} vertex numbers.`,
    );
  const out: { states: number[][]; vertices: Float64Array[] } = { states: [], vertices: [] };
  const frames = rolloutFrames(rng, n, T, { perRollout });
  for (let i = 0; i < n; i++) {
    const rollout = Math.floor(i / perRollout),
      at = rollout * T + frames[i]!;
    const state = Array.from(states.subarray(at * S, (at + 1) * S));
    if (!state.every(Number.isFinite)) throw new Error(diverged(rollout));
    out.states.push(state);
    out.vertices.push(Float64Array.from(vertices.subarray(at * V3, (at + 1) * V3)));
  }
  return out;
}
