/**
 * The estimation task shared by `pendulum` and `double-pendulum`: unknowns L₁..L_k (rod lengths,
 * log space) and θ₁(0)..θ_k(0) (initial angles) from the video of the swing; DiffPhysics is
 * supervised with the 3-D bob positions.
 */
import { sysid, makeRng, type Rng } from "gradsim";
import type { ExperimentContext } from "./run.js";
import { fitScene, progressOf, runDatasetTask, sceneRecord, type SceneFitResult } from "./experiment.js";
import { table3Rows } from "./tables.js";
const { buildPendulum, pendulumProblem } = sysid;
type PendulumSpec = sysid.PendulumSpec;

export interface PendulumPrior {
  /** Per link: length range (m) and initial-angle range (rad). */
  readonly length: readonly (readonly [number, number])[];
  readonly theta0: readonly (readonly [number, number])[];
}

/** Flat (L₁..L_k, θ₁..θ_k) ↔ the unknowns' values. */
const split = (x: readonly number[], k: number): sysid.Values => ({ L: x.slice(0, k), theta0: x.slice(k) });

export const samplePendulum = (rng: Rng, p: PendulumPrior): number[] => [
  ...p.length.map(([lo, hi]) => rng.uniform(lo, hi)),
  ...p.theta0.map(([lo, hi]) => rng.uniform(lo, hi)),
];

export const describePendulum = (x: readonly number[], links: number): string =>
  `L = (${x
    .slice(0, links)
    .map((v) => v.toFixed(3))
    .join(", ")}) m, θ₀ = (${x
    .slice(links)
    .map((v) => v.toFixed(3))
    .join(", ")}) rad`;

const unknownsFor = (k: number): sysid.Unknown[] => [
  { name: "L", size: k, transform: "log", unit: "m" },
  { name: "theta0", size: k, unit: "rad" },
];

export function pendulumTask(
  spec: PendulumSpec,
  prior: PendulumPrior,
  o: {
    name: string;
    steps: number;
    reinforceSteps: number;
    progress: false | "auto";
    /** The gradient methods' start for a truth (a prior draw, or a perturbation of the truth for chaotic systems). */
    initial: (rng: Rng, truth: number[]) => number[];
  },
): sysid.DatasetTask<unknown> & { problem: sysid.Problem<unknown>; settings: sysid.EstimateSettings } {
  const scene = buildPendulum(spec);
  const problem = pendulumProblem(scene) as sysid.Problem<unknown>;
  const k = spec.links;
  const settings: sysid.EstimateSettings = {
    optimizer: "lbfgs",
    steps: o.steps,
    frames: scene.rendered.slice(),
    progress: o.progress,
  };
  return {
    name: o.name,
    unknowns: unknownsFor(k),
    trainSize: 100,
    sample: (rng) => {
      const truth = samplePendulum(rng, prior);
      const initial = o.initial(rng, truth),
        priorDraw = samplePendulum(rng, prior);
      return {
        truth: split(truth, k),
        initial: split(initial, k),
        prior: split(priorDraw, k),
        problem: () => problem,
        describe: `truth ${describePendulum(truth, k)}; initial guess ${describePendulum(initial, k)}`,
      };
    },
    methods: table3Rows(settings, o.reinforceSteps, 0.05),
    problem,
    settings,
  };
}

/**
 * The pendulum experiments' run: the built-in scene (truth, guess) or, with --dataset, random
 * instances with the baselines.
 */
export async function runPendulumExperiment(
  ctx: ExperimentContext,
  o: {
    name: string;
    spec: PendulumSpec;
    prior: PendulumPrior;
    settings: { readonly steps: number; readonly reinforceSteps: number };
    initial: (rng: Rng, truth: number[]) => number[];
    truth: number[];
    guess: number[];
  },
): Promise<{ mode: "scene" | "dataset"; result: SceneFitResult | sysid.DatasetResult }> {
  const task = pendulumTask(o.spec, o.prior, {
    name: o.name,
    steps: ctx.flags.iters ?? o.settings.steps,
    reinforceSteps: o.settings.reinforceSteps,
    initial: o.initial,
    progress: progressOf(ctx),
  });
  if (ctx.flags.dataset !== null) return { mode: "dataset", result: await runDatasetTask(ctx, task) };
  const k = o.spec.links;
  // Seed 0 is the built-in swing; other seeds draw the truth and the guess as a dataset instance.
  const draw = ctx.flags.seed === 0 ? null : task.sample(makeRng(ctx.flags.seed));
  const truth = draw ? [...(draw.truth.L as number[]), ...(draw.truth.theta0 as number[])] : o.truth;
  const guess = draw ? [...(draw.initial.L as number[]), ...(draw.initial.theta0 as number[])] : o.guess;
  const r = await fitScene(ctx, {
    name: o.name,
    label: o.name,
    describe: `truth ${describePendulum(truth, k)}; initial guess ${describePendulum(guess, k)}`,
    problem: task.problem,
    unknowns: task.unknowns,
    truth: split(truth, k),
    initial: split(guess, k),
    settings: task.settings,
    fps: o.spec.fps,
    lossLabel: "image loss (pixelwise MSE, RGBA in [0, 1])",
  });
  return { mode: "scene", result: sceneRecord(r) };
}
