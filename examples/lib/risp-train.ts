/**
 * Training RISP's state predictor (RISP, ICLR 2022, §3) on a training set of risp-render: the
 * rows ours-no-grad (L_error, Eq. 8), ours (+ γ·‖∂L_error/∂ψ‖, Eq. 12) and ours-exact
 * (+ γ·‖∂N/∂I · ∂I/∂ψ‖_F, Eq. 10), the regulariser ramped up over the first half of training.
 * Shared by risp-state (Table 1) and risp-tasks (Tables 2–4).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { networks, np, optim, random, vmap, type Array } from "gradsim/node";
import type { TrainingSet } from "./risp-render.js";
import { mean, std } from "./stats.js";

/** The predictor's outputs are standardised states: state = mu + scale ⊙ output, mu and scale the training states' mean and spread per component. */
export interface Standardisation { readonly mu: readonly number[]; readonly scale: readonly number[] }
/** Beside each network's params.gsp: its Standardisation, to read states in their units. */
export const STANDARDISATION_FILE = "standardisation.json";

/** The state a network of `net` with `params` reads from an image: its output mapped back by the standardisation of its training states. */
export const stateReader = (net: networks.PredictorConfig, s: Standardisation) => {
  const mu = np.array(s.mu, { dtype: "float32" }), scale = np.array(s.scale, { dtype: "float32" });
  return (params: networks.PredictorParams) => (image: Array): Array => np.add(mu, np.mul(scale, networks.predictor(params, net, image)));
};

/** The Standardisation of training states [n·S] (row-major). */
export function standardisation(states: ArrayLike<number>, S: number): Standardisation {
  const n = states.length / S, column = (k: number) => globalThis.Array.from({ length: n }, (_, i) => states[i * S + k]!);
  return { mu: globalThis.Array.from({ length: S }, (_, k) => mean(column(k))), scale: globalThis.Array.from({ length: S }, (_, k) => Math.max(1e-3, std(column(k)))) };
}

export type TrainedRow = "ours-no-grad" | "ours" | "ours-exact";
export const TRAINED_ROWS: readonly TrainedRow[] = ["ours-no-grad", "ours", "ours-exact"];

export interface PredictorTraining {
  readonly resolution: number;
  readonly epochs: number;
  readonly batch: number;
  /** Examples of each minibatch the regulariser is applied to. */
  readonly penalised: number;
  readonly widths: readonly number[];
  readonly lr: number;
}

/**
 * The predictor: position-aware (coordinate channels, and a head over the flattened last feature
 * map rather than global pooling), since the states are positions.
 */
export const predictorConfig = (cfg: Pick<PredictorTraining, "resolution" | "widths">, outputs: number): networks.PredictorConfig =>
  ({ image: [cfg.resolution, cfg.resolution, 3], outputs, widths: cfg.widths, coordinates: true, head: "flatten" });

export interface TrainedPredictor {
  readonly params: networks.PredictorParams;
  /** The state of an image (the network's standardised output mapped back to state units). */
  readonly predict: (image: Array) => Array;
  readonly seconds: number;
  readonly finalLoss: number;
}

/** Train one row's network on `data` (outputs standardised by the training states' mean and spread); params.gsp and the loss curve go to `dir`. */
export async function trainPredictor(dir: string, o: { cfg: PredictorTraining; row: TrainedRow; gamma: number; data: TrainingSet; seed: number; label: string; progress: false | "auto" }): Promise<TrainedPredictor> {
  const { cfg, data, row, gamma } = o;
  const S = data.states.shape[1]!, n = data.states.shape[0]!;
  const net = predictorConfig(cfg, S);
  const stats = standardisation(data.states.dataSync(), S);
  const predict = stateReader(net, stats);
  const K = cfg.penalised;
  const loss = (p: networks.PredictorParams, b: TrainingSet, progress: Array): Array => {
    const error = networks.stateError(vmap(predict(p))(b.images), b.states);
    if (row === "ours-no-grad") return error;
    const first = (x: Array) => np.take(x, np.arange(K), 0);
    const penalty = row === "ours"
      ? vmap((im: Array, s: Array, dI: Array) => networks.errorGradientPenalty(predict(p), im, s, dI))(first(b.images), first(b.states), first(b.dImages))
      : vmap((im: Array, dI: Array) => networks.renderingGradientPenalty(predict(p), im, dI))(first(b.images), first(b.dImages));
    const ramp = np.minimum(1, np.mul(2, progress));
    return np.add(error, np.mul(np.mul(gamma, ramp), np.mean(penalty)));
  };
  const steps = cfg.epochs * Math.floor(n / cfg.batch);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, STANDARDISATION_FILE), JSON.stringify(stats) + "\n");
  const r = await networks.trainToDisk(dir, {
    params: networks.initPredictor(random.key(o.seed * 7919 + 1), net), loss, data, batchSize: cfg.batch, epochs: cfg.epochs,
    optimizer: optim.adamw(optim.cosineDecay({ initValue: cfg.lr, decaySteps: steps, alpha: 0.05 }), { weightDecay: 1e-6 }),
    seed: o.seed, progress: o.progress, label: o.label,
  });
  return { params: r.params, predict: predict(r.params), seconds: r.seconds, finalLoss: r.epochLosses[r.epochLosses.length - 1]! };
}

/** A trained network's directory under `root` (params.gsp and its loss curve; risp-tasks reads it back). */
export const predictorDir = (root: string, env: string, row: TrainedRow) => join(root, env, row);
