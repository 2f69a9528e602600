/**
 * Simple pendulum from video (paper appendix C.3): the rod length L and the initial angle θ₀,
 * recovered by gradient-based optimisation (L-BFGS) of the pixelwise MSE through
 * render(simulate(L, θ₀)). The pendulum starts at rest at θ₀ and swings with light damping.
 *
 *   npx tsx examples/pendulum.ts                # one swing (L = 0.9 m, θ₀ = 0.8 rad; guess 0.6 m, 0.4 rad)
 *   npx tsx examples/pendulum.ts --dataset 10   # random pendula, with the baselines
 *
 * Not part of the paper's tables; the result reports relative errors per unknown.
 */
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { sysid } from "gradsim";
import type { SceneFitResult } from "./lib/experiment.js";
import { runPendulumExperiment } from "./lib/pendulum-task.js";
const { defaultPendulum, samplePendulum } = sysid;
type PendulumPrior = sysid.PendulumPrior;

export const PENDULUM_SETTINGS = {
  full: { resolution: 48, frames: 45, steps: 40, reinforceSteps: 125 },
  quick: { resolution: 24, frames: 24, steps: 10, reinforceSteps: 0 },
} as const;

/** Dataset distribution: L ~ U[0.5, 1.2] m, θ₀ ~ U[0.4, 1.2] rad; initial guesses are independent draws. */
export const PENDULUM_PRIOR: PendulumPrior = { length: [[0.5, 1.2]], theta0: [[0.4, 1.2]] };

export interface PendulumResult {
  readonly mode: "scene" | "dataset";
  readonly pendulum: SceneFitResult | sysid.DatasetResult;
}

async function run(ctx: ExperimentContext): Promise<PendulumResult> {
  const cfg = PENDULUM_SETTINGS[ctx.flags.quick ? "quick" : "full"];
  const r = await runPendulumExperiment(ctx, {
    name: "pendulum",
    spec: { ...defaultPendulum(cfg.resolution), frames: cfg.frames },
    prior: PENDULUM_PRIOR,
    settings: cfg,
    initial: (rng) => samplePendulum(rng, PENDULUM_PRIOR),
    truth: [0.9, 0.8],
    guess: [0.6, 0.4],
  });
  return { mode: r.mode, pendulum: r.result };
}

export const experiment: Experiment<PendulumResult> = {
  name: "pendulum",
  description: "rod length and initial angle of a simple pendulum, from video",
  run,
};

await mainIfEntry(experiment, import.meta.url);
