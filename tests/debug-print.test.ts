/**
 * debug.print (JAX's jax.debug.print): lines are captured through setPrintSink. Inside jit the
 * print happens on every call (run time, not trace time), in program order; under vmap once per
 * batch element; under grad once (the forward pass), also through jit and scan; formats follow
 * Python's str.format subset ({}, {0}, {name}, {x:.3f}).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { debug, evalShape, grad, init, jit, lax, makeIR, np, vmap, type Array } from "../src/index.js";

let lines: string[] = [];
let prev: (l: string) => void;
beforeEach(() => {
  lines = [];
  prev = debug.setPrintSink((l) => lines.push(l));
});
afterEach(() => {
  debug.setPrintSink(prev);
});
const f64 = (v: unknown) => np.array(v, { dtype: "float64" });

describe("debug.print", () => {
  it("formats positional, numbered and named fields, specs and pytrees", () => {
    debug.print("{} and {1} and {0}", 1, np.array([2, 3]));
    debug.print("x = {x:.2f}; p = {p}; {{literal}}", {
      x: f64([1, 2.5]),
      p: {
        a: np.array(true),
        b: [
          np.array(
            [
              [1, 2],
              [3, 4],
            ],
            { dtype: "int32" },
          ),
        ],
      },
    });
    debug.print("e: {:.3e}, g: {:.3g}, pct: {:.1%}", 12345.678, 0.000123456, 0.25);
    expect(lines).toEqual([
      "1 and [2, 3] and 1",
      "x = [1.00, 2.50]; p = { a: true, b: [[[1, 2], [3, 4]]] }; {literal}",
      "e: 1.235e+4, g: 0.000123, pct: 25.0%",
    ]);
  });

  it("inside jit: prints at run time on every call, in program order, not at trace time", () => {
    const f = jit((x: Array) => {
      debug.print("first {}", x);
      const y = np.mul(x, 2);
      debug.print("second {y}", { y });
      return np.sum(y);
    });
    expect(
      makeIR((x: Array) => {
        debug.print("{}", x);
        return x;
      })(np.array(1)).toString(),
    ).toMatch(/debug_print/);
    expect(lines).toEqual([]); // tracing alone prints nothing
    f(np.array([1, 2]));
    f(np.array([5, 6]));
    expect(f.traceCount).toBe(1);
    expect(lines).toEqual(["first [1, 2]", "second [2, 4]", "first [5, 6]", "second [10, 12]"]);
    evalShape((x: Array) => {
      debug.print("{}", x);
      return x;
    }, np.array(1));
    expect(lines).toHaveLength(4);
  });

  it("vmap prints each batch element; batched and unbatched arguments together", () => {
    vmap(
      (x: Array, w: Array) => {
        debug.print("x={} w={}", x, w);
        return np.mul(x, w);
      },
      { inAxes: [0, null] },
    )(
      np.array([
        [1, 2],
        [3, 4],
        [5, 6],
      ]),
      np.array(7),
    );
    expect(lines).toEqual(["x=[1, 2] w=7", "x=[3, 4] w=7", "x=[5, 6] w=7"]);
    lines.length = 0;
    jit(
      vmap(
        (x: Array) => {
          debug.print("{}", x);
          return x;
        },
        { inAxes: 1 },
      ),
    )(
      np.array([
        [1, 2],
        [3, 4],
      ]),
    );
    expect(lines).toEqual(["[1, 3]", "[2, 4]"]);
  });

  it("grad prints the primal values once, also through jit and a scan", () => {
    const L = (x: Array) => {
      debug.print("x = {}", x);
      return np.sum(np.sin(x));
    };
    const g = grad(L)(f64([0, 1]));
    expect(lines).toEqual(["x = [0, 1]"]);
    expect([...g.dataSync()][0]).toBe(1);
    lines.length = 0;
    grad(jit(L))(f64([2]));
    expect(lines).toEqual(["x = [2]"]);
    lines.length = 0;
    const loop = (c0: Array) =>
      np.sum(
        lax.scan(
          (c: Array, x: Array) => {
            debug.print("step c={} x={}", c, x);
            return [np.mul(c, x), c];
          },
          c0,
          f64([1, 2, 3]),
        )[0],
      );
    const dg = grad(jit(loop))(f64(2));
    expect(lines).toEqual(["step c=2 x=1", "step c=2 x=2", "step c=4 x=3"]);
    expect(dg.item()).toBe(6);
  });

  it("bad format or arguments: clear errors at the call", () => {
    expect(() => debug.print("{} {}", 1)).toThrow(/has more \{\} fields than the 1 positional argument/);
    expect(() => debug.print("{2}", 1)).toThrow(/field \{2\} .* has no positional argument \(1 given\)/);
    expect(() => debug.print("{x}", np.array(1))).toThrow(/names \{x\}: pass them as a last object/);
    expect(() => debug.print("{x}", { y: 1 })).toThrow(/field \{x\} of "\{x\}" is not among the named arguments \(y\)/);
    expect(() => debug.print("{}", "text")).toThrow(/debug.print: a pytree leaf of type string/);
  });

  it.runIf(process.platform === "linux")(
    "WebGPU values print after their asynchronous read, in order (flush waits)",
    async () => {
      try {
        await init({ backend: "webgpu" });
      } catch (e) {
        if (process.env.CI === "true") throw e;
        return;
      }
      try {
        const f = jit((x: Array) => {
          debug.print("gpu {}", x);
          const y = np.add(x, 1);
          debug.print("then {}", y);
          return y;
        });
        f(np.array([1, 2], { backend: "webgpu" }));
        await debug.flush();
        expect(lines).toEqual(["gpu [1, 2]", "then [2, 3]"]);
      } finally {
        await init({ backend: "cpu" });
      }
    },
  );
});
