/**
 * Mass from video (paper §4.1.1, Table 1) — `npm run demo`.
 *
 * A rigid object gets a known impulse; how fast it then drifts and tumbles depends on its mass.
 * We render a ground-truth video with the hidden mass, start from a wrong guess, and recover
 * the mass by gradient descent on the pixelwise MSE between render(simulate(m)) and the video.
 *
 *   npx tsx examples/rigid-mass.ts                 # the built-in default scene (the demo)
 *   npx tsx examples/rigid-mass.ts --dataset 20    # Table 1 protocol: random objects + baselines
 *   npx tsx examples/rigid-mass.ts --target my-scene.json   # your own scene (fields override the default)
 */
import { join } from "node:path";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { defaultMassScene, massRange, sampleMassScene } from "./lib/rigid-dataset.js";
import { drawPrior } from "./lib/horizon-curriculum.js";
import { buildScene, paramArrays, verticesFn, type RigidSceneSpec } from "./lib/rigid-scene.js";
import { fitFromVideo, imageProblem, type FitSettings } from "./lib/rigid-fit.js";
import { frameIndices, renderVideo } from "./lib/video.js";
import { writeComparison } from "./lib/frames.js";
import { readSceneFile } from "./lib/scene-file.js";
import { RIGID_SHAPES, type RigidShape } from "./lib/rigid-shapes.js";
import { runRigidBenchmark, type BenchmarkConfig, type BenchmarkResult } from "./lib/rigid-benchmark.js";

/** Full runs and the seconds-long smoke mode used by the tests. */
export const MASS_SETTINGS = {
  full: { resolution: 64, steps: 60, lr: 0.2, lrEnd: 1e-4 },
  quick: { resolution: 32, steps: 24, lr: 0.1, lrEnd: 1e-3 },
} as const;

/** The demo's wrong starting guess (kg); the default scene's true mass is 2.5 kg. */
export const DEFAULT_INITIAL_MASS = { full: 6, quick: 3.2 } as const;

export interface SingleSceneResult {
  readonly mode: "scene";
  readonly scene: Pick<RigidSceneSpec, "shape" | "scale" | "frames" | "fps" | "resolution">;
  readonly trueMass: number;
  readonly initialMass: number;
  readonly estimatedMass: number;
  readonly absError: number;
  readonly relError: number;
  readonly iterations: number;
  readonly fitSeconds: number;
  readonly finalLoss: number;
  readonly gradient: string;
  readonly files: string[];
}

async function runScene(ctx: ExperimentContext): Promise<SingleSceneResult> {
  const mode = ctx.flags.quick ? "quick" : "full";
  const cfg = MASS_SETTINGS[mode];
  const base = defaultMassScene(cfg.resolution);
  const spec = ctx.flags.target ? readSceneFile(ctx.flags.target, base) : base;
  const initialMass = ctx.flags.target ? spec.mass * (DEFAULT_INITIAL_MASS[mode] / base.mass) : DEFAULT_INITIAL_MASS[mode];
  const scene = buildScene(spec);
  ctx.log(`scene: ${spec.shape} ${spec.scale.join("×")} m, hidden mass ${spec.mass} kg, initial guess ${initialMass.toFixed(3)} kg, ` +
    `${spec.frames} frames at ${spec.fps} fps, ${spec.resolution}² pixels`);

  const settings: FitSettings = {
    steps: ctx.flags.iters ?? cfg.steps, lr: cfg.lr, lrEnd: cfg.lrEnd, frames: "every5", pyramid: 1, label: "rigid-mass",
    progress: ctx.flags.json ? false : "auto",
    lossCurvePng: join(ctx.out, "loss.png"), lossCurveCsv: join(ctx.out, "loss.csv"),
  };
  const problem = await imageProblem(scene, settings, ctx.backend, { mass: initialMass });
  const fit = await fitFromVideo(problem, { mass: initialMass }, settings, ctx.backend);
  const estimatedMass = fit.estimate.mass!;

  // The full 60-frame videos for people to look at: truth and the estimate.
  const all = frameIndices("every", spec.frames);
  const physics = verticesFn(scene, all);
  const videoAt = (mass: number) => renderVideo(scene, physics(paramArrays({ mass })));
  const { files } = await writeComparison(ctx.out, { truth: videoAt(spec.mass), estimate: videoAt(estimatedMass), initial: videoAt(initialMass) }, spec.fps);

  const absError = Math.abs(estimatedMass - spec.mass);
  ctx.log(`mass: true ${spec.mass} kg, estimate ${estimatedMass.toPrecision(7)} kg, relative error ${(absError / spec.mass).toExponential(2)}`);
  return {
    mode: "scene",
    scene: { shape: spec.shape, scale: spec.scale, frames: spec.frames, fps: spec.fps, resolution: spec.resolution },
    trueMass: spec.mass, initialMass, estimatedMass, absError, relError: absError / spec.mass,
    iterations: fit.steps, fitSeconds: Number(fit.seconds.toFixed(2)), finalLoss: fit.finalLoss,
    gradient: ctx.backend === "cpu" ? "forward mode (jit)" : "reverse mode (jitted rollout + rasterizer op by op)",
    files: [...files, "loss.png", "loss.csv"],
  };
}

/** Quick (smoke) datasets draw from the shapes with few faces: rasterizing costs faces × pixels. */
const QUICK_SHAPES: readonly RigidShape[] = ["box", "cone", "cylinder", "icosphere"];

/**
 * Table 1: mass of random objects from the rigid set; initial guesses and the random baseline
 * from densities in [2, 12] kg/m³. A guess can be 6× off (log distance 1.8), so the dataset runs
 * start with larger log-space steps than the demo: the decaying learning rate must still add up
 * to the distance.
 */
export function massBenchmark(quick: boolean): BenchmarkConfig {
  const cfg = MASS_SETTINGS[quick ? "quick" : "full"];
  return {
    name: "rigid-mass",
    unknowns: ["mass"],
    sample: (rng) => {
      const s = sampleMassScene(rng, cfg.resolution, quick ? QUICK_SHAPES : RIGID_SHAPES);
      const ranges = { mass: massRange(s.volume) };
      return { spec: s.spec, initial: { mass: s.initialMass }, prior: drawPrior(ranges, rng), ranges };
    },
    // Random objects and 6×-off guesses: a few L-BFGS steps polish what Adam's decayed steps leave (~1e-3 → ~1e-6).
    fit: { steps: cfg.steps, lr: 0.3, lrEnd: cfg.lrEnd, refine: 10, frames: "every5", pyramid: 1 },
    reinforceSteps: quick ? 10 : 125,
    trainSize: 200,
  };
}

export const experiment: Experiment<SingleSceneResult | BenchmarkResult> = {
  name: "rigid-mass",
  target: "a scene JSON whose fields override the default scene",
  description: "mass of a rigid object from video after a known impulse (paper Table 1); --dataset N runs the Table 1 protocol with baselines",
  run: (ctx) => (ctx.flags.dataset ? runRigidBenchmark(ctx, massBenchmark(ctx.flags.quick)) : runScene(ctx)),
};

await mainIfEntry(experiment, import.meta.url);
