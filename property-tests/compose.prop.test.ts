/**
 * Every transform nests in every order, to depth ≥ 3, on the CPU backend. Each composite is
 * compared with a reference assembled from transform-free pieces: JS loops for vmap/scan,
 * central finite differences (nested when derivatives are nested) for grad/vjp/jvp, and
 * hand-derived formulas where they are short.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  checkpoint,
  customVjp,
  grad,
  hessian,
  jacfwd,
  jacrev,
  jit,
  jvp,
  lax,
  np,
  valueAndGrad,
  vjp,
  vmap,
  type Array,
} from "../src/index.js";
import { arbProgram, buildProgram, f64, randomArray, type Program } from "./gen/programs.js";
import { expectClose, sliceAt, stackAt } from "./gen/check.js";
import { fdDirectional, fdGrad, fdJacobian } from "./gen/fd.js";
import { applyLevel, DIFF_LEVELS, randomLevels, type Stage } from "./gen/stacks.js";
import { bodyOf, unrolled } from "./gen/scan-bodies.js";
import { makeRng } from "../src/core/host-rng.js";
import { useEvaluatorForProperties } from "./gen/runner.js";

useEvaluatorForProperties();
const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);
/** Small smooth programs: nested finite differences need C∞ functions and few inputs. */
const smallSmooth = { smooth: true, maxRank: 2, maxSteps: 4, maxSize: 12 } as const;
const tolFor = (nDiff: number) =>
  nDiff === 0 ? { rtol: 1e-9, atol: 1e-12 } : nDiff === 1 ? { rtol: 1e-5, atol: 1e-8 } : { rtol: 2e-4, atol: 1e-6 };
const stepFor = (nDiff: number) => (nDiff <= 1 ? 1e-5 : 1e-4);

function explain<T>(what: string, progs: readonly Program[], body: () => T): T {
  try {
    return body();
  } catch (e) {
    throw new Error(`${what}\n${progs.map((p) => p.text).join("\n--\n")}\n${(e as Error).message}`);
  }
}

describe("random transform stacks (depth 3–4) agree with loop / finite-difference references", () => {
  it("any order of jit, vmap, grad, vjp, jvp, checkpoint, scan", () => {
    fc.assert(
      fc.property(arbProgram(smallSmooth), fc.nat(), fc.integer({ min: 3, max: 4 }), (p, seed, depth) => {
        const rng = makeRng(seed);
        const levels = randomLevels(rng, depth, 2);
        const nDiff = levels.filter((k) => DIFF_LEVELS.includes(k)).length;
        let stage: Stage = { f: p.fn, ref: p.fn, inShape: p.inShapes[0]!, outShape: p.outShape, text: "f" };
        for (const k of levels) stage = applyLevel(stage, k, rng, stepFor(nDiff));
        const x = randomArray(seed, stage.inShape);
        explain(stage.text, [p], () => expectClose(stage.f(x), stage.ref(x), tolFor(nDiff), stage.text));
      }),
      { numRuns: 40 },
    );
  });
});

describe("named compositions from the API contract", () => {
  const prog = (seed: number, shape: number[]) => buildProgram(seed, [shape], 4, smallSmooth);
  const lossOf = (p: Program, seed: number) => {
    const w = randomArray(seed, p.outShape);
    return (x: Array) => np.sum(np.mul(p.fn(x), w));
  };

  it("jit(vmap(grad(f))) and vmap(jit(grad(f))) equal a loop of finite-difference gradients", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 3 }), (seed, B) => {
        const p = prog(seed, [2, 3]);
        const L = lossOf(p, seed + 1);
        const xs = randomArray(seed + 2, [B, 2, 3]);
        const ref = stackAt(
          range(B).map((i) => fdGrad(L, sliceAt(xs, 0, i), 1e-5)),
          0,
        );
        explain("jit(vmap(grad))", [p], () =>
          expectClose(jit(vmap(grad(L)))(xs), ref, tolFor(1), "jit(vmap(grad(f)))"),
        );
        explain("vmap(jit(grad))", [p], () =>
          expectClose(vmap(jit(grad(L)))(xs), ref, tolFor(1), "vmap(jit(grad(f)))"),
        );
      }),
      { numRuns: 15 },
    );
  });

  it("vmap(x => grad(y => grad(f)(y).sum())(x)) equals nested finite differences per example", () => {
    fc.assert(
      fc.property(fc.nat(), (seed) => {
        const p = prog(seed, [3]);
        const L = lossOf(p, seed + 1);
        const xs = randomArray(seed + 2, [2, 3]);
        const got = vmap((x: Array) => grad((y: Array) => np.sum(grad(L)(y)))(x))(xs);
        const ref = stackAt(
          range(2).map((i) => fdGrad((y) => np.sum(fdGrad(L, y, 1e-4)), sliceAt(xs, 0, i), 1e-4)),
          0,
        );
        explain("vmap(grad(sum∘grad))", [p], () => expectClose(got, ref, tolFor(2), "vmap(grad(grad(f).sum()))"));
      }),
      { numRuns: 15 },
    );
  });

  it("jvp(grad(f)) equals a finite-difference directional derivative of the FD gradient", () => {
    fc.assert(
      fc.property(fc.nat(), (seed) => {
        const p = prog(seed, [2, 2]);
        const L = lossOf(p, seed + 1);
        const x = randomArray(seed + 2, [2, 2]),
          t = randomArray(seed + 3, [2, 2]);
        const [g, hv] = jvp(grad(L), [x], [t]) as [Array, Array];
        explain("jvp(grad)", [p], () => {
          expectClose(g, fdGrad(L, x, 1e-5), tolFor(1), "primal (the gradient)");
          expectClose(
            hv,
            fdDirectional((y) => fdGrad(L, y, 1e-4), x, t, 1e-4),
            tolFor(2),
            "Hessian-vector product",
          );
        });
      }),
      { numRuns: 15 },
    );
  });

  it("jacfwd(jacrev(f)) and hessian equal nested finite-difference Jacobians; a hand-derived Hessian", () => {
    fc.assert(
      fc.property(fc.nat(), (seed) => {
        const p = prog(seed, [3]);
        const x = randomArray(seed + 2, [3]);
        const got = jacfwd(jacrev(p.fn))(x) as Array;
        const ref = fdJacobian((y) => fdJacobian(p.fn, y, 1e-4), x, 1e-4);
        explain("jacfwd(jacrev)", [p], () => expectClose(got, ref, tolFor(2), "jacfwd(jacrev(f))"));
        const L = lossOf(p, seed + 1);
        explain("hessian", [p], () =>
          expectClose(
            hessian(L)(x) as Array,
            jacrev(jacfwd(L))(x) as Array,
            { rtol: 1e-9, atol: 1e-12 },
            "hessian vs jacrev(jacfwd)",
          ),
        );
      }),
      { numRuns: 12 },
    );
    // f(x) = Σ sin(x_i)·x_i² + x_0·x_1  →  H = diag(2 sin x + 4x cos x − x² sin x) + e01 + e10
    const x = f64([0.3, -1.2, 0.7], [3]);
    const f = (v: Array) => np.add(np.sum(np.mul(np.sin(v), np.square(v))), np.mul(np.take(v, 0), np.take(v, 1)));
    const xs = [0.3, -1.2, 0.7];
    const H = xs.map((a, i) =>
      xs.map((_, j) => (i === j ? 2 * Math.sin(a) + 4 * a * Math.cos(a) - a * a * Math.sin(a) : i + j === 1 ? 1 : 0)),
    );
    expectClose(
      jacfwd(jacrev(f))(x) as Array,
      f64(H.flat(), [3, 3]),
      { rtol: 1e-12, atol: 1e-14 },
      "hand-derived Hessian",
    );
    expectClose(hessian(f)(x) as Array, f64(H.flat(), [3, 3]), { rtol: 1e-12, atol: 1e-14 }, "hessian()");
  });

  it("jit(vmap(grad of a scan)): per-example gradients of a rollout equal the unrolled loop's FD gradient", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 5 }), fc.boolean(), (seed, T, ckpt) => {
        const rng = makeRng(seed);
        const p = buildProgram(rng.int(1e9), [[2], [2]], 3, { ...smallSmooth, maxSize: 8 });
        const xs = randomArray(rng.int(1e9), [T, 2]),
          theta = f64([0.8], []);
        const w = randomArray(rng.int(1e9), [T, ...p.outShape]);
        const L = (c0: Array) => {
          const [c, ys] = lax.scan(bodyOf(p, theta), c0, xs, { checkpoint: ckpt });
          return np.sum(c).add(np.sum(np.mul(ys, w)));
        };
        const Lref = (c0: Array) => {
          const [c, ys] = unrolled(bodyOf(p, theta), c0, xs);
          return np.sum(c).add(np.sum(np.mul(ys, w)));
        };
        const c0s = randomArray(rng.int(1e9), [3, 2]);
        const ref = stackAt(
          range(3).map((i) => fdGrad(Lref, sliceAt(c0s, 0, i), 1e-5)),
          0,
        );
        explain(`T=${T} checkpoint=${ckpt}`, [p], () =>
          expectClose(jit(vmap(grad(L)))(c0s), ref, tolFor(1), "jit(vmap(grad(scan)))"),
        );
      }),
      { numRuns: 15 },
    );
  });

  it("grad of a function that calls vjp, and vmap(jvp(...)), agree with finite differences", () => {
    fc.assert(
      fc.property(fc.nat(), (seed) => {
        const p = prog(seed, [3]);
        const ct = randomArray(seed + 1, p.outShape),
          t = randomArray(seed + 4, [3]);
        const x = randomArray(seed + 2, [3]);
        // g(x) = Σ vjp(f, x)(ct) ⊙ x  (uses a vjp inside the differentiated function)
        const g = (v: Array) => np.sum(np.mul(vjp(p.fn, v)[1](ct)[0] as Array, v));
        const gRef = (v: Array) =>
          np.sum(
            np.mul(
              fdGrad((u) => np.sum(np.mul(p.fn(u), ct)), v, 1e-4),
              v,
            ),
          );
        explain("grad(vjp)", [p], () => expectClose(grad(g)(x), fdGrad(gRef, x, 1e-4), tolFor(2), "grad(x ↦ vjp)"));
        const xs = randomArray(seed + 3, [2, 3]);
        const got = vmap((v: Array) => jvp(p.fn, [v], [t])[1] as Array)(xs);
        explain("vmap(jvp)", [p], () =>
          expectClose(
            got,
            stackAt(
              range(2).map((i) => fdDirectional(p.fn, sliceAt(xs, 0, i), t, 1e-5)),
              0,
            ),
            tolFor(1),
            "vmap(jvp)",
          ),
        );
      }),
      { numRuns: 15 },
    );
  });

  it("grad∘grad∘grad of a scalar function matches the hand-derived third derivative; valueAndGrad under vmap", () => {
    // f(x) = sin(x)·x³ ; f''' = −cos x·x³ − 9 sin x·x² + 18 cos x·x + 6 sin x
    const f = (x: Array) => np.mul(np.sin(x), np.mul(x, np.square(x)));
    const d3 = (a: number) => -Math.cos(a) * a ** 3 - 9 * Math.sin(a) * a * a + 18 * Math.cos(a) * a + 6 * Math.sin(a);
    for (const a of [0.4, -1.3, 2.1]) {
      expectClose(grad(grad(grad(f)))(f64([a], [])), d3(a), { rtol: 1e-12, atol: 1e-13 }, `f'''(${a})`);
      expectClose(
        jit(vmap(grad(grad(grad(f)))))(f64([a, -a], [2])),
        f64([d3(a), d3(-a)], [2]),
        { rtol: 1e-12, atol: 1e-13 },
        "jit(vmap(f'''))",
      );
    }
    const xs = f64([0.4, -1.3, 2.1], [3]);
    const [v, g] = vmap(valueAndGrad(f))(xs) as [Array, Array];
    expectClose(v, f(xs), { rtol: 1e-14 }, "values");
    expectClose(
      g,
      f64(
        [0.4, -1.3, 2.1].map((a) => Math.cos(a) * a ** 3 + 3 * Math.sin(a) * a * a),
        [3],
      ),
      { rtol: 1e-12 },
      "grads",
    );
  });

  it("customVjp and checkpoint compose with vmap, jit and grad (custom rule used: hand-checked)", () => {
    // A custom rule that deliberately scales the true derivative by 2, so we can see it is used.
    const f = customVjp(
      (x: Array) => np.sin(x),
      (x: Array) => [np.sin(x), x],
      (x: Array, ct: Array) => [np.mul(ct, np.mul(2, np.cos(x)))],
    );
    const xs = f64([0.1, 0.7, -2], [3]);
    const want = f64(
      [0.1, 0.7, -2].map((a) => 2 * Math.cos(a)),
      [3],
    );
    const L = (x: Array) => np.sum(f(x));
    expectClose(grad(L)(xs), want, { rtol: 1e-14 }, "grad(customVjp)");
    expectClose(vmap(grad((x: Array) => f(x)))(xs), want, { rtol: 1e-14 }, "vmap(grad(customVjp))");
    expectClose(jit(grad((x: Array) => np.sum(vmap(f)(x))))(xs), want, { rtol: 1e-14 }, "jit(grad(vmap(customVjp)))");
    // checkpoint is transparent to values and derivatives in any nesting
    const c = checkpoint((x: Array) => np.sin(np.mul(x, x)));
    const d1 = (a: number) => 2 * a * Math.cos(a * a),
      d2 = (a: number) => 2 * Math.cos(a * a) - 4 * a * a * Math.sin(a * a);
    expectClose(
      vmap(grad((x: Array) => c(x)))(xs),
      f64([0.1, 0.7, -2].map(d1), [3]),
      { rtol: 1e-13 },
      "vmap(grad(checkpoint))",
    );
    expectClose(
      jit(vmap(grad(grad((x: Array) => c(x)))))(xs),
      f64([0.1, 0.7, -2].map(d2), [3]),
      { rtol: 1e-12 },
      "jit(vmap(grad(grad(checkpoint))))",
    );
    expectClose(
      jvp(vmap(grad((x: Array) => c(x))), [xs], [np.onesLike(xs)])[1] as Array,
      f64([0.1, 0.7, -2].map(d2), [3]),
      { rtol: 1e-12 },
      "jvp(vmap(grad(checkpoint)))",
    );
    expect(() => jvp(f, [xs], [xs])).toThrow(/customVjp: forward-mode differentiation/);
  });
});
