/**
 * The black-box baseline of every experiment: REINFORCE (score-function) gradient estimates of
 * the image loss through the same simulator and renderer, without any derivative of the
 * simulation (the paper's "PyBullet + REINFORCE" row, appendix H.1; Table 5 settings: 5 samples
 * per step, sampling noise 0.05).
 *
 * The policy is a Gaussian N(μ, σ²I) over unconstrained unknowns u (log for positive
 * parameters, so σ = 0.05 is a 5% perturbation); rewards R_i = −loss(u_i) are normalised across
 * the samples, and μ follows the estimate  ∇μ E[R] ≈ (1/N) Σ R̂_i (u_i − μ)/σ²  with the
 * experiment's own optimiser (so only the gradient differs from gradsim's fit).
 */
import { jit, np, optim, type Array } from "../../src/index.js";
import type { GradientTransformation } from "../../src/optim/base.js";
import type { Rng } from "../../src/core/host-rng.js";
import { mse, toPhysical, toUnconstrained, type EstimationProblem, type FitOutcome } from "./estimation.js";

export interface ScoreFunctionSettings {
  readonly samples: number;
  readonly steps: number;
  readonly sigma: number;
  readonly label: string;
  readonly progress: optim.ProgressMode;
}

export const SCORE_FUNCTION_DEFAULTS = { samples: 5, sigma: 0.05 } as const;

/**
 * Descend on E[loss(u)], u ~ N(μ, σ²I), from μ = u0. `lossesOf` scores a batch of samples
 * (rows of u) with forward passes only.
 */
export async function scoreFunctionDescent<S>(
  lossesOf: (us: number[][]) => Promise<number[]>, u0: readonly number[], optimizer: GradientTransformation<S>,
  s: ScoreFunctionSettings, rng: Rng,
): Promise<{ mean: number[]; losses: number[]; seconds: number }> {
  const n = u0.length;
  let mean = np.array([...u0], { dtype: "float32" });
  let state = optimizer.init(mean);
  const progress = optim.createProgress(s.steps, s.progress, undefined, s.label);
  const losses: number[] = [];
  const t0 = performance.now();
  for (let k = 0; k < s.steps; k++) {
    const mu = await mean.data();
    const eps = globalThis.Array.from({ length: s.samples }, () => globalThis.Array.from({ length: n }, () => rng.normal()));
    const l = await lossesOf(eps.map((e) => e.map((x, i) => mu[i]! + s.sigma * x)));
    const avg = l.reduce((a, b) => a + b, 0) / l.length;
    const std = Math.sqrt(l.reduce((a, b) => a + (b - avg) ** 2, 0) / l.length) || 1;
    losses.push(avg);
    progress.update(k, avg);
    // Descent direction on E[loss] = −∇E[R]: (1/N) Σ ((l_j − avg)/std) ε_j/σ.
    const grad = globalThis.Array.from({ length: n }, (_, i) => eps.reduce((acc, e, j) => acc + ((l[j]! - avg) / std) * e[i]! / s.sigma, 0) / s.samples);
    const [updates, next] = optimizer.update(np.array(grad, { dtype: "float32" }), state, mean);
    mean = optim.applyUpdates(mean, updates);
    state = next;
  }
  const seconds = (performance.now() - t0) / 1000;
  progress.finish(`${s.steps} steps in ${seconds.toFixed(1)}s`);
  return { mean: globalThis.Array.from(await mean.data(), Number), losses, seconds };
}

/** The baseline for the estimation problems (deformable, cloth, pendula): Adam, cosine-decayed to 1% of `lr`. */
export async function scoreFunctionFit(problem: EstimationProblem, target: Array, initial: readonly number[], s: ScoreFunctionSettings & { lr: number }, rng: Rng): Promise<FitOutcome> {
  const lossOf = jit((u: Array) => mse(problem.video(toPhysical(problem, u)), target));
  const lossesOf = async (us: number[][]) => {
    const out: number[] = [];
    for (const u of us) out.push((await lossOf(np.array(u, { dtype: "float32" })).data())[0]!);
    return out;
  };
  const optimizer = optim.adam(optim.cosineDecay({ initValue: s.lr, decaySteps: Math.max(1, s.steps), alpha: 0.01 }));
  const run = await scoreFunctionDescent(lossesOf, toUnconstrained(problem, initial), optimizer, s, rng);
  const estimate = globalThis.Array.from(await toPhysical(problem, np.array(run.mean, { dtype: "float32" })).data(), Number);
  return { estimate, losses: run.losses, steps: s.steps, polishSteps: 0, seconds: run.seconds, stopReason: "steps" };
}
