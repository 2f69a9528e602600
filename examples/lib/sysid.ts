/**
 * System identification by gradient descent: an optimizer loop over any (loss, gradient)
 * function, with gradsim's progress bar and loss-curve files, and the two ways of getting the
 * gradient of an image-space loss through render(simulate(θ)).
 */
import { jit, jvp, np, optim, tree, valueAndGrad, vjp, vmap, type Array } from "../../src/index.js";
import type { GradientTransformation } from "../../src/optim/base.js";

/** θ ↦ [loss, ∂loss/∂θ] (Arrays; θ a pytree of Arrays). */
export type LossAndGrad<P> = (params: P) => [Array, P];

/**
 * ∂/∂θ of imageLoss(physics(θ)). `fused: true`: one jitted valueAndGrad of the whole composition
 * (the CPU's fast path). Otherwise two halves chained by the chain rule: the rollout (a
 * `lax.scan` returning the per-frame vertices) jitted and differentiated with `vjp`, and the
 * rasterizer and loss run op by op with `valueAndGrad`, which sizes its tiles from concrete values
 * (what WebGPU runs).
 */
export function imageLossAndGrad<P>(physics: (p: P) => Array, imageLoss: (vertices: Array) => Array, opts: { fused?: boolean } = {}): LossAndGrad<P> {
  if (opts.fused) {
    const f = jit(valueAndGrad((p: P) => imageLoss(physics(p))));
    return (p) => f(p) as [Array, P];
  }
  const phys = jit(physics);
  return (p) => {
    const [vertices, pullback] = vjp(phys, p) as [Array, (ct: Array) => [P]];
    const [loss, gv] = valueAndGrad(imageLoss)(vertices) as [Array, Array];
    return [loss, pullback(gv)[0]];
  };
}

/**
 * Loss and gradient by forward mode: one `jvp` per parameter, batched with `vmap` over the
 * one-hot tangents and jitted as one program. For the handful of scalar parameters of system
 * identification this is the cheapest exact gradient through render(simulate(θ)): the tangent
 * pass has the forward pass's per-pixel structure, which the CPU compiler turns into fast kernels
 * (reverse mode through the rasterizer does not, see `imageLossAndGrad`). Parameters must be a
 * pytree of scalar Arrays.
 */
export function forwardLossAndGrad<P>(loss: (p: P) => Array): LossAndGrad<P> {
  const f = jit((p: P): [Array, Array] => {
    const [leaves, def] = tree.flatten(p) as [Array[], unknown];
    leaves.forEach((l, i) => { if (l.ndim !== 0) throw new Error(`forwardLossAndGrad: parameter leaf ${i} has shape [${l.shape}]; only scalar parameters are supported.`); });
    const n = leaves.length;
    const eye = np.eye(n, undefined, { dtype: leaves[0]!.dtype });
    // Tangent k is the k-th basis vector: column k of the identity, one scalar per leaf.
    const basis = tree.unflatten(def as never, leaves.map((_, i) => np.reshape(np.split(eye, n, 1)[i]!, [n])));
    const [values, derivs] = vmap((t: P) => jvp(loss, [p], [t]) as [Array, Array])(basis) as [Array, Array];
    return [np.reshape(np.split(values, n, 0)[0]!, []), derivs]; // equal pieces: WebGPU rejects empty ones
  });
  return (p) => {
    const [value, derivs] = f(p);
    const [leaves, def] = tree.flatten(p);
    const grads = leaves.map((_, i) => np.reshape(np.split(derivs, leaves.length, 0)[i]!, []));
    return [value, tree.unflatten(def, grads) as P];
  };
}

export interface OptimizeOptions<S> {
  readonly optimizer: GradientTransformation<S>;
  readonly steps: number;
  /** Progress label (e.g. "rigid-mass"). */
  readonly label: string;
  /** false silences the progress bar (tests, --json). */
  readonly progress?: optim.ProgressMode;
  /** Stop early once the loss is at most this. */
  readonly targetLoss?: number;
  readonly lossCurvePng?: string;
  readonly lossCurveCsv?: string;
}

export interface OptimizeResult<P> {
  /** The parameters with the lowest loss seen (the loss is evaluated before each update). */
  readonly best: P;
  readonly bestLoss: number;
  readonly bestStep: number;
  readonly last: P;
  /** losses[k], gradNorms[k]: at the parameters after k updates. */
  readonly losses: number[];
  readonly gradNorms: number[];
  readonly steps: number;
  readonly seconds: number;
  readonly stopReason: "steps" | "targetLoss" | "converged";
}

const scalar = async (x: Array): Promise<number> => (await x.data())[0]!;

/**
 * Minimise with `optimizer` for `steps` updates (plus a final evaluation). Reads back one loss
 * and one gradient norm per step (`await data()`, so it works on WebGPU too).
 */
export async function optimize<P, S>(lossAndGrad: LossAndGrad<P>, params: P, o: OptimizeOptions<S>): Promise<OptimizeResult<P>> {
  const progress = optim.createProgress(o.steps, o.progress ?? "auto", undefined, o.label);
  const losses: number[] = [], gradNorms: number[] = [];
  const t0 = performance.now();
  let p = params, state = o.optimizer.init(params);
  let best = p, bestLoss = Infinity, bestStep = 0, unchanged = 0;
  let stopReason: OptimizeResult<P>["stopReason"] = "steps";
  for (let k = 0; ; k++) {
    const [lossArr, grads] = lossAndGrad(p);
    const loss = await scalar(lossArr), gradNorm = await scalar(optim.globalNorm(grads));
    losses.push(loss);
    gradNorms.push(gradNorm);
    if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) {
      progress.finish(`stopped at step ${k}: loss ${loss}, gradient norm ${gradNorm}`);
      throw new Error(`${o.label}: the loss or its gradient is not finite at step ${k} (loss ${loss}, ‖∇‖ ${gradNorm}); ` +
        "the simulation probably diverged (a parameter left its physical range).");
    }
    if (loss < bestLoss) { best = p; bestLoss = loss; bestStep = k; }
    if (k === o.steps) break;
    if (o.targetLoss !== undefined && loss <= o.targetLoss) { stopReason = "targetLoss"; break; }
    progress.update(k, loss);
    const [updates, next] = o.optimizer.update(grads, state, p);
    const moved = optim.applyUpdates(p, updates);
    // Converged to the parameters' precision: updates no longer change them (float32 rounding).
    unchanged = (await sameValues(p, moved)) ? unchanged + 1 : 0;
    p = moved;
    state = next;
    if (unchanged >= STALL_STEPS) { stopReason = "converged"; break; }
  }
  const seconds = (performance.now() - t0) / 1000;
  progress.finish(`${losses.length - 1} steps in ${seconds.toFixed(1)}s, loss ${losses[0]!.toExponential(3)} → ${bestLoss.toExponential(3)} (stopped: ${stopReason})`);
  if (o.lossCurveCsv) optim.writeLossCurveCsv(o.lossCurveCsv, losses, gradNorms);
  if (o.lossCurvePng) optim.writeLossCurvePng(o.lossCurvePng, losses);
  return { best, bestLoss, bestStep, last: p, losses, gradNorms, steps: losses.length - 1, seconds, stopReason };
}

/** Updates that leave every parameter bit-identical this many times in a row end the run. */
const STALL_STEPS = 3;

async function sameValues<P>(a: P, b: P): Promise<boolean> {
  const [la] = tree.flatten(a), [lb] = tree.flatten(b);
  for (let i = 0; i < la.length; i++) {
    const x = await (la[i] as Array).data(), y = await (lb[i] as Array).data();
    for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return false;
  }
  return true;
}
