/**
 * The black-box baseline of the rigid experiments (Tables 1, 2): score-function descent on the
 * log-parameters of a rigid scene, with the same optimiser as the gradient-based fit.
 */
import { jit, np, vmap, type Array } from "../../src/index.js";
import type { Rng } from "../../src/core/host-rng.js";
import type { RigidParams } from "./rigid-scene.js";
import { rigidOptimizer, type ImageProblem, type Unknown, type Values } from "./rigid-fit.js";
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
  // Image losses of a batch of log-parameter rows [S, n], vectorised over the samples.
  const batched = (u: Array): Array => vmap((row: Array) => {
    const p: RigidParams = Object.fromEntries(unknowns.map((k, i) => [k, np.exp(np.index(row, i))]));
    return problem.loss(problem.render(p));
  })(u);
  const evaluate = backend === "cpu" ? jit(batched) : batched;
  const lossesOf = async (us: number[][]) => globalThis.Array.from(await evaluate(np.array(us, { dtype: "float32" })).data(), Number);
  const run = await scoreFunctionDescent(lossesOf, unknowns.map((k) => Math.log(initial[k]!)), rigidOptimizer(s), s, rng);
  return { estimate: Object.fromEntries(unknowns.map((k, i) => [k, Math.exp(run.mean[i]!)])), losses: run.losses, seconds: run.seconds };
}
