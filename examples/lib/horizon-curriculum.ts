/**
 * Fitting contact parameters from far-off guesses: a curriculum over the video's length, with
 * random restarts before each stage.
 *
 * Why: with contact the loss over a whole video is rugged. A bounce or a slide that starts a
 * frame earlier changes everything after it, so the basin around the truth is narrow (measured
 * on a Table 2 scene: the loss jumps from 3.6e-3 to 1.3e-2 between 10% and 15% too little mass)
 * and descent from a guess drawn over the prior's whole range stops in another minimum (2 of 3
 * objects, for the video loss and for 3-D supervision alike). A short prefix of the video depends
 * on fewer events: the flight after the push fixes the mass, the first bounce ke and kd, the
 * slide μ. So we fit growing prefixes, each stage starting from the last one's estimate.
 *
 * Before each stage, candidates that keep each unknown of the current estimate or redraw it from
 * the prior (each with probability ½; the unknowns a shorter prefix could not see are the ones a
 * redraw helps) are scored by the stage's loss, the current estimate included. Scoring is a
 * forward pass over a short video, cheap next to a descent. The stage then descends from the
 * `finalists` best-scoring candidates and keeps the fit with the lowest loss: the best start is
 * not always in the best basin (measured on a Table 2 box: the best-scoring of 48 candidates at
 * 20 frames had μ in a wrong basin and its fit ended at μ −40%, m +2%).
 */
import type { Rng } from "../../src/core/host-rng.js";
import type { Unknown, Values } from "./rigid-fit.js";

export interface CurriculumSettings {
  /** The stages' video lengths as fractions of the whole (increasing, below 1); the full video comes after. */
  readonly horizons: readonly number[];
  /** Candidates scored before each stage. */
  readonly candidates: number;
  /** How many of the best-scoring candidates each stage fits (default 1). */
  readonly finalists?: number;
  /** Adam steps and L-BFGS steps of each stage. */
  readonly stageSteps: number;
  readonly stageRefine: number;
  /**
   * Adam's initial learning rate from inside a basin: on the whole video after the curriculum, and
   * in a stage from the previous stage's estimate. Steps of 10% (the rate for far guesses) were
   * measured to throw a rolling icosphere out again: on the whole video, ke and μ from ~1% to
   * 10–13% (≤ 2% at 2%); at 20 frames, m from 1e-4 to 5e-3 (stage loss 1.6e-7; 4.5e-9 at 2%).
   */
  readonly finalLr: number;
}

/** One stage: the loss of the video's first `frames` frames. */
export interface CurriculumStage {
  /** The stage's loss at each candidate. */
  losses(candidates: readonly Values[]): Promise<number[]>;
  /**
   * Descent from `start`: the estimate and the stage's loss there. `continuing`: the start is the
   * previous stage's estimate, already inside a basin, so the descent's first steps should be small.
   */
  fit(start: Values, continuing: boolean): Promise<{ estimate: Values; loss: number }>;
}

/** Uniform prior ranges [lo, hi] per unknown. */
export type PriorRanges = Partial<Record<Unknown, readonly [number, number]>>;

/** One draw from the prior, unknowns in the ranges' key order. */
export const drawPrior = (ranges: PriorRanges, rng: Rng): Values =>
  Object.fromEntries(Object.entries(ranges).map(([k, r]) => [k, rng.uniform(...(r as readonly [number, number]))]));

/** Prefix lengths in frames for a video of `frames` frames (at least 2, distinct, shorter than the video). */
export function stageFrames(horizons: readonly number[], frames: number): number[] {
  const out: number[] = [];
  for (const h of horizons) {
    if (!(h > 0 && h < 1)) throw new Error(`curriculum: horizons are fractions of the video in (0, 1), got ${h}.`);
    const n = Math.max(2, Math.round(h * frames));
    if (n < frames && !out.includes(n)) out.push(n);
  }
  return out;
}

/**
 * Run the stages over growing prefixes from `initial`; returns the last stage's estimate, the
 * start for the fit on the whole video.
 */
export async function horizonCurriculum(
  initial: Values, prior: PriorRanges, frames: number, s: CurriculumSettings,
  stage: (frames: number) => CurriculumStage | Promise<CurriculumStage>, rng: Rng, log: (line: string) => void = () => {},
): Promise<Values> {
  const unknowns = Object.keys(initial) as Unknown[];
  for (const k of unknowns) if (!prior[k]) throw new Error(`curriculum: no prior range for the unknown "${k}".`);
  let estimate = initial;
  const stages = stageFrames(s.horizons, frames), first = stages[0];
  for (const n of stages) {
    const st = await stage(n);
    const candidates: Values[] = [estimate];
    for (let c = 0; c < s.candidates; c++) {
      candidates.push(Object.fromEntries(unknowns.map((k) => [k, rng.next() < 0.5 ? estimate[k]! : rng.uniform(...prior[k]!)])));
    }
    const losses = await st.losses(candidates);
    const order = distinctBest(candidates, losses, s.finalists ?? 1);
    let winner: { start: number; estimate: Values; loss: number } | undefined;
    for (const c of order) {
      const fit = await st.fit(candidates[c]!, c === 0 && n !== first);
      if (!winner || fit.loss < winner.loss) winner = { start: c, ...fit };
    }
    estimate = winner!.estimate;
    const name = (c: number) => (c === 0 ? "kept" : `candidate ${c}`);
    log(`  curriculum ${n}/${frames} frames: fitted ${order.map((c) => `${name(c)} (loss ${losses[c]!.toExponential(2)})`).join(", ")}; `
      + `kept the fit from ${name(winner!.start)} (loss ${winner!.loss.toExponential(2)}), estimate ${fmtValues(estimate)}`);
  }
  return estimate;
}

/** Indices of the `count` lowest losses, skipping candidates equal to a better one (a redraw that kept every unknown). */
function distinctBest(candidates: readonly Values[], losses: readonly number[], count: number): number[] {
  if (!(Number.isInteger(count) && count >= 1)) throw new Error(`curriculum: finalists must be a positive integer, got ${count}.`);
  const seen = new Set<string>(), out: number[] = [];
  for (const c of losses.map((_, i) => i).sort((a, b) => losses[a]! - losses[b]! || a - b)) {
    const key = JSON.stringify(candidates[c]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(c);
    if (out.length === count) break;
  }
  return out;
}

export const fmtValues = (v: Values): string => Object.entries(v).map(([k, x]) => `${k} ${(x as number).toPrecision(4)}`).join(", ");
