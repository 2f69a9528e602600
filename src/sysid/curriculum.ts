/**
 * Global strategies around a descent: starting points scored by the loss (explicit starts and
 * restarts drawn from the prior), and a curriculum over the video's length.
 *
 * Why a curriculum: with contact the loss over a whole video is rugged. A bounce or a slide that
 * starts a frame earlier changes everything after it, so the basin around the truth is narrow
 * (measured on a Table 2 scene: the loss jumps from 3.6e-3 to 1.3e-2 between 10% and 15% too
 * little mass) and descent from a guess drawn over the prior's whole range stops in another
 * minimum (2 of 3 objects, for the video loss and for 3-D supervision alike). A short prefix of
 * the video depends on fewer events: the flight after the push fixes the mass, the first bounce
 * ke and kd, the slide μ. So we fit growing prefixes, each stage starting from the last one's
 * estimate.
 *
 * Before each stage, candidates that keep each unknown of the current estimate or redraw it from
 * the prior (each with probability ½; the unknowns a shorter prefix could not see are the ones a
 * redraw helps) are scored by the stage's loss, the current estimate included. Scoring is a
 * forward pass over a short video, cheap next to a descent. The stage then descends from the
 * `finalists` best-scoring candidates and keeps the fit with the lowest loss: the best start is
 * not always in the best basin (measured on a Table 2 box: the best-scoring of 48 candidates at
 * 20 frames had μ in a wrong basin and its fit ended at μ −40%, m +2%).
 */
import type { Rng } from "../core/host-rng.js";
import type { Layout, Value, Values } from "./unknowns.js";
import { formatValues } from "./unknowns.js";

export interface CurriculumSettings {
  /** The stages' video lengths as fractions of the whole (increasing, below 1); the full video comes after. */
  readonly horizons: readonly number[];
  /** Candidates scored before each stage. */
  readonly candidates: number;
  /** How many of the best-scoring candidates each stage fits (default 1). */
  readonly finalists?: number;
  /** Descent steps of each stage (and, after Adam, L-BFGS steps). */
  readonly stageSteps: number;
  readonly stageRefine?: number;
  /**
   * Adam's initial learning rate from inside a basin: on the whole video after the curriculum, and
   * in a stage from the previous stage's estimate. Steps of 10% (the rate for far guesses) were
   * measured to throw a rolling icosphere out again: on the whole video, ke and μ from ~1% to
   * 10–13% (≤ 2% at 2%); at 20 frames, m from 1e-4 to 5e-3 (stage loss 1.6e-7; 4.5e-9 at 2%).
   */
  readonly finalLr: number;
}

/** One stage: the loss of the video's first `frames` frames, scored at candidates and descended from a start. */
export interface CurriculumStage {
  losses(candidates: readonly Values[]): Promise<number[]>;
  /**
   * `continuing`: the start is the previous stage's estimate, already inside a basin, so the first steps should be
   * small.
   */
  fit(start: Values, continuing: boolean): Promise<{ estimate: Values; loss: number }>;
}

export interface StageRecord {
  readonly frames: number;
  readonly fitted: { readonly candidate: number; readonly score: number }[];
  readonly kept: number;
  readonly loss: number;
  readonly estimate: Values;
}

/** Prefix lengths in frames for a video of `frames` frames (at least 2, distinct, shorter than the video). */
export function stageFrames(horizons: readonly number[], frames: number): number[] {
  const out: number[] = [];
  for (const h of horizons) {
    if (!(h > 0 && h < 1))
      throw new Error(`sysid: curriculum horizons are fractions of the video in (0, 1), got ${h}.`);
    const n = Math.max(2, Math.round(h * frames));
    if (n < frames && !out.includes(n)) out.push(n);
  }
  return out;
}

/**
 * Indices of the `count` lowest losses, skipping candidates equal to a better one (a redraw that kept every unknown).
 */
export function distinctBest(candidates: readonly Values[], losses: readonly number[], count: number): number[] {
  if (!(Number.isInteger(count) && count >= 1))
    throw new Error(`sysid: finalists must be a positive integer, got ${count}.`);
  const seen = new Set<string>(),
    out: number[] = [];
  const order = losses
    .map((_, i) => i)
    .sort((a, b) => (Number.isNaN(losses[a]!) ? 1 : Number.isNaN(losses[b]!) ? -1 : losses[a]! - losses[b]! || a - b));
  for (const c of order) {
    const key = JSON.stringify(candidates[c]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(c);
    if (out.length === count) break;
  }
  return out;
}

/** A candidate that keeps each unknown of `estimate` or redraws it from the prior (probability ½ each). */
function redraw(layout: Layout, estimate: Values, rng: Rng): Values {
  const out: Record<string, Value> = {};
  for (const k of layout.unknowns) {
    if (!k.prior)
      throw new Error(
        `sysid: the curriculum redraws unknowns from their prior, but "${k.name}" has none (give prior: [lo, hi]).`,
      );
    if (rng.next() < 0.5) {
      out[k.name] = estimate[k.name]!;
      continue;
    }
    const xs = globalThis.Array.from({ length: k.size ?? 1 }, () => rng.uniform(k.prior![0], k.prior![1]));
    out[k.name] = k.size === undefined ? xs[0]! : xs;
  }
  return out;
}

/**
 * Run the stages over growing prefixes from `initial`; returns the last stage's estimate (the
 * start for the fit on the whole video) and what each stage did.
 */
export async function horizonCurriculum(
  layout: Layout,
  initial: Values,
  frames: number,
  s: CurriculumSettings,
  stage: (frames: number) => CurriculumStage | Promise<CurriculumStage>,
  rng: Rng,
  log: (line: string) => void = () => {},
): Promise<{ estimate: Values; stages: StageRecord[] }> {
  let estimate = initial;
  const stages = stageFrames(s.horizons, frames),
    first = stages[0];
  const records: StageRecord[] = [];
  for (const n of stages) {
    const st = await stage(n);
    const candidates: Values[] = [estimate];
    for (let c = 0; c < s.candidates; c++) candidates.push(redraw(layout, estimate, rng));
    const losses = await st.losses(candidates);
    const order = distinctBest(candidates, losses, s.finalists ?? 1);
    let winner: { start: number; estimate: Values; loss: number } | undefined;
    for (const c of order) {
      const fit = await st.fit(candidates[c]!, c === 0 && n !== first);
      if (!winner || fit.loss < winner.loss) winner = { start: c, ...fit };
    }
    estimate = winner!.estimate;
    const name = (c: number) => (c === 0 ? "kept" : `candidate ${c}`);
    log(
      `  curriculum ${n}/${frames} frames: ` +
        `fitted ${order.map((c) => `${name(c)} (loss ${losses[c]!.toExponential(2)})`).join(", ")}; ` +
        `kept the fit from ${name(winner!.start)} (loss ${winner!.loss.toExponential(2)}), ` +
        `estimate ${formatValues(layout, estimate)}`,
    );
    records.push({
      frames: n,
      fitted: order.map((c) => ({ candidate: c, score: losses[c]! })),
      kept: winner!.start,
      loss: winner!.loss,
      estimate,
    });
  }
  return { estimate, stages: records };
}
