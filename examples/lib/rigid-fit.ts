/**
 * Estimating a rigid scene's unknown physical parameters (mass, contact coefficients) by
 * gradient descent on an image-space loss through render(simulate(θ)), and the same optimiser
 * on 3-D states (the paper's "DiffPhysics" baseline with privileged supervision).
 *
 * Every unknown is optimised in log space (x = exp(u)): steps are relative changes, which
 * suits scale parameters spanning decades (mass, stiffness) and keeps them positive.
 */
import { jit, np, optim, vmap, type Array } from "../../src/index.js";
import { compiledObjective, minimize, type Objective } from "./estimation.js";
import type { CurriculumStage } from "./horizon-curriculum.js";
import { buildScene, paramArrays, sceneVertices, verticesFn, type RigidParams, type RigidScene, type RigidSceneSpec } from "./rigid-scene.js";
import { forwardLossAndGrad, imageLossAndGrad, optimize, type LossAndGrad } from "./sysid.js";
import { frameIndices, measureTiling, pyramidMse, renderVideo, videoMse, type FrameSelection, type Tiling } from "./video.js";

export type Unknown = keyof RigidParams;
export type Values = Partial<Record<Unknown, number>>;

/** Unconstrained parameters: u = log(value) per unknown. */
type LogParams = Partial<Record<Unknown, Array>>;

export interface FitSettings {
  readonly steps: number;
  /** Adam learning rate, decayed exponentially to `lrEnd` over the run (log-space units). */
  readonly lr: number;
  readonly lrEnd: number;
  /** Frames compared by the image loss. */
  readonly frames: FrameSelection;
  /** Image-pyramid levels of the loss (1: plain pixelwise MSE; see `pyramidMse`). */
  readonly pyramid: number;
  /**
   * L-BFGS steps after Adam, from its best iterate: Adam finds the basin, the quasi-Newton
   * steps resolve the ill-conditioned directions inside it (ke against kf, say) to float32
   * precision instead of crawling along them.
   */
  readonly refine?: number;
  readonly label: string;
  readonly progress: optim.ProgressMode;
  readonly lossCurvePng?: string;
  readonly lossCurveCsv?: string;
}

/**
 * The optimiser of every rigid fit: Adam with little momentum (β1 = 0.5), whose steps are the
 * learning rate wherever the loss is a plateau or a V (far from the optimum, where the object
 * in the two videos no longer overlaps) and shrink with the gradient in the smooth basin
 * around it, with an exponentially decaying learning rate.
 */
export const rigidOptimizer = (s: Pick<FitSettings, "steps" | "lr" | "lrEnd">) =>
  optim.adam(optim.exponentialDecay({ initValue: s.lr, decayRate: s.lrEnd / s.lr, transitionSteps: s.steps }), { b1: 0.5 });

const toLog = (v: Values, unknowns: readonly Unknown[]): LogParams =>
  Object.fromEntries(unknowns.map((k) => [k, np.log(np.array(v[k]!, { dtype: "float32" }))]));
const fromLog = (u: LogParams): RigidParams =>
  Object.fromEntries(Object.entries(u).map(([k, a]) => [k, np.exp(a as Array)]));
async function readValues(u: LogParams): Promise<Values> {
  const out: Values = {};
  for (const [k, a] of Object.entries(u)) out[k as Unknown] = Math.exp((await (a as Array).data())[0]!);
  return out;
}

export interface FitResult {
  readonly estimate: Values;
  /** Adam updates plus L-BFGS steps. */
  readonly steps: number;
  readonly seconds: number;
  /** The image loss at the estimate. */
  readonly finalLoss: number;
}

/** A scene's true values of the unknowns. */
export function trueValues(s: RigidSceneSpec, unknowns: readonly Unknown[]): Values {
  const all: Required<Values> = { mass: s.mass, ke: s.contact?.ke ?? NaN, kd: s.contact?.kd ?? NaN, kf: s.contact?.kf ?? NaN, mu: s.contact?.mu ?? NaN };
  return Object.fromEntries(unknowns.map((k) => [k, all[k]]));
}

/** Everything needed to evaluate the image loss of a scene: the target frames and safe tiling for jit. */
export interface ImageProblem {
  readonly scene: RigidScene;
  readonly indices: readonly number[];
  /** Target frames [K, H, W, 4] at `indices`. */
  readonly target: Array;
  readonly tiling: Tiling | undefined;
  /** Rendered frames at `indices` for parameter values `p`. */
  readonly render: (p: RigidParams) => Array;
  /** The image loss between rendered frames and the target. */
  readonly loss: (frames: Array) => Array;
}

/**
 * Render the target ("observed") frames from the true parameters. On the CPU the loss is jitted,
 * so a tile capacity is measured from the true and initial trajectories; WebGPU runs the
 * rasterizer op by op, which sizes its tiles itself.
 */
export async function imageProblem(scene: RigidScene, s: Pick<FitSettings, "frames" | "pyramid">, backend: "cpu" | "webgpu", initial: Values): Promise<ImageProblem> {
  const frames = s.frames;
  const indices = frameIndices(frames, scene.spec.frames);
  const physics = verticesFn(scene, indices);
  const truthVerts = physics({});
  const tiling = backend === "cpu" ? await measureTiling(scene, [truthVerts, physics(paramArrays(initial))]) : undefined;
  const target = renderVideo(scene, truthVerts, { tiling });
  const loss = (video: Array) => (s.pyramid > 1 ? pyramidMse(video, target, s.pyramid) : videoMse(video, target));
  return { scene, indices, target, tiling, loss, render: (p) => renderVideo(scene, sceneVertices(scene, p, indices), { tiling }) };
}

/**
 * The gradient of the image loss. On the CPU, jitted: for one unknown by forward mode (a single
 * jvp, cheapest), for several by reverse mode in one compiled program (5 tangents in forward mode
 * measured 7× slower; the compiled reverse pass ~2× faster than op by op once the rasterizer
 * compacts its tiles). WebGPU chains the jitted rollout's vjp with the rasterizer's vjp run op by
 * op (it cannot compile the rasterizer's derivatives in reasonable time on lavapipe).
 */
function imageGradient(problem: ImageProblem, backend: "cpu" | "webgpu", unknowns: number): LossAndGrad<LogParams> {
  const { scene, indices, tiling } = problem;
  if (backend === "cpu" && unknowns === 1) return forwardLossAndGrad((u: LogParams) => problem.loss(problem.render(fromLog(u))));
  return imageLossAndGrad(
    (u: LogParams) => sceneVertices(scene, fromLog(u), indices),
    (vertices: Array) => problem.loss(renderVideo(scene, vertices, { tiling })),
    { fused: backend === "cpu" },
  );
}

/** Fit the unknowns to the problem's target frames by gradient descent on the pixelwise MSE (then L-BFGS if `refine`). */
export async function fitFromVideo(problem: ImageProblem, initial: Values, s: FitSettings, backend: "cpu" | "webgpu"): Promise<FitResult> {
  const unknowns = Object.keys(initial) as Unknown[];
  const adam = await optimize(imageGradient(problem, backend, unknowns.length), toLog(initial, unknowns), {
    optimizer: rigidOptimizer(s), steps: s.steps, label: s.label, progress: s.progress,
  });
  let estimate = await readValues(adam.best), finalLoss = adam.bestLoss;
  let { losses, gradNorms, steps, seconds } = adam;
  if (s.refine) {
    const refined = await refineByLbfgs(problem, unknowns, estimate, s.refine, backend, s);
    if (refined.finalLoss <= finalLoss) ({ estimate, finalLoss } = refined);
    losses = [...losses, ...refined.losses.slice(1)];
    gradNorms = [...gradNorms, ...refined.gradNorms.slice(1)];
    steps += refined.steps;
    seconds += refined.seconds;
  }
  if (s.lossCurveCsv) optim.writeLossCurveCsv(s.lossCurveCsv, losses, gradNorms);
  if (s.lossCurvePng) optim.writeLossCurvePng(s.lossCurvePng, losses);
  return { estimate, steps, seconds, finalLoss };
}

/** L-BFGS on the image loss over the flat log-parameter vector, from `start`. */
async function refineByLbfgs(problem: ImageProblem, unknowns: readonly Unknown[], start: Values, steps: number, backend: "cpu" | "webgpu",
  s: Pick<FitSettings, "label" | "progress">) {
  const loss = (u: Array) => problem.loss(problem.render(paramsOfLogRow(u, unknowns)));
  // WebGPU: the rollout's vjp chained with the rasterizer's run op by op, as in `imageGradient`.
  const objective: Objective = backend === "cpu" ? compiledObjective(loss) : {
    valueAndGrad: imageLossAndGrad((u: Array) => sceneVertices(problem.scene, paramsOfLogRow(u, unknowns), problem.indices),
      (vertices: Array) => problem.loss(renderVideo(problem.scene, vertices, { tiling: problem.tiling }))),
    value: loss,
  };
  const { estimate, run: r } = await lbfgsInLogSpace(objective, unknowns, start, { steps, progress: s.progress, label: `${s.label} L-BFGS` });
  return { estimate, finalLoss: r.losses[r.losses.length - 1]!, losses: r.losses, gradNorms: r.gradNorms, steps: r.steps, seconds: r.seconds };
}

/** Mean squared distance between the scene's vertices over all frames for log-parameters u [n] and for the true parameters. */
function statesLoss(scene: RigidScene, unknowns: readonly Unknown[]): (u: Array) => Array {
  const all = frameIndices("every", scene.spec.frames);
  const truth = verticesFn(scene, all)({});
  return (u: Array) => videoMse(sceneVertices(scene, paramsOfLogRow(u, unknowns), all), truth);
}

/** Log-values of the unknowns, in order (host). */
const logRow = (v: Values, unknowns: readonly Unknown[]): number[] => unknowns.map((k) => Math.log(v[k]!));
/** Parameter Arrays from a log-parameter row u [n] (differentiable). */
const paramsOfLogRow = (u: Array, unknowns: readonly Unknown[]): RigidParams =>
  Object.fromEntries(unknowns.map((k, i) => [k, np.exp(np.index(u, i))]));

/** L-BFGS over the log-parameter row from `start`; the estimate as physical values. */
async function lbfgsInLogSpace(objective: Objective | ((u: Array) => Array), unknowns: readonly Unknown[], start: Values,
  s: { steps: number; progress: optim.ProgressMode; label: string }) {
  const run = await minimize(objective, np.array(logRow(start, unknowns), { dtype: "float32" }), { optimizer: "lbfgs", ...s });
  const u = await run.params.data();
  const estimate: Values = Object.fromEntries(unknowns.map((k, i) => [k, Math.exp(u[i]!)]));
  return { estimate, run };
}

/**
 * DiffPhysics baseline: the mean squared distance between simulated and true vertex positions
 * over all frames (3-D supervision the video method does not get). That loss is smooth in the
 * log-parameters, so it gets the optimiser smooth losses deserve: L-BFGS with a backtracking
 * line search (Adam's steps shrink with the gradient here and stall far from the optimum).
 */
export async function fitFromStates(scene: RigidScene, initial: Values, s: Pick<FitSettings, "steps" | "progress" | "label">): Promise<Values> {
  const unknowns = Object.keys(initial) as Unknown[];
  return (await lbfgsInLogSpace(statesLoss(scene, unknowns), unknowns, initial, { steps: s.steps, progress: s.progress, label: s.label })).estimate;
}

/**
 * Image losses at several parameter rows (log-values, one row per candidate), vectorised with
 * vmap over chunks of at most `chunk` rows (memory: each row renders a whole video) and jitted
 * on the CPU; the last chunk is padded so every call has one shape.
 */
export function imageLosses(problem: ImageProblem, unknowns: readonly Unknown[], backend: "cpu" | "webgpu", chunk = 8): (us: readonly number[][]) => Promise<number[]> {
  const batched = (u: Array): Array => vmap((row: Array) => problem.loss(problem.render(paramsOfLogRow(row, unknowns))))(u);
  const evaluate = backend === "cpu" ? jit(batched) : batched;
  return async (us) => {
    const size = Math.min(chunk, us.length), out: number[] = [];
    for (let i = 0; i < us.length; i += size) {
      const rows = us.slice(i, i + size);
      while (rows.length < size) rows.push(rows[rows.length - 1]!);
      out.push(...globalThis.Array.from(await evaluate(np.array(rows, { dtype: "float32" })).data(), Number).slice(0, Math.min(size, us.length - i)));
    }
    return out;
  };
}

/** The first `frames` frames of a scene: the same rollout, stopped early. */
const prefixScene = (spec: RigidSceneSpec, frames: number): RigidScene => buildScene({ ...spec, frames });

/**
 * A curriculum stage of the video fit (see horizon-curriculum.ts): the image loss over every
 * frame of the first `frames`, Adam then L-BFGS for the stage's steps; Adam starts at `finalLr`
 * from the previous stage's estimate.
 */
export async function videoStage(spec: RigidSceneSpec, frames: number, start: Values, s: FitSettings & { stageSteps: number; stageRefine: number; finalLr: number }, backend: "cpu" | "webgpu"): Promise<CurriculumStage> {
  const unknowns = Object.keys(start) as Unknown[];
  const settings: FitSettings = { ...s, frames: "every", steps: s.stageSteps, refine: s.stageRefine, label: `${s.label} (${frames} frames)`, lossCurvePng: undefined, lossCurveCsv: undefined };
  const problem = await imageProblem(prefixScene(spec, frames), settings, backend, start);
  const losses = imageLosses(problem, unknowns, backend);
  return {
    losses: (cs) => losses(cs.map((c) => logRow(c, unknowns))),
    fit: async (from, continuing) => {
      const { estimate, finalLoss } = await fitFromVideo(problem, from, continuing ? { ...settings, lr: s.finalLr } : settings, backend);
      return { estimate, loss: finalLoss };
    },
  };
}

/** A curriculum stage of the DiffPhysics baseline: the 3-D loss over the first `frames` frames, L-BFGS. */
export function statesStage(spec: RigidSceneSpec, frames: number, unknowns: readonly Unknown[], s: Pick<FitSettings, "progress" | "label"> & { stageSteps: number }): CurriculumStage {
  const scene = prefixScene(spec, frames);
  // One target rollout per stage, shared by the scoring and every finalist's fit.
  const objective = statesLoss(scene, unknowns);
  const loss = jit(objective);
  return {
    losses: async (cs) => {
      const out: number[] = [];
      for (const c of cs) out.push((await loss(np.array(logRow(c, unknowns), { dtype: "float32" })).data())[0]!);
      return out;
    },
    fit: async (from) => {
      const { estimate, run } = await lbfgsInLogSpace(objective, unknowns, from, { steps: s.stageSteps, progress: s.progress, label: `${s.label} (${frames} frames)` });
      return { estimate, loss: run.losses[run.losses.length - 1]! };
    },
  };
}
