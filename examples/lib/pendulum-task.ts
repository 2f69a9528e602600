/**
 * The estimation task shared by `pendulum` and `double-pendulum`: unknowns x = (L₁..L_k,
 * θ₁(0)..θ_k(0)) — rod lengths (log space) and initial angles — from the video of the swing;
 * DiffPhysics is supervised with the 3-D bob positions.
 */
import { np, type Array } from "../../src/index.js";
import { range, type EstimationProblem } from "./estimation.js";
import { runTaskDataset, type EstimationTask, type InstanceDraw, type TaskDatasetResult } from "./estimation-benchmark.js";
import { runSceneTask, type SceneTaskResult } from "./scene-task.js";
import type { ExperimentContext } from "./run.js";
import type { Rng } from "../../src/core/host-rng.js";
import { bobPositions, buildPendulum, pendulumAngles, pendulumVideo, type PendulumScene, type PendulumSpec } from "./pendulum-scene.js";

export interface PendulumPrior {
  /** Per link: length range (m) and initial-angle range (rad). */
  readonly length: readonly (readonly [number, number])[];
  readonly theta0: readonly (readonly [number, number])[];
}

export const samplePendulum = (rng: Rng, p: PendulumPrior): number[] =>
  [...p.length.map(([lo, hi]) => rng.uniform(lo, hi)), ...p.theta0.map(([lo, hi]) => rng.uniform(lo, hi))];

export type DrawFn = (truth: number[], initial: number[], prior: number[]) => InstanceDraw;

/** Split x into (lengths, initial angles). */
export function pendulumParams(links: number, x: Array): { length: Array; theta0: Array } {
  const [length, theta0] = np.split(x, [links], 0) as [Array, Array];
  return { length, theta0 };
}

export function pendulumProblem(scene: PendulumScene): EstimationProblem {
  const k = scene.spec.links;
  const angles = (x: Array) => pendulumAngles(scene, pendulumParams(k, x));
  return {
    logScale: [...range(k).map(() => true), ...range(k).map(() => false)],
    states: (x) => bobPositions(scene, pendulumParams(k, x).length, angles(x)),
    video: (x) => pendulumVideo(scene, pendulumParams(k, x).length, angles(x)),
  };
}

export const describePendulum = (x: readonly number[], links: number): string =>
  `L = (${x.slice(0, links).map((v) => v.toFixed(3)).join(", ")}) m, θ₀ = (${x.slice(links).map((v) => v.toFixed(3)).join(", ")}) rad`;

export function pendulumTask(spec: PendulumSpec, prior: PendulumPrior, o: {
  name: string; steps: number; reinforceSteps: number;
  /** The gradient methods' start for a truth (a prior draw, or a perturbation of the truth for chaotic systems). */
  initial: (rng: Rng, truth: number[]) => number[];
}): EstimationTask & { draw: DrawFn; scene: PendulumScene } {
  const scene = buildPendulum(spec);
  const problem = pendulumProblem(scene);
  const k = spec.links;
  const draw: DrawFn = (truth, initial, priorDraw) => ({
    truth, initial, prior: priorDraw,
    describe: `truth ${describePendulum(truth, k)}; initial guess ${describePendulum(initial, k)}`,
    build: () => problem,
  });
  return {
    name: o.name, columns: { L: range(k), theta0: range(k, k) },
    sample: (rng) => {
      const truth = samplePendulum(rng, prior);
      return draw(truth, o.initial(rng, truth), samplePendulum(rng, prior));
    },
    fit: { optimizer: "lbfgs", steps: o.steps },
    reinforceSteps: o.reinforceSteps, reinforceLr: 0.05, trainSize: 100,
    draw, scene,
  };
}

/** Every frame of the swing [frames, H, W, 4] for x (for the GIFs). */
export const pendulumVideoAll = (scene: PendulumScene, x: Array): Array => {
  const p = pendulumParams(scene.spec.links, x);
  return pendulumVideo(scene, p.length, pendulumAngles(scene, p), null);
};

/**
 * The pendulum experiments' run: the built-in scene (truth, guess) or, with --dataset, random
 * instances with the baselines.
 */
export async function runPendulumExperiment(ctx: ExperimentContext, o: {
  name: string; spec: PendulumSpec; prior: PendulumPrior;
  settings: { readonly steps: number; readonly reinforceSteps: number };
  initial: (rng: Rng, truth: number[]) => number[];
  truth: number[]; guess: number[];
}): Promise<{ mode: "scene" | "dataset"; result: SceneTaskResult | TaskDatasetResult }> {
  const task = pendulumTask(o.spec, o.prior, { name: o.name, steps: o.settings.steps, reinforceSteps: o.settings.reinforceSteps, initial: o.initial });
  const steps = ctx.flags.iters ?? o.settings.steps;
  if (ctx.flags.dataset !== null) return { mode: "dataset", result: await runTaskDataset(ctx, task, ctx.flags.dataset, steps) };
  const video = (x: Array) => pendulumVideoAll(task.scene, x);
  return { mode: "scene", result: await runSceneTask(ctx, task, task.draw(o.truth, o.guess, o.truth), steps, { video, fps: o.spec.fps }) };
}
