/**
 * Loss curves: the axis choice (pure) and the hook through which `fit` writes its curve files.
 * Writing files needs Node; the writers live in loss-curve-files.ts, which the Node entry loads.
 */
import type { LinePlotOptions } from "../io/plot.js";

/** A loss curve spanning more than two decades and staying positive reads best on a log axis. */
export function prefersLogScale(losses: readonly number[]): boolean {
  const finite = losses.filter(Number.isFinite);
  if (finite.length < 2 || finite.some((l) => l <= 0)) return false;
  const [lo, hi] = finite.reduce<[number, number]>(
    ([a, b], x) => [Math.min(a, x), Math.max(b, x)],
    [Infinity, -Infinity],
  );
  return hi / lo > 100;
}

export type LossCurvePngOptions = Omit<LinePlotOptions, "logY"> & { logY?: boolean | "auto"; label?: string };

export interface LossCurveWriters {
  readonly csv: (path: string, losses: readonly number[], gradNorms?: readonly number[]) => void;
  readonly png: (path: string, losses: readonly number[], opts?: LossCurvePngOptions) => void;
}

let writers: LossCurveWriters | undefined;

/** Called by loss-curve-files.ts when it loads (the Node entry loads it); a browser has none. */
export const installLossCurveWriters = (w: LossCurveWriters): void => {
  writers = w;
};

/** The file writers, or a clear error naming the option that asked for a file where there is no file system. */
export function lossCurveWriters(option: string): LossCurveWriters {
  if (!writers)
    throw new Error(
      `fit: ${option} writes a file, which needs Node: import gradsim in Node (the ` +
        `"gradsim/node" entry, which "gradsim" resolves to there), or plot result.losses yourself.`,
    );
  return writers;
}
