/**
 * Sign steps (Rprop⁻, Riedmiller & Braun 1993): a polish for losses with a kink at the minimum.
 *
 * Each unknown moves by its own step against its gradient's sign, the step starting at
 * `step`, halved when the sign flips (and that move skipped), grown by 1.2 otherwise (up to
 * `maxStep`); the lowest iterate is kept. Adam's steps stay ~lr whatever the gradient's size, so
 * on an L1 loss (RISP's predictor and oracle losses) a descent ends oscillating a tenth of lr
 * about the kink — the oracle's 2.0e-3 kg and 484 Pa in RISP's Table 2 without this — while
 * Levenberg–Marquardt assumes a smooth sum of squares.
 *
 * When every unknown's move is skipped the point is unchanged, and its gradient gives the next
 * move at once rather than being evaluated again (on 1-D problems, one of 20 evaluations was lost
 * at each flip). A bisection (halving at every move once the sign has flipped) settles a 1-D kink
 * faster but ended 45 of RISP Table 2's 48 predictor runs (15–19 unknowns with the look ψ) at
 * higher losses: the minimum along one unknown moves while the others do.
 */
import { np } from "../core/np/index.js";
import type { Objective } from "./objective.js";

export interface SignStepSettings {
  /** Every unknown's first step (e.g. the descent's last learning rate). */
  readonly step: number;
  /** The largest step (e.g. the descent's first learning rate). */
  readonly maxStep: number;
}

export interface SignStepResult {
  /** The lowest iterate (host values) and its loss. */
  readonly u: number[];
  readonly loss: number;
  /** The loss at every evaluated iterate, the start's first. */
  readonly losses: number[];
  readonly seconds: number;
  readonly stopReason: string;
}

/** Up to `steps` evaluations of sign steps from `from`, within `box` if given. */
export async function signSteps(
  o: Objective,
  from: readonly number[],
  steps: number,
  s: SignStepSettings,
  box?: { readonly lower: readonly number[]; readonly upper: readonly number[] },
): Promise<SignStepResult> {
  if (!(s.step > 0 && s.maxStep >= s.step))
    throw new Error(`sysid: sign steps need 0 < step ≤ maxStep, got step ${s.step} and maxStep ${s.maxStep}.`);
  if (from.length !== o.size) throw new Error(`sysid: the start has ${from.length} values, the objective ${o.size}.`);
  const D = from.length,
    step = new Float64Array(D).fill(s.step),
    previous = new Float64Array(D);
  const clamp = (x: number, i: number) => (box ? Math.min(box.upper[i]!, Math.max(box.lower[i]!, x)) : x);
  const signStep = (u: readonly number[], g: ArrayLike<number>) =>
    u.map((x, i) => {
      const turn = g[i]! * previous[i]!;
      if (turn < 0) {
        step[i] = step[i]! / 2;
        previous[i] = 0;
        return x;
      }
      if (turn > 0) step[i] = Math.min(step[i]! * 1.2, s.maxStep);
      previous[i] = g[i]!;
      return clamp(x - Math.sign(g[i]!) * step[i]!, i);
    });
  const same = (a: readonly number[], b: readonly number[]) => a.every((x, i) => x === b[i]);
  const t0 = performance.now(),
    losses: number[] = [];
  let u = [...from],
    best = { u, loss: Infinity },
    stopReason = "steps";
  for (let it = 0; it < steps; it++) {
    const [L, G] = o.valueAndGrad(np.array(u, { dtype: "float32" }));
    const loss = (await L.data())[0]!,
      g = await G.data();
    losses.push(loss);
    if (!Number.isFinite(loss) || !g.every(Number.isFinite)) {
      stopReason = `the loss or its gradient is not finite at step ${it}`;
      break;
    }
    if (loss < best.loss) best = { u, loss };
    // Every unknown's move skipped leaves the point as it was: its gradient gives the next move at once.
    let next = signStep(u, g);
    if (same(next, u)) next = signStep(u, g);
    if (same(next, u)) {
      stopReason = "nothing moves (a zero gradient, or pressed against the box)";
      break;
    }
    u = next;
  }
  return { u: best.u, loss: best.loss, losses, seconds: (performance.now() - t0) / 1000, stopReason };
}
