/**
 * RISP Fig. 6b (RISP, ICLR 2022, App. C.3.2): does RISP's loss still find the rod's Young's modulus when the video is
 * sampled sparsely in time? The rod's system identification loss of the ours row (Table 1's Eq. 12 network reading
 * our SoftRas frames and the traced reference, risp.taskLoss) across the modulus's box, for the paper's four
 * temporal samplings — every frame, every 5th, the first and last, the first and middle — under the tables' rendering
 * configurations (risp-tasks' draws), the look held at ψ's middle. The paper: "the same global optima of all
 * curves"; "except for the extreme case ... (first and last frames), most of the curves are unimodal".
 *
 *   npm run gradsim -- risp-temporal-sampling             # 33 grid points, 4 configurations
 *   npm run gradsim -- risp-temporal-sampling --quick     # 5 points, 1 configuration (the test)
 *   ... --networks DIR                                    # another risp-state run's networks
 *
 * Writes result.json (per sampling: the frames, every configuration's loss along the grid, the argmin and the
 * basins — local minima at least 5% of the range deep — of the mean rescaled curve), landscape.csv and fig6b.png.
 */
import { join } from "node:path";
import { np, risp, sysid, writeAtomic, writeLinePlot } from "gradsim/node";
import { configurationDraws, DEFAULT_NETWORKS, loadPredictors, rowSpec, SMOOTH_GAMMA } from "./risp-tasks.js";
import { mainIfEntry, type Experiment, type ExperimentContext } from "./lib/run.js";
import { meanRescaled } from "./lib/stats.js";

export interface TemporalSamplingSettings {
  readonly points: number;
  readonly configs: number;
}
export const TEMPORAL_SAMPLING_SETTINGS: Readonly<Record<"full" | "quick", TemporalSamplingSettings>> = {
  full: { points: 33, configs: 4 },
  quick: { points: 5, configs: 1 },
};

/** The paper's four samplings of T observed frames, as frame indices. */
export function temporalSamplings(T: number): { name: string; frames: number[] }[] {
  const all = globalThis.Array.from({ length: T }, (_, i) => i);
  return [
    { name: "every frame", frames: all },
    { name: "every 5th frame", frames: all.filter((i) => i % 5 === 0) },
    { name: "first and last", frames: [0, T - 1] },
    { name: "first and middle", frames: [0, Math.floor((T - 1) / 2)] },
  ];
}

/**
 * The basins of a curve: its interior local minima of prominence at least `depth` — the least rise, over both sides,
 * before the curve goes lower than the minimum or ends — so that ripples of a flat stretch are not counted.
 */
export function basins(ys: readonly number[], depth: number): number[] {
  const rise = (i: number, step: 1 | -1) => {
    let top = ys[i]!;
    for (let j = i + step; j >= 0 && j < ys.length && ys[j]! >= ys[i]!; j += step) top = Math.max(top, ys[j]!);
    return top - ys[i]!;
  };
  return ys.flatMap((v, i) =>
    i > 0 && i < ys.length - 1 && v < ys[i - 1]! && v < ys[i + 1]! && Math.min(rise(i, -1), rise(i, 1)) >= depth
      ? [i]
      : [],
  );
}
/** A basin's least depth on the rescaled curve: 5% of its range. */
const BASIN_DEPTH = 0.05;

export interface SamplingResult {
  readonly name: string;
  readonly frames: number[];
  /** Per configuration, the loss at each grid point. */
  readonly losses: number[][];
  /** The mean over configurations of each one's loss rescaled to [0, 1]. */
  readonly curve: number[];
  readonly argmin: number;
  /** The curve's basins (`basins`, at least 5% of its range deep). */
  readonly basins: number[];
}
export interface TemporalSamplingResult {
  readonly settings: TemporalSamplingSettings;
  readonly unknown: string;
  readonly grid: number[];
  readonly truth: number;
  readonly samplings: SamplingResult[];
  readonly table: string;
  readonly files: string[];
}

const COLOURS: readonly (readonly [number, number, number])[] = [
  [230, 140, 40],
  [60, 110, 220],
  [40, 170, 90],
  [140, 140, 140],
];

async function run(ctx: ExperimentContext): Promise<TemporalSamplingResult> {
  const s = TEMPORAL_SAMPLING_SETTINGS[ctx.flags.quick ? "quick" : "full"];
  const problem = risp.paperProblem("rod", "sysid");
  const nets = loadPredictors(ctx.flags.networks ?? DEFAULT_NETWORKS, "rod", problem.env.stateNames.length);
  const R = nets.settings.resolution;
  const configs = globalThis.Array.from({ length: s.configs }, (_, k) => {
    const c = configurationDraws(problem, ctx.flags.seed, k, "table");
    return {
      reference: risp.targetImages(problem.env, R, problem.reference.vertices, c.target, c.seed),
      start: np.array(c.start, { dtype: "float32" }),
    };
  });
  const name = problem.unknowns[0]!;
  const grid = sysid.priorGrid({ name, prior: [problem.lower[0]!, problem.upper[0]!] }, s.points);
  // The other unknowns at the truth, the look at ψ's middle (w = ½).
  const u = (x: number) =>
    np.array([x, ...problem.truth.slice(1), ...risp.PSI_NAMES.map(() => 0.5)], { dtype: "float32" });
  const spec = rowSpec("ours", nets);
  const samplings = temporalSamplings(problem.observed.length).map(({ name: sampling, frames }, n) => {
    const loss = risp.compileTaskLoss(risp.taskLoss(problem, spec, { resolution: R, gamma: SMOOTH_GAMMA }, frames));
    const losses = configs.map((c, k) => {
      const along = grid.map((x) => loss.value(u(x), c.reference, c.start).item());
      ctx.log(
        `[risp-temporal-sampling] ${sampling} (${n + 1}/4), configuration ${k + 1}/${configs.length}: ` +
          `the loss along ${grid.length} points, least at point ${along.indexOf(Math.min(...along))}`,
      );
      return along;
    });
    const curve = meanRescaled(losses);
    return {
      name: sampling,
      frames,
      losses,
      curve,
      argmin: curve.indexOf(Math.min(...curve)),
      basins: basins(curve, BASIN_DEPTH),
    };
  });
  const truth = problem.truth[0]!;
  const nearest = grid.reduce((b, x, i) => (Math.abs(x - truth) < Math.abs(grid[b]! - truth) ? i : b), 0);
  const table = [
    `| sampling | frames | argmin (grid point; truth's nearest: ${nearest}) | ` +
      `u at the argmin (truth ${truth.toPrecision(4)}) | basins (grid points) |`,
    "|---|---|---|---|---|",
    ...samplings.map(
      (x) =>
        `| ${x.name} | ${x.frames.length} | ${x.argmin} | ${grid[x.argmin]!.toPrecision(4)} | ` +
        `${x.basins.length} (${x.basins.join(", ")}) |`,
    ),
  ].join("\n");
  writeAtomic(
    join(ctx.out, "landscape.csv"),
    [
      "sampling,configuration,point,u,loss",
      ...samplings.flatMap((x) =>
        x.losses.flatMap((l, k) => l.map((v, i) => [`"${x.name}"`, k + 1, i, grid[i], v].join(","))),
      ),
    ].join("\n") + "\n",
  );
  writeLinePlot(
    join(ctx.out, "fig6b.png"),
    [
      ...samplings.map((x, n) => ({ label: x.name, x: grid, y: x.curve, color: COLOURS[n] })),
      { label: "truth", x: [truth, truth], y: [0, 1], color: [220, 40, 40] as const },
    ],
    {
      title: `rod sysid: ours' loss along ${name.split(":")[0]} (rescaled, mean over ${s.configs} configurations)`,
      xLabel: "u (the unknown across its box)",
      yLabel: "rescaled loss",
    },
  );
  ctx.log(`\nRISP Fig. 6b (the rod's loss landscape per temporal sampling):\n${table}`);
  return { settings: s, unknown: name, grid, truth, samplings, table, files: ["landscape.csv", "fig6b.png"] };
}

export const experiment: Experiment<TemporalSamplingResult> = {
  name: "risp-temporal-sampling",
  description:
    "RISP Fig. 6b: the rod's system identification loss (ours) across the Young's modulus's box for four temporal " +
    "samplings of the video (every frame, every 5th, first and last, first and middle)",
  takes: ["networks"],
  run,
};

await mainIfEntry(experiment, import.meta.url);
