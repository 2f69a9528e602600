/**
 * Optimizer updates are pure functions of pytrees: they jit into one cached program, carry
 * through lax.scan, and batch under vmap exactly like running the optimisations one by one.
 */
import { describe, expect, it } from "vitest";
import { jit, lax, np, optim, random, valueAndGrad, vmap, type Array } from "../src/index.js";
import { expectClose, nums } from "./optim-helpers.js";

type Params = { xy: Array; s: Array };
/** Rosenbrock in (x, y) plus a quartic bowl in s: non-quadratic, two leaves. */
const objective = (p: Params): Array => {
  const [a, b] = [p.xy.at(0), p.xy.at(1)];
  const rosen = np.add(np.square(np.sub(1, a)), np.mul(100, np.square(np.sub(b, np.square(a)))));
  return np.add(rosen, np.sum(np.add(np.square(np.sub(p.s, 0.5)), np.mul(0.1, np.pow(p.s, 4)))));
};

const OPTIMIZERS: [string, () => optim.GradientTransformation<unknown>][] = [
  ["sgd", () => optim.sgd(1e-3)],
  ["nesterov", () => optim.momentum(1e-3, 0.9, { nesterov: true })],
  ["adam", () => optim.adam(0.02)],
  [
    "adamw + schedule",
    () =>
      optim.adamw(optim.warmupCosineDecay({ peakValue: 0.05, warmupSteps: 3, decaySteps: 20 }), { weightDecay: 1e-2 }),
  ],
  ["rmsprop centered + momentum", () => optim.rmsprop(1e-3, { centered: true, momentum: 0.5 })],
  [
    "clip + masked adam",
    () =>
      optim.chain(
        optim.clipByGlobalNorm(5),
        optim.masked(optim.adam(0.01), { xy: true, s: false }),
        optim.freeze({ xy: false, s: true }),
      ),
  ],
  ["lbfgs", () => optim.lbfgs({ memorySize: 4 })],
  // masked hands lbfgs an objective of the masked leaves only (the others are filled back in).
  [
    "masked lbfgs + frozen rest",
    () => optim.chain(optim.masked(optim.lbfgs(), { xy: false, s: true }), optim.freeze({ xy: true, s: false })),
  ],
];

const start = (): Params => ({
  xy: np.array([-1.2, 1], { dtype: "float64" }),
  s: np.array([2, -1, 0.3], { dtype: "float64" }),
});

function stepFn<S>(opt: optim.GradientTransformation<S>) {
  return (p: Params, s: S): [Params, S, Array] => {
    const [loss, g] = valueAndGrad(objective)(p) as [Array, Params];
    const [u, s1] = opt.update(g, s, p, { value: loss, valueFn: objective });
    return [optim.applyUpdates(p, u), s1, loss];
  };
}

describe("jit", () => {
  it.each(OPTIMIZERS)("%s: the step traces once and matches eager execution", (_name, make) => {
    const opt = make();
    const eager = stepFn(opt);
    const jitted = jit(eager);
    let [pe, se] = [start(), opt.init(start())];
    let [pj, sj] = [start(), opt.init(start())];
    for (let k = 0; k < 6; k++) {
      [pe, se] = eager(pe, se);
      [pj, sj] = jitted(pj, sj);
    }
    expect(jitted.traceCount).toBe(1);
    expectClose([...nums(pj.xy), ...nums(pj.s)], [...nums(pe.xy), ...nums(pe.s)], 1e-12);
    expect([...nums(pj.xy), ...nums(pj.s)]).not.toEqual([-1.2, 1, 2, -1, 0.3]);
  });

  it("an lbfgs step (two-loop recursion + line search loop) is a single jit_call program", () => {
    const opt = optim.lbfgs();
    const step = jit(stepFn(opt));
    const ir = String(step.lower(start(), opt.init(start())));
    expect(ir).toContain("while");
    expect(step.traceCount).toBe(1);
  });
});

describe("scan and vmap", () => {
  const STEPS = 25;
  /** A whole optimisation as one pure function: the optimizer state is a scan carry. */
  function runScan<S>(opt: optim.GradientTransformation<S>) {
    const step = stepFn(opt);
    return (p0: Params): [Params, Array] => {
      const [[p], losses] = lax.scan(
        ([p, s]: [Params, S]) => {
          const [p1, s1, loss] = step(p, s);
          return [[p1, s1], loss];
        },
        [p0, opt.init(p0)] as [Params, S],
        null,
        { length: STEPS },
      );
      return [p, losses];
    };
  }
  /** 16 starting points around the usual one, from a seeded key. */
  function guesses(seed: number): Params {
    const [k1, k2] = random.split(random.key(seed));
    return {
      xy: np.add(
        np.array([-1.2, 1], { dtype: "float64" }),
        np.mul(0.3, random.normal(k1!, [16, 2], { dtype: "float64" })),
      ),
      s: random.uniform(k2!, [16, 3], { minval: -2, maxval: 2, dtype: "float64" }),
    };
  }
  const row = (p: Params, i: number): Params => ({ xy: p.xy.at(i), s: p.s.at(i) });

  const batched: [string, () => optim.GradientTransformation<unknown>][] = [
    ["adam", () => optim.adam(0.05)],
    ["lbfgs", () => optim.lbfgs({ memorySize: 5 })],
  ];
  it.each(batched)("%s: vmap over 16 independent optimisations equals running them one by one", (_name, make) => {
    const run = runScan(make());
    const batch = guesses(7);
    const [pb, lb] = jit(vmap(run))(batch);
    expect(lb.shape).toEqual([16, STEPS]);
    const one = jit(run);
    for (let i = 0; i < 16; i++) {
      const [pi, li] = one(row(batch, i));
      expectClose(nums(li), nums(lb.at(i)), 1e-12, `losses of run ${i}`);
      expectClose(
        [...nums(pi.xy), ...nums(pi.s)],
        [...nums(pb.xy.at(i)), ...nums(pb.s.at(i))],
        1e-12,
        `params of run ${i}`,
      );
    }
    expect(one.traceCount).toBe(1);
    // The runs really differ (otherwise batching could not be wrong).
    const finalLosses = nums(lb).filter((_, j) => j % STEPS === STEPS - 1);
    expect(new Set(finalLosses).size).toBe(16);
  });

  it("a scan over steps equals the same steps in a JS loop", () => {
    const opt = optim.rmsprop(0.01, { momentum: 0.9 });
    const [pScan, losses] = jit(runScan(opt))(start());
    let [p, s] = [start(), opt.init(start())];
    const ref: number[] = [];
    const step = stepFn(opt);
    for (let k = 0; k < STEPS; k++) {
      let loss: Array;
      [p, s, loss] = step(p, s);
      ref.push(loss.item());
    }
    expectClose(nums(losses), ref, 1e-12);
    expectClose(nums(pScan.s), nums(p.s), 1e-12);
  });
});
