/**
 * The transforms keep the function's types (checked by `tsc --noEmit`, which covers tests/): a
 * regression to `any` makes an `expectTypeOf` line or an unused `@ts-expect-error` fail to compile.
 * At run time the same calls run, so the types describe what really comes back.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  grad,
  hessian,
  jacfwd,
  jacrev,
  jit,
  jvp,
  lax,
  linearize,
  np,
  valueAndGrad,
  vjp,
  vmap,
  type Array,
  type NDArray,
} from "../src/index.js";

type Params = { mass: Array; friction: Array };
const loss = (p: Params) => np.sum(np.add(np.square(p.mass), p.friction));
const params: Params = { mass: np.array([1, 2], { dtype: "float64" }), friction: np.array(0.5, { dtype: "float64" }) };
const two = (a: Array, b: Array) => np.sum(np.mul(a, b));
const x = np.array([1, 2, 3], { dtype: "float64" });

describe("transform types", () => {
  it("grad of (p: P) => Array is (p: P) => P", () => {
    const g = grad(loss);
    expectTypeOf(g).toEqualTypeOf<(p: Params) => Params>();
    expect(g(params).mass.toList()).toEqual([2, 4]);
  });
  it("argnums: a number gives that argument's type, a list a tuple", () => {
    expectTypeOf(grad(two, { argnums: 1 })).returns.toEqualTypeOf<Array>();
    expectTypeOf(grad(two, { argnums: [0, 1] })).returns.toEqualTypeOf<[Array, Array]>();
    const [ga, gb] = grad(two, { argnums: [0, 1] })(x, x);
    expect([ga.shape, gb.shape]).toEqual([[3], [3]]);
  });
  it("hasAux: [grads, aux] with aux's numbers as Arrays", () => {
    const g = grad((p: Params) => [loss(p), { label: 7, m: p.mass }], { hasAux: true });
    expectTypeOf(g).returns.toEqualTypeOf<[Params, { label: Array; m: Array }]>();
    const vg = valueAndGrad((p: Params) => [loss(p), p.mass], { hasAux: true });
    expectTypeOf(vg).returns.toEqualTypeOf<[[Array, Array], Params]>();
    expect(g(params)[1].label.toList()).toBe(7);
  });
  it("valueAndGrad, vjp, jvp, linearize, jacobians", () => {
    expectTypeOf(valueAndGrad(loss)).returns.toEqualTypeOf<[Array, Params]>();
    const [y, back] = vjp((a: Array, b: Array) => ({ s: np.mul(a, b) }), x, x);
    expectTypeOf(y).toEqualTypeOf<{ s: Array }>();
    expectTypeOf(back).returns.toEqualTypeOf<[Array, Array]>();
    expectTypeOf(jvp(np.sin, [x], [x])).toEqualTypeOf<[Array, Array]>();
    const [, lin] = linearize((p: Params) => np.mul(p.mass, p.friction), params);
    expectTypeOf(lin).parameters.toEqualTypeOf<[{ mass: Array | number; friction: Array | number }]>();
    expectTypeOf(jacfwd(np.sin)).returns.toEqualTypeOf<Array>();
    expectTypeOf(jacrev((a: Array) => [a, a])).returns.toEqualTypeOf<Array[]>();
    expectTypeOf(hessian(two)).returns.toEqualTypeOf<Array>();
    expect(hessian((a: Array) => np.sum(np.square(a)))(x).shape).toEqual([3, 3]);
  });
  it("vmap and jit keep the function's type; NDArray is Array", () => {
    expectTypeOf(vmap(loss)).toEqualTypeOf<(p: Params) => Array>();
    expectTypeOf(jit(grad(loss))).parameters.toEqualTypeOf<[Params]>();
    expectTypeOf<NDArray>().toEqualTypeOf<Array>();
  });
  it("lax.scan reads a body's [[p, v], y] as tuples", () => {
    const [[p], ys] = lax.scan(([p, v]: [Array, Array]) => [[np.add(p, v), v], p], [np.zeros([]), np.ones([])], null, {
      length: 3,
    });
    expectTypeOf(p).toEqualTypeOf<Array>();
    expectTypeOf(ys).toEqualTypeOf<Array>();
    expect(ys.toList()).toEqual([0, 1, 2]);
  });
  it("wrong uses do not type-check", () => {
    // @ts-expect-error: grad needs a scalar-valued function (an Array or number), not a string.
    expect(() => grad((a: Array) => String(a))(x)).toThrow();
    // @ts-expect-error: the gradient of Params has no field `mas`.
    expect(grad(loss)(params).mas).toBeUndefined();
    // @ts-expect-error: argnums 1 of a function of (a, b) is an Array, not Params.
    const wrongArgnum = (): Params => grad(two, { argnums: 1 })(x, x);
    expect(() => wrongArgnum().mass.shape).toThrow();
  });
});
