/**
 * The black-box baseline: REINFORCE (score-function) gradient estimates of the loss through the
 * same simulator and renderer, without any derivative of the simulation (gradSim's "PyBullet +
 * REINFORCE" row, appendix H.1; Table 5 settings: 5 samples per step, sampling noise 0.05).
 *
 * The policy is a Gaussian N(μ, σ²I) over the unconstrained unknowns u (log for positive
 * parameters, so σ = 0.05 is a 5% perturbation); rewards R_i = −loss(u_i) are normalised across
 * the samples, and μ follows the estimate ∇μ E[R] ≈ (1/N) Σ R̂_i (u_i − μ)/σ² with the same
 * optimiser as the gradient-based fit (so only the gradient differs).
 */
import { np } from "../core/np/index.js";
import type { Rng } from "../core/host-rng.js";
import * as optim from "../optim/index.js";

export interface ScoreFunctionSettings {
  readonly samples: number;
  readonly steps: number;
  readonly sigma: number;
  readonly label: string;
  readonly progress: optim.ProgressMode;
}

/** Paper Table 5: 5 samples, 125 steps, sampling noise 0.05. */
export const REINFORCE_DEFAULTS = { samples: 5, steps: 125, sigma: 0.05 } as const;

/**
 * Descend on E[loss(u)], u ~ N(μ, σ²I), from μ = u0. `lossesOf` scores a batch of samples
 * (rows of u) with forward passes only.
 */
export async function scoreFunctionDescent<S>(
  lossesOf: (us: number[][]) => Promise<number[]>,
  u0: readonly number[],
  optimizer: optim.GradientTransformation<S>,
  s: ScoreFunctionSettings,
  rng: Rng,
): Promise<{ mean: number[]; losses: number[]; seconds: number }> {
  if (!(Number.isInteger(s.samples) && s.samples >= 2))
    throw new Error(`sysid: REINFORCE needs at least 2 samples per step, got ${s.samples}.`);
  if (!(s.sigma > 0)) throw new Error(`sysid: REINFORCE's sampling noise sigma must be positive, got ${s.sigma}.`);
  const n = u0.length;
  let mean = np.array([...u0], { dtype: "float32" });
  let state = optimizer.init(mean);
  const progress = optim.createProgress(s.steps, s.progress, undefined, s.label);
  const losses: number[] = [];
  const t0 = performance.now();
  for (let k = 0; k < s.steps; k++) {
    const mu = await mean.data();
    const eps = globalThis.Array.from({ length: s.samples }, () =>
      globalThis.Array.from({ length: n }, () => rng.normal()),
    );
    const raw = await lossesOf(eps.map((e) => e.map((x, i) => mu[i]! + s.sigma * x)));
    // A sample whose simulation diverged gets the worst reward of the batch instead of poisoning the mean.
    const finite = raw.filter(Number.isFinite);
    if (!finite.length) {
      progress.finish(`stopped at step ${k}`);
      throw new Error(
        `${s.label}: every REINFORCE sample's loss is non-finite at step ${k}; the ` +
          `simulation diverges around the current mean (narrow the prior or start closer).`,
      );
    }
    const worst = Math.max(...finite);
    const l = raw.map((x) => (Number.isFinite(x) ? x : worst));
    const avg = l.reduce((a, b) => a + b, 0) / l.length;
    const std = Math.sqrt(l.reduce((a, b) => a + (b - avg) ** 2, 0) / l.length) || 1;
    losses.push(avg);
    progress.update(k, avg);
    // Descent direction on E[loss] = −∇E[R]: (1/N) Σ ((l_j − avg)/std) ε_j/σ.
    const grad = globalThis.Array.from(
      { length: n },
      (_, i) => eps.reduce((acc, e, j) => acc + (((l[j]! - avg) / std) * e[i]!) / s.sigma, 0) / s.samples,
    );
    const [updates, next] = optimizer.update(np.array(grad, { dtype: "float32" }), state, mean);
    mean = optim.applyUpdates(mean, updates);
    state = next;
  }
  const seconds = (performance.now() - t0) / 1000;
  progress.finish(`${s.steps} steps in ${seconds.toFixed(1)}s`);
  return { mean: globalThis.Array.from(await mean.data(), Number), losses, seconds };
}
