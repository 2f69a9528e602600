/**
 * Smoke control (paper appendix C.4, gradSim's demo_smoke2d): optimise the initial velocity
 * field of 2-D smoke (Stam stable fluids, `src/models/smoke`) so that after T steps the smoke
 * density forms a target image. The rendered image is the density field itself.
 *
 *   npx tsx examples/smoke.ts                       # built-in target: a ring
 *   npx tsx examples/smoke.ts --target image.png    # your own target (grey, resized to the grid)
 *   npx tsx examples/smoke.ts --dataset 5           # random ring targets; mean loss reduction
 *
 * Unknowns: vx, vy on the N×N grid (2N² values), from rest; loss: MSE(final density, target);
 * Adam (as gradSim's demo) through the whole rollout (semi-Lagrangian advection and Jacobi
 * projection). L-BFGS was tried: its line search stalls on some targets (the bilinear advection's
 * floor makes the loss only piecewise smooth), where Adam keeps going.
 */
import { join } from "node:path";
import { jit, np, optim, type Array, writeGif, writePng, models, makeRng, labelledGrid } from "gradsim/node";
import { displayFrames, stripIndices } from "gradsim/sysid/node";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { CliError } from "./lib/flags.js";
import { densityArray, pngTarget, ringTarget } from "./lib/smoke-target.js";
const { smoke } = models;

export const SMOKE_SETTINGS = {
  full: { grid: 32, steps: 24, iters: 150, jacobi: 10 },
  quick: { grid: 20, steps: 14, iters: 30, jacobi: 6 },
} as const;

export interface SmokeRun {
  readonly target: string;
  readonly initialLoss: number;
  readonly finalLoss: number;
  /** finalLoss / initialLoss. */
  readonly lossRatio: number;
  readonly iterations: number;
  readonly fitSeconds: number;
}
export interface SmokeResult {
  readonly mode: "scene" | "dataset";
  readonly grid: number;
  readonly steps: number;
  readonly runs: SmokeRun[];
  readonly meanLossRatio: number;
  readonly files: string[];
}

interface SmokeProblem {
  /** Density after every step [T, N, N] from the initial velocity u = (vx, vy) [2, N, N]. */
  densities(u: Array): Array;
}

function smokeProblem(n: number, steps: number, jacobi: number): SmokeProblem {
  const { system, state } = smoke.smokeGrid(n, { iterations: jacobi });
  return {
    densities: (u) => {
      const [vx, vy] = np.split(u, 2, 0).map((p) => np.squeeze(p, 0)) as [Array, Array];
      return smoke.simulate(system, { ...state, vx, vy }, { dt: 1, frames: steps }).smoke;
    },
  };
}

/** Adam's learning rate (cells per step), cosine-decayed to 5% over the run. */
const ADAM_LR = 0.2;

const finalFrame = (d: Array): Array => np.squeeze(np.split(d, [d.shape[0]! - 1], 0)[1]!, 0);

async function optimise(
  ctx: ExperimentContext,
  p: SmokeProblem,
  target: Array,
  n: number,
  iters: number,
  files?: { png: string; csv: string },
) {
  const loss = (u: Array) => np.mean(np.square(np.sub(finalFrame(p.densities(u)), target)));
  return optim.fit(loss, np.zeros([2, n, n], { dtype: "float32" }), {
    optimizer: optim.adam(optim.cosineDecay({ initValue: ADAM_LR, decaySteps: iters, alpha: 0.05 })),
    steps: iters,
    progress: ctx.flags.json ? false : "auto",
    lossCurvePng: files?.png,
    lossCurveCsv: files?.csv,
  });
}

/** Grey density frames [T, N, N] → opaque RGBA frames (alpha 1) for the GIF helpers. */
const greyFrames = (d: Array): Array => {
  const c = np.clip(d, 0, 1);
  return np.stack([c, c, c, np.onesLike(c)], -1);
};

async function run(ctx: ExperimentContext): Promise<SmokeResult> {
  const mode = ctx.flags.quick ? "quick" : "full";
  const cfg = SMOKE_SETTINGS[mode];
  const n = cfg.grid;
  const iters = ctx.flags.iters ?? cfg.iters;
  const problem = smokeProblem(n, cfg.steps, cfg.jacobi);
  if (ctx.flags.dataset !== null) {
    if (ctx.flags.target)
      throw new CliError("--target and --dataset cannot be combined: the dataset draws its own ring targets.");
    const rng = makeRng(ctx.flags.seed);
    const runs: SmokeRun[] = [];
    for (let i = 0; i < ctx.flags.dataset; i++) {
      const ring = {
        cx: rng.uniform(0.35, 0.65),
        cy: rng.uniform(0.3, 0.6),
        outer: rng.uniform(0.28, 0.4),
        inner: rng.uniform(0.1, 0.2),
      };
      ctx.log(
        `[smoke ${i + 1}/${ctx.flags.dataset}] ring at (${ring.cx.toFixed(2)}, ${ring.cy.toFixed(2)}), ` +
          `radii ${ring.inner.toFixed(2)}–${ring.outer.toFixed(2)}`,
      );
      const r = await optimise(ctx, problem, densityArray(ringTarget(n, ring), n), n, iters);
      runs.push(summary(`ring ${JSON.stringify(ring)}`, r));
    }
    return {
      mode: "dataset",
      grid: n,
      steps: cfg.steps,
      runs,
      meanLossRatio: runs.reduce((s, r) => s + r.lossRatio, 0) / runs.length,
      files: [],
    };
  }
  const target = densityArray(ctx.flags.target ? await pngTarget(ctx.flags.target, n) : ringTarget(n), n);
  ctx.log(
    `smoke: ${n}×${n} grid, ${cfg.steps} steps, ${2 * n * n} initial velocity unknowns; ` +
      `target ${ctx.flags.target ?? "ring (built in)"}`,
  );
  const r = await optimise(ctx, problem, target, n, iters, {
    png: join(ctx.out, "loss.png"),
    csv: join(ctx.out, "loss.csv"),
  });
  const result = summary(ctx.flags.target ?? "ring", r);
  ctx.log(
    `smoke: MSE to the target ${result.initialLoss.toExponential(3)} → ${result.finalLoss.toExponential(3)} ` +
      `(×${result.lossRatio.toExponential(2)})`,
  );

  // What people look at: the smoke from rest and with the optimised velocities, and the target.
  const densities = jit(problem.densities);
  const zoom = Math.max(1, Math.round(192 / n));
  const optimised = await displayFrames(greyFrames(densities(r.params)), { zoom, composited: true });
  const fromRest = await displayFrames(greyFrames(densities(np.zeros([2, n, n], { dtype: "float32" }))), {
    zoom,
    composited: true,
  });
  const targetImg = (await displayFrames(greyFrames(np.expandDims(target, 0)), { zoom, composited: true }))[0]!;
  writeGif(join(ctx.out, "optimised.gif"), optimised, { delayMs: 80 });
  writeGif(join(ctx.out, "from-rest.gif"), fromRest, { delayMs: 80 });
  writePng(join(ctx.out, "target.png"), targetImg);
  const pick = stripIndices(optimised.length);
  const row = (label: string, frames: typeof optimised) => ({
    label,
    images: [...pick.map((i) => frames[i]!), targetImg],
  });
  // Grey gaps: the smoke is white.
  writePng(
    join(ctx.out, "frames.png"),
    labelledGrid(
      [row("optimised", optimised), row("from rest", fromRest)],
      [...pick.map((i) => `frame ${i}`), "target"],
      "",
      { background: [190, 190, 200, 255] },
    ),
  );
  return {
    mode: "scene",
    grid: n,
    steps: cfg.steps,
    runs: [result],
    meanLossRatio: result.lossRatio,
    files: ["optimised.gif", "from-rest.gif", "target.png", "frames.png", "loss.png", "loss.csv"],
  };
}

function summary(target: string, r: { losses: number[]; steps: number; seconds: number }): SmokeRun {
  const initialLoss = r.losses[0]!,
    finalLoss = r.losses[r.losses.length - 1]!;
  return {
    target,
    initialLoss,
    finalLoss,
    lossRatio: finalLoss / initialLoss,
    iterations: r.steps,
    fitSeconds: Number(r.seconds.toFixed(2)),
  };
}

export const experiment: Experiment<SmokeResult> = {
  name: "smoke",
  target: "a PNG image for the smoke to form",
  description: "initial velocities of 2-D smoke optimised so that the density forms a target image",
  run,
};

await mainIfEntry(experiment, import.meta.url);
