/**
 * control-cloth (gradSim §4.2.2, Figs. 5–6): choose the initial velocity of a cloth thrown under
 * aerodynamic lift and drag so that it ends where a single target image shows it
 * (gradsim.control's clothControlScene: the scene, its loss, and how it departs from
 * control_cloth.py). Adam lr 0.5: the script's 0.1 for 20 epochs cannot move the velocity the
 * 4–5 m/s it needs.
 *
 *   npm run gradsim -- control-cloth              # 5 seeds, 30 iterations
 *   npm run gradsim -- control-cloth --quick      # 2 seeds (the test)
 */
import { control } from "gradsim";
import { runControl, targetFlag, type ControlResult } from "./lib/control.js";
import { CliError } from "./lib/flags.js";
import { mainIfEntry, type Experiment } from "./lib/run.js";

export const CLOTH_CONTROL_SETTINGS = {
  full: { cells: [8, 12], resolution: 64, iters: 30, seeds: 5 },
  quick: { cells: [6, 6], resolution: 64, iters: 12, seeds: 2 },
} as const;

export const experiment: Experiment<ControlResult> = {
  name: "control-cloth",
  description:
    "choose a cloth's initial velocity under lift and drag from a single target image (paper §4.2.2, Figs. 5–6): " +
    "random vs diffphysics (3-D) vs gradsim (pixels)",
  target: "a PNG of the cloth at its goal",
  takes: ["policy", "seeds"],
  run: (ctx) => {
    const cfg = CLOTH_CONTROL_SETTINGS[ctx.flags.quick ? "quick" : "full"];
    if (ctx.flags.policy !== null)
      throw new CliError(
        "control-cloth: its control is the cloth's initial velocity (3 numbers), not a phase policy; drop --policy.",
      );
    const target = targetFlag<readonly [number, number, number]>(ctx, cfg.resolution, "the cloth at its goal");
    return runControl(ctx, (seed) => control.clothControlScene({ ...cfg, ...(target ? { target } : {}) }, seed), {
      iters: ctx.flags.iters ?? cfg.iters,
      lr: 0.5,
      clip: 1e9,
      seeds: ctx.flags.seeds ?? cfg.seeds,
    });
  },
};

await mainIfEntry(experiment, import.meta.url);
