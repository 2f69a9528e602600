/**
 * control-fem (gradSim §4.2.1, Figs. 5–6): a soft gear's per-tet activation policy, trained so
 * that the gear ends where a target image shows it (gradsim.control's gearScene: the scene, and
 * how it departs from control_fem.py).
 *
 *   npm run gradsim -- control-fem                # 5 seeds, 10 iterations
 *   npm run gradsim -- control-fem --quick        # a 288-tet gear, 1 s, 2 seeds (the test)
 */
import { control } from "gradsim";
import { runControl, targetFlag, type ControlResult } from "./lib/control.js";
import { mainIfEntry, type Experiment } from "./lib/run.js";

export const FEM_SETTINGS = {
  full: { layers: 4, seconds: 2, resolution: 64, iters: 10, seeds: 5 },
  quick: { layers: 1, seconds: 1, resolution: 32, iters: 6, seeds: 2 },
} as const;

export const experiment: Experiment<ControlResult> = {
  name: "control-fem",
  description:
    "train a soft gear's per-tet activation policy from a single target image (paper §4.2, Figs. 5–6): " +
    "random vs diffphysics (3-D) vs gradsim (pixels)",
  target: "a PNG of the gear at its goal",
  takes: ["policy", "seeds"],
  run: (ctx) => {
    const cfg = FEM_SETTINGS[ctx.flags.quick ? "quick" : "full"];
    const scene = control.gearScene({
      ...cfg,
      phases: ctx.flags.policy ?? 8,
      target: targetFlag(ctx, cfg.resolution, "the gear at its goal"),
    });
    return runControl(ctx, () => scene, {
      iters: ctx.flags.iters ?? cfg.iters,
      lr: 0.1,
      clip: 1,
      seeds: ctx.flags.seeds ?? cfg.seeds,
    });
  },
};

await mainIfEntry(experiment, import.meta.url);
