/**
 * control-walker (gradSim §4.2.1, Figs. 5–6): a planar soft walker's policy of per-triangle
 * activations, trained so that the last frame matches a target image of the walker at a goal pose
 * further along the ground (gradsim.control's walkerScene: the scene, and how it departs from
 * control_walker.py).
 *
 *   npm run gradsim -- control-walker                # 5 seeds, 20 iterations
 *   npm run gradsim -- control-walker --quick        # 1 s horizon, 2 seeds (the test)
 *   npm run gradsim -- control-walker --target goal.png --policy 4
 */
import { control } from "gradsim";
import { runControl, targetFlag, type ControlResult } from "./lib/control.js";
import { mainIfEntry, type Experiment } from "./lib/run.js";

export const WALKER_SETTINGS = {
  full: { seconds: 3, goal: 0.6, resolution: 64, iters: 20, seeds: 5 },
  quick: { seconds: 1, goal: 0.25, resolution: 32, iters: 10, seeds: 2 },
} as const;

export const experiment: Experiment<ControlResult> = {
  name: "control-walker",
  description:
    "train a soft walker's policy from a single target image (paper §4.2, Figs. 5–6): " +
    "random vs diffphysics (3-D) vs gradsim (pixels)",
  target: "a PNG of the walker at its goal",
  takes: ["policy", "seeds"],
  run: (ctx) => {
    const cfg = WALKER_SETTINGS[ctx.flags.quick ? "quick" : "full"];
    const scene = control.walkerScene({
      ...cfg,
      phases: ctx.flags.policy ?? 8,
      target: targetFlag(ctx, cfg.resolution, "the walker at its goal"),
    });
    return runControl(ctx, () => scene, {
      iters: ctx.flags.iters ?? cfg.iters,
      lr: 0.03,
      clip: 1,
      seeds: ctx.flags.seeds ?? cfg.seeds,
    });
  },
};

await mainIfEntry(experiment, import.meta.url);
