/**
 * Convergence (optax-style table): Rosenbrock with adam and lbfgs, linear least squares with
 * lbfgs to 1e-8 (reference solution from the normal equations, solved in plain JS), a small
 * MLP regression with adam (seeded, deterministic), and a bounded mass/friction estimate.
 */
import { describe, expect, it } from "vitest";
import { nn, np, optim, random, type Array } from "../src/index.js";
import { expectClose, f64, nums } from "./optim-helpers.js";

const quiet = { progress: false } as const;
const rosenbrock = (p: { xy: Array }): Array => {
  const [a, b] = [p.xy.at(0), p.xy.at(1)];
  return np.add(np.square(np.sub(1, a)), np.mul(100, np.square(np.sub(b, np.square(a)))));
};

describe("Rosenbrock from (−1.2, 1)", () => {
  it("adam reaches the minimum (1, 1)", async () => {
    const r = await optim.fit(
      rosenbrock,
      { xy: f64([-1.2, 1]) },
      { optimizer: optim.adam(0.02), steps: 3000, ...quiet },
    );
    expect(r.losses[r.steps]!).toBeLessThan(1e-5);
    expectClose(nums(r.params.xy), [1, 1], 5e-3);
  });

  it("lbfgs reaches it to 1e-8 in under 100 steps", async () => {
    const r = await optim.fit(
      rosenbrock,
      { xy: f64([-1.2, 1]) },
      { optimizer: optim.lbfgs(), steps: 100, gradTolerance: 1e-10, ...quiet },
    );
    expect(r.stopReason).toBe("gradTolerance");
    expect(r.steps).toBeLessThan(100);
    expectClose(nums(r.params.xy), [1, 1], 1e-8);
  });
});

/** Solve the normal equations AᵀA x = Aᵀb by Cholesky, in plain JS. */
function leastSquaresJs(A: number[][], b: number[]): number[] {
  const n = A[0]!.length;
  const M = globalThis.Array.from({ length: n }, (_, i) =>
    globalThis.Array.from({ length: n }, (_, j) => A.reduce((s, row) => s + row[i]! * row[j]!, 0)),
  );
  const v = globalThis.Array.from({ length: n }, (_, i) => A.reduce((s, row, k) => s + row[i]! * b[k]!, 0));
  const L = M.map(() => new globalThis.Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = M[i]![j]!;
      for (let k = 0; k < j; k++) s -= L[i]![k]! * L[j]![k]!;
      L[i]![j] = i === j ? Math.sqrt(s) : s / L[j]![j]!;
    }
  }
  const z = new globalThis.Array<number>(n).fill(0),
    x = new globalThis.Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) z[i] = (v[i]! - L[i]!.slice(0, i).reduce((s, l, k) => s + l * z[k]!, 0)) / L[i]![i]!;
  for (let i = n - 1; i >= 0; i--) {
    let s = z[i]!;
    for (let k = i + 1; k < n; k++) s -= L[k]![i]! * x[k]!;
    x[i] = s / L[i]![i]!;
  }
  return x;
}

describe("least squares", () => {
  it("lbfgs solves min ‖Ax − b‖² to 1e-8 of the normal-equations solution", async () => {
    const [kA, kb] = random.split(random.key(3));
    // Correlated columns.
    const A = np.add(random.normal(kA!, [40, 6], { dtype: "float64" }), np.mul(np.arange(6).astype("float64"), 0.5));
    const b = random.normal(kb!, [40], { dtype: "float64" });
    const loss = (p: { x: Array }) => np.mean(np.square(np.sub(np.matmul(A, p.x), b)));
    const r = await optim.fit(
      loss,
      { x: np.zeros([6], { dtype: "float64" }) },
      { optimizer: optim.lbfgs(), steps: 200, gradTolerance: 1e-13, ...quiet },
    );
    const ref = leastSquaresJs(A.toList() as number[][], nums(b));
    const err = Math.max(...nums(r.params.x).map((x, i) => Math.abs(x - ref[i]!)));
    expect(err).toBeLessThan(1e-8);
    expect(r.steps).toBeLessThan(100);
  });
});

describe("MLP regression", () => {
  type Mlp = { w1: Array; b1: Array; w2: Array; b2: Array };
  const xs = np.reshape(np.linspace(-2, 2, 64), [64, 1]);
  const ys = np.add(np.sin(np.mul(2, xs)), np.mul(0.3, xs));
  const predict = (p: Mlp, x: Array) => np.add(np.matmul(np.tanh(np.add(np.matmul(x, p.w1), p.b1)), p.w2), p.b2);
  const loss = (p: Mlp) => np.mean(np.square(np.sub(predict(p, xs), ys)));
  const initMlp = (seed: number): Mlp => {
    const [k1, k2] = random.split(random.key(seed));
    return {
      w1: np.mul(random.normal(k1!, [1, 32]), 1.5),
      b1: np.zeros([32]),
      w2: np.mul(random.normal(k2!, [32, 1]), 1 / Math.sqrt(32)),
      b2: np.zeros([1]),
    };
  };

  it("adam fits a 1-32-1 tanh network, deterministically for a seeded key", async () => {
    const run = () => optim.fit(loss, initMlp(0), { optimizer: optim.adam(0.02), steps: 600, ...quiet });
    const r = await run();
    expect(r.losses[r.steps]!).toBeLessThan(5e-3);
    expect(r.losses[r.steps]!).toBeLessThan(r.losses[0]! / 50);
    const again = await run();
    expect(again.losses).toEqual(r.losses);
    expect(nums(again.params.w1)).toEqual(nums(r.params.w1));
    // A different seed starts elsewhere.
    expect(loss(initMlp(1)).item()).not.toBe(r.losses[0]);
  });
});

describe("parabola: every optimizer converges", () => {
  const target = f64([1, -2, 0.5]);
  const bowl = (p: { x: Array }) =>
    np.sum(np.mul(np.array([1, 4, 0.25], { dtype: "float64" }), np.square(np.sub(p.x, target))));
  const table: [string, optim.GradientTransformation<unknown>, number][] = [
    ["sgd", optim.sgd(0.1), 300],
    ["momentum", optim.momentum(0.05, 0.9), 300],
    ["nesterov", optim.momentum(0.05, 0.9, { nesterov: true }), 300],
    ["adam", optim.adam(0.05), 1500],
    ["adamw", optim.adamw(0.05, { weightDecay: 1e-7 }), 1500],
    [
      "rmsprop (cosine-decayed rate)",
      optim.rmsprop(optim.cosineDecay({ initValue: 0.02, decaySteps: 1500 }), { momentum: 0.5 }),
      1500,
    ],
    ["lbfgs", optim.lbfgs(), 20],
  ];
  it.each(table)("%s", async (_name, optimizer, steps) => {
    const r = await optim.fit(bowl, { x: np.zeros([3], { dtype: "float64" }) }, { optimizer, steps, ...quiet });
    expectClose(nums(r.params.x), nums(target), 2e-3);
  });
});

describe("bounded parameters", () => {
  it("recovers a mass (log-space) and a friction coefficient (sigmoid box) from noisy-free observations", async () => {
    // A block pushed with force F on a rough floor: a = F/m − μg.
    const forces = f64([8, 10, 12, 15, 20]);
    const [mass, friction, g] = [2.5, 0.3, 9.81];
    const observed = nums(forces).map((F) => F / mass - friction * g);
    const bounds = { mass: optim.logSpace(), friction: optim.sigmoidBox(0, 1) };
    const model = (u: { mass: Array; friction: Array }) => {
      const p = optim.constrain(bounds, u);
      const a = np.sub(np.div(forces, p.mass), np.mul(p.friction, g));
      return np.mean(np.square(np.sub(a, f64(observed))));
    };
    const u0 = optim.unconstrain(bounds, { mass: f64(1), friction: f64(0.9) });
    const r = await optim.fit(model, u0, { optimizer: optim.lbfgs(), steps: 100, gradTolerance: 1e-12, ...quiet });
    const est = optim.constrain(bounds, r.params);
    expectClose([est.mass.item(), est.friction.item()], [mass, friction], 1e-7);
    // Reparametrized, every iterate is feasible by construction.
    expect(est.friction.item()).toBeGreaterThan(0);
  });

  it("the sigmoid box is lo + (hi − lo)·nn.sigmoid", () => {
    const u = f64([0.3, -4]);
    expectClose(
      nums(optim.sigmoidBox(-1, 2).forward(u)),
      nums(nn.sigmoid(u)).map((s) => -1 + 3 * s),
      1e-14,
    );
  });
});
