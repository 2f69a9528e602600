/**
 * A system-identification problem and the objective an optimiser descends: the loss as a
 * function of the flat unconstrained vector u (see unknowns.ts), with its gradient computed the
 * cheapest way for the problem's size, its residual vector (for Gauss–Newton / Levenberg–Marquardt
 * steps), and batched evaluation (for scoring restarts and score-function samples).
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { tree } from "../core/tree.js";
import { jit, jvp, valueAndGrad, vjp, vmap } from "../transforms/index.js";
import { DivergenceError, divergenceError, findDivergenceAsync } from "../models/common/divergence.js";
import { frameIndices, meanSquare, poolFrames, takeFrames, type FrameSelection } from "./losses.js";
import type { Layout, Params } from "./unknowns.js";

export interface Problem<S = unknown, N extends string = string> {
  /**
   * Per-frame states for the first `frames` frames of the video (every leaf with a leading time
   * axis of length `frames`), for physical parameters `params` (the unknowns, by name).
   */
  simulate(params: Params<N>, frames: number): S;
  /** Video frames [K, H, W, C] of K per-frame states. Needed for the image-based methods. */
  render?(states: S): Array;
  /**
   * The 3-D quantities 3-D supervision compares (every leaf with a leading time axis), e.g. a
   * pendulum's bob positions when its states are angles. Default: the states themselves.
   */
  measure?(states: S): unknown;
  /** Frames in the video. */
  readonly frames: number;
}

/** What the estimate is compared against: a video [T, H, W, C] and/or per-frame 3-D states. */
export interface Observed<S = unknown> {
  readonly video?: Array;
  readonly states?: S;
}

export type LossKind = "pixels" | "states";

/** How the gradient is computed. auto: forward mode for one scalar unknown, reverse mode otherwise. */
export type GradientMode = "auto" | "forward" | "reverse" | "split";

export interface ObjectiveOptions {
  readonly kind: LossKind;
  /** Frames compared by the image loss (default every frame). States always compare every frame. */
  readonly frames?: FrameSelection;
  /** Image-pyramid levels of the image loss (1: plain pixelwise MSE). */
  readonly pyramid?: number;
  /** Use only the first `horizon` frames of the video (a curriculum stage). Default: all. */
  readonly horizon?: number;
  readonly gradient?: GradientMode;
}

export interface Objective {
  /** Length of u. */
  readonly size: number;
  /** Loss and its gradient at u [size]. */
  valueAndGrad(u: Array): [Array, Array];
  /** Loss alone (line-search trials). */
  value(u: Array): Array;
  /** Residual vector r(u) with Σr² equal to the loss up to a constant factor (for Levenberg–Marquardt). */
  residual(u: Array): Array;
  /** Losses at several points (host vectors u): scoring restarts and samples with forward passes only. */
  values(us: readonly (readonly number[])[]): Promise<number[]>;
  /**
   * Why the loss at u is not finite: the simulation rerun eagerly at u and checked frame by frame.
   * A DivergenceError (with the model's advice where it has one) when the states diverge, else null.
   */
  diagnose(u: Array): Promise<DivergenceError | null>;
  /**
   * Where a non-finite gradient at u comes from, when the states are finite: "simulation" when the
   * rollout's own derivative (a pullback of ones through simulate) is not finite, else "render" (the
   * rendering or the loss).
   */
  gradientCulprit(u: Array): Promise<"simulation" | "render">;
}

/**
 * `render`, compiled (the fused rasterizer kernels make rendering and its derivatives compile quickly on every
 * backend).
 */
export const compileRender = <S>(render: (states: S) => Array): ((states: S) => Array) =>
  jit(render) as (states: S) => Array;

/**
 * The gradient mode `auto` resolves to for a loss kind and number of scalar unknowns: forward mode
 * for one unknown, reverse otherwise ("split": the rollout compiled, rendering and loss op by op,
 * only when asked for).
 */
export function gradientMode(
  _kind: LossKind,
  size: number,
  mode: GradientMode = "auto",
): Exclude<GradientMode, "auto"> {
  if (mode !== "auto") return mode;
  return size === 1 ? "forward" : "reverse";
}

/** Build the objective of one problem, observation and loss kind. */
export function buildObjective<S>(
  problem: Problem<S>,
  observed: Observed<S>,
  layout: Layout,
  o: ObjectiveOptions,
): Objective {
  const horizon = o.horizon ?? problem.frames;
  if (!(Number.isInteger(horizon) && horizon >= 1 && horizon <= problem.frames)) {
    throw new Error(
      `sysid: horizon ${horizon} must be a whole number of frames between 1 and the video's ${problem.frames}.`,
    );
  }
  const params = (u: Array) => layout.params(u);
  let physics: (u: Array) => unknown;
  let compare: (x: unknown) => { loss: Array; residual: Array };
  if (o.kind === "pixels") {
    if (!observed.video)
      throw new Error("sysid: the pixels method needs an observed video (observed.video, frames [T, H, W, C]).");
    if (!problem.render)
      throw new Error("sysid: the pixels method needs problem.render(states) → frames [K, H, W, C].");
    const video = observed.video;
    if (video.ndim !== 4 || video.shape[0]! < horizon) {
      throw new Error(
        `sysid: the observed video must be frames [T, H, W, C] with at least ${horizon} frames, got [${video.shape}].`,
      );
    }
    const indices = frameIndices(o.frames ?? "every", horizon);
    const target = takeFrames(video, indices);
    const render = problem.render.bind(problem);
    const levels = o.pyramid ?? 1;
    physics = (u) => layout.explainMisreads(() => takeFrames(problem.simulate(params(u), horizon), indices));
    compare = (states) => {
      const frames = render(states as S);
      if (frames.shape.join() !== target.shape.join()) {
        throw new Error(
          `sysid: render(states) gave frames [${frames.shape}], but the observed video's ` +
            `frames are [${target.shape}]; render at the video's size and channel count.`,
        );
      }
      return pyramidTerms(frames, target, levels);
    };
  } else {
    if (observed.states === undefined)
      throw new Error("sysid: the states method needs observed 3-D states (observed.states).");
    const measure = problem.measure ? problem.measure.bind(problem) : (x: S): unknown => x;
    const truth = measure(takeFrames(observed.states, frameIndices("every", horizon)));
    physics = (u) => layout.explainMisreads(() => measure(problem.simulate(params(u), horizon)));
    compare = (states) => statesTerms(states, truth);
  }
  const loss = (u: Array) => compare(physics(u)).loss;
  const residual = (u: Array) => compare(physics(u)).residual;
  const mode = gradientMode(o.kind, layout.size, o.gradient);
  const split = mode === "split",
    forward = mode === "forward";
  let valueAndGradFn: (u: Array) => [Array, Array];
  let value: (u: Array) => Array;
  if (split) {
    const phys = jit(physics);
    const lossOfStates = (s: unknown) => compare(s).loss;
    value = (u) => lossOfStates(phys(u));
    valueAndGradFn = (u) => {
      const [states, pullback] = vjp(phys, u) as [unknown, (ct: unknown) => [Array]];
      const [l, g] = valueAndGrad(lossOfStates)(states) as [Array, unknown];
      return [l, pullback(g)[0]];
    };
  } else {
    value = jit(loss);
    valueAndGradFn = forward
      ? forwardValueAndGrad(loss, layout.size)
      : (jit(valueAndGrad(loss)) as (u: Array) => [Array, Array]);
  }
  const batched = split ? null : jit((us: Array) => vmap(loss)(us));
  const diagnose = async (u: Array): Promise<DivergenceError | null> => {
    let states: unknown;
    try {
      states = problem.simulate(params(u), horizon);
    } catch (e) {
      if (e instanceof DivergenceError) return e;
      throw e;
    }
    const d = await findDivergenceAsync(states, horizon);
    return d ? divergenceError("sysid: simulate", d, { frames: horizon }) : null;
  };
  const gradientCulprit = async (u: Array): Promise<"simulation" | "render"> => {
    const [states, pullback] = vjp(physics, u) as [unknown, (ct: unknown) => [Array]];
    const [g] = pullback(tree.map((l: Array) => np.onesLike(l), states));
    const d = await g.data();
    return globalThis.Array.from(d).every(Number.isFinite) ? "render" : "simulation";
  };
  return {
    size: layout.size,
    gradientCulprit,
    valueAndGrad: valueAndGradFn,
    value,
    residual,
    diagnose,
    values: async (us) => {
      if (!batched) {
        const out: number[] = [];
        for (const u of us) out.push((await value(np.array([...u], { dtype: "float32" })).data())[0]!);
        return out;
      }
      // Chunks of at most 8 rows (each renders a whole video), the last padded so every call has one shape.
      const size = Math.min(8, us.length),
        out: number[] = [];
      for (let i = 0; i < us.length; i += size) {
        const rows = us.slice(i, i + size).map((r) => [...r]);
        while (rows.length < size) rows.push(rows[rows.length - 1]!);
        const d = await batched(np.array(rows, { dtype: "float32" })).data();
        out.push(...globalThis.Array.from(d, Number).slice(0, Math.min(size, us.length - i)));
      }
      return out;
    },
  };
}

/** Loss and residual of rendered frames against the target: Σ over pyramid levels of the MSE. */
function pyramidTerms(frames: Array, target: Array, levels: number): { loss: Array; residual: Array } {
  let loss: Array | null = null;
  const parts: Array[] = [];
  for (let k = 0; k < levels; k++) {
    const r = np.sub(poolFrames(frames, 2 ** k), poolFrames(target, 2 ** k));
    const l = meanSquare(r);
    loss = loss ? np.add(loss, l) : l;
    // Scaled so that Σ residual² = Σ_levels mean(r_k²) = the loss.
    parts.push(np.div(np.reshape(r, [-1]), Math.sqrt(r.size)));
  }
  return { loss: loss!, residual: parts.length === 1 ? parts[0]! : np.concatenate(parts, 0) };
}

/** Loss (mean over leaves of the MSE) and residual of simulated against observed states. */
function statesTerms(states: unknown, truth: unknown): { loss: Array; residual: Array } {
  const [la] = tree.flatten(states),
    [lb] = tree.flatten(truth);
  if (la.length !== lb.length)
    throw new Error(`sysid: the simulated states have ${la.length} arrays, the observed states ${lb.length}.`);
  const parts = la.map((x, i) => {
    const a = x as Array,
      b = lb[i] as Array;
    if (a.shape.join() !== b.shape.join())
      throw new Error(`sysid: simulated states [${a.shape}] and observed states [${b.shape}] differ in shape.`);
    return np.div(np.reshape(np.sub(a, b), [-1]), Math.sqrt(a.size * la.length));
  });
  const residual = parts.length === 1 ? parts[0]! : np.concatenate(parts, 0);
  return {
    loss: la.length === 1 ? meanSquare(np.sub(la[0] as Array, lb[0] as Array)) : np.sum(np.square(residual)),
    residual,
  };
}

/**
 * Loss and gradient by forward mode: one jvp per scalar of u, batched with vmap over the basis
 * vectors and jitted as one program. For one or two unknowns this is the cheapest exact gradient
 * through render(simulate(θ)): the tangent pass has the forward pass's per-pixel structure.
 */
function forwardValueAndGrad(loss: (u: Array) => Array, n: number): (u: Array) => [Array, Array] {
  return jit((u: Array): [Array, Array] => {
    const basis = np.eye(n, undefined, { dtype: u.dtype });
    const [values, derivs] = vmap((t: Array) => jvp(loss, [u], [t]) as [Array, Array])(basis) as [Array, Array];
    return [np.reshape(np.split(values, n, 0)[0]!, []), derivs]; // equal pieces: WebGPU rejects empty ones
  });
}
