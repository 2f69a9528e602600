/**
 * The control experiments' plumbing (gradSim §4.2, Figs. 5–6): gradsim.control's three methods on
 * the run's seeds, its report files (Fig. 6 curves, motion), and the result with the process's
 * peak memory. The scenes are gradsim.control's.
 */
import { control, type Array } from "gradsim/node";
import type { ExperimentContext } from "./run.js";

export interface ControlResult {
  readonly scene: string;
  readonly settings: control.ControlSettings;
  readonly methods: control.ControlRuns["methods"];
  /** What each method's `distance` measures. */
  readonly distanceMeaning: string;
  /** Peak resident memory of the process (MB). */
  readonly peakMemoryMB: number;
  readonly files: string[];
}

/** Every method on seeds --seed, --seed + 1, …, the report in --out. */
export async function runControl(
  ctx: ExperimentContext,
  sceneOf: (seed: number) => control.ControlScene,
  s: control.ControlSettings,
): Promise<ControlResult> {
  const r = await control.runControl(sceneOf, s, { firstSeed: ctx.flags.seed, log: (line) => ctx.log(line) });
  const files = await control.writeControlReport(ctx.out, r);
  return {
    scene: r.first.scene.name,
    settings: s,
    methods: r.methods,
    distanceMeaning: r.distanceMeaning,
    peakMemoryMB: Number((process.resourceUsage().maxRSS / 1024).toFixed(1)),
    files,
  };
}

/** --target FILE as the scene's target image (over its background), or the scene's own goal image. */
export const targetFlag = <B extends control.TargetBackground>(
  ctx: ExperimentContext,
  resolution: number,
  what: string,
): ((background: B) => Array) | undefined => {
  const file = ctx.flags.target;
  return file ? (background) => control.readTargetImage(file, resolution, what, background) : undefined;
};
