/**
 * Physics models as pure, differentiable step functions (brax / jax-md style): each model has a
 * `System` (static topology as int32 Arrays + differentiable parameters), a `State` pytree,
 * energies/forces, `step(system, state, controls, dt) → state` and `simulate(system, state0,
 * { dt, substeps, frames, controls, checkpoint })` built on `lax.scan`.
 */
export * as particles from "./particles/index.js";
export * as springs from "./springs/index.js";
export * as fem from "./fem/index.js";
export * as cloth from "./cloth/index.js";
export * as contact from "./contact/index.js";
export * as rigid from "./rigid/index.js";
export * as pendulum from "./pendulum/index.js";
export * as articulated from "./articulated/index.js";
export * as smoke from "./smoke/index.js";
export * as meshes from "./meshes/index.js";
export { rollout, type SimulateOptions, type StabilityAdvice, type StepFn } from "./common/simulate.js";
export { DivergenceError, findDivergence, findDivergenceAsync, type Divergence } from "./common/divergence.js";
