/**
 * The run shared by `pendulum` and `double-pendulum`: the built-in swing (truth, guess) or, with
 * --dataset, random instances with the baselines. The task is the library's
 * (sysid.pendulumDatasetTask, src/sysid/scenes/pendulum-task.ts).
 */
import { sysid, makeRng, type Rng } from "gradsim";
import type { ExperimentContext } from "./run.js";
import { fitScene, progressOf, runDatasetTask, sceneRecord, type SceneFitResult } from "./experiment.js";
const { describePendulum, pendulumDatasetTask } = sysid;
type PendulumSpec = sysid.PendulumSpec;
type PendulumPrior = sysid.PendulumPrior;

/** Flat (L₁..L_k, θ₁..θ_k) ↔ the unknowns' values. */
const split = (x: readonly number[], k: number): sysid.Values => ({ L: x.slice(0, k), theta0: x.slice(k) });

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
  const task = pendulumDatasetTask(o.spec, o.prior, {
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
