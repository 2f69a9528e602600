/**
 * Loss landscapes (paper Fig. 4 and Fig. 12): the image-space MSE between a video and videos
 * re-simulated with a different parameter value, for
 *  - the mass of a 1 kg cube pushed by a known impulse, over 0.1–5 kg;
 *  - the Lamé parameters μ and λ of a soft cantilever beam sagging under gravity (truth 1000 each),
 * with the loss taken on the first and last frames, on every frame, on every 5th frame and on the
 * first and middle frames. Writes one CSV and one PNG per sweep (curves normalised to [0, 1], a
 * grey vertical line at the truth) and reports where each curve has its minimum.
 *
 *   npx tsx examples/landscape.ts            (--quick: coarse grids, 32² pixels, 30 frames)
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { jit, np, sysid, writeLinePlot, type Array, type PlotSeries, writeGif } from "gradsim/node";
import { displayFrames } from "gradsim/sysid/node";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
const { beamVertices, buildBeam, defaultBeam, renderBeam } = sysid;

type FrameSelection = Exclude<sysid.FrameSelection, readonly number[]>;

/** The curves of Fig. 12, in plot colour order (blue, orange, green, red). */
export const SELECTIONS: readonly FrameSelection[] = ["firstLast", "every", "every5", "firstMiddle"];
export const PLOT_COLOURS = {
  firstLast: "blue",
  every: "orange",
  every5: "green",
  firstMiddle: "red",
  truth: "grey",
} as const;
const SELECTION_NAMES: Record<FrameSelection, string> = {
  firstLast: "first + last frame",
  every: "every frame",
  every5: "every 5th frame",
  firstMiddle: "first + middle frame",
  every2: "every 2nd frame",
};
const UNITS: Record<string, string> = { mass: "kg", mu: "Pa", lambda: "Pa" };

export interface Sweep {
  readonly parameter: string;
  readonly truth: number;
  readonly values: number[];
  /** Raw MSE per selection, one per value. */
  readonly losses: Record<FrameSelection, number[]>;
  /** Value at the minimum of each curve. */
  readonly argmin: Record<FrameSelection, number>;
  /** Local minima of each curve (interior points below both neighbours): 1 means unimodal on the grid. */
  readonly localMinima: Record<FrameSelection, number>;
}

export interface LandscapeResult {
  readonly sweeps: Sweep[];
  readonly resolution: number;
  readonly frames: number;
  readonly plotColours: typeof PLOT_COLOURS;
  readonly files: string[];
}

const linspace = (lo: number, hi: number, n: number): number[] =>
  globalThis.Array.from({ length: n }, (_, i) => lo + ((hi - lo) * i) / (n - 1));

/** The 1 kg unit cube of Fig. 4a: pushed off-centre, drifting and tumbling without gravity. */
export function cubeScene(resolution: number, frames: number): sysid.RigidSceneSpec {
  return {
    shape: "box",
    scale: [1, 1, 1],
    mass: 1,
    position: [-0.8, 0.3, 0],
    rotation: [0, 0, 0, 1],
    velocity: [0, 0, 0],
    angularVelocity: [0, 0, 0],
    impulses: [{ force: [8, 3, 2], point: [0, -0.3, 0.2], duration: sysid.RIGID_IMPULSE_SECONDS }],
    gravity: [0, 0, 0],
    contact: null,
    frames,
    fps: 30,
    substeps: 2,
    camera: sysid.RIGID_FREE_CAMERA,
    resolution,
  };
}

/** Losses of every frame selection for one candidate video against the target video. */
function selectionLosses(video: Array, target: Array, frames: number): Promise<number[]> {
  const losses = SELECTIONS.map((sel) => {
    const idx = np.array(sysid.frameIndices(sel, frames), { dtype: "int32" });
    return sysid.mse(np.take(video, idx, 0), np.take(target, idx, 0));
  });
  return Promise.all(losses.map(async (l) => (await l.data())[0]!));
}

async function sweep(
  parameter: string,
  truth: number,
  values: number[],
  videoOf: (v: number) => Array,
  frames: number,
  log: (m: string) => void,
): Promise<Sweep> {
  const target = videoOf(truth);
  const losses = Object.fromEntries(SELECTIONS.map((s) => [s, [] as number[]])) as Record<FrameSelection, number[]>;
  const t0 = performance.now();
  for (const [i, v] of values.entries()) {
    const l = await selectionLosses(videoOf(v), target, frames);
    SELECTIONS.forEach((s, k) => losses[s].push(l[k]!));
    if (i % Math.max(1, Math.floor(values.length / 5)) === 0)
      log(
        `  ${parameter} = ${v.toPrecision(4)}: loss (every frame) ${l[1]!.toExponential(3)}  ` +
          `[${((performance.now() - t0) / 1000).toFixed(1)} s]`,
      );
  }
  const argmin = Object.fromEntries(
    SELECTIONS.map((s) => [s, values[losses[s].indexOf(Math.min(...losses[s]))]!]),
  ) as Record<FrameSelection, number>;
  const localMinima = Object.fromEntries(
    SELECTIONS.map((s) => {
      const y = losses[s];
      return [s, y.filter((v, i) => (i === 0 || v < y[i - 1]!) && (i === y.length - 1 || v < y[i + 1]!)).length];
    }),
  ) as Record<FrameSelection, number>;
  return { parameter, truth, values, losses, argmin, localMinima };
}

function writeSweep(dir: string, s: Sweep): string[] {
  const name = `landscape-${s.parameter}`;
  const rows = s.values.map((v, i) => [v, ...SELECTIONS.map((sel) => s.losses[sel][i])].join(","));
  writeFileSync(
    join(dir, `${name}.csv`),
    [`${s.parameter},${SELECTIONS.map((sel) => `mse_${sel}`).join(",")}`, ...rows].join("\n") + "\n",
  );
  const series: PlotSeries[] = SELECTIONS.map((sel) => {
    const y = s.losses[sel],
      lo = Math.min(...y),
      hi = Math.max(...y);
    return { x: s.values, y: y.map((v) => (v - lo) / (hi - lo || 1)), label: SELECTION_NAMES[sel] };
  });
  series.push({
    x: [s.truth, s.truth],
    y: [0, 1],
    color: [150, 150, 150],
    label: `truth (${s.truth} ${UNITS[s.parameter] ?? ""})`.replace(" )", ")"),
  });
  writeLinePlot(join(dir, `${name}.png`), series, {
    title: `Image loss vs ${s.parameter}`,
    xLabel: `${s.parameter}${UNITS[s.parameter] ? ` (${UNITS[s.parameter]})` : ""}`,
    yLabel: "image MSE, scaled to [0, 1] per curve",
  });
  return [`${name}.csv`, `${name}.png`];
}

/** `points` evenly spaced values in [lo, hi], plus the truth itself (where the loss is exactly 0). */
const gridWithTruth = (lo: number, hi: number, points: number, truth: number): number[] =>
  [...new Set([...linspace(lo, hi, points), truth])].sort((a, b) => a - b);

async function run(ctx: ExperimentContext): Promise<LandscapeResult> {
  const quick = ctx.flags.quick;
  const resolution = quick ? 32 : 64,
    frames = quick ? 30 : 60;
  const points = ctx.flags.iters ?? (quick ? 9 : 50);
  const compile = <F extends (...a: any[]) => Array>(f: F): F => (ctx.backend === "cpu" ? (jit(f) as unknown as F) : f);

  // Fig. 4a / 12: mass of the 1 kg cube.
  const cube = sysid.buildRigidScene(cubeScene(resolution, frames));
  const cubePhysics = jit((m: Array) => sysid.rigidVertices(cube, { mass: m }, frames));
  const cubeVideo = compile((m: Array) => sysid.rigidVideo(cube, cubePhysics(m)));
  ctx.log(`mass sweep: ${points} masses in [0.1, 5] kg around the 1 kg cube`);
  const f32 = (v: number) => np.array(v, { dtype: "float32" });
  const massSweep = await sweep("mass", 1, gridWithTruth(0.1, 5, points, 1), (m) => cubeVideo(f32(m)), frames, ctx.log);

  // Fig. 4b / 11a: Lamé parameters of the beam.
  const beam = buildBeam(defaultBeam(resolution, frames));
  const beamVideo = compile((mu: Array, lambda: Array) => renderBeam(beam, beamVertices(beam, mu, lambda)));
  const lame = gridWithTruth(200, 3000, Math.max(5, Math.round(points / 2)), 1000);
  ctx.log(`μ sweep: ${lame.length} values in [200, 3000] Pa (λ = 1000)`);
  const muSweep = await sweep("mu", 1000, lame, (mu) => beamVideo(f32(mu), f32(1000)), frames, ctx.log);
  ctx.log(`λ sweep: ${lame.length} values in [200, 3000] Pa (μ = 1000)`);
  const lambdaSweep = await sweep("lambda", 1000, lame, (lambda) => beamVideo(f32(1000), f32(lambda)), frames, ctx.log);

  const sweeps = [massSweep, muSweep, lambdaSweep];
  const files = sweeps.flatMap((s) => writeSweep(ctx.out, s));
  // What the swept videos look like at the truth.
  writeGif(join(ctx.out, "cube.gif"), await displayFrames(cubeVideo(f32(1))), { fps: 30 });
  writeGif(join(ctx.out, "beam.gif"), await displayFrames(beamVideo(f32(1000), f32(1000))), { fps: 30 });
  files.push("cube.gif", "beam.gif");
  for (const s of sweeps)
    ctx.log(
      `${s.parameter}: minimum at ${SELECTIONS.map((sel) => `${sel} ${s.argmin[sel].toPrecision(4)}`).join(", ")} ` +
        `(truth ${s.truth})`,
    );
  return { sweeps, resolution, frames, plotColours: PLOT_COLOURS, files };
}

export const experiment: Experiment<LandscapeResult> = {
  name: "landscape",
  description:
    "image-space loss vs mass (1 kg cube) and vs the Lamé parameters μ, λ (beam, truth 1000) " +
    "for four frame selections (paper Fig. 4, 12)",
  run,
};

await mainIfEntry(experiment, import.meta.url);
