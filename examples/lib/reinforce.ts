/**
 * The black-box baseline of the rigid experiments (Tables 1, 2): score-function descent on the
 * log-parameters of a rigid scene, with the same optimiser as the gradient-based fit.
 */
import type { Rng } from "../../src/core/host-rng.js";
import { imageLosses, rigidOptimizer, type ImageProblem, type Unknown, type Values } from "./rigid-fit.js";
import { scoreFunctionDescent, type ScoreFunctionSettings } from "./score-function.js";

/** Paper Table 5: 5 samples, 125 steps, sampling noise 0.05. */
export const REINFORCE_DEFAULTS = { samples: 5, steps: 125, sigma: 0.05 } as const;

export interface ReinforceResult {
  readonly estimate: Values;
  readonly losses: number[];
  readonly seconds: number;
}

export async function reinforce(problem: ImageProblem, initial: Values, s: ScoreFunctionSettings & { lr: number; lrEnd: number }, backend: "cpu" | "webgpu", rng: Rng): Promise<ReinforceResult> {
  const unknowns = Object.keys(initial) as Unknown[];
  const lossesOf = imageLosses(problem, unknowns, backend);
  const run = await scoreFunctionDescent(lossesOf, unknowns.map((k) => Math.log(initial[k]!)), rigidOptimizer(s), s, rng);
  return { estimate: Object.fromEntries(unknowns.map((k, i) => [k, Math.exp(run.mean[i]!)])), losses: run.losses, seconds: run.seconds };
}
