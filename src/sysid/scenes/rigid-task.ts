/**
 * The rigid-body experiments' (Tables 1 and 2) problems and dataset tasks on `sysid`: the
 * unknowns (mass and contact coefficients in log space), a scene's problem with its tile
 * capacity measured for jit, and the table protocol's rows — gradsim (pixels), DiffPhysics (3-D
 * vertex trajectories, L-BFGS: that loss is smooth and Adam stalls on it) and REINFORCE through
 * the same simulator and renderer with the same optimiser. The scenes are rigid-dataset.ts's draws
 * (or any `RigidSceneSpec`); the settings are the caller's (the rigid-mass and rigid-contact
 * examples hold the tables').
 */
import type { Array } from "../../core/array.js";
import type { Rng } from "../../core/host-rng.js";
import { jit } from "../../transforms/index.js";
import type { CurriculumSettings } from "../curriculum.js";
import type { DatasetTask } from "../dataset.js";
import { paramsOf, type EstimateSettings } from "../estimate.js";
import type { FrameSelection } from "../losses.js";
import type { Problem } from "../objective.js";
import type { ScanSettings } from "../scan.js";
import type { Params, Unknown, Values } from "../unknowns.js";
import {
  buildRigidScene,
  measureTiling,
  rigidProblem,
  rigidVertices,
  RIGID_UNITS,
  sceneValues,
  type RigidScene,
  type RigidSceneSpec,
  type RigidUnknown,
} from "./rigid.js";

/** Values of some of a rigid scene's unknowns (mass, contact coefficients). */
export type RigidValues = Partial<Record<RigidUnknown, number>>;

/** Every rigid unknown in log space, with its unit. */
export const rigidUnknowns = (
  names: readonly RigidUnknown[],
  ranges: Partial<Record<RigidUnknown, readonly [number, number]>> = {},
): Unknown[] =>
  names.map((name) => ({
    name,
    transform: "log" as const,
    unit: RIGID_UNITS[name],
    ...(ranges[name] ? { prior: ranges[name] } : {}),
  }));

/** A scene's true values of the unknowns. */
export function rigidTrueValues(s: RigidSceneSpec, unknowns: readonly RigidUnknown[]): RigidValues {
  const all = sceneValues(s);
  return Object.fromEntries(unknowns.map((k) => [k, all[k] ?? NaN]));
}

/**
 * The scene as a problem whose jitted renders keep only the faces that can reach each screen tile:
 * the tile capacity is measured on the trajectories of the given parameter values (the truth and
 * the initial guess), with headroom for the motion between iterates.
 */
export function rigidSceneProblem(
  scene: RigidScene,
  unknowns: readonly Unknown[],
  at: readonly Values[],
): Problem<Array> {
  const frames = scene.spec.frames;
  const trajectory = jit((p: Params) => rigidVertices(scene, p, frames));
  const tiling = measureTiling(
    scene,
    at.map((v) => trajectory(paramsOf(unknowns, v))),
  );
  return rigidProblem(scene, { tiling });
}

/**
 * Settings of the gradsim fit of a rigid scene: Adam (little momentum, exponentially decaying
 * steps), then L-BFGS, then optionally Levenberg–Marquardt steps on the residuals.
 */
export interface RigidFitConfig {
  readonly steps: number;
  readonly lr: number;
  readonly lrEnd: number;
  /** Adam stops after this many steps without a lower loss (sysid's AdamSettings.patience). */
  readonly patience?: number;
  readonly refine?: number;
  readonly polish?: number;
  readonly frames: FrameSelection;
  readonly pyramid: number;
  /**
   * After the whole video's descent, scan each unknown across its prior and descend again from a lower point (sysid's
   * scan).
   */
  readonly scan?: ScanSettings;
}

/** The `estimate` settings of a gradsim (pixels) fit with `c`. */
export const rigidGradsimSettings = (c: RigidFitConfig, progress: false | "auto"): EstimateSettings => ({
  optimizer: "adam",
  steps: c.steps,
  adam: { lr: c.lr, lrEnd: c.lrEnd, b1: 0.5, patience: c.patience },
  refine: c.refine,
  polish: c.polish,
  frames: c.frames,
  pyramid: c.pyramid,
  scan: c.scan,
  progress,
});

/** A table of rigid scenes: its unknowns, its scene distribution and its rows' settings. */
export interface RigidTaskConfig {
  readonly name: string;
  readonly unknowns: readonly RigidUnknown[];
  /**
   * A random scene, the gradient methods' start, a draw from the prior (the "random" baseline) and the prior's
   * ranges.
   */
  sample(rng: Rng): {
    spec: RigidSceneSpec;
    initial: RigidValues;
    prior: RigidValues;
    ranges: Partial<Record<RigidUnknown, readonly [number, number]>>;
  };
  readonly fit: RigidFitConfig;
  /** Both gradient methods first fit growing prefixes of the video (sysid's curriculum), then the whole video. */
  readonly curriculum?: CurriculumSettings;
  readonly reinforceSteps: number;
  readonly trainSize: number;
}

const shapeName = (s: RigidSceneSpec) => (typeof s.shape === "string" ? s.shape : (s.shape.name ?? "mesh"));
const describe = (s: RigidSceneSpec, truth: RigidValues, initial: RigidValues) =>
  `${shapeName(s)} ${s.scale.map((x) => x.toFixed(2)).join("×")}, ` +
  `truth ${formatRigidValues(truth)}, initial ${formatRigidValues(initial)}`;

/** "mass 2.500, ke 1.000e+4": how a dataset instance's description writes values (tables match on it). */
export const formatRigidValues = (v: RigidValues): string =>
  Object.entries(v)
    .map(([k, x]) => `${k} ${(x as number).toPrecision(4)}`)
    .join(", ");

/** The gradSim paper's rigid-body fitting budget (exp01_gradsim.py, exp02_gradsim.py): 30 steps at rate 0.1. */
export const PAPER_RIGID_PROCEDURE = { lr: 0.1, steps: 30, frames: "every5" } as const;

/** The Table 1 / Table 2 protocol over random rigid scenes. */
export function rigidDatasetTask(
  c: RigidTaskConfig,
  o: { steps?: number; progress: false | "auto" },
): DatasetTask<Array> {
  const steps = o.steps ?? c.fit.steps;
  return {
    name: c.name,
    unknowns: rigidUnknowns(c.unknowns),
    trainSize: c.trainSize,
    sample: (rng) => {
      const d = c.sample(rng);
      const truth = rigidTrueValues(d.spec, c.unknowns);
      const unknowns = rigidUnknowns(c.unknowns, d.ranges);
      return {
        truth,
        initial: d.initial,
        prior: d.prior,
        priorRanges: d.ranges,
        describe: describe(d.spec, truth, d.initial),
        problem: () => rigidSceneProblem(buildRigidScene(d.spec), unknowns, [truth, d.initial]),
      };
    },
    methods: (i, seed) => ({
      // The same restarts for both gradient methods: one seed per object.
      gradsim: {
        method: "pixels",
        settings: {
          ...rigidGradsimSettings({ ...c.fit, steps }, o.progress),
          ...(c.curriculum ? { curriculum: c.curriculum, seed: seed * 104_729 + i } : {}),
        },
      },
      // The paper's budget (its exp01/exp02 scripts: 30 steps at rate 0.1 on the MSE of every 5th frame) from the same
      // start, without restarts, curriculum, scan or polish. Plain SGD's step scales with the loss, which is ours: at
      // rate 0.1 it moved quick mode's first object's loss 3% in 30 steps (9.5e-4 → 9.2e-4). So the steps are Adam's,
      // at a constant rate 0.1 in log space.
      paper: {
        method: "pixels",
        settings: {
          optimizer: "adam",
          steps: PAPER_RIGID_PROCEDURE.steps,
          adam: { lr: PAPER_RIGID_PROCEDURE.lr, lrEnd: PAPER_RIGID_PROCEDURE.lr, b1: 0.5 },
          frames: PAPER_RIGID_PROCEDURE.frames,
          progress: o.progress,
        },
      },
      diffphysics: {
        method: "states",
        settings: {
          optimizer: "lbfgs",
          steps,
          polish: c.fit.polish,
          scan: c.fit.scan,
          progress: o.progress,
          ...(c.curriculum ? { curriculum: c.curriculum, seed: seed * 104_729 + i } : {}),
        },
      },
      // REINFORCE scores the same loss as gradsim (its frames and pyramid): every frame cost it 5× the renders on
      // Table 1.
      reinforce: {
        method: "reinforce",
        settings: {
          optimizer: "adam",
          steps: c.reinforceSteps,
          adam: { lr: c.fit.lr, lrEnd: c.fit.lrEnd, b1: 0.5 },
          frames: c.fit.frames,
          pyramid: c.fit.pyramid,
          seed: seed * 7919 + i,
          progress: o.progress,
        },
      },
    }),
  };
}
