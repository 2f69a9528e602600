/**
 * Mass from video (paper §4.1.1, Table 1) — `npm run demo`.
 *
 * A rigid object gets a known impulse; how fast it then drifts and tumbles depends on its mass.
 * We render a ground-truth video with the hidden mass, start from a wrong guess, and recover
 * the mass by gradient descent on the pixelwise MSE between render(simulate(m)) and the video.
 *
 *   npx tsx examples/rigid-mass.ts                 # the built-in scene (the demo; --seed N draws another)
 *   npx tsx examples/rigid-mass.ts --dataset 20    # Table 1 protocol: random objects + baselines
 *   npx tsx examples/rigid-mass.ts --target my-scene.json   # your own scene (fields override the default)
 */
import { makeRng, sysid } from "gradsim";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { readSceneFile } from "./lib/scene-file.js";
import { fitScene, progressOf, runDatasetTask, sceneRecord, type SceneFitResult } from "./lib/experiment.js";

const {
  defaultMassScene,
  rigidDatasetTask,
  rigidGradsimSettings: gradsimSettings,
  rigidMassRange: massRange,
  rigidSceneProblem,
  rigidUnknowns,
  sampleMassScene,
} = sysid;
type RigidTaskConfig = sysid.RigidTaskConfig;

/** Full runs and the seconds-long smoke mode used by the tests. */
export const MASS_SETTINGS = {
  full: { resolution: 64, steps: 60, lr: 0.2, lrEnd: 1e-4 },
  quick: { resolution: 32, steps: 24, lr: 0.1, lrEnd: 1e-3 },
} as const;

/** The demo's wrong starting guess (kg); the default scene's true mass is 2.5 kg. */
export const DEFAULT_INITIAL_MASS = { full: 6, quick: 3.2 } as const;

export interface SingleSceneResult {
  readonly mode: "scene";
  readonly scene: Pick<sysid.RigidSceneSpec, "scale" | "frames" | "fps" | "resolution"> & { readonly shape: string };
  readonly trueMass: number;
  readonly initialMass: number;
  readonly estimatedMass: number;
  readonly absError: number;
  readonly relError: number;
  readonly iterations: number;
  readonly fitSeconds: number;
  readonly finalLoss: number;
  readonly gradient: string;
  readonly fit: SceneFitResult;
  readonly files: string[];
}

/**
 * The scene of a single run: the built-in one for seed 0, a draw from the Table 1 distribution for other seeds, or a
 * --target file.
 */
function sceneOf(ctx: ExperimentContext, mode: "full" | "quick"): { spec: sysid.RigidSceneSpec; initialMass: number } {
  const cfg = MASS_SETTINGS[mode];
  const base = defaultMassScene(cfg.resolution);
  if (ctx.flags.target) {
    const spec = readSceneFile(ctx.flags.target, base);
    return { spec, initialMass: spec.mass * (DEFAULT_INITIAL_MASS[mode] / base.mass) };
  }
  if (ctx.flags.seed === 0) return { spec: base, initialMass: DEFAULT_INITIAL_MASS[mode] };
  const draw = sampleMassScene(
    makeRng(ctx.flags.seed),
    cfg.resolution,
    mode === "quick" ? QUICK_SHAPES : sysid.RIGID_SHAPES,
  );
  return { spec: draw.spec, initialMass: draw.initialMass };
}

async function runScene(ctx: ExperimentContext): Promise<SingleSceneResult> {
  const mode = ctx.flags.quick ? "quick" : "full";
  const cfg = MASS_SETTINGS[mode];
  const { spec, initialMass } = sceneOf(ctx, mode);
  const scene = sysid.buildRigidScene(spec);
  const unknowns = rigidUnknowns(["mass"]);
  const shape = typeof spec.shape === "string" ? spec.shape : (spec.shape.name ?? "mesh");
  const fit = await fitScene(ctx, {
    name: null,
    label: "rigid-mass",
    describe:
      `${shape} ${spec.scale.join("×")} m, hidden mass ${spec.mass} kg, ` +
      `initial guess ${initialMass.toFixed(3)} kg, ` +
      `${spec.frames} frames at ${spec.fps} fps, ${scene.width}² pixels`,
    problem: rigidSceneProblem(scene, unknowns, [{ mass: spec.mass }, { mass: initialMass }]),
    unknowns,
    truth: { mass: spec.mass },
    initial: { mass: initialMass },
    settings: gradsimSettings(
      { steps: ctx.flags.iters ?? cfg.steps, lr: cfg.lr, lrEnd: cfg.lrEnd, frames: "every5", pyramid: 1 },
      progressOf(ctx),
    ),
    fps: spec.fps,
    lossLabel: "image loss (pixelwise MSE, RGBA in [0, 1])",
  });
  const estimatedMass = fit.estimateValues.mass as number;
  const absError = Math.abs(estimatedMass - spec.mass);
  ctx.log(
    `mass: true ${spec.mass} kg, estimate ${estimatedMass.toPrecision(7)} kg, ` +
      `relative error ${(absError / spec.mass).toExponential(2)}`,
  );
  return {
    mode: "scene",
    scene: { shape, scale: spec.scale, frames: spec.frames, fps: spec.fps, resolution: spec.resolution },
    trueMass: spec.mass,
    initialMass,
    estimatedMass,
    absError,
    relError: absError / spec.mass,
    iterations: fit.iterations,
    fitSeconds: fit.fitSeconds,
    finalLoss: fit.finalLoss,
    gradient: `${sysid.gradientMode("pixels", 1)} mode`,
    fit: sceneRecord(fit),
    files: fit.files,
  };
}

/** Quick (smoke) datasets draw from the shapes with few faces: rasterizing costs faces × pixels. */
const QUICK_SHAPES: readonly sysid.RigidShape[] = ["box", "cone", "cylinder", "icosphere"];

/**
 * Table 1: mass of random objects from the rigid set; initial guesses and the random baseline
 * from densities in [2, 12] kg/m³. A guess can be 6× off (log distance 1.8), so the dataset runs
 * start with larger log-space steps than the demo: the decaying learning rate must still add up
 * to the distance; a few L-BFGS steps then polish what Adam's decayed steps leave (~1e-3 → ~1e-6).
 */
export function massBenchmark(quick: boolean): RigidTaskConfig {
  const cfg = MASS_SETTINGS[quick ? "quick" : "full"];
  return {
    name: "rigid-mass",
    unknowns: ["mass"],
    sample: (rng) => {
      const s = sampleMassScene(rng, cfg.resolution, quick ? QUICK_SHAPES : sysid.RIGID_SHAPES);
      const ranges = { mass: massRange(s.volume) };
      return { spec: s.spec, initial: { mass: s.initialMass }, prior: { mass: rng.uniform(...ranges.mass) }, ranges };
    },
    fit: { steps: cfg.steps, lr: 0.3, lrEnd: cfg.lrEnd, refine: 10, frames: "every5", pyramid: 1 },
    reinforceSteps: quick ? 10 : 125,
    trainSize: 200,
  };
}

export interface DatasetRunResult {
  readonly mode: "dataset";
  readonly dataset: sysid.DatasetResult;
}

export const experiment: Experiment<SingleSceneResult | DatasetRunResult> = {
  name: "rigid-mass",
  target: "a scene JSON whose fields override the default scene",
  description:
    "mass of a rigid object from video after a known impulse (paper Table 1); " +
    "--dataset N runs the Table 1 protocol with baselines",
  run: async (ctx) =>
    ctx.flags.dataset
      ? {
          mode: "dataset",
          dataset: await runDatasetTask(
            ctx,
            rigidDatasetTask(massBenchmark(ctx.flags.quick), {
              steps: ctx.flags.iters ?? undefined,
              progress: progressOf(ctx),
            }),
          ),
        }
      : runScene(ctx),
};

await mainIfEntry(experiment, import.meta.url);
