/**
 * Leaving a local minimum along one unknown: after a descent, each scalar unknown is scanned over
 * a grid across its prior with the others held at the estimate (forward passes only), and if a
 * grid point scores lower than the estimate, the descent is run again from the lowest one and
 * kept when it ends lower.
 *
 * Why: contact makes a video's loss rugged at small scales (curriculum.ts), and a descent can stop
 * where the loss along one unknown still falls further away. In the 50-object Table 2 run
 * two bunnies ended at kf 3.43 for 2.37 and 2.68 for 2.09 (every other unknown within 4e-3).
 * Along kf alone, from those estimates, the loss kept falling towards the truth: a 16-point grid
 * over kf's prior scored 2.9e-8 at kf 2.15 against 6.4e-8 at the estimate, and 1.1e-8 at kf 2.10
 * against 1.4e-8, and the descents from there reached the truth. The scan costs forward passes
 * only (16 points × 5 unknowns = 80), and a descent only where it finds a lower point.
 */
import { distinctBest } from "./curriculum.js";
import type { Descent, DescentSettings } from "./descend.js";
import { descend } from "./descend.js";
import type { Objective } from "./objective.js";
import { formatValues, type Layout, type Unknown, type Values } from "./unknowns.js";

export interface ScanSettings {
  /** Grid points per scalar unknown, across its prior. */
  readonly points: number;
  /** Scans (each followed by a descent when it finds a lower point) at most (default 1). */
  readonly rounds?: number;
  /** Keep every grid point's loss in the rounds' records (`ScanRound.scores`). */
  readonly recordScores?: boolean;
}

/** What one round of scanning found and did. */
export interface ScanRound {
  /** The lowest-scoring grid point (the estimate with one unknown replaced). */
  readonly start: Values;
  readonly score: number;
  /** The loss at the estimate it was compared with. */
  readonly before: number;
  /** The final loss of the descent from `start` (absent: no grid point scored lower, nothing was descended). */
  readonly loss?: number;
  readonly kept: boolean;
  /** With `recordScores`: every grid point's loss, unknown after unknown (the loss's landscape along each). */
  readonly scores?: readonly number[];
}

/**
 * Values of a scalar unknown across its prior: the midpoints of `points` equal cells, in log space
 * for a log unknown (so every decade gets the same share), never the range's ends.
 */
export function priorGrid(k: Unknown, points: number): number[] {
  if (!k.prior)
    throw new Error(
      `sysid: the scan covers each unknown's prior range, but "${k.name}" has none (give prior: [lo, hi]).`,
    );
  const [lo, hi] = k.prior;
  const t = (j: number) => (j + 0.5) / points;
  return Array.from({ length: points }, (_, j) =>
    k.transform === "log" ? lo * (hi / lo) ** t(j) : lo + (hi - lo) * t(j),
  );
}

/** The estimate with one scalar unknown at a time moved to each of its grid values (vector unknowns stay). */
export function scanCandidates(layout: Layout, estimate: Values, points: number): Values[] {
  if (!(Number.isInteger(points) && points >= 2))
    throw new Error(`sysid: scan.points must be a whole number ≥ 2, got ${points}.`);
  const scalars = layout.unknowns.filter((k) => k.size === undefined);
  if (!scalars.length)
    throw new Error("sysid: the scan moves scalar unknowns one at a time, and every unknown here is a vector.");
  return scalars.flatMap((k) => priorGrid(k, points).map((x) => ({ ...estimate, [k.name]: x })));
}

/**
 * Scan around the descent `best` (started from `from`) and descend again from a lower grid point,
 * up to `rounds` times; returns the lowest-loss descent and the rounds' records.
 */
export async function scanAndDescend(
  o: Objective,
  layout: Layout,
  best: { d: Descent; from: Values },
  settings: DescentSettings,
  scan: ScanSettings,
  log: (line: string) => void,
): Promise<{ d: Descent; from: Values; rounds: ScanRound[] }> {
  const label = settings.label ?? "fit";
  const rounds: ScanRound[] = [];
  let current = best;
  for (let r = 0; r < (scan.rounds ?? 1); r++) {
    const estimate = layout.fromU(current.d.u);
    const candidates = scanCandidates(layout, estimate, scan.points);
    const scores = await o.values(candidates.map((c) => layout.toU(c, "a scan point")));
    const i = distinctBest(candidates, scores, 1)[0]!; // NaN scores (a diverged point) rank last
    const before = current.d.finalLoss,
      score = scores[i]!;
    if (!(score < before)) {
      log(
        `  ${label}: scanned ${candidates.length} points across the priors; ` +
          `none scores below the estimate's loss ${before.toExponential(3)}`,
      );
      rounds.push({ start: candidates[i]!, score, before, kept: false, ...(scan.recordScores ? { scores } : {}) });
      break;
    }
    const d = await descend(o, layout.toU(candidates[i]!), settings);
    const kept = d.finalLoss < before;
    log(
      `  ${label}: scanned ${candidates.length} points across the priors; ` +
        `${formatValues(layout, candidates[i]!)} scores ${score.toExponential(3)} ` +
        `< ${before.toExponential(3)}; ` +
        `the descent from there ended at ${d.finalLoss.toExponential(3)}: ${kept ? "kept" : "discarded"}`,
    );
    rounds.push({
      start: candidates[i]!,
      score,
      before,
      loss: d.finalLoss,
      kept,
      ...(scan.recordScores ? { scores } : {}),
    });
    if (!kept) break;
    current = { d, from: candidates[i]! };
  }
  return { ...current, rounds };
}
