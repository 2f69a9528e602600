/**
 * RISP's state predictor N(image) → state (§3): a small ResNet (networks.predictor) trained on a
 * training set (training-set.ts) with one of three losses —
 *   ours-no-grad  L_error, the mean absolute state error (Eq. 8): domain randomisation alone;
 *   ours          + γ·‖∂L_error/∂ψ‖ (Eq. 12), the regulariser RISP trains with;
 *   ours-exact    + γ·‖∂N/∂I · ∂I/∂ψ‖_F (Eq. 10), the exact rendering-gradient norm Eq. 12 approximates;
 * the regulariser on the first `penalised` (Eq. 12) or `penalisedExact` (Eq. 10) examples of each minibatch — Eq.
 * 12 costs one reverse pass per example and its parameter gradient another, Eq. 10 a jvp per rendering parameter — and
 * ramped up linearly over the first half of training, as RISP ramps its weight.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import * as optim from "../optim/index.js";
import * as random from "../core/random.js";
import { jit, vmap } from "../transforms/index.js";
import * as networks from "../networks/index.js";
import type { TrainingSet } from "./training-set.js";

/**
 * The predictor's outputs are standardised states: state = mu + scale ⊙ output, mu and scale the training states' mean
 * and spread per component.
 */
export interface Standardisation {
  readonly mu: readonly number[];
  readonly scale: readonly number[];
}

/**
 * The Standardisation of training states [n·S] (row-major): each component's mean and standard deviation (at least
 * 1e-3).
 */
export function standardisation(states: ArrayLike<number>, S: number): Standardisation {
  const n = states.length / S;
  if (!(Number.isInteger(n) && n >= 1))
    throw new Error(`risp: ${states.length} state numbers are not whole states of ${S} components.`);
  const column = (k: number) => globalThis.Array.from({ length: n }, (_, i) => states[i * S + k]!);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const std = (xs: number[]) => {
    const m = mean(xs);
    return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / xs.length);
  };
  return {
    mu: globalThis.Array.from({ length: S }, (_, k) => mean(column(k))),
    scale: globalThis.Array.from({ length: S }, (_, k) => Math.max(1e-3, std(column(k)))),
  };
}

/**
 * The state a network of `net` with `params` reads from an image [R, R, 3]: its output mapped back by the
 * standardisation of its training states.
 */
export const stateReader = (net: networks.PredictorConfig, s: Standardisation) => {
  const mu = np.array(s.mu, { dtype: "float32" }),
    scale = np.array(s.scale, { dtype: "float32" });
  return (params: networks.PredictorParams) =>
    (image: Array): Array =>
      np.add(mu, np.mul(scale, networks.predictor(params, net, image)));
};

/** The three trained rows of RISP's tables (the loss each network is trained with). */
export type TrainedRow = "ours-no-grad" | "ours" | "ours-exact";
export const TRAINED_ROWS: readonly TrainedRow[] = ["ours-no-grad", "ours", "ours-exact"];

export interface PredictorTraining {
  /** Image side in pixels. */
  readonly resolution: number;
  readonly epochs: number;
  readonly batch: number;
  /** Examples of each minibatch Eq. 12's regulariser (ours) is applied to: the batch for every example. */
  readonly penalised: number;
  /** Examples of each minibatch Eq. 10's (ours-exact) is applied to (default `penalised`). */
  readonly penalisedExact?: number;
  /** Channels of the network's stages. */
  readonly widths: readonly number[];
  /** AdamW's initial learning rate (cosine-decayed to 5% of it). */
  readonly lr: number;
}

/**
 * The predictor: position-aware (coordinate channels, and a head over the flattened last feature
 * map rather than global pooling), since the states are positions.
 */
export const predictorConfig = (
  cfg: Pick<PredictorTraining, "resolution" | "widths">,
  outputs: number,
): networks.PredictorConfig => ({
  image: [cfg.resolution, cfg.resolution, 3],
  outputs,
  widths: cfg.widths,
  coordinates: true,
  head: "flatten",
});

/**
 * The training loss of `row` (Eq. 8, 12 or 10) of a reader `predict(params)(image) → state`, on a
 * batch of the training set, `progress` the fraction of training done (the regulariser's ramp).
 */
export function predictorLoss(
  row: TrainedRow,
  o: { gamma: number; penalised: number; predict: (p: networks.PredictorParams) => (image: Array) => Array },
) {
  if (!TRAINED_ROWS.includes(row))
    throw new Error(`risp: the predictor's loss is one of ${TRAINED_ROWS.join(", ")}, got "${row}".`);
  if (row !== "ours-no-grad" && !(o.gamma >= 0))
    throw new Error(`risp: the regulariser's weight γ must be ≥ 0, got ${o.gamma}.`);
  const { predict, penalised: K, gamma } = o;
  if (row !== "ours-no-grad" && !(Number.isInteger(K) && K >= 1))
    throw new Error(`risp: the regulariser's examples per minibatch must be a whole number ≥ 1, got ${K}.`);
  return (p: networks.PredictorParams, b: TrainingSet, progress: Array): Array => {
    const error = networks.stateError(vmap(predict(p))(b.images), b.states);
    if (row === "ours-no-grad") return error;
    const first = (x: Array) => np.take(x, np.arange(K), 0);
    const penalty =
      row === "ours"
        ? vmap((im: Array, s: Array, dI: Array) => networks.errorGradientPenalty(predict(p), im, s, dI))(
            first(b.images),
            first(b.states),
            first(b.dImages),
          )
        : vmap((im: Array, dI: Array) => networks.renderingGradientPenalty(predict(p), im, dI))(
            first(b.images),
            first(b.dImages),
          );
    const ramp = np.minimum(1, np.mul(2, progress));
    return np.add(error, np.mul(np.mul(gamma, ramp), np.mean(penalty)));
  };
}

export interface PredictorSpec {
  readonly cfg: PredictorTraining;
  readonly row: TrainedRow;
  /** The regulariser's weight (ignored by ours-no-grad). */
  readonly gamma: number;
  readonly data: TrainingSet;
  readonly seed: number;
  readonly label?: string;
  readonly progress?: optim.ProgressMode;
  /**
   * Called after every epoch with its network's reader of image batches [n, R, R, 3] → states [n, S] (e.g. a test
   * error per epoch: RISP Fig. 6a), compiled once for the training.
   */
  readonly onEpoch?: (epoch: number, read: (images: Array) => Array) => void | Promise<void>;
}

/**
 * What `networks.train` (or `trainToDisk`) needs to train `spec`'s network, its standardisation
 * and its reader: outputs standardised by the training states' mean and spread, AdamW with a
 * cosine-decayed learning rate.
 */
export function predictorTraining(spec: PredictorSpec) {
  const { cfg, data, row } = spec;
  if (data.states.ndim !== 2) throw new Error(`risp: the training states must be [N, S], got [${data.states.shape}].`);
  const S = data.states.shape[1]!,
    n = data.states.shape[0]!;
  if (!(Number.isInteger(cfg.batch) && cfg.batch >= 1 && cfg.batch <= n))
    throw new Error(
      `risp: the minibatch size must be a whole number between 1 and the ${n} training images, got ${cfg.batch}.`,
    );
  const penalised = row === "ours-exact" ? (cfg.penalisedExact ?? cfg.penalised) : cfg.penalised;
  if (row !== "ours-no-grad" && !(Number.isInteger(penalised) && penalised >= 1 && penalised <= cfg.batch))
    throw new Error(
      `risp: the regulariser's examples per minibatch must be a whole number between 1 and the batch's ${cfg.batch}, ` +
        `got ${penalised}.`,
    );
  const net = predictorConfig(cfg, S);
  const stats = standardisation(data.states.dataSync(), S);
  const predict = stateReader(net, stats);
  const steps = cfg.epochs * Math.floor(n / cfg.batch);
  const options: networks.TrainOptions<networks.PredictorParams, TrainingSet> = {
    params: networks.initPredictor(random.key(spec.seed * 7919 + 1), net),
    loss: predictorLoss(row, { gamma: spec.gamma, penalised, predict }),
    data,
    batchSize: cfg.batch,
    epochs: cfg.epochs,
    optimizer: optim.adamw(optim.cosineDecay({ initValue: cfg.lr, decaySteps: steps, alpha: 0.05 }), {
      weightDecay: 1e-6,
    }),
    seed: spec.seed,
    ...(spec.progress !== undefined ? { progress: spec.progress } : {}),
    ...(spec.label ? { label: spec.label } : {}),
    ...(spec.onEpoch ? { onEpoch: epochReader(spec.onEpoch, predict) } : {}),
  };
  return { net, standardisation: stats, predict, options };
}

/**
 * `onEpoch` as `networks.train` calls it: one compiled batch reader taking the parameters (a reader compiled per
 * epoch keeps each compilation's native memory, about 0.2 GB at 32²: a run of 72 epochs ran out of memory).
 */
function epochReader(
  onEpoch: NonNullable<PredictorSpec["onEpoch"]>,
  predict: (p: networks.PredictorParams) => (image: Array) => Array,
) {
  const read = jit((p: networks.PredictorParams, images: Array) => vmap(predict(p))(images));
  return (info: { epoch: number; params: networks.PredictorParams }) =>
    onEpoch(info.epoch, (images) => read(info.params, images) as Array);
}

export interface TrainedPredictor {
  readonly params: networks.PredictorParams;
  readonly standardisation: Standardisation;
  /** The state of an image (the network's standardised output mapped back to state units). */
  readonly predict: (image: Array) => Array;
  readonly seconds: number;
  /** The mean training loss of each epoch, and of the last. */
  readonly epochLosses: readonly number[];
  readonly finalLoss: number;
}

/**
 * Train one row's network in memory (`risp.trainPredictorToDisk` in gradsim/node also writes it and its loss curve).
 */
export async function trainPredictor(spec: PredictorSpec): Promise<TrainedPredictor> {
  const t = predictorTraining(spec);
  const r = await networks.train(t.options);
  return {
    params: r.params,
    standardisation: t.standardisation,
    predict: t.predict(r.params),
    seconds: r.seconds,
    epochLosses: r.epochLosses,
    finalLoss: r.epochLosses[r.epochLosses.length - 1]!,
  };
}
