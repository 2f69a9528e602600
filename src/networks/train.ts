/**
 * Minibatch training of a network (RISP's predictor, ConvLSTM-style baselines): shuffled
 * minibatches (seeded), one jitted step per batch — the loss is whatever the caller writes over a
 * batch, typically a vmap of the per-example loss — an optimiser from `optim`, the loss per step
 * and per epoch, progress on stderr, and a callback per epoch (checkpoints and loss curves on disk:
 * `networks.trainToDisk` in the Node entry).
 */
import type { Array } from "../core/array.js";
import { makeRng } from "../core/host-rng.js";
import { np } from "../core/np/index.js";
import { flatten, unflatten } from "../core/tree.js";
import { applyUpdates, type GradientTransformation } from "../optim/base.js";
import { createProgress, type ProgressMode } from "../optim/progress.js";
import { jit, valueAndGrad } from "../transforms/index.js";

export interface TrainOptions<P, D> {
  readonly params: P;
  /**
   * Scalar loss of the parameters on a batch (the data's leaves, each [batchSize, ...]). `progress`
   * is the fraction of training done before this step (a scalar Array: 0 at the first step), for
   * weight schedules inside the loss such as RISP's ramped-up regulariser; it does not recompile.
   */
  readonly loss: (params: P, batch: D, progress: Array) => Array;
  /** Training data: a pytree of Arrays with a common leading axis (examples). */
  readonly data: D;
  readonly batchSize: number;
  readonly epochs: number;
  readonly optimizer: GradientTransformation<unknown>;
  /** Seed of the shuffling (default 0). */
  readonly seed?: number;
  readonly progress?: ProgressMode;
  readonly label?: string;
  /** Called after every epoch with its mean loss (awaited): save a checkpoint, draw a curve. */
  readonly onEpoch?: (info: {
    epoch: number;
    loss: number;
    params: P;
    losses: readonly number[];
  }) => void | Promise<void>;
}

export interface TrainResult<P> {
  readonly params: P;
  /** Loss of every step, and the mean per epoch. */
  readonly losses: number[];
  readonly epochLosses: number[];
  readonly seconds: number;
}

/**
 * Train `params` on `data` in shuffled minibatches (the last incomplete batch of an epoch is left out, so one compiled
 * step serves all).
 */
export async function train<P, D>(o: TrainOptions<P, D>): Promise<TrainResult<P>> {
  const [leaves, def] = flatten(o.data);
  if (!leaves.length) throw new Error("networks.train: the data has no Arrays.");
  const n = (leaves[0] as Array).shape[0]!;
  const bad = leaves.find((l) => (l as Array).shape[0] !== n);
  if (bad)
    throw new Error(
      `networks.train: every data array needs the same number of ` +
        `examples along axis 0; got ${n} and ${(bad as Array).shape[0]}.`,
    );
  if (!(Number.isInteger(o.batchSize) && o.batchSize >= 1 && o.batchSize <= n))
    throw new Error(`networks.train: batchSize must be an integer in [1, ${n}] (the examples), got ${o.batchSize}.`);
  if (!(Number.isInteger(o.epochs) && o.epochs >= 1))
    throw new Error(`networks.train: epochs must be a positive integer, got ${o.epochs}.`);
  const batches = Math.floor(n / o.batchSize);
  const first = leaves[0] as Array;
  const progressDtype = first.dtype === "float64" ? "float64" : "float32";
  const step = jit(valueAndGrad(o.loss));
  const rng = makeRng(o.seed ?? 0);
  let params = o.params,
    state = o.optimizer.init(params);
  const losses: number[] = [],
    epochLosses: number[] = [];
  const progress = createProgress(o.epochs * batches, o.progress ?? "auto", undefined, o.label ?? "train");
  const t0 = performance.now();
  for (let e = 0; e < o.epochs; e++) {
    const order = rng.shuffle(globalThis.Array.from({ length: n }, (_, i) => i));
    let sum = 0;
    for (let b = 0; b < batches; b++) {
      const idx = np.array(order.slice(b * o.batchSize, (b + 1) * o.batchSize), { dtype: "int32" });
      const batch = unflatten(
        def,
        leaves.map((l) => np.take(l as Array, idx, 0)),
      ) as D;
      const done = np.array((e * batches + b) / (o.epochs * batches), { dtype: progressDtype });
      const [value, g] = step(params, batch, done) as [Array, P];
      const l = value.item();
      if (!Number.isFinite(l))
        throw new Error(
          `networks.train: the loss is ${l} at epoch ${e}, batch ${b}; lower the learning rate or check the data.`,
        );
      const [u, next] = o.optimizer.update(g, state, params);
      state = next;
      params = applyUpdates(params, u) as P;
      losses.push(l);
      sum += l;
      progress.update(losses.length, l);
    }
    epochLosses.push(sum / batches);
    await o.onEpoch?.({ epoch: e, loss: sum / batches, params, losses });
  }
  progress.finish(
    `${o.epochs} epochs of ${batches} batches, loss ${losses[0]!.toExponential(3)} ` +
      `→ ${losses[losses.length - 1]!.toExponential(3)}`,
  );
  return { params, losses, epochLosses, seconds: (performance.now() - t0) / 1000 };
}
