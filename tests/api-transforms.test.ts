/**
 * Unit tests of every public name in API.md's "Transforms" section: grad/valueAndGrad (argnums,
 * hasAux, pytrees), jvp, vjp, linearize, jacfwd, jacrev, hessian, customVjp, checkpoint,
 * stopGradient, vmap, jit, lax.*, makeIR, and the nestings the issue asks for. Expected values
 * are hand-derived derivatives; forward and reverse mode are compared to rounding.
 */
import { describe, expect, it } from "vitest";
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
  linearize,
  makeIR,
  np,
  stopGradient,
  valueAndGrad,
  vjp,
  vmap,
  type Array,
} from "../src/index.js";

const f64 = (v: number | number[] | number[][]) => np.array(v, { dtype: "float64" });
type Nested = number | readonly Nested[];
const flat = (v: Nested): number[] => (typeof v === "number" ? [v] : v.flatMap(flat));
function expectValues(x: Array, expected: Nested, digits = 10): void {
  const got = [...x.dataSync()],
    want = flat(expected);
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(g).toBeCloseTo(want[i]!, digits));
}
const maxAbsDiff = (a: Array, b: Array): number => {
  const x = Float64Array.from(a.dataSync()),
    y = b.dataSync();
  expect(a.shape).toEqual(b.shape);
  return x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i]!)), 0);
};

describe("README snippet", () => {
  it("grad of a small function prints the right numbers", () => {
    const f = (x: Array) => np.sum(np.mul(x, x));
    const g = grad(f)(np.array([1, 2, 3]));
    expect(String(g)).toBe("Array(f32[3], [2,4,6])");
  });
});

describe("grad and valueAndGrad", () => {
  const x = f64([0.5, -1, 2]);
  const f = (v: Array) => np.sum(np.sin(v).mul(v)); // d/dx = sin x + x cos x
  const df = (v: number) => Math.sin(v) + v * Math.cos(v);
  it("grad of a scalar function", () => {
    const g = grad(f)(x);
    expect(g.dtype).toBe("float64");
    expectValues(g, [0.5, -1, 2].map(df));
  });
  it("grad of a JS-number input", () => {
    expectValues(grad((v: Array | number) => np.mul(v, np.mul(v, v)))(2), 12, 5);
  });
  it("argnums: a number gives one gradient, a list a tuple, negatives count from the end", () => {
    const h = (a: Array, b: Array) => np.sum(a.mul(b).mul(b)); // ∂a = b², ∂b = 2ab
    const a = f64([1, 2]),
      b = f64([3, -1]);
    expectValues(grad(h, { argnums: 1 })(a, b), [6, -4]);
    const [ga, gb] = grad(h, { argnums: [0, 1] })(a, b);
    expectValues(ga, [9, 1]);
    expectValues(gb, [6, -4]);
    expectValues(grad(h, { argnums: -1 })(a, b), [6, -4]);
  });
  it("hasAux returns [grads, aux] (aux leaves as Arrays, as in JAX) and does not differentiate aux", () => {
    const [g, aux] = grad((v: Array) => [np.sum(v.mul(v)), { norm: np.norm(v), label: 7 }], { hasAux: true })(
      f64([3, 4]),
    );
    expectValues(g, [6, 8]);
    expectValues(aux.norm, 5);
    expectValues(aux.label, 7);
  });
  it("valueAndGrad returns [value, grads] (and [[value, aux], grads] with hasAux)", () => {
    const [v, g] = valueAndGrad(f)(x);
    expectValues(
      v,
      [0.5, -1, 2].reduce((s, t) => s + Math.sin(t) * t, 0),
    );
    expectValues(g, [0.5, -1, 2].map(df));
    const [[v2, aux], g2] = valueAndGrad((y: Array) => [np.sum(y), y.mul(2)], { hasAux: true })(f64([1, 2]));
    expectValues(v2, 3);
    expectValues(aux, [2, 4]);
    expectValues(g2, [1, 1]);
  });
  it("gradients of pytrees have the argument's structure", () => {
    const xs = f64([1, 2]);
    const loss = (p: { w: Array; b: Array; extra: null }) => np.sum(p.w.mul(xs).add(p.b).mul(p.w.mul(xs).add(p.b)));
    const p = { w: f64([0.5, 1]), b: f64(1), extra: null };
    const g = grad(loss)(p);
    // r = w·x + b = [1.5, 3]; ∂w = 2 r x = [3, 12]; ∂b = 2 Σ r = 9.
    expectValues(g.w, [3, 12]);
    expectValues(g.b, 9);
    expect(g.extra).toBeNull();
  });
  it("float32 gradients through a float64 cast stay float32", () => {
    const g = grad((v: Array) => np.sum(v.astype("float64").mul(2)))(np.array([1, 2]));
    expect(g.dtype).toBe("float32");
    expectValues(g, [2, 2]);
  });
});

describe("jvp, vjp, linearize", () => {
  const f = (a: Array, b: Array) => np.mul(np.exp(a), b); // J = [diag(e^a b), diag(e^a)]
  const a = f64([0, 1]),
    b = f64([2, 3]);
  it("jvp(f, primals, tangents) → [f(x), J·t]", () => {
    const [y, t] = jvp(f, [a, b], [f64([1, 0]), f64([0, 1])]);
    expectValues(y, [2, 3 * Math.E]);
    expectValues(t, [2, Math.E]);
  });
  it("vjp(f, ...primals) → [f(x), cotangent ↦ one cotangent per primal]", () => {
    const [y, back] = vjp(f, a, b);
    expectValues(y, [2, 3 * Math.E]);
    const [ca, cb] = back(f64([1, 10]));
    expectValues(ca, [2, 30 * Math.E]);
    expectValues(cb, [1, 10 * Math.E]);
  });
  it("vjp of a pytree output takes a pytree cotangent", () => {
    const [, back] = vjp((v: Array) => ({ s: np.sum(v), d: v.mul(2) }), f64([1, 2]));
    expectValues(back({ s: f64(1), d: f64([1, 1]) })[0], [3, 3]);
  });
  it("linearize(f, ...primals) → [f(x), tangents ↦ J·t] agreeing with jvp", () => {
    const [y, lin] = linearize(f, a, b);
    expectValues(y, [2, 3 * Math.E]);
    expectValues(lin(f64([1, 0]), f64([0, 1])), [2, Math.E]);
    expectValues(lin(f64([0, 1]), f64([1, 0])), [1, 3 * Math.E]);
  });
});

describe("Jacobians and Hessians", () => {
  // [x0 x1, sin x2]
  const f = (v: Array) => np.stack([np.mul(v.at([0]).squeeze(), v.at([1]).squeeze()), np.sin(v.at([2]).squeeze())]);
  const x = f64([2, 3, 0.5]);
  const J = [
    [3, 2, 0],
    [0, 0, Math.cos(0.5)],
  ];
  it("jacfwd and jacrev give out.shape + in.shape", () => {
    const jf = jacfwd(f)(x),
      jr = jacrev(f)(x);
    expect(jf.shape).toEqual([2, 3]);
    expectValues(jf, J);
    expectValues(jr, J);
  });
  it("hessian", () => {
    const h = hessian((v: Array) => np.sum(v.mul(v).mul(v)))(f64([1, -2]));
    expectValues(h, [
      [6, 0],
      [0, -12],
    ]);
    const h2 = hessian((v: Array) => np.prod(v))(f64([2, 3, 4]));
    expectValues(h2, [
      [0, 4, 3],
      [4, 0, 2],
      [3, 2, 0],
    ]);
  });
  it("argnums selects the differentiated argument", () => {
    expectValues(jacrev((a: Array, b: Array) => a.mul(b), { argnums: 1 })(f64([2, 3]), f64([1, 1])), [
      [2, 0],
      [0, 3],
    ]);
  });
});

describe("customVjp, checkpoint, stopGradient", () => {
  it("customVjp uses fwd/bwd in reverse mode and f for values", () => {
    const clipGrad = customVjp(
      (v: Array) => v.mul(3),
      (v: Array) => [v.mul(3), v],
      (res: Array, g: Array) => [np.clip(g.mul(3), -1, 1).add(res.mul(0))],
    );
    const x = f64([1, 2]);
    expectValues(clipGrad(x), [3, 6]);
    expectValues(grad((v: Array) => np.sum(clipGrad(v)))(x), [1, 1]);
    expectValues(grad((v: Array) => np.sum(clipGrad(v).mul(0.1)))(x), [0.3, 0.3]);
  });
  it("customVjp with several arguments and null cotangents", () => {
    const f = customVjp(
      (a: Array, b: Array) => a.mul(b),
      (a: Array, b: Array) => [a.mul(b), [a, b]],
      ([, b]: Array[], g: Array) => [g.mul(b!), null],
    );
    const [ga, gb] = grad((a: Array, b: Array) => np.sum(f(a, b)), { argnums: [0, 1] })(f64([1, 2]), f64([3, 4]));
    expectValues(ga, [3, 4]);
    expectValues(gb, [0, 0]);
  });
  it("checkpoint gives the same values and gradients as the plain function, to second order", () => {
    const f = (v: Array) => np.sum(np.sin(v).mul(np.exp(v)));
    const cf = checkpoint(f);
    const x = f64([0.3, -0.7]);
    expectValues(cf(x), f(x).item());
    expect(maxAbsDiff(grad(cf)(x), grad(f)(x))).toBeLessThan(1e-14);
    const gg = (h: (v: Array) => Array) => grad((v: Array) => np.sum(grad(h)(v)))(x);
    expect(maxAbsDiff(gg(cf), gg(f))).toBeLessThan(1e-13);
    expect(maxAbsDiff(jvp(grad(cf), [x], [f64([1, 2])])[1], jvp(grad(f), [x], [f64([1, 2])])[1])).toBeLessThan(1e-13);
  });
  it("stopGradient blocks the gradient but not the value", () => {
    const x = f64([2, 3]);
    expectValues(grad((v: Array) => np.sum(v.mul(stopGradient(v))))(x), [2, 3]);
    expectValues(stopGradient(x), [2, 3]);
    expectValues(jvp((v: Array) => stopGradient(v.mul(2)), [x], [f64([1, 1])])[1], [0, 0]);
  });
});

describe("nested transforms", () => {
  const x = f64([0.4, -1.3]);
  it("grad(grad(f))", () => {
    const d2 = grad((v: Array) => grad((w: Array) => np.sum(np.sin(w)))(v).sum())(x); // −sin
    expectValues(d2, [-Math.sin(0.4), -Math.sin(-1.3)]);
    expectValues(grad(grad(grad((v: Array) => np.mul(v, np.mul(v, np.mul(v, v))))))(f64(2)), 48); // 24 x
  });
  it("jvp(grad(f)) is a Hessian-vector product", () => {
    const f = (v: Array) => np.sum(np.exp(v.at([0])).mul(v.at([1]).mul(v.at([1]))));
    // f = e^a b²: H = [[e^a b², 2 e^a b], [2 e^a b, 2 e^a]]
    const [a, b] = [0.4, -1.3];
    const H = [
      [Math.exp(a) * b * b, 2 * Math.exp(a) * b],
      [2 * Math.exp(a) * b, 2 * Math.exp(a)],
    ];
    const v = [0.5, 2];
    const [, hv] = jvp(grad(f), [x], [f64(v)]);
    expectValues(
      hv,
      H.map((row) => row[0]! * v[0]! + row[1]! * v[1]!),
    );
  });
  it("grad of a function that itself calls vjp", () => {
    // g(x) = Σ (u ⊙ cos x)² (the squared vjp of sin), dg/dx = −2 u² cos x sin x.
    const u = f64([1.5, -2]);
    const g = (v: Array) => {
      const [, back] = vjp(np.sin, v);
      const [ct] = back(u) as Array[];
      return np.sum(ct!.mul(ct!));
    };
    const us = [1.5, -2],
      xs = [0.4, -1.3];
    expectValues(
      grad(g)(x),
      xs.map((t, i) => -2 * us[i]! ** 2 * Math.cos(t) * Math.sin(t)),
    );
  });
  it("jacfwd(jacrev(f)) equals the analytic Hessian and jacrev(jacfwd(f))", () => {
    const f = (v: Array) => np.sum(np.sin(v).mul(np.cos(v.at([0]))));
    const h1 = jacfwd(jacrev(f))(x),
      h2 = jacrev(jacfwd(f))(x);
    const [a, b] = [0.4, -1.3];
    // f = sin a cos a + sin b cos a
    const H = [
      [-2 * Math.sin(2 * a) - Math.sin(b) * Math.cos(a), -Math.cos(b) * Math.sin(a)],
      [-Math.cos(b) * Math.sin(a), -Math.sin(b) * Math.cos(a)],
    ];
    expectValues(h1, H);
    expect(maxAbsDiff(h1, h2)).toBeLessThan(1e-14);
  });
  it("forward and reverse mode agree to rounding", () => {
    const f = (v: Array) => np.tanh(np.matmul(v.reshape([2, 2]), v.reshape([2, 2]).T).reshape([4])).mul(np.exp(v));
    const y = f64([0.1, -0.4, 0.7, 1.2]);
    expect(maxAbsDiff(jacfwd(f)(y), jacrev(f)(y))).toBeLessThan(1e-14);
  });
  it("vmap(grad(f)) matches a loop of grads and grad(vmap) agrees", () => {
    const f = (v: Array) => np.sum(np.sin(v).mul(v));
    const xs = f64([
      [0.1, 0.2],
      [0.3, -0.4],
      [1, 2],
    ]);
    const batched = vmap(grad(f))(xs);
    const loop = np.stack([0, 1, 2].map((i) => grad(f)(xs.at([i]).squeeze(0))));
    expect(maxAbsDiff(batched, loop)).toBeLessThan(1e-15);
    expect(maxAbsDiff(grad((v: Array) => np.sum(vmap(f)(v)))(xs), loop)).toBeLessThan(1e-15);
  });
});

describe("vmap and jit", () => {
  it("vmap with inAxes / outAxes", () => {
    const a = f64([
        [1, 2],
        [3, 4],
      ]),
      b = f64([10, 20]);
    expectValues(vmap((r: Array, s: Array) => r.mul(s), { inAxes: [1, null] })(a, b), [
      [10, 60],
      [20, 80],
    ]); // columns times b
    expectValues(vmap((r: Array) => np.sum(r))(a), [3, 7]);
    expectValues(vmap((r: Array) => r.mul(2), { outAxes: 1 })(a), [
      [2, 6],
      [4, 8],
    ]);
  });
  it("jit gives eager results and traces once per signature", () => {
    let calls = 0;
    const f = jit((v: Array) => {
      calls++;
      return np.sum(np.exp(v));
    });
    expectValues(f(f64([0, 1])), 1 + Math.E);
    expectValues(f(f64([1, 2])), Math.E + Math.exp(2));
    expect(calls).toBe(1);
    f(f64([1, 2, 3]));
    expect(calls).toBe(2);
  });
  it("jit staticArgnums", () => {
    const f = jit((v: Array, n: number) => v.mul(n), { staticArgnums: [1] });
    expectValues(f(f64([1, 2]), 3), [3, 6]);
    expectValues(f(f64([1, 2]), 4), [4, 8]);
  });
  it("makeIR prints the traced program", () => {
    const ir = makeIR((v: Array) => np.sin(v).mul(2))(f64([1, 2]));
    expect(String(ir)).toMatch(/sin/);
    expect(String(ir)).toMatch(/mul/);
  });
});

describe("lax control flow", () => {
  it("scan returns [carry, stacked ys], forward and reverse", () => {
    const xs = f64([1, 2, 3]);
    const [c, ys] = lax.scan((s: Array, v: Array) => [s.add(v), s.mul(v)], f64(0), xs);
    expectValues(c, 6);
    expectValues(ys, [0, 2, 9]);
    const [c2, ys2] = lax.scan((s: Array, v: Array) => [s.add(v), s], f64(0), xs, { reverse: true });
    expectValues(c2, 6);
    expectValues(ys2, [5, 3, 0]);
  });
  it("scan options: length with xs = null, and checkpoint (same values and gradients)", () => {
    const [c] = lax.scan((s: Array, _x: null) => [s.mul(2), null], f64(1), null, { length: 3 });
    expectValues(c, 8);
    const loss = (opts: { checkpoint?: boolean }) => (v: Array) =>
      np.sum(lax.scan((s: Array, w: Array) => [np.sin(s.mul(w)).add(w), s], np.sum(v), v, opts)[1]);
    const xs = f64([0.1, 0.5, -0.3, 0.8, 1.1, -0.7, 0.2]);
    expectValues(loss({ checkpoint: true })(xs), loss({})(xs).item(), 13);
    expect(maxAbsDiff(grad(loss({ checkpoint: true }))(xs), grad(loss({}))(xs))).toBeLessThan(1e-13);
  });
  it("grad through scan (carry initialised from the input)", () => {
    // c_T = c_0 ∏ x_t with c_0 = Σ x: ∂/∂x_i = ∏x + Σx ∏_{t≠i} x_t
    const g = grad((v: Array) => lax.scan((s: Array, w: Array) => [s.mul(w), null], np.sum(v), v)[0])(f64([1, 2, 3]));
    expectValues(g, [6 + 6 * 6, 6 + 6 * 3, 6 + 6 * 2]);
  });
  it("grad through scan whose initial carry is a constant (regression: used to fail in scan's transpose)", () => {
    // Same function with c_0 = 1: ∂/∂x_i = ∏_{t≠i} x_t.
    const g = grad((v: Array) => lax.scan((s: Array, w: Array) => [s.mul(w), null], f64(1), v)[0])(f64([1, 2, 3]));
    expectValues(g, [6, 3, 2]);
  });
  it("foriLoop and whileLoop", () => {
    expectValues(
      lax.foriLoop(0, 4, (i: Array, c: Array) => c.add(i.astype("float64")), f64(0)),
      6,
    );
    const [i, v] = lax.whileLoop(
      ([k]: [Array, Array]) => k.less(3),
      ([k, s]: [Array, Array]) => [k.add(1), s.mul(2)] as [Array, Array],
      [np.array(0, { dtype: "int32" }), f64(1.5)] as [Array, Array],
    );
    expectValues(i, 3);
    expectValues(v, 12);
    const [, tv] = jvp(
      (s: Array) =>
        lax.whileLoop(
          ([k]: [Array, Array]) => k.less(3),
          ([k, c]: [Array, Array]) => [k.add(1), c.mul(c)] as [Array, Array],
          [np.array(0, { dtype: "int32" }), s] as [Array, Array],
        )[1],
      [f64(1.1)],
      [f64(1)],
    );
    expectValues(tv, 8 * 1.1 ** 7); // d/ds s^8
  });
  it("cond with a JS boolean or an Array predicate, and its gradient", () => {
    const f = (p: Array | boolean, v: Array) =>
      lax.cond(
        p,
        (w: Array) => w.mul(w),
        (w: Array) => w.neg(),
        v,
      );
    expectValues(f(true, f64(3)), 9);
    expectValues(f(np.array(false), f64(3)), -3);
    expectValues(grad((v: Array) => f(v.greater(0), v))(f64(3)), 6);
    expectValues(grad((v: Array) => f(v.greater(0), v))(f64(-3)), -1);
  });
});
