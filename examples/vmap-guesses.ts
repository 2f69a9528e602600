/**
 * Fitting a projectile with drag to an observed trajectory, 64 guesses at once.
 *
 * The rollout is a `lax.scan` over a pure step function. `vmap(valueAndGrad(loss))` evaluates
 * the loss and its gradient for every guess of (launch speed, angle, drag) in one batched
 * program; a plain JS loop over the guesses computes the same thing one at a time, and the
 * run prints both timings. The best guess is then refined by a few batched gradient steps.
 *
 *   npx tsx examples/vmap-guesses.ts
 */
import { fileURLToPath } from "node:url";
import { lax, np, random, valueAndGrad, vmap, type Array } from "gradsim";

const DT = 0.02;
const GRAVITY = 9.81;
/** [speed (m/s), angle (rad), drag (1/m)] that generated the "observed" trajectory. */
export const TRUTH = [14, 0.9, 0.08] as const;
/** Box the guesses are drawn from, per parameter. */
const LOW = [6, 0.3, 0.0],
  HIGH = [20, 1.4, 0.2];

interface State {
  readonly pos: Array;
  readonly vel: Array;
}

/** Positions [steps, 2] of a projectile with quadratic drag, integrated with semi-implicit Euler. */
export function trajectory(params: Array, steps: number): Array {
  const speed = np.take(params, 0),
    angle = np.take(params, 1),
    drag = np.take(params, 2);
  const vel = np.mul(speed, np.stack([np.cos(angle), np.sin(angle)]));
  const gravity = np.array([0, -GRAVITY], { dtype: params.dtype });
  const step = (s: State, _: null): [State, Array] => {
    const airspeed = np.sqrt(np.add(np.sum(np.square(s.vel)), 1e-12));
    const acc = np.sub(gravity, np.mul(np.mul(drag, airspeed), s.vel));
    const v = np.add(s.vel, np.mul(DT, acc));
    const p = np.add(s.pos, np.mul(DT, v));
    return [{ pos: p, vel: v }, p];
  };
  const [, positions] = lax.scan(step, { pos: np.zeros([2], { dtype: params.dtype }), vel }, null, { length: steps });
  return positions;
}

/** Mean squared distance to the observed positions. */
export const lossFor =
  (target: Array) =>
  (params: Array): Array =>
    np.mean(np.sum(np.square(np.sub(trajectory(params, target.shape[0]!), target)), -1));

export interface Options {
  /** Number of parameter guesses (64 in the demo). */
  readonly guesses?: number;
  /** Rollout length. */
  readonly steps?: number;
  /** Batched gradient-descent steps after picking the best guess. */
  readonly refine?: number;
  readonly log?: (line: string) => void;
}

export interface Result {
  readonly guesses: Array; // [n, 3]
  readonly losses: Array; // [n]
  readonly grads: Array; // [n, 3]
  readonly loopLosses: Array;
  readonly loopGrads: Array;
  readonly best: number[];
  readonly bestLoss: number;
  readonly refined: number[];
  readonly refinedLoss: number;
  readonly vmapMs: number;
  readonly loopMs: number;
}

export function main(opts: Options = {}): Result {
  const n = opts.guesses ?? 64,
    steps = opts.steps ?? 120,
    log = opts.log ?? console.log;
  const target = trajectory(np.array([...TRUTH], { dtype: "float32" }), steps);
  const loss = lossFor(target);
  const u = random.uniform(random.key(0), [n, 3]);
  const guesses = np.add(np.array(LOW), np.mul(u, np.sub(np.array(HIGH), np.array(LOW))));

  // All guesses at once: one batched rollout, one batched backward pass.
  const batched = vmap(valueAndGrad(loss));
  let t0 = performance.now();
  const [losses, grads] = batched(guesses) as [Array, Array];
  const vmapMs = performance.now() - t0;

  // The same, one guess at a time.
  const single = valueAndGrad(loss);
  t0 = performance.now();
  const each = [...guesses].map((g) => single(g) as [Array, Array]);
  const loopMs = performance.now() - t0;
  const loopLosses = np.stack(each.map((r) => r[0])),
    loopGrads = np.stack(each.map((r) => r[1]));

  const lossValues = losses.dataSync();
  const bestIdx = lossValues.indexOf(Math.min(...lossValues));
  const fmt = (p: ArrayLike<number>) =>
    `speed ${p[0]!.toFixed(2)} m/s, angle ${p[1]!.toFixed(3)} rad, drag ${p[2]!.toFixed(3)}`;
  const best = globalThis.Array.from(np.take(guesses, bestIdx, 0).dataSync());
  log(`${n} guesses, ${steps}-step rollouts (lax.scan), loss + gradient for each:`);
  log(`  vmap(valueAndGrad(loss)): ${vmapMs.toFixed(0)} ms`);
  log(`  JS loop of valueAndGrad : ${loopMs.toFixed(0)} ms  → vmap is ${(loopMs / vmapMs).toFixed(1)}x faster`);
  log(`  largest |loss difference| between the two: ${maxAbsDiff(losses, loopLosses).toExponential(1)}`);
  log(`best guess #${bestIdx}: ${fmt(best)}  (loss ${lossValues[bestIdx]!.toFixed(4)})`);

  // Refine every guess with a few batched, per-parameter-normalised gradient steps.
  let params = guesses;
  const stepSize = np.mul(np.sub(np.array(HIGH), np.array(LOW)), 0.02);
  for (let k = 0; k < (opts.refine ?? 25); k++) {
    const [, g] = batched(params) as [Array, Array];
    const scale = np.add(np.sqrt(np.mean(np.square(g), 0, { keepdims: true })), 1e-12);
    params = np.clip(np.sub(params, np.mul(stepSize, np.div(g, scale))), np.array(LOW), np.array(HIGH));
  }
  const [refinedLosses] = batched(params) as [Array, Array];
  const rl = refinedLosses.dataSync();
  const r = rl.indexOf(Math.min(...rl));
  const refined = globalThis.Array.from(np.take(params, r, 0).dataSync());
  log(`after ${opts.refine ?? 25} batched gradient steps, best: ${fmt(refined)}  (loss ${rl[r]!.toFixed(4)})`);
  log(`truth:                          ${fmt(TRUTH)}`);
  return {
    guesses,
    losses,
    grads,
    loopLosses,
    loopGrads,
    best,
    bestLoss: lossValues[bestIdx]!,
    refined,
    refinedLoss: rl[r]!,
    vmapMs,
    loopMs,
  };
}

function maxAbsDiff(a: Array, b: Array): number {
  const x = a.dataSync(),
    y = b.dataSync();
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]! - y[i]!));
  return m;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
