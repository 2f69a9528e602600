/**
 * Every optimizer against its published update equations, re-implemented here in plain JS
 * (float64 numbers, no gradsim code): a few steps on a small non-quadratic problem whose
 * gradient is also computed in plain JS, so only the optimizer is under test.
 */
import { describe, expect, it } from "vitest";
import { np, optim, type Array } from "../src/index.js";
import { expectClose, f64, nums, vec } from "./optim-helpers.js";

// f(w, b) = Σ c_i (x_i − t_i)² + 0.1 Σ x_i⁴ over x = [w0, w1, w2, b0, b1].
const C = [1, 3, 0.5, 2, 1.5],
  T = [0.5, -1, 2, 1, -0.5];
const gradJs = (x: readonly number[]) => x.map((xi, i) => 2 * C[i]! * (xi - T[i]!) + 0.4 * xi ** 3);
const X0 = [1.5, 0.2, -0.7, 0.3, 2.0];

type Params = { w: Array; b: Array };
const toTree = (x: readonly number[]): Params => ({ w: f64(x.slice(0, 3)), b: f64(x.slice(3)) });
const fromTree = (p: Params): number[] => [...nums(p.w), ...nums(p.b)];

/** Run the library optimizer for `steps` updates; returns the iterate after each update. */
function runLibrary<S>(opt: optim.GradientTransformation<S>, steps: number): number[][] {
  let p = toTree(X0);
  let s = opt.init(p);
  const path: number[][] = [];
  for (let k = 0; k < steps; k++) {
    const g = toTree(gradJs(fromTree(p)));
    const [u, s1] = opt.update(g, s, p);
    p = optim.applyUpdates(p, u);
    s = s1;
    path.push(fromTree(p));
  }
  return path;
}
/** The same loop for a plain-JS rule `next(x, g, k)`. */
function runReference(next: (x: number[], g: number[], k: number) => number[], steps: number): number[][] {
  let x = [...X0];
  const path: number[][] = [];
  for (let k = 0; k < steps; k++) {
    x = next(x, gradJs(x), k);
    path.push(x);
  }
  return path;
}
function expectSamePath(lib: number[][], ref: number[][], tol = 1e-12): void {
  ref.forEach((r, k) => expectClose(lib[k]!, r, tol, `step ${k + 1}`));
  // The steps must actually move, or the comparison proves nothing.
  expect(vec.norm(vec.sub(ref[ref.length - 1]!, X0))).toBeGreaterThan(1e-3);
}

const zeros = () => X0.map(() => 0);

describe("update equations (plain-JS references)", () => {
  it("sgd: x ← x − η g", () => {
    expectSamePath(
      runLibrary(optim.sgd(0.05), 4),
      runReference((x, g) => x.map((xi, i) => xi - 0.05 * g[i]!), 4),
    );
  });

  it("momentum: v ← μv + g, x ← x − ηv (Sutskever et al. 2013 / PyTorch)", () => {
    const v = zeros();
    const ref = runReference(
      (x, g) =>
        x.map((xi, i) => {
          v[i] = 0.9 * v[i]! + g[i]!;
          return xi - 0.05 * v[i]!;
        }),
      4,
    );
    expectSamePath(runLibrary(optim.momentum(0.05, 0.9), 4), ref);
  });

  it("nesterov: v ← μv + g, x ← x − η(g + μv)", () => {
    const v = zeros();
    const ref = runReference(
      (x, g) =>
        x.map((xi, i) => {
          v[i] = 0.8 * v[i]! + g[i]!;
          return xi - 0.03 * (g[i]! + 0.8 * v[i]!);
        }),
      4,
    );
    expectSamePath(runLibrary(optim.sgd(0.03, { momentum: 0.8, nesterov: true }), 4), ref);
  });

  it("adam: Kingma & Ba 2015, Algorithm 1", () => {
    const [lr, b1, b2, eps] = [0.1, 0.8, 0.95, 1e-6];
    const m = zeros(),
      v = zeros();
    const ref = runReference(
      (x, g, k) =>
        x.map((xi, i) => {
          m[i] = b1 * m[i]! + (1 - b1) * g[i]!;
          v[i] = b2 * v[i]! + (1 - b2) * g[i]! ** 2;
          const mHat = m[i]! / (1 - b1 ** (k + 1)),
            vHat = v[i]! / (1 - b2 ** (k + 1));
          return xi - (lr * mHat) / (Math.sqrt(vHat) + eps);
        }),
      5,
    );
    expectSamePath(runLibrary(optim.adam(lr, { b1, b2, eps }), 5), ref);
  });

  it("adamw: x ← x − η(m̂/(√v̂ + ε) + λx) (Loshchilov & Hutter 2019)", () => {
    const [lr, b1, b2, eps, wd] = [0.1, 0.9, 0.999, 1e-8, 0.2];
    const m = zeros(),
      v = zeros();
    const ref = runReference(
      (x, g, k) =>
        x.map((xi, i) => {
          m[i] = b1 * m[i]! + (1 - b1) * g[i]!;
          v[i] = b2 * v[i]! + (1 - b2) * g[i]! ** 2;
          const mHat = m[i]! / (1 - b1 ** (k + 1)),
            vHat = v[i]! / (1 - b2 ** (k + 1));
          return xi - lr * (mHat / (Math.sqrt(vHat) + eps) + wd * xi);
        }),
      4,
    );
    expectSamePath(runLibrary(optim.adamw(lr, { weightDecay: wd }), 4), ref);
  });

  it("adamw with a mask decays only the masked leaves", () => {
    const [lr, wd] = [0.1, 0.5];
    const m = zeros(),
      v = zeros();
    const ref = runReference(
      (x, g, k) =>
        x.map((xi, i) => {
          m[i] = 0.9 * m[i]! + 0.1 * g[i]!;
          v[i] = 0.999 * v[i]! + 0.001 * g[i]! ** 2;
          const step = m[i]! / (1 - 0.9 ** (k + 1)) / (Math.sqrt(v[i]! / (1 - 0.999 ** (k + 1))) + 1e-8);
          return xi - lr * (step + (i < 3 ? wd * xi : 0)); // only w (indices 0–2) decays
        }),
      3,
    );
    expectSamePath(runLibrary(optim.adamw(lr, { weightDecay: wd, mask: { w: true, b: false } }), 3), ref);
  });

  it("rmsprop: ν ← ρν + (1−ρ)g², x ← x − η g/√(ν + ε) (Tieleman & Hinton 2012, optax's ε placement)", () => {
    const [lr, rho, eps] = [0.01, 0.9, 1e-8];
    const nu = zeros();
    const ref = runReference(
      (x, g) =>
        x.map((xi, i) => {
          nu[i] = rho * nu[i]! + (1 - rho) * g[i]! ** 2;
          return xi - (lr * g[i]!) / Math.sqrt(nu[i]! + eps);
        }),
      4,
    );
    expectSamePath(runLibrary(optim.rmsprop(lr, { decay: rho, eps }), 4), ref);
  });

  it("rmsprop with momentum and ε outside the root: b ← μb + g/(√ν + ε), x ← x − ηb (PyTorch's form)", () => {
    const [lr, rho, eps, mu] = [0.01, 0.95, 1e-4, 0.7];
    const nu = zeros(),
      buf = zeros();
    const ref = runReference(
      (x, g) =>
        x.map((xi, i) => {
          nu[i] = rho * nu[i]! + (1 - rho) * g[i]! ** 2;
          buf[i] = mu * buf[i]! + g[i]! / (Math.sqrt(nu[i]!) + eps);
          return xi - lr * buf[i]!;
        }),
      4,
    );
    expectSamePath(runLibrary(optim.rmsprop(lr, { decay: rho, eps, momentum: mu, epsInSqrt: false }), 4), ref);
  });

  it("centered rmsprop: divides by √(ν − μ² + ε) (Graves 2013)", () => {
    const [lr, rho, eps] = [0.01, 0.9, 1e-6];
    const nu = zeros(),
      mean = zeros();
    const ref = runReference(
      (x, g) =>
        x.map((xi, i) => {
          nu[i] = rho * nu[i]! + (1 - rho) * g[i]! ** 2;
          mean[i] = rho * mean[i]! + (1 - rho) * g[i]!;
          return xi - (lr * g[i]!) / Math.sqrt(nu[i]! - mean[i]! ** 2 + eps);
        }),
      4,
    );
    expectSamePath(runLibrary(optim.rmsprop(lr, { decay: rho, eps, centered: true }), 4), ref);
  });

  it("clipByGlobalNorm then sgd: g ← g·min(1, c/‖g‖) over all leaves together", () => {
    const c = 1.5;
    const ref = runReference((x, g) => {
      const k = Math.min(1, c / vec.norm(g));
      return x.map((xi, i) => xi - 0.1 * g[i]! * k);
    }, 4);
    expectSamePath(runLibrary(optim.chain(optim.clipByGlobalNorm(c), optim.sgd(0.1)), 4), ref);
    // The initial gradient is far above the threshold, so clipping really happened.
    expect(vec.norm(gradJs(X0))).toBeGreaterThan(5 * c);
  });

  it("adam with an exponentially decaying learning rate uses ηₖ = η₀·r^(k/T) at update k (counting from 0)", () => {
    const m = zeros(),
      v = zeros();
    const ref = runReference(
      (x, g, k) =>
        x.map((xi, i) => {
          const lr = 0.2 * 0.5 ** (k / 2);
          m[i] = 0.9 * m[i]! + 0.1 * g[i]!;
          v[i] = 0.999 * v[i]! + 0.001 * g[i]! ** 2;
          return xi - (lr * m[i]!) / (1 - 0.9 ** (k + 1)) / (Math.sqrt(v[i]! / (1 - 0.999 ** (k + 1))) + 1e-8);
        }),
      5,
    );
    const lr = optim.exponentialDecay({ initValue: 0.2, decayRate: 0.5, transitionSteps: 2 });
    expectSamePath(runLibrary(optim.adam(lr), 5), ref);
  });

  it("freeze keeps the frozen leaves fixed; masked applies the inner transform only where the mask is true", () => {
    const frozen = runLibrary(optim.chain(optim.freeze({ w: false, b: true }), optim.sgd(0.05)), 3);
    const sgdPath = runReference((x, g) => x.map((xi, i) => (i < 3 ? xi - 0.05 * g[i]! : xi)), 3);
    expectSamePath(frozen, sgdPath);
    frozen.forEach((x) => expect(x.slice(3)).toEqual(X0.slice(3)));

    // w: adam direction; b: the raw gradient passes through; both then scaled by −η.
    const m = zeros(),
      v = zeros();
    const ref = runReference(
      (x, g, k) =>
        x.map((xi, i) => {
          if (i >= 3) return xi - 0.05 * g[i]!;
          m[i] = 0.9 * m[i]! + 0.1 * g[i]!;
          v[i] = 0.999 * v[i]! + 0.001 * g[i]! ** 2;
          return xi - (0.05 * m[i]!) / (1 - 0.9 ** (k + 1)) / (Math.sqrt(v[i]! / (1 - 0.999 ** (k + 1))) + 1e-8);
        }),
      3,
    );
    expectSamePath(
      runLibrary(optim.chain(optim.masked(optim.scaleByAdam(), { w: true, b: false }), optim.scale(-0.05)), 3),
      ref,
    );
  });
});

describe("hand-computed steps", () => {
  it("momentum with a constant gradient 1, μ = 0.9, η = 0.1: x moves by −0.1, −0.19, −0.271", () => {
    const opt = optim.momentum(0.1, 0.9);
    let p = f64([0]),
      s = opt.init(p);
    const xs: number[] = [];
    for (let k = 0; k < 3; k++) {
      const [u, s1] = opt.update(f64([1]), s, p);
      p = optim.applyUpdates(p, u);
      s = s1;
      xs.push(nums(p)[0]!);
    }
    expectClose(xs, [-0.1, -0.29, -0.561], 1e-14);
  });

  it("adam's first step has length η in every coordinate (m̂ = g, v̂ = g²)", () => {
    const opt = optim.adam(0.1, { eps: 0 });
    const p = f64([1, 2, 3]);
    const [u] = opt.update(f64([0.5, -2, 1e-3]), opt.init(p), p);
    expectClose(nums(u), [-0.1, 0.1, -0.1], 1e-14);
  });

  it("rmsprop's first step is η·g/√((1−ρ)g² + ε)", () => {
    const opt = optim.rmsprop(0.01, { decay: 0.9, eps: 0 });
    const p = f64([0, 0]);
    const [u] = opt.update(f64([2, -0.5]), opt.init(p), p);
    expectClose(nums(u), [-0.01 / Math.sqrt(0.1), 0.01 / Math.sqrt(0.1)], 1e-14);
  });
});

describe("L-BFGS", () => {
  /** Nocedal & Wright Algorithm 7.4 (two-loop) + Algorithm 3.1 (Armijo backtracking), plain JS. */
  function lbfgsReference(
    f: (x: number[]) => number,
    grad: (x: number[]) => number[],
    x0: number[],
    steps: number,
    m: number,
  ): number[][] {
    const S: number[][] = [],
      Y: number[][] = [];
    let x = [...x0],
      xPrev: number[] | null = null,
      gPrev: number[] | null = null;
    const path: number[][] = [];
    for (let k = 0; k < steps; k++) {
      const g = grad(x);
      if (xPrev && gPrev) {
        const s = vec.sub(x, xPrev),
          y = vec.sub(g, gPrev);
        if (vec.dot(s, y) > 1e-10 * vec.norm(s) * vec.norm(y)) {
          S.push(s);
          Y.push(y);
          if (S.length > m) {
            S.shift();
            Y.shift();
          }
        }
      }
      let q = [...g];
      const alpha: number[] = [];
      for (let i = S.length - 1; i >= 0; i--) {
        alpha[i] = vec.dot(S[i]!, q) / vec.dot(S[i]!, Y[i]!);
        q = vec.sub(q, vec.scale(Y[i]!, alpha[i]!));
      }
      const gamma = S.length
        ? vec.dot(S[S.length - 1]!, Y[Y.length - 1]!) / vec.dot(Y[Y.length - 1]!, Y[Y.length - 1]!)
        : 1 / Math.max(1, vec.norm(g));
      let r = vec.scale(q, gamma);
      for (let i = 0; i < S.length; i++) {
        const beta = vec.dot(Y[i]!, r) / vec.dot(S[i]!, Y[i]!);
        r = vec.add(r, vec.scale(S[i]!, alpha[i]! - beta));
      }
      const d = vec.dot(r, g) > 0 ? vec.scale(r, -1) : vec.scale(g, -gamma);
      const f0 = f(x),
        slope = vec.dot(g, d);
      let a = 1,
        fa = f(vec.add(x, d)),
        it = 0;
      while (it < 20 && !(fa <= f0 + 1e-4 * a * slope)) {
        a *= 0.5;
        fa = f(vec.add(x, vec.scale(d, a)));
        it++;
      }
      if (!(fa <= f0 + 1e-4 * a * slope) && !(fa < f0)) a = 0;
      xPrev = x;
      gPrev = g;
      x = vec.add(x, vec.scale(d, a));
      path.push(x);
    }
    return path;
  }

  const rosenJs = (x: number[]) => (1 - x[0]!) ** 2 + 100 * (x[1]! - x[0]! ** 2) ** 2;
  const rosenGradJs = (x: number[]) => [
    -2 * (1 - x[0]!) - 400 * x[0]! * (x[1]! - x[0]! ** 2),
    200 * (x[1]! - x[0]! ** 2),
  ];
  const rosen = (x: Array) => {
    const [a, b] = [x.at(0), x.at(1)];
    return np.add(np.square(np.sub(1, a)), np.mul(100, np.square(np.sub(b, np.square(a)))));
  };

  it("matches the two-loop recursion with backtracking Armijo on Rosenbrock (memory 3: old pairs drop out)", () => {
    const x0 = [-1.2, 1];
    const ref = lbfgsReference(rosenJs, rosenGradJs, x0, 12, 3);
    const opt = optim.lbfgs({ memorySize: 3 });
    let x = f64(x0),
      s = opt.init(x);
    const lib: number[][] = [];
    for (let k = 0; k < 12; k++) {
      const g = f64(rosenGradJs(nums(x)));
      const [u, s1] = opt.update(g, s, x, { valueFn: rosen });
      x = optim.applyUpdates(x, u);
      s = s1;
      lib.push(nums(x));
    }
    ref.forEach((r, k) => expectClose(lib[k]!, r, 1e-9, `lbfgs step ${k + 1}`));
    expect(rosenJs(ref[11]!)).toBeLessThan(rosenJs(x0) / 5);
  });

  it("explains what it needs when the objective is missing", () => {
    const opt = optim.lbfgs();
    const x = f64([1, 2]);
    expect(() => opt.update(f64([1, 1]), opt.init(x), x)).toThrow(/valueFn/);
  });
});

describe("schedules", () => {
  const at = (s: optim.Schedule, k: number) => s(np.array(k, { dtype: "int32" }), "float64").item();
  const counts = [0, 1, 5, 10, 37, 99, 100, 150];

  it("constant, exponential (continuous and staircase), cosine, linear warmup, warmup+cosine", () => {
    const cases: [string, optim.Schedule, (k: number) => number][] = [
      ["constant", optim.constantSchedule(0.3), () => 0.3],
      [
        "exponential",
        optim.exponentialDecay({ initValue: 0.1, decayRate: 0.9, transitionSteps: 10 }),
        (k) => 0.1 * 0.9 ** (k / 10),
      ],
      [
        "staircase",
        optim.exponentialDecay({ initValue: 0.1, decayRate: 0.5, transitionSteps: 10, staircase: true }),
        (k) => 0.1 * 0.5 ** Math.floor(k / 10),
      ],
      [
        "exponential with floor",
        optim.exponentialDecay({ initValue: 1, decayRate: 0.5, transitionSteps: 10, endValue: 0.01 }),
        (k) => Math.max(0.01, 0.5 ** (k / 10)),
      ],
      [
        "cosine",
        optim.cosineDecay({ initValue: 2, decaySteps: 100, alpha: 0.1 }),
        (k) => 2 * (0.9 * 0.5 * (1 + Math.cos((Math.PI * Math.min(k, 100)) / 100)) + 0.1),
      ],
      ["linear warmup", optim.linearWarmup(0.5, 10), (k) => (0.5 * Math.min(k, 10)) / 10],
      [
        "warmup + cosine",
        optim.warmupCosineDecay({ initValue: 0, peakValue: 1, warmupSteps: 10, decaySteps: 110, endValue: 0.05 }),
        (k) => (k < 10 ? k / 10 : 0.05 + (1 - 0.05) * 0.5 * (1 + Math.cos((Math.PI * Math.min(k - 10, 100)) / 100))),
      ],
    ];
    for (const [name, s, ref] of cases)
      expectClose(
        counts.map((k) => at(s, k)),
        counts.map(ref),
        1e-12,
        name,
      );
  });

  it("schedules evaluate in float32 by default and accept a batched counter", () => {
    const s = optim.cosineDecay({ initValue: 1, decaySteps: 10 });
    const v = s(np.array([0, 5, 10], { dtype: "int32" }));
    expect(v.dtype).toBe("float32");
    expectClose(nums(v), [1, 0.5, 0], 1e-6);
  });
});

describe("bounded parameters", () => {
  it("logSpace and sigmoidBox map forward and back", () => {
    const u = f64([-3, -0.5, 0, 0.7, 4]);
    const uj = nums(u);
    expectClose(nums(optim.logSpace().forward(u)), uj.map(Math.exp), 1e-14);
    const box = optim.sigmoidBox(0.2, 1.7);
    const x = box.forward(u);
    expectClose(
      nums(x),
      uj.map((v) => 0.2 + 1.5 / (1 + Math.exp(-v))),
      1e-14,
    );
    expectClose(nums(box.inverse(x)), uj, 1e-10);
    expectClose(nums(optim.logSpace().inverse(f64([0.5, 3]))), [Math.log(0.5), Math.log(3)], 1e-14);
  });

  it("the box inverse maps boundary values to large finite numbers", () => {
    const u = nums(optim.sigmoidBox(0, 1).inverse(f64([0, 1])));
    expect(u.every(Number.isFinite)).toBe(true);
    expect(u[0]!).toBeLessThan(-20);
    expect(u[1]!).toBeGreaterThan(20);
  });

  it("constrain/unconstrain take a prefix tree of bijectors (null = unconstrained)", () => {
    const spec = { body: { mass: optim.logSpace(), friction: optim.sigmoidBox(0, 1) }, offset: null };
    const x = { body: { mass: f64([2, 5]), friction: f64(0.25) }, offset: f64([-1, 1]) };
    const u = optim.unconstrain(spec, x);
    expectClose(nums(u.body.mass), [Math.log(2), Math.log(5)], 1e-14);
    expectClose(nums(u.body.friction), [Math.log(0.25 / 0.75)], 1e-14);
    expect(u.offset).toBe(x.offset);
    const back = optim.constrain(spec, u);
    expectClose(nums(back.body.mass), [2, 5], 1e-14);
    expectClose(nums(back.body.friction), [0.25], 1e-14);
    expect(() => optim.constrain({ body: 3, offset: null }, u)).toThrow(/Bijector/);
  });
});

describe("dtypes", () => {
  it("float32 parameters stay float32 through every optimizer", () => {
    const opts: optim.GradientTransformation<unknown>[] = [
      optim.sgd(0.1),
      optim.momentum(0.1),
      optim.adam(0.1),
      optim.adamw(0.1),
      optim.rmsprop(0.1, { centered: true, momentum: 0.5 }),
      optim.chain(
        optim.clipByGlobalNorm(1),
        optim.adam(optim.warmupCosineDecay({ peakValue: 0.1, warmupSteps: 2, decaySteps: 10 })),
      ),
    ];
    for (const opt of opts) {
      const p = { a: np.array([1, 2]), b: np.array(3) };
      const [u, s] = opt.update({ a: np.array([0.5, -0.5]), b: np.array(1) }, opt.init(p), p);
      const q = optim.applyUpdates(p, u);
      expect([q.a.dtype, q.b.dtype]).toEqual(["float32", "float32"]);
      const stateDTypes = JSON.stringify(s, (_k, v) => (v && typeof v === "object" && "dtype" in v ? v.dtype : v));
      expect(stateDTypes).not.toContain("float64");
    }
  });
});
