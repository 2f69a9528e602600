/**
 * Visuomotor control from a single target image (gradSim §4.2, Figs. 5–6): optimise a policy's
 * parameters so that the system ends where a target image shows it. Three methods on the same
 * seeds and initial parameters:
 *  - random: the initial (untrained) parameters, evaluated;
 *  - diffphysics: Adam on a 3-D state loss (centre of mass or vertices against the goal state);
 *  - gradsim: Adam on the pixelwise MSE between rendered frames and the target image.
 * Each iteration records the image loss of the last frame and the 3-D distance of the final state
 * to the goal for every method, so the curves compare like with like. Rollouts use the
 * checkpointed scan (memory O(√T) in reverse mode); the run reports its peak memory.
 *
 * Gradients through thousands of contact steps can be huge (chaotic contact) or overflow float32;
 * steps are clipped to a global norm; a non-finite gradient sends the descent back to the best
 * iterate with half the step size (counted as skipped); each method keeps the iterate with the
 * lowest value of its own loss.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readPng, writeAtomic, writeGif, writeLinePlot, writePng, type DType, makeRng, resizeInto, jit, np, optim, sysid, valueAndGrad, vmap, type Array, labelledGrid, type Raster } from "gradsim/node";
import { displayFrames, stripIndices } from "gradsim/sysid/node";
import { CliError } from "./flags.js";
import { mean, std } from "./stats.js";
import type { ExperimentContext } from "./run.js";

export interface ControlScene {
  readonly name: string;
  readonly describe: string;
  readonly fps: number;
  readonly frames: number;
  /** The policy's parameters for a seed (the same for every method). */
  initialParams(seed: number): Array;
  /** Positions [frames, N, 3] of the rollout under parameters (traced: jit and grad run through it). */
  positions(params: Array): Array;
  /** One rendered frame [H, W, C] of positions [N, 3]. */
  frame(x: Array): Array;
  /** The target image [H, W, C]. */
  readonly target: Array;
  /** gradsim's objective on the last frame [H, W, C] and the target (default: the pixelwise MSE, which the curves report for every method). */
  imageLoss?(frame: Array, target: Array): Array;
  /** The 3-D supervision of diffphysics: a scalar loss of the positions [frames, N, 3]. */
  stateLoss(x: Array): Array;
  /** Distance (m) of the final positions [N, 3] to the goal state (scalar). */
  goalDistance(last: Array): Array;
}

export const CONTROL_METHODS = ["random", "diffphysics", "gradsim"] as const;
export type ControlMethod = (typeof CONTROL_METHODS)[number];

export interface ControlSettings {
  readonly iters: number;
  readonly lr: number;
  /** Global-norm clip of each gradient before Adam. */
  readonly clip: number;
  readonly seeds: number;
}

export interface MethodRun {
  readonly seed: number;
  /** Image loss (MSE of the last frame against the target) and 3-D distance to the goal (m), of the kept iterate. */
  readonly imageLoss: number;
  readonly distance: number;
  readonly initialImageLoss: number;
  readonly initialDistance: number;
  /** Per iteration (the initial parameters first): the method's own loss, the image loss and the distance. */
  readonly losses: number[];
  readonly imageLosses: number[];
  readonly distances: number[];
  readonly bestIteration: number;
  readonly iterations: number;
  /** Steps skipped because the gradient was not finite. */
  readonly skipped: number;
  readonly seconds: number;
}

export interface ControlResult {
  readonly scene: string;
  readonly settings: ControlSettings;
  readonly methods: Record<ControlMethod, { readonly imageLoss: { mean: number; std: number }; readonly distance: { mean: number; std: number }; readonly runs: MethodRun[] }>;
  /** Peak resident memory of the process (MB). */
  readonly peakMemoryMB: number;
  readonly files: string[];
}

/** Phase inputs [T, P] of the policies: P sinusoids of angular frequency ω spread over one period, φ_p(t) = sin(ω t + 2πp/P). */
export const phaseInputs = (frames: number, fps: number, P: number, omega: number, dtype: DType = "float32"): Array =>
  np.array(globalThis.Array.from({ length: frames }, (_, t) => globalThis.Array.from({ length: P }, (_, p) => Math.sin(omega * (t / fps) + (2 * Math.PI * p) / P))), { dtype });

/** Per-frame actuations [T, A] = amplitude·tanh(φ Wᵀ) of policy weights W [A, P]. */
export const sinusoidPolicy = (W: Array, phases: Array, amplitude: number): Array => np.mul(amplitude, np.tanh(np.matmul(phases, np.transpose(W))));

/** Policy weights [A, P] as torch.nn.Linear initialises them: U(−1/√P, 1/√P), seeded. */
export function linearPolicyInit(A: number, P: number, seed: number): Array {
  const rng = makeRng(seed + 1);
  return np.array(globalThis.Array.from({ length: A }, () => globalThis.Array.from({ length: P }, () => rng.uniform(-1, 1) / Math.sqrt(P))), { dtype: "float32" });
}

/**
 * A user's target image (PNG, any size) area-resampled to resolution² RGB, composited over the
 * scene's `background` (an RGB colour or a [resolution, resolution, 3] image) where it is
 * transparent, as the scene's own frames are; a missing or unreadable file is a CliError.
 */
export function readTargetImage(path: string, resolution: number, what: string, background: Array | readonly [number, number, number]): Array {
  if (!existsSync(path)) throw new CliError(`--target ${path}: no such file; give a PNG of ${what} (any size: it is resampled to ${resolution}², RGB over the scene's background).`);
  let img: Array;
  try { img = readPng(path); } catch (e) { throw new CliError(`--target: ${(e as Error).message}`); }
  const [h, w] = img.shape as [number, number, number];
  const rgba = Uint8ClampedArray.from(img.dataSync(), (x) => Math.round(255 * x));
  const n = resolution * resolution;
  const premultiplied = new Float32Array(n * 3), coverage = new Float32Array(n * 3);
  resizeInto({ width: w, height: h, rgba }, [0, 0, w, h], resolution, resolution, premultiplied, 0);
  // The resampled alpha: the same resampling of a white image with this alpha.
  const white = Uint8ClampedArray.from(rgba, (v, i) => (i % 4 === 3 ? v : 255));
  resizeInto({ width: w, height: h, rgba: white }, [0, 0, w, h], resolution, resolution, coverage, 0);
  const bg = "shape" in background ? background.dataSync() : null;
  const out = premultiplied.map((c, i) => c + (1 - coverage[i]!) * (bg ? bg[i]! : (background as readonly number[])[i % 3]!));
  return np.reshape(np.array(out, { dtype: "float32" }), [resolution, resolution, 3]);
}

/** diffphysics' 3-D supervision and the reported distance, for a goal given as a centre of mass [3]: |COM(final) − goal|. */
export function centreOfMassGoal(goalCom: Array, frames: number): Pick<ControlScene, "stateLoss" | "goalDistance"> {
  const goalDistance = (last: Array) => np.sqrt(np.sum(np.square(np.sub(np.mean(last, 0), goalCom))));
  return { goalDistance, stateLoss: (x) => np.square(goalDistance(np.index(x, frames - 1))) };
}

const stats = (xs: readonly number[]) => ({ mean: mean(xs), std: std(xs) });

/** [loss, {image, distance}] of parameters under a method's objective. */
function objective(scene: ControlScene, method: Exclude<ControlMethod, "random">) {
  return (params: Array): [Array, { image: Array; distance: Array }] => {
    const x = scene.positions(params);
    const last = np.index(x, scene.frames - 1);
    const rendered = scene.frame(last);
    const image = sysid.mse(rendered, scene.target);
    const loss = method === "diffphysics" ? scene.stateLoss(x) : scene.imageLoss ? scene.imageLoss(rendered, scene.target) : image;
    return [loss, { image, distance: scene.goalDistance(last) }];
  };
}

async function optimise(ctx: ExperimentContext, scene: ControlScene, method: Exclude<ControlMethod, "random">, params0: Array, s: ControlSettings, seed: number): Promise<{ run: MethodRun; best: Array }> {
  const step = jit(valueAndGrad(objective(scene, method), { hasAux: true }));
  const opt = optim.chain(optim.clipByGlobalNorm(s.clip), optim.adam(s.lr));
  let params = params0, state = opt.init(params0);
  const losses: number[] = [], imageLosses: number[] = [], distances: number[] = [];
  let best = 0, skipped = 0, bestParams = params0, stepScale = 1;
  const t0 = performance.now();
  for (let k = 0; k <= s.iters; k++) {
    const [[loss, aux], g] = step(params) as [[Array, { image: Array; distance: Array }], Array];
    const l = loss.item(), img = aux.image.item(), d = aux.distance.item();
    losses.push(l); imageLosses.push(img); distances.push(d);
    if ((Number.isFinite(l) && l < losses[best]!) || !Number.isFinite(losses[best]!)) { best = k; bestParams = params; }
    ctx.log(`[${scene.name}] seed ${seed} ${method} iteration ${k}/${s.iters}: loss ${l.toExponential(3)}, image loss ${img.toExponential(3)}, distance to goal ${d.toFixed(3)} m`);
    if (k === s.iters) break;
    const gn = optim.globalNorm(g).item();
    if (!Number.isFinite(gn) || !Number.isFinite(l)) { skipped++; stepScale /= 2; params = bestParams; continue; }
    const [u, next] = opt.update(g, state, params);
    state = next;
    params = optim.applyUpdates(params, np.mul(u, stepScale)) as Array;
  }
  return {
    best: bestParams,
    run: {
      seed, imageLoss: imageLosses[best]!, distance: distances[best]!, initialImageLoss: imageLosses[0]!, initialDistance: distances[0]!,
      losses, imageLosses, distances, bestIteration: best, iterations: s.iters, skipped, seconds: Number(((performance.now() - t0) / 1000).toFixed(2)),
    },
  };
}

/** Frames [K, H, W, C] of the rollout at every `every`-th frame (and the last). */
function motion(scene: ControlScene, params: Array, every: number): Array {
  const x = jit((p: Array) => scene.positions(p))(params);
  const idx = [...globalThis.Array.from({ length: Math.floor((scene.frames - 1) / every) }, (_, k) => k * every), scene.frames - 1];
  return vmap((v: Array) => scene.frame(v))(np.take(x, np.array(idx, { dtype: "int32" }), 0));
}

async function writeMotion(out: string, scene: ControlScene, before: Array, after: Array): Promise<string[]> {
  const every = Math.max(1, Math.round(scene.fps / 15));
  const show = { zoom: 3, composited: true };
  const a = await displayFrames(motion(scene, before, every), show), b = await displayFrames(motion(scene, after, every), show);
  const [target] = await displayFrames(np.expandDims(scene.target, 0), show);
  const cols = ["random policy", "gradsim (pixels only)", "target image"];
  const frames: Raster[] = a.map((f, i) => labelledGrid([{ label: "", images: [f, b[i]!, target!] }], cols, ""));
  writeGif(join(out, "motion.gif"), frames, { fps: scene.fps / every });
  const pick = stripIndices(a.length);
  const times = pick.map((i) => `${(Math.min(i * every, scene.frames - 1) / scene.fps).toFixed(2)} s`);
  writePng(join(out, "frames.png"), labelledGrid([
    { label: "random policy", images: pick.map((i) => a[i]!) },
    { label: "gradsim", images: pick.map((i) => b[i]!) },
    { label: "target", images: pick.map(() => target!) },
  ], times, "time:"));
  return ["motion.gif", "frames.png"];
}

function writeCurves(out: string, scene: ControlScene, runs: Record<ControlMethod, MethodRun[]>, what: "imageLosses" | "distances", file: string, label: string, logY: boolean): string[] {
  const colours: Record<ControlMethod, readonly [number, number, number]> = { random: [128, 128, 128], diffphysics: [31, 119, 180], gradsim: [214, 39, 40] };
  const n = runs.gradsim[0]!.imageLosses.length;
  const series = CONTROL_METHODS.map((m) => {
    const per = runs[m].map((r) => (m === "random" ? globalThis.Array.from({ length: n }, () => r[what][0]!) : r[what]));
    const mu = globalThis.Array.from({ length: n }, (_, i) => mean(per.map((c) => c[i]!))), sd = globalThis.Array.from({ length: n }, (_, i) => std(per.map((c) => c[i]!)));
    return { m, mu, sd };
  });
  writeLinePlot(join(out, `${file}.png`), series.map(({ m, mu, sd }) => ({
    label: m, color: colours[m], y: mu, band: { lower: mu.map((v, i) => (logY ? Math.max(v * 1e-3, v - sd[i]!) : v - sd[i]!)), upper: mu.map((v, i) => v + sd[i]!) },
  })), { title: `${scene.name}: ${label}, mean ± std over ${runs.gradsim.length} seeds`, xLabel: "iteration", yLabel: label, logY, width: 640, height: 400 });
  const csv = ["iteration," + series.flatMap(({ m }) => [`${m}_mean`, `${m}_std`]).join(","), ...globalThis.Array.from({ length: n }, (_, i) => [i, ...series.flatMap(({ mu, sd }) => [mu[i], sd[i]])].join(","))];
  writeAtomic(join(out, `${file}.csv`), csv.join("\n") + "\n");
  return [`${file}.png`, `${file}.csv`];
}

/**
 * Every method on every seed, the Fig. 6 plots, the before/after motion (first seed), and the
 * summary. `sceneOf(seed)` is the task of a seed (a seed may draw the scene as well as the initial
 * parameters).
 */
export async function runControl(ctx: ExperimentContext, sceneOf: (seed: number) => ControlScene, s: ControlSettings): Promise<ControlResult> {
  const runs: Record<ControlMethod, MethodRun[]> = { random: [], diffphysics: [], gradsim: [] };
  let first: { scene: ControlScene; before: Array; after: Array } | null = null;
  for (let k = 0; k < s.seeds; k++) {
    const seed = ctx.flags.seed + k;
    const scene = sceneOf(seed);
    if (k === 0) ctx.log(`[${scene.name}] ${scene.describe}; ${s.seeds} seeds × (random, diffphysics, gradsim), ${s.iters} Adam iterations (lr ${s.lr}, clip ${s.clip})`);
    const evaluate = jit((p: Array) => objective(scene, "gradsim")(p)[1]);
    const p0 = scene.initialParams(seed);
    const t0 = performance.now();
    const e = evaluate(p0) as { image: Array; distance: Array };
    const img = e.image.item(), d = e.distance.item();
    runs.random.push({ seed, imageLoss: img, distance: d, initialImageLoss: img, initialDistance: d, losses: [img], imageLosses: [img], distances: [d], bestIteration: 0, iterations: 0, skipped: 0, seconds: Number(((performance.now() - t0) / 1000).toFixed(2)) });
    for (const m of ["diffphysics", "gradsim"] as const) {
      const { run: r, best } = await optimise(ctx, scene, m, p0, s, seed);
      runs[m].push(r);
      if (k === 0 && m === "gradsim") first = { scene, before: p0, after: best };
      ctx.log(`[${scene.name}] seed ${seed} ${m}: image loss ${r.initialImageLoss.toExponential(3)} → ${r.imageLoss.toExponential(3)}, distance to goal ${r.initialDistance.toFixed(3)} → ${r.distance.toFixed(3)} m (iteration ${r.bestIteration}${r.skipped ? `, ${r.skipped} steps skipped: gradient not finite` : ""}, ${r.seconds} s)`);
    }
  }
  const scene = first!.scene;
  const files = [
    ...writeCurves(ctx.out, scene, runs, "imageLosses", "fig6-image-loss", "image loss (MSE of the last frame vs the target)", true),
    ...writeCurves(ctx.out, scene, runs, "distances", "fig6-distance", "distance of the final state to the goal (m)", false),
    ...await writeMotion(ctx.out, scene, first!.before, first!.after),
  ];
  const methods = Object.fromEntries(CONTROL_METHODS.map((m) => [m, { imageLoss: stats(runs[m].map((r) => r.imageLoss)), distance: stats(runs[m].map((r) => r.distance)), runs: runs[m] }])) as ControlResult["methods"];
  for (const m of CONTROL_METHODS) ctx.log(`[${scene.name}] ${m}: image loss ${methods[m].imageLoss.mean.toExponential(3)} ± ${methods[m].imageLoss.std.toExponential(2)}, distance ${methods[m].distance.mean.toFixed(3)} ± ${methods[m].distance.std.toFixed(3)} m`);
  return { scene: scene.name, settings: s, methods, peakMemoryMB: Number((process.resourceUsage().maxRSS / 1024).toFixed(1)), files };
}
