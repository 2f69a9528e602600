/** Writing a loss history to disk (Node only): CSV for analysis, PNG for a quick look. */
import { writeAtomic } from "../io/atomic.js";
import { writeLinePlot } from "../io/image.js";
import { installLossCurveWriters, prefersLogScale, type LossCurvePngOptions } from "./loss-curve.js";

/** Write `step,loss[,grad_norm]` rows (full precision, so the file can be re-read exactly). */
export function writeLossCurveCsv(path: string, losses: readonly number[], gradNorms?: readonly number[]): void {
  const header = gradNorms ? "step,loss,grad_norm" : "step,loss";
  const rows = losses.map((l, i) => (gradNorms ? `${i},${l},${gradNorms[i] ?? ""}` : `${i},${l}`));
  writeAtomic(path, [header, ...rows].join("\n") + "\n");
}

/**
 * Plot the losses against the step (log y axis when `logY` is "auto" and the losses span > 2
 * decades). Axis titles default to "step" and "loss"; pass what the loss is (and its units).
 */
export function writeLossCurvePng(path: string, losses: readonly number[], opts: LossCurvePngOptions = {}): void {
  const { logY = "auto", label = "loss", ...rest } = opts;
  writeLinePlot(path, [{ y: losses, label }], {
    xLabel: "step",
    yLabel: "loss",
    ...rest,
    logY: logY === "auto" ? prefersLogScale(losses) : logY,
  });
}

installLossCurveWriters({ csv: writeLossCurveCsv, png: writeLossCurvePng });
