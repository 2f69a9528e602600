/**
 * The usual optimizers, each a `chain` of building blocks ending in the learning rate
 * (optax `alias.py`). The learning rate is a number or a `Schedule`.
 */
import type { GradientTransformation, ScalarOrSchedule } from "./base.js";
import { chain, masked, type ChainState, type Mask } from "./combine.js";
import {
  addDecayedWeights,
  scaleByAdam,
  scaleByLearningRate,
  scaleByRms,
  scaleByStddev,
  trace,
  type AdamOptions,
  type LearningRateState,
  type RmsOptions,
  type ScaleByRmsState,
  type ScaleByStddevState,
  type TraceState,
} from "./transform.js";
import { identity } from "./identity.js";
import type { EmptyState } from "./base.js";

export interface SgdOptions {
  /** Heavy-ball momentum coefficient; 0 or absent for plain SGD. */
  readonly momentum?: number;
  readonly nesterov?: boolean;
}
export type SgdState = ChainState<
  [GradientTransformation<TraceState | EmptyState>, GradientTransformation<LearningRateState>]
>;

/** Stochastic gradient descent: p ← p − lr·g (with optional momentum). */
export function sgd(
  learningRate: ScalarOrSchedule,
  { momentum = 0, nesterov = false }: SgdOptions = {},
): GradientTransformation<SgdState> {
  const first: GradientTransformation<TraceState | EmptyState> = momentum
    ? trace({ decay: momentum, nesterov })
    : identity();
  return chain(first, scaleByLearningRate(learningRate));
}

/** SGD with momentum: t ← g + β·t, p ← p − lr·t (Nesterov: p ← p − lr·(g + β·t)). */
export const momentum = (
  learningRate: ScalarOrSchedule,
  beta = 0.9,
  opts: { nesterov?: boolean } = {},
): GradientTransformation<SgdState> => sgd(learningRate, { momentum: beta, nesterov: opts.nesterov ?? false });

export type AdamState = ChainState<[ReturnType<typeof scaleByAdam>, GradientTransformation<LearningRateState>]>;
/** Adam (Kingma & Ba 2015). Defaults b1 0.9, b2 0.999, eps 1e-8. */
export const adam = (learningRate: ScalarOrSchedule, opts: AdamOptions = {}): GradientTransformation<AdamState> =>
  chain(scaleByAdam(opts), scaleByLearningRate(learningRate));

export interface AdamWOptions extends AdamOptions {
  readonly weightDecay?: number;
  /** Leaves that get weight decay (default all); e.g. `{ w: true, b: false }`. */
  readonly mask?: Mask;
}
export type AdamWState = ChainState<
  [ReturnType<typeof scaleByAdam>, ReturnType<typeof masked<EmptyState>>, GradientTransformation<LearningRateState>]
>;
/** AdamW (Loshchilov & Hutter 2019): p ← p − lr·(adam(g) + weightDecay·p). Default weightDecay 1e-4. */
export function adamw(
  learningRate: ScalarOrSchedule,
  { weightDecay = 1e-4, mask = true, ...adamOpts }: AdamWOptions = {},
): GradientTransformation<AdamWState> {
  return chain(scaleByAdam(adamOpts), masked(addDecayedWeights(weightDecay), mask), scaleByLearningRate(learningRate));
}

export interface RmspropOptions extends RmsOptions {
  /** Divide by the running standard deviation instead of the root mean square (Graves 2013). */
  readonly centered?: boolean;
  readonly momentum?: number;
  readonly nesterov?: boolean;
}
export type RmspropState = ChainState<
  [
    GradientTransformation<ScaleByRmsState | ScaleByStddevState>,
    GradientTransformation<TraceState | EmptyState>,
    GradientTransformation<LearningRateState>,
  ]
>;
/** RMSProp (Tieleman & Hinton 2012), optionally centered and with momentum on the scaled gradient. */
export function rmsprop(
  learningRate: ScalarOrSchedule,
  { centered = false, momentum = 0, nesterov = false, ...rms }: RmspropOptions = {},
): GradientTransformation<RmspropState> {
  const scaling: GradientTransformation<ScaleByRmsState | ScaleByStddevState> = centered
    ? scaleByStddev(rms)
    : scaleByRms(rms);
  const mom: GradientTransformation<TraceState | EmptyState> = momentum
    ? trace({ decay: momentum, nesterov })
    : identity();
  return chain(scaling, mom, scaleByLearningRate(learningRate));
}
