/**
 * The dataset task shared by the `pendulum` and `double-pendulum` experiments (gradSim Table 3,
 * "length" and "initial angles"): unknowns L₁..L_k (rod lengths, log space) and θ₁(0)..θ_k(0)
 * (initial angles) from the video of the swing; DiffPhysics is supervised with the 3-D bob
 * positions. The scene is pendulum.ts's; the priors and settings are the caller's.
 */
import type { Rng } from "../../core/host-rng.js";
import { table3Rows, type DatasetTask } from "../dataset.js";
import type { EstimateSettings } from "../estimate.js";
import type { Problem } from "../objective.js";
import type { Unknown, Values } from "../unknowns.js";
import { buildPendulum, pendulumProblem, type PendulumSpec } from "./pendulum.js";

/** The dataset's distribution: per link, a length range (m) and an initial-angle range (rad). */
export interface PendulumPrior {
  readonly length: readonly (readonly [number, number])[];
  readonly theta0: readonly (readonly [number, number])[];
}

/** Flat (L₁..L_k, θ₁..θ_k) ↔ the unknowns' values. */
const split = (x: readonly number[], k: number): Values => ({ L: x.slice(0, k), theta0: x.slice(k) });

/** A draw from the prior, flat: (L₁..L_k, θ₁..θ_k). */
export const samplePendulum = (rng: Rng, p: PendulumPrior): number[] => [
  ...p.length.map(([lo, hi]) => rng.uniform(lo, hi)),
  ...p.theta0.map(([lo, hi]) => rng.uniform(lo, hi)),
];

/** "L = (…) m, θ₀ = (…) rad" of a flat draw of `links` links. */
export const describePendulum = (x: readonly number[], links: number): string =>
  `L = (${x
    .slice(0, links)
    .map((v) => v.toFixed(3))
    .join(", ")}) m, θ₀ = (${x
    .slice(links)
    .map((v) => v.toFixed(3))
    .join(", ")}) rad`;

const unknownsFor = (k: number): Unknown[] => [
  { name: "L", size: k, transform: "log", unit: "m" },
  { name: "theta0", size: k, unit: "rad" },
];

/**
 * The Table 3 protocol over random swings of the pendulum `spec`: its problem (one scene, the
 * unknowns vary), L-BFGS settings on the rendered frames, and the rows gradsim, DiffPhysics and
 * REINFORCE (`table3Rows`).
 */
export function pendulumDatasetTask(
  spec: PendulumSpec,
  prior: PendulumPrior,
  o: {
    name: string;
    steps: number;
    reinforceSteps: number;
    progress: false | "auto";
    /** The gradient methods' start for a truth (a prior draw, or a perturbation of the truth for chaotic systems). */
    initial: (rng: Rng, truth: number[]) => number[];
  },
): DatasetTask<unknown> & { problem: Problem<unknown>; settings: EstimateSettings } {
  const scene = buildPendulum(spec);
  const problem = pendulumProblem(scene) as Problem<unknown>;
  const k = spec.links;
  const settings: EstimateSettings = {
    optimizer: "lbfgs",
    steps: o.steps,
    frames: scene.rendered.slice(),
    progress: o.progress,
  };
  return {
    name: o.name,
    unknowns: unknownsFor(k),
    trainSize: 100,
    sample: (rng) => {
      const truth = samplePendulum(rng, prior);
      const initial = o.initial(rng, truth),
        priorDraw = samplePendulum(rng, prior);
      return {
        truth: split(truth, k),
        initial: split(initial, k),
        prior: split(priorDraw, k),
        problem: () => problem,
        describe: `truth ${describePendulum(truth, k)}; initial guess ${describePendulum(initial, k)}`,
      };
    },
    methods: table3Rows(settings, o.reinforceSteps, 0.05),
    problem,
    settings,
  };
}
