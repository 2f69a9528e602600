/**
 * Every runnable experiment, by CLI name. Each module exports `experiment` (see examples/lib/run.ts).
 * Loaded lazily so `gradsim <name>` only imports what it runs. Add one line per experiment.
 */
import type { Experiment } from "./lib/run.js";

type Loader = () => Promise<{ experiment: Experiment<object> }>;
export const EXPERIMENTS: Record<string, Loader> = {
  "rigid-mass": () => import("./rigid-mass.js"),
  "rigid-contact": () => import("./rigid-contact.js"),
  landscape: () => import("./landscape.js"),
  deformable: () => import("./deformable.js"),
  cloth: () => import("./cloth.js"),
  pendulum: () => import("./pendulum.js"),
  "double-pendulum": () => import("./double-pendulum.js"),
  smoke: () => import("./smoke.js"),
  fit: () => import("./fit.js"),
  outside: () => import("./outside.js"),
  "imperfect-models": () => import("./imperfect-models.js"),
  "control-walker": () => import("./control-walker.js"),
  "control-fem": () => import("./control-fem.js"),
  "control-cloth": () => import("./control-cloth.js"),
  "risp-state": () => import("./risp-state.js"),
  "risp-data-efficiency": () => import("./risp-data-efficiency.js"),
  "risp-temporal-sampling": () => import("./risp-temporal-sampling.js"),
  convlstm: () => import("./convlstm.js"),
  "risp-tasks": () => import("./risp-tasks.js"),
  "risp-quadrotor-standin": () => import("./risp-quadrotor-standin.js"),
};
