/**
 * customJvp (JAX's custom_jvp): the user's forward rule is what jvp, grad (through linearize and
 * transpose), jacfwd/jacrev and hessian use — shown with a rule that differs from f's true
 * derivative, with a rule that is finite where autodiff is not (sqrt at 0), and with a correct
 * rule checked against central differences; vmap and jit of f and of its gradient equal loops
 * and eager results.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { customJvp, grad, hessian, jacfwd, jacrev, jit, jvp, makeIR, np, vjp, vmap, type Array } from "../src/index.js";
import { checkGrads, makeRng } from "../property-tests/gradcheck.js";
import { randomArray } from "../property-tests/gen/programs.js";

const f64 = (v: number | number[]) => np.array(v, { dtype: "float64" });
const vals = (x: Array) => [...x.dataSync()];

/** softplus with its stable derivative sigmoid(x) (log1p(exp(x)) overflows its autodiff at large x). */
const softplus = customJvp(
  (x: Array) => np.log1p(np.exp(x)),
  ([x], [t]) => [np.log1p(np.exp(x)), np.mul(t, np.div(1, np.add(1, np.exp(np.neg(x)))))],
);
/** A rule that is deliberately not f's derivative: proves which one is used. */
const scaledRule = customJvp(
  (x: Array) => np.sin(x),
  ([x], [t]) => [np.sin(x), np.mul(t, 3)],
);
/** sqrt with derivative 0 at 0 (autodiff gives inf there). */
const safeSqrt = customJvp(
  (x: Array) => np.sqrt(x),
  ([x], [t]) => {
    const y = np.sqrt(x);
    return [y, np.where(np.equal(x, 0), 0, np.div(t, np.mul(2, np.where(np.equal(x, 0), 1, y))))];
  },
);

describe("customJvp", () => {
  it("the rule decides jvp, grad, vjp, jacfwd and jacrev; f decides the value", () => {
    const x = f64([0.3, -1.2]);
    expect(vals(scaledRule(x))).toEqual(vals(np.sin(x)));
    const [y, t] = jvp(scaledRule, [x], [f64([1, 2])]);
    expect(vals(y)).toEqual(vals(np.sin(x)));
    expect(vals(t)).toEqual([3, 6]);
    expect(vals(grad((v: Array) => np.sum(scaledRule(v)))(x))).toEqual([3, 3]);
    const [, back] = vjp(scaledRule, x);
    expect(vals(back(f64([1, -1]))[0])).toEqual([3, -3]);
    expect(vals(jacfwd(scaledRule)(x))).toEqual([3, 0, 0, 3]);
    expect(vals(jacrev(scaledRule)(x))).toEqual([3, 0, 0, 3]);
  });

  it("a rule that is finite where autodiff is not", () => {
    expect(vals(grad((v: Array) => np.sum(np.sqrt(v)))(f64([0, 4])))[0]).toBe(Infinity);
    expect(vals(grad((v: Array) => np.sum(safeSqrt(v)))(f64([0, 4])))).toEqual([0, 0.25]);
    expect(vals(grad((v: Array) => np.sum(softplus(v)))(f64([1000, 0])))).toEqual([1, 0.5]);
    expect(vals(grad((v: Array) => np.sum(np.log1p(np.exp(v))))(f64([1000])))[0]).toBeNaN(); // what the rule avoids
  });

  it("a correct rule: gradients (to second order, the rule's own derivative) agree with central differences", () => {
    // f(x, y) = sin(x)·y + x²: rule written out; the second order differentiates the rule.
    const f = customJvp(
      (x: Array, y: Array) => np.add(np.mul(np.sin(x), y), np.square(x)),
      ([x, y], [tx, ty]) => [
        np.add(np.mul(np.sin(x), y), np.square(x)),
        np.add(np.mul(tx, np.add(np.mul(np.cos(x), y), np.mul(2, x))), np.mul(ty, np.sin(x))),
      ],
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.nat(), (n, seed) => {
        checkGrads((a, b) => f(a, b), [randomArray(seed, [n]), randomArray(seed + 1, [n])], 2, makeRng(seed));
      }),
      { numRuns: 10 },
    );
    // The rule 3·t has no second derivative.
    expect(vals(hessian((v: Array) => np.sum(scaledRule(v)))(f64([0.5])))).toEqual([0]);
  });

  it("pytrees in and out", () => {
    const f = customJvp(
      (p: { a: Array; b: Array }) => ({ s: np.mul(p.a, p.b) }),
      ([p], [t]) => [{ s: np.mul(p.a, p.b) }, { s: np.add(np.mul(t.a, p.b), np.mul(p.a, t.b)) }],
    );
    const g = grad((p: { a: Array; b: Array }) => np.sum(f(p).s))({ a: f64([2, 3]), b: f64([5, 7]) });
    expect(vals(g.a)).toEqual([5, 7]);
    expect(vals(g.b)).toEqual([2, 3]);
  });

  it("vmap and jit of f and of its gradient equal the loop and the eager results", () => {
    const xs = randomArray(3, [4, 3], -2, 2);
    const L = (v: Array) => np.sum(np.mul(softplus(v), v));
    const rows = [0, 1, 2, 3].map((i) => grad(L)(np.take(xs, i, 0)));
    expect(vals(vmap(grad(L))(xs))).toEqual(vals(np.stack(rows)));
    expect(vals(vmap(softplus)(xs))).toEqual(vals(softplus(xs)));
    const gEager = grad(L)(xs);
    for (const g of [jit(grad(L))(xs), grad(jit(L))(xs), grad((v: Array) => jit(L)(v))(xs)]) {
      vals(g).forEach((v, i) => expect(v).toBeCloseTo(vals(gEager)[i]!, 12));
    }
    expect(String(makeIR(softplus)(xs))).toMatch(/custom_jvp_call/);
  });

  it("bad rules: clear errors", () => {
    const wrongShape = customJvp(
      (x: Array) => np.sum(x),
      ([x], [t]) => [np.sum(x), t],
    );
    expect(() => jvp(wrongShape, [f64([1, 2])], [f64([1, 1])])).toThrow(
      /customJvp: the rule's tangent output 0 has shape \[2\], f's output has \[\]/,
    );
    const wrongArity = customJvp(
      (x: Array) => x,
      ([x]) => [x] as unknown as [Array, Array],
    );
    expect(() => jvp(wrongArity, [f64([1])], [f64([1])])).toThrow(/must return \[primalOut, tangentOut\]/);
    const w = f64([2]);
    const closes = customJvp(
      (x: Array) => np.mul(x, w),
      ([x], [t]) => [np.mul(x, w), np.mul(t, w)],
    );
    expect(() =>
      grad((v: Array) =>
        np.sum(
          customJvp(
            (x: Array) => np.mul(x, v),
            ([x], [t]) => [np.mul(x, v), np.mul(t, v)],
          )(f64([1])),
        ),
      )(w),
    ).toThrow(/closes over a value that is being differentiated/);
    expect(vals(grad((v: Array) => np.sum(closes(v)))(f64([1])))).toEqual([2]);
    // A tangent output that is not linear in the tangents works forward but cannot be transposed.
    const nonlinear = customJvp(
      (x: Array) => np.sin(x),
      ([x], [t]) => [np.sin(x), np.mul(t, t)],
    );
    expect(() => grad((v: Array) => np.sum(nonlinear(v)))(f64([1]))).toThrow(/non-linear use of a tangent/);
  });
});
