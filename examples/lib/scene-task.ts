/**
 * Single-scene mode of a non-rigid estimation task (no --dataset): fit one instance with
 * gradsim, then write what people look at — ground-truth and estimated videos (GIF), a frame
 * strip (truth / estimate / initial guess, PNG) and the loss curve (PNG + CSV) — into a
 * sub-directory of --out.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { jit, np, type Array } from "../../src/index.js";
import { fitVideo, relMae, type EstimationProblem } from "./estimation.js";
import { columnErrors, fmt, type ColumnErrors, type EstimationTask, type InstanceDraw } from "./estimation-benchmark.js";
import { writeComparison, type DisplayOptions } from "./frames.js";
import type { ExperimentContext } from "./run.js";

export interface SceneTaskResult {
  readonly task: string;
  readonly describe: string;
  /** Full vectors only for small problems (≤ 8 unknowns). */
  readonly truth?: number[];
  readonly initial?: number[];
  readonly estimate?: number[];
  readonly initialRelMae: ColumnErrors;
  readonly relMae: ColumnErrors;
  readonly iterations: number;
  /** Levenberg–Marquardt steps after the gradient steps (their losses end loss.csv). */
  readonly polishSteps: number;
  readonly fitSeconds: number;
  readonly initialLoss: number;
  readonly finalLoss: number;
  readonly files: string[];
}

export interface DisplayVideos {
  /** Every frame [T, H, W, 4] for unknowns x (the loss may use a subset). */
  (x: Array): Array;
}

export async function runSceneTask(ctx: ExperimentContext, task: EstimationTask, draw: InstanceDraw, steps: number,
  display: { video: DisplayVideos; fps: number; options?: DisplayOptions }): Promise<SceneTaskResult> {
  const dir = join(ctx.out, task.name);
  mkdirSync(dir, { recursive: true });
  ctx.log(`[${task.name}] ${draw.describe}`);
  const problem: EstimationProblem = draw.build();
  const target = jit((x: Array) => problem.video(x))(f32(draw.truth));
  const run = await fitVideo(problem, target, draw.initial, {
    ...task.fit, steps, progress: ctx.flags.json ? false : "auto",
    lossCurvePng: join(dir, "loss.png"), lossCurveCsv: join(dir, "loss.csv"),
  });
  const initialRelMae = columnErrors(task, draw.initial, draw.truth, relMae);
  const errors = columnErrors(task, run.estimate, draw.truth, relMae);
  ctx.log(`[${task.name}] rel. MAE: initial ${fmt(initialRelMae)} → estimate ${fmt(errors)} (${run.steps} steps${run.polishSteps ? ` + ${run.polishSteps} Levenberg–Marquardt` : ""}, ${run.seconds.toFixed(1)} s)`);
  const videoAll = jit(display.video);
  const { files } = await writeComparison(dir, {
    truth: videoAll(f32(draw.truth)), estimate: videoAll(f32(run.estimate)), initial: videoAll(f32(draw.initial)),
  }, display.fps, display.options);
  const small = draw.truth.length <= 8;
  return {
    task: task.name, describe: draw.describe,
    ...(small ? { truth: draw.truth, initial: draw.initial, estimate: run.estimate } : {}),
    initialRelMae, relMae: errors, iterations: run.steps, polishSteps: run.polishSteps, fitSeconds: Number(run.seconds.toFixed(2)),
    initialLoss: run.losses[0]!, finalLoss: run.losses[run.losses.length - 1]!,
    files: [...files, "loss.png", "loss.csv"].map((f) => join(task.name, f)),
  };
}

const f32 = (x: readonly number[]) => np.array([...x], { dtype: "float32" });
