/**
 * jit's staticArgnames: a parameter named in f's source, or a key of an object argument (JS's
 * keyword arguments). Static values steer JS control flow, so a name that were traced instead
 * would throw or compute something else; each new static value traces again, a new traced value
 * of the same shape does not.
 */
import { describe, expect, it } from "vitest";
import { evalShape, grad, jit, makeIR, np, vmap, type Array } from "../src/index.js";
import { parameterNames } from "../src/transforms/static-args.js";

const f64 = (v: number[]) => np.array(v, { dtype: "float64" });
const values = (x: Array) => [...x.dataSync()];

describe("parameterNames", () => {
  it("reads simple parameters, defaults, and marks destructured/rest ones", () => {
    expect(parameterNames((x: number, steps: number) => x + steps)).toEqual(["x", "steps"]);
    expect(parameterNames((x: number) => x)).toEqual(["x"]);
    // eslint-disable-next-line prefer-arrow-callback
    expect(
      parameterNames(function named(a: number, mode = "a,b", { k } = { k: 1 }, ...rest: number[]) {
        return [a, mode, k, rest];
      }),
    ).toEqual(["a", "mode", null, null]);
    expect(parameterNames(async (p: { a: number }, /* c, */ n = [1, 2]) => [p, n])).toEqual(["p", "n"]);
    expect(parameterNames(Math.max)).toEqual([]);
  });
});

describe("jit staticArgnames", () => {
  it("a parameter name: steers a JS loop, retraces per value only", () => {
    const repeatDouble = (x: Array, times: number) => {
      let y = x;
      for (let i = 0; i < times; i++) y = y.mul(2);
      return y;
    };
    const jf = jit(repeatDouble, { staticArgnames: ["times"] });
    expect(values(jf(f64([1, 3]), 3))).toEqual([8, 24]);
    expect(values(jf(f64([2, 1]), 3))).toEqual([16, 8]);
    expect(jf.traceCount).toBe(1);
    expect(values(jf(f64([1, 3]), 1))).toEqual([2, 6]);
    expect(jf.traceCount).toBe(2);
    // Traced instead, `times` would be a tracer: the loop would not run the same way.
    expect(values(jit(repeatDouble)(f64([1, 3]), 3))).not.toEqual([8, 24]);
  });

  it("a string parameter (untraceable) is accepted by name", () => {
    function act(x: Array, kind: string) {
      return kind === "square" ? x.mul(x) : x.neg();
    }
    const jf = jit(act, { staticArgnames: ["kind"] });
    expect(values(jf(f64([3]), "square"))).toEqual([9]);
    expect(values(jf(f64([3]), "neg"))).toEqual([-3]);
    expect(() => jit(act)(f64([3]), "square")).toThrow(/string/);
  });

  it("a key of an options object: that key is static, the object's other leaves are traced", () => {
    const step = (x: Array, o: { substeps: number; dt: Array }) => {
      let y = x;
      for (let i = 0; i < o.substeps; i++) y = y.add(o.dt.mul(y));
      return y;
    };
    const jf = jit(step, { staticArgnames: ["substeps"] });
    expect(values(jf(f64([1]), { substeps: 2, dt: f64([0.5]) }))[0]).toBeCloseTo(2.25, 12);
    expect(values(jf(f64([1]), { substeps: 2, dt: f64([1]) }))[0]).toBeCloseTo(4, 12);
    expect(jf.traceCount).toBe(1); // dt is traced: a new value, the same program
    expect(values(jf(f64([1]), { substeps: 3, dt: f64([1]) }))[0]).toBeCloseTo(8, 12);
    expect(jf.traceCount).toBe(2);
    // The printed program has one multiply-add per substep: dt is an input, substeps is not.
    expect(
      String(makeIR(step, { staticArgnames: ["substeps"] })(f64([1]), { substeps: 3, dt: f64([1]) })).match(/\bmul\b/g),
    ).toHaveLength(3);
  });

  it("a destructured parameter's key", () => {
    const jf = jit((x: Array, { n, w }: { n: number; w: Array }) => (n === 2 ? x.mul(w) : x.add(w)), {
      staticArgnames: ["n"],
    });
    expect(values(jf(f64([3]), { n: 2, w: f64([4]) }))).toEqual([12]);
    expect(values(jf(f64([3]), { n: 1, w: f64([4]) }))).toEqual([7]);
  });

  it("composes with grad and vmap, and mixes with staticArgnums", () => {
    const jf = jit((x: Array, p: number, o: { scale: number }) => x.pow(p).mul(o.scale).sum(), {
      staticArgnames: ["p"],
      staticArgnums: [2],
    });
    const g = grad((x: Array) => jf(x, 3, { scale: 2 }))(f64([1, 2]));
    expect(values(g)).toEqual([6, 24]); // d/dx 2x³ = 6x²
    const v = vmap((x: Array) => jf(x, 2, { scale: 1 }))(
      np.array(
        [
          [1, 2],
          [3, 4],
        ],
        { dtype: "float64" },
      ),
    );
    expect(values(v)).toEqual([5, 25]);
    expect(evalShape((x: Array) => jf(x, 2, { scale: 1 }), f64([1, 2])).shape).toEqual([]);
  });

  it("a name the call does not carry is a clear error", () => {
    const jf = jit((x: Array, o: { steps: number }) => x.mul(o.steps), { staticArgnames: ["stpes"] });
    expect(() => jf(f64([1]), { steps: 2 })).toThrow(
      new RegExp(
        /staticArgnames names "stpes", but .*\(x, o\) has no parameter "stpes" /.source +
          /and no object argument of this call has a "stpes" key \(its object arguments' keys: steps\)/.source,
      ),
    );
    expect(() => jit((x: Array) => x, { staticArgnames: [""] })).toThrow(/staticArgnames must hold/);
  });
});
