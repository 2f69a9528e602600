/**
 * RISP's downstream problems (RISP, ICLR 2022, §4.3–4.4 and Appendix C.1) in each environment
 * of envs.ts, as differentiable maps from normalised unknowns u to a rollout:
 *
 *  - sysid      (Table 2): the system parameter from a video with known actions — quadrotor
 *               mass in [2.8, 3.2) kg (truth 3), cube contact stiffness log10 kn in [5.5, 6.5]
 *               (truth 6), hand joint stiffness per finger in [0, 1) (truth 1), rod Young's
 *               modulus log10 E within the range its predictor was trained on (below);
 *  - imitation  (Table 3): the action sequence of a video with known parameters — quadrotor
 *               rotor thrusts, hand finger torques (RISP's (magnitude, delay) per finger), rod
 *               central force;
 *  - control    (Table 4): actions that steer the system from another initial state to the
 *               final state of the imitation task's reference (shown as one image).
 *
 * Every unknown is normalised to a box (sysid: [0, 1]; actions: [−1, 1] or [0, 1]), so one
 * optimiser setting serves every problem; the descent projects onto the box.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import * as models from "../../models/index.js";
import { vmap } from "../../transforms/index.js";
import { rispProblem, type RispProblem, type RispScenario, type RispTask, type Rollout } from "../tasks.js";
import {
  CUBE,
  cubeMotion,
  HAND,
  handMotion,
  QUADROTOR,
  quadrotorMotion,
  quadrotorStart,
  RISP_ENVS,
  ROD,
  rodModel,
  yawQuaternion,
  type RispEnvName,
  type RispPaperEnv,
} from "./envs.js";

/** Which paper environments pose each task (RISP Tables 2–4). */
export const RISP_TASKS: Readonly<Record<RispTask, readonly RispEnvName[]>> = {
  sysid: ["quadrotor", "cube", "hand", "rod"],
  imitation: ["quadrotor", "hand", "rod"],
  control: ["quadrotor", "hand", "rod"],
};

type Scenario = RispScenario;
/** A problem in one of the paper's environments. */
export type RispPaperProblem = RispProblem<RispPaperEnv>;

const f32 = (x: unknown): Array => np.array(x, { dtype: "float32" });
const repeat = <T>(n: number, f: (i: number) => T): T[] => globalThis.Array.from({ length: n }, (_, i) => f(i));

/** The quadrotor: QUADROTOR's motion (envs.ts) from 0.85 m, every one of its 10 frames shown. */
function quadrotorScenario(env: RispPaperEnv, task: RispTask): Scenario {
  const {
    frames: FRAMES,
    knots: KNOTS,
    nominalMass: MASS,
    mass: [LIGHT, HEAVY],
  } = QUADROTOR;
  const simulate = quadrotorMotion(env.body!);
  // A rise with a slow pitch, roll and yaw (a ∈ [−1, 1]: up to ±10% of hover thrust).
  const designed = [
    [0.6, 0.5, 0.45, 0.5],
    [0.5, 0.55, 0.5, 0.45],
    [0.45, 0.5, 0.6, 0.5],
    [0.5, 0.45, 0.5, 0.6],
    [0.55, 0.5, 0.5, 0.5],
  ];
  // A 24 cm rise that tilts by up to 0.25 rad and back, drifting under 9 cm: the whole body stays
  // in view, so control's target image (its last frame) shows it (the earlier actions drifted
  // 33 cm, to the image's edge).
  const imitated = [
    [0.7, 0.7, 0.7, 0.4],
    [0.5, 0.2, 0.6, 0.8],
    [0.4, 0.1, 0.6, 0.5],
    [0.7, 0.1, 0.3, 0.3],
    [0.3, 0.9, 0.4, 0.2],
  ];
  const frames = repeat(FRAMES, (i) => i);
  const start = [0, 0.85, 0, ...yawQuaternion(0.3)];
  if (task === "sysid") {
    return {
      unknowns: [`mass (kg): ${LIGHT} + ${(HEAVY - LIGHT).toFixed(1)}·u`],
      lower: [0],
      upper: [1],
      truth: [(MASS - LIGHT) / (HEAVY - LIGHT)],
      frames,
      start,
      guess: (rng) => [rng.uniform(0, 1)],
      rollout: (u, start) =>
        simulate(np.add(LIGHT, np.mul(HEAVY - LIGHT, np.index(u, 0))), f32(designed.flat()), start),
      parameterError: (u) => Math.abs((HEAVY - LIGHT) * u[0]! - (MASS - LIGHT)),
      errorName: "mass error (kg)",
    };
  }
  const D = 4 * KNOTS;
  return {
    unknowns: repeat(D, (i) => `thrust knot ${Math.floor(i / 4) + 1}, rotor ${(i % 4) + 1}: hover·(1 + 0.1·u)`),
    lower: repeat(D, () => -1),
    upper: repeat(D, () => 1),
    truth: imitated.flat(),
    frames,
    start,
    guess: (rng) => repeat(D, () => rng.uniform(-0.5, 0.5)),
    rollout: (u, start) => simulate(np.array(MASS, { dtype: "float32" }), u, start),
    randomStart: quadrotorStart,
    timedActions: true,
  };
}

/**
 * The cube: one of its drops (CUBE, envs.ts), released flat 0.3 m above the ground, every one of its 12 frames shown.
 * No actions: system identification only.
 */
function cubeScenario(env: RispPaperEnv): Scenario {
  const simulate = cubeMotion(env.body!),
    [LOW, HIGH] = CUBE.logKe;
  return {
    unknowns: [`log10 kn: ${LOW} + u`],
    lower: [0],
    upper: [1],
    truth: [0.5],
    frames: repeat(CUBE.frames, (i) => i),
    start: [0.1, CUBE.side / 2 + 0.3, 0, ...yawQuaternion(0.2)],
    guess: (rng) => [rng.uniform(0, 1)],
    rollout: (u, start) => simulate(np.add(LOW, np.mul(HIGH - LOW, np.index(u, 0))), start),
    parameterError: (u) => Math.abs(u[0]! - 0.5),
    errorName: "log10 kn error",
  };
}

/** The hand: HAND's motion (envs.ts), every one of its 10 frames shown. */
function handScenario(task: RispTask): Scenario {
  const J = models.articulated.HAND_JOINTS,
    FINGERS = HAND.fingers;
  const motion = handMotion();
  // Checkpointed: reverse mode through 300 steps of the hand otherwise holds ~15 GB.
  const simulate = (stiffness: Array, magnitude: Array, delay: Array, start: Array): Rollout => {
    const q = motion.rollout(stiffness, magnitude, delay, start, { checkpoint: true });
    return { states: q, vertices: vmap((qt: Array) => motion.mesh.vertices(qt))(q) };
  };
  const frames = repeat(HAND.frames, (i) => i),
    start = repeat(J, () => 0);
  const designed = { magnitude: [0.8, 0.6, 0.9, 0.7, 0.8], delay: [0, 0.2, 0.4, 0.6, 0.3] };
  if (task === "sysid") {
    return {
      unknowns: repeat(FINGERS, (f) => `finger ${f + 1} joint stiffness (N·m/rad)`),
      lower: repeat(FINGERS, () => 0),
      upper: repeat(FINGERS, () => 1),
      truth: repeat(FINGERS, () => 1),
      frames,
      start,
      guess: (rng) => repeat(FINGERS, () => rng.uniform(0, 1)),
      rollout: (u, start) => simulate(u, f32(designed.magnitude), f32(designed.delay), start),
      parameterError: (u) => u.reduce((s, k) => s + Math.abs(k - 1), 0) / FINGERS,
      errorName: "mean joint stiffness error (N·m/rad)",
    };
  }
  return {
    unknowns: [
      ...repeat(FINGERS, (f) => `finger ${f + 1} torque magnitude m`),
      ...repeat(FINGERS, (f) => `finger ${f + 1} delay δ/(P/2)`),
    ],
    lower: repeat(2 * FINGERS, () => 0),
    upper: repeat(2 * FINGERS, () => 1),
    truth: [0.9, 0.5, 0.7, 0.3, 0.6, 0.1, 0.5, 0.3, 0.8, 0.2],
    frames,
    start,
    guess: (rng) => repeat(2 * FINGERS, () => rng.uniform(0, 1)),
    rollout: (u, start) =>
      simulate(
        np.ones([FINGERS], { dtype: "float32" }),
        np.take(u, np.arange(0, FINGERS), 0),
        np.take(u, np.arange(FINGERS, 2 * FINGERS), 0),
        start,
      ),
    randomStart: (rng) => repeat(J, () => rng.uniform(-HAND.start, HAND.start)),
  };
}

/**
 * The rod: the 1 s rollouts its predictor was trained on (ROD), frames 5, 8, …, 29 shown. The
 * central force is 15·a N with a ∈ [−1, 1] at 5 knots of 6 frames. Young's modulus: log10 E =
 * 4.3 + 0.7·u (the range the predictor was trained on; the paper's is [4, 7], beyond what these
 * explicit steps keep stable), truth 4.65.
 */
function rodScenario(task: RispTask): Scenario {
  const KNOTS = 5,
    TRUTH = 0.5;
  const rod = rodModel();
  const frames = repeat(9, (i) => 5 + 3 * i);
  const logE = (u: Array) => np.add(ROD.logE[0], np.mul(ROD.logE[1] - ROD.logE[0], u));
  const simulate = (lE: Array, knots: Array): Rollout => {
    const x = rod.rollout(lE, np.mul(15, np.repeat(knots, ROD.frames / KNOTS, 0)));
    return {
      states: np.sub(np.take(np.take(x, np.array(rod.sensors, { dtype: "int32" }), 1), 1, 2), ROD.height),
      vertices: x,
    };
  };
  if (task === "sysid") {
    const E = (u: number) => 10 ** (ROD.logE[0] + (ROD.logE[1] - ROD.logE[0]) * u);
    return {
      unknowns: [`log10 E (Pa): ${ROD.logE[0]} + ${(ROD.logE[1] - ROD.logE[0]).toFixed(1)}·u`],
      lower: [0],
      upper: [1],
      truth: [TRUTH],
      frames,
      start: [0],
      guess: (rng) => [rng.uniform(0, 1)],
      rollout: (u) => simulate(logE(np.index(u, 0)), f32([-0.8, -0.8, 0.4, 0.4, -0.5])),
      parameterError: (u) => Math.abs(E(u[0]!) - E(TRUTH)),
      errorName: "Young's modulus error (Pa)",
    };
  }
  return {
    unknowns: repeat(KNOTS, (k) => `force knot ${k + 1}: 15·u N`),
    lower: repeat(KNOTS, () => -1),
    upper: repeat(KNOTS, () => 1),
    truth: [-0.9, -0.3, 0.6, 0.2, -0.7],
    frames,
    start: [0],
    guess: (rng) => repeat(KNOTS, () => rng.uniform(-1, 1)),
    rollout: (u) => simulate(logE(f32(TRUTH)), u),
    timedActions: true,
  };
}

function scenario(env: RispPaperEnv, task: RispTask): Scenario {
  switch (env.name) {
    case "quadrotor":
      return quadrotorScenario(env, task);
    case "cube":
      return cubeScenario(env);
    case "hand":
      return handScenario(task);
    case "rod":
      return rodScenario(task);
  }
}

/**
 * The problem of `task` in the paper environment `name` (its scenario above); `rispProblem` makes one for your own
 * environment.
 */
export function paperProblem(name: RispEnvName, task: RispTask): RispPaperProblem {
  if (!RISP_TASKS[task].includes(name))
    throw new Error(`risp: the ${name} has no ${task} task (${task}: ${RISP_TASKS[task].join(", ")}).`);
  const env = RISP_ENVS[name]();
  return rispProblem(env, task, scenario(env, task));
}
