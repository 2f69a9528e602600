/**
 * The three methods of gradSim's control experiments on the same seeds and initial parameters:
 *  - random: the initial (untrained) parameters, evaluated;
 *  - diffphysics: Adam on a 3-D state loss (the scene's `stateLoss`);
 *  - gradsim: Adam on the image loss of the last frame against the target image.
 * Each iteration records, for every method, the image loss of the last frame, the scene's 3-D
 * distance of the final state to the goal (its goalDistance: the reported metric) and the final
 * centre of mass's distance to the goal's, so the curves compare like with like.
 *
 * Gradients through thousands of contact steps can be huge (chaotic contact) or overflow float32:
 * steps are clipped to a global norm; a non-finite gradient sends the descent back to the best
 * iterate with half the step size (counted as skipped); each method keeps the iterate with the
 * lowest value of its own loss.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import * as optim from "../optim/index.js";
import { mse } from "../sysid/losses.js";
import { jit, valueAndGrad } from "../transforms/index.js";
import { centreOfMassDistance, type ControlScene } from "./scene.js";

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
  /**
   * Image loss (MSE of the last frame against the target), the scene's 3-D distance to the goal (m) and the centre of
   * mass's (m), of the kept iterate.
   */
  readonly imageLoss: number;
  readonly distance: number;
  readonly comDistance: number;
  readonly initialImageLoss: number;
  readonly initialDistance: number;
  /** Per iteration (the initial parameters first): the method's own loss, the image loss and the distances. */
  readonly losses: number[];
  readonly imageLosses: number[];
  readonly distances: number[];
  readonly comDistances: number[];
  readonly bestIteration: number;
  readonly iterations: number;
  /** Steps skipped because the gradient was not finite. */
  readonly skipped: number;
  readonly seconds: number;
}

export interface Summary {
  readonly mean: number;
  readonly std: number;
}

export interface ControlRuns {
  readonly settings: ControlSettings;
  readonly runs: Record<ControlMethod, MethodRun[]>;
  readonly methods: Record<
    ControlMethod,
    {
      readonly imageLoss: Summary;
      readonly distance: Summary;
      readonly comDistance: Summary;
      readonly runs: MethodRun[];
    }
  >;
  /** What `distance` measures (the scene's goalDistanceMeaning). */
  readonly distanceMeaning: string;
  /** The first seed's scene, its initial parameters and gradsim's kept ones (for pictures). */
  readonly first: { readonly scene: ControlScene; readonly before: Array; readonly after: Array };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const std = (xs: readonly number[]) => {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / xs.length);
};
const summary = (xs: readonly number[]): Summary => ({ mean: mean(xs), std: std(xs) });

type Measures = { image: Array; distance: Array; com: Array };

/** [loss, {image, distance, com}] of parameters under a method's objective. */
export function controlObjective(scene: ControlScene, method: Exclude<ControlMethod, "random">) {
  return (params: Array): [Array, Measures] => {
    const x = scene.positions(params);
    const last = np.index(x, scene.frames - 1);
    const rendered = scene.frame(last);
    const image = mse(rendered, scene.target);
    const loss =
      method === "diffphysics" ? scene.stateLoss(x) : scene.imageLoss ? scene.imageLoss(rendered, scene.target) : image;
    return [loss, { image, distance: scene.goalDistance(last), com: centreOfMassDistance(last, scene.goalCom) }];
  };
}

function checkSettings(s: ControlSettings): void {
  if (!(Number.isInteger(s.iters) && s.iters >= 0))
    throw new Error(`control: iters must be a whole number ≥ 0, got ${s.iters}.`);
  if (!(Number.isInteger(s.seeds) && s.seeds >= 1))
    throw new Error(`control: seeds must be a whole number ≥ 1, got ${s.seeds}.`);
  if (!(s.lr > 0) || !(s.clip > 0))
    throw new Error(
      `control: the learning rate and the gradient clip must be positive, got lr ${s.lr} and clip ${s.clip}.`,
    );
}

/** Adam (after a global-norm clip) on one method's loss from `params0`; keeps the iterate with the lowest loss. */
export async function optimiseControl(
  scene: ControlScene,
  method: Exclude<ControlMethod, "random">,
  params0: Array,
  s: ControlSettings,
  seed: number,
  log: (line: string) => void = () => {},
): Promise<{ run: MethodRun; best: Array }> {
  checkSettings(s);
  const step = jit(valueAndGrad(controlObjective(scene, method), { hasAux: true }));
  const opt = optim.chain(optim.clipByGlobalNorm(s.clip), optim.adam(s.lr));
  let params = params0,
    state = opt.init(params0);
  const losses: number[] = [],
    imageLosses: number[] = [],
    distances: number[] = [],
    comDistances: number[] = [];
  let best = 0,
    skipped = 0,
    bestParams = params0,
    stepScale = 1;
  const t0 = performance.now();
  for (let k = 0; k <= s.iters; k++) {
    const [[loss, aux], g] = step(params) as [[Array, Measures], Array];
    const l = loss.item(),
      img = aux.image.item(),
      d = aux.distance.item();
    losses.push(l);
    imageLosses.push(img);
    distances.push(d);
    comDistances.push(aux.com.item());
    if ((Number.isFinite(l) && l < losses[best]!) || !Number.isFinite(losses[best]!)) {
      best = k;
      bestParams = params;
    }
    log(
      `[${scene.name}] seed ${seed} ${method} iteration ${k}/${s.iters}: loss ${l.toExponential(3)}, ` +
        `image loss ${img.toExponential(3)}, ` +
        `distance to goal ${d.toFixed(3)} m`,
    );
    if (k === s.iters) break;
    const gn = optim.globalNorm(g).item();
    if (!Number.isFinite(gn) || !Number.isFinite(l)) {
      skipped++;
      stepScale /= 2;
      params = bestParams;
      continue;
    }
    const [u, next] = opt.update(g, state, params);
    state = next;
    params = optim.applyUpdates(params, np.mul(u, stepScale)) as Array;
  }
  return {
    best: bestParams,
    run: {
      seed,
      imageLoss: imageLosses[best]!,
      distance: distances[best]!,
      comDistance: comDistances[best]!,
      initialImageLoss: imageLosses[0]!,
      initialDistance: distances[0]!,
      losses,
      imageLosses,
      distances,
      comDistances,
      bestIteration: best,
      iterations: s.iters,
      skipped,
      seconds: Number(((performance.now() - t0) / 1000).toFixed(2)),
    },
  };
}

/**
 * Every method on seeds firstSeed, firstSeed + 1, …; `sceneOf(seed)` is the task of a seed (a seed
 * may draw the scene as well as the initial parameters).
 */
export async function runControl(
  sceneOf: (seed: number) => ControlScene,
  s: ControlSettings,
  o: { firstSeed?: number; log?: (line: string) => void } = {},
): Promise<ControlRuns> {
  checkSettings(s);
  const log = o.log ?? (() => {});
  const runs: Record<ControlMethod, MethodRun[]> = { random: [], diffphysics: [], gradsim: [] };
  let first: ControlRuns["first"] | null = null;
  for (let k = 0; k < s.seeds; k++) {
    const seed = (o.firstSeed ?? 0) + k;
    const scene = sceneOf(seed);
    if (k === 0)
      log(
        `[${scene.name}] ${scene.describe}; ${s.seeds} seeds × (random, diffphysics, gradsim), ` +
          `${s.iters} Adam iterations (lr ${s.lr}, clip ${s.clip})`,
      );
    const evaluate = jit((p: Array) => controlObjective(scene, "gradsim")(p)[1]);
    const p0 = scene.initialParams(seed);
    const t0 = performance.now();
    const e = evaluate(p0) as Measures;
    const img = e.image.item(),
      d = e.distance.item(),
      c = e.com.item();
    runs.random.push({
      seed,
      imageLoss: img,
      distance: d,
      comDistance: c,
      initialImageLoss: img,
      initialDistance: d,
      losses: [img],
      imageLosses: [img],
      distances: [d],
      comDistances: [c],
      bestIteration: 0,
      iterations: 0,
      skipped: 0,
      seconds: Number(((performance.now() - t0) / 1000).toFixed(2)),
    });
    for (const m of ["diffphysics", "gradsim"] as const) {
      const { run: r, best } = await optimiseControl(scene, m, p0, s, seed, log);
      runs[m].push(r);
      if (k === 0 && m === "gradsim") first = { scene, before: p0, after: best };
      log(
        `[${scene.name}] seed ${seed} ${m}: image loss ${r.initialImageLoss.toExponential(3)} ` +
          `→ ${r.imageLoss.toExponential(3)}, ` +
          `distance to goal ${r.initialDistance.toFixed(3)} → ${r.distance.toFixed(3)} m, ` +
          `centre of mass ${r.comDistances[0]!.toFixed(3)} → ${r.comDistance.toFixed(3)} m ` +
          `(iteration ${r.bestIteration}` +
          `${r.skipped ? `, ${r.skipped} steps skipped: gradient not finite` : ""}, ${r.seconds} s)`,
      );
    }
  }
  const methods = Object.fromEntries(
    CONTROL_METHODS.map((m) => [
      m,
      {
        imageLoss: summary(runs[m].map((r) => r.imageLoss)),
        distance: summary(runs[m].map((r) => r.distance)),
        comDistance: summary(runs[m].map((r) => r.comDistance)),
        runs: runs[m],
      },
    ]),
  ) as ControlRuns["methods"];
  for (const m of CONTROL_METHODS)
    log(
      `[${first!.scene.name}] ${m}: image loss ${methods[m].imageLoss.mean.toExponential(3)} ` +
        `± ${methods[m].imageLoss.std.toExponential(2)}, ` +
        `distance ${methods[m].distance.mean.toFixed(3)} ± ${methods[m].distance.std.toFixed(3)} m, ` +
        `centre of mass ${methods[m].comDistance.mean.toFixed(3)} ± ${methods[m].comDistance.std.toFixed(3)} m`,
    );
  return { settings: s, runs, methods, distanceMeaning: first!.scene.goalDistanceMeaning, first: first! };
}
