/**
 * Transforms over programs run by the CPU compiler (src/core/compile via runIR). The cases
 * below are regression tests for compiler bugs the random property suites found (fused
 * scatters reading index buffers written by the same kernel; aliased scatter updates).
 * References are the same programs run op by op (eager) or through the IR interpreter.
 */
import { describe, expect, it } from "vitest";
import { grad, jit, lax, np, vmap, type Array } from "../src/index.js";
import { setCpuCompile } from "../src/core/run-ir.js";
import { expectClose, sliceAt, stackAt } from "./gen/check.js";
import { f64, i32 } from "./gen/programs.js";

const zeros = (shape: number[]) => np.zeros(shape, { dtype: "float64" });
const exact = { rtol: 1e-12, atol: 1e-14 };

/** Runs f with the compiler on (the default), returning its result. */
const compiled = <T>(f: () => T): T => {
  const prev = setCpuCompile(true);
  try {
    return f();
  } finally {
    setCpuCompile(prev);
  }
};
const interpreted = <T>(f: () => T): T => {
  const prev = setCpuCompile(false);
  try {
    return f();
  } finally {
    setCpuCompile(prev);
  }
};

describe("transforms through the CPU compiler", () => {
  it("grad, vmap and jit of a scan rollout agree with the interpreter and the unrolled loop", () => {
    const xs = f64([0.1, -0.4, 0.7, 0.2], [4, 1]);
    const body = (c: Array, x: Array): [Array, Array] => [
      np.add(np.mul(0.9, c), np.sin(np.mul(c, x))),
      np.sum(np.square(c)),
    ];
    const L = (c: Array) => {
      const [cT, ys] = lax.scan(body, c, xs, { checkpoint: true });
      return np.add(np.sum(ys), np.sum(cT));
    };
    const Lloop = (c: Array) => {
      let s = c,
        acc = np.zeros([], { dtype: "float64" });
      for (let t = 0; t < 4; t++) {
        const [c2, y] = body(s, sliceAt(xs, 0, t));
        s = c2;
        acc = np.add(acc, y);
      }
      return np.add(acc, np.sum(s));
    };
    const c0s = f64([0.5, -1, 2, 0.3, 0.8, -0.2], [3, 2]);
    const got = compiled(() => jit(vmap(grad(L)))(c0s));
    expectClose(
      got,
      interpreted(() => jit(vmap(grad(L)))(c0s)),
      exact,
      "compiled vs interpreted",
    );
    expectClose(
      got,
      stackAt(
        [0, 1, 2].map((i) => grad(Lloop)(sliceAt(c0s, 0, i))),
        0,
      ),
      { rtol: 1e-10 },
      "vs unrolled loop",
    );
  });
});

describe("CPU-compiler regressions (src/core/compile)", () => {
  // vmap(grad) through a scan whose body gathers from the carry and scatters into the step
  // input: the compiled transposed body (a batched gather → scatter_add with flattened,
  // offset indices) returns wrong values silently; the interpreter is right.
  it("vmap(grad(scan with take + scatterAdd)) gives the loop's per-example gradients when compiled", () => {
    const xs = f64([1, 2], [1, 2]);
    const body = (c: Array, x: Array): [Array, Array] => [
      c,
      np.square(np.scatterAdd(x, i32([0, 0, 1], [3, 1]), np.take(c, i32([0, 1, 1], [3, 1]), 0))),
    ];
    const L = (c: Array) => np.sum(lax.scan(body, c, xs)[1]);
    const c0s = f64([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [3, 2]);
    const ref = stackAt(
      [0, 1, 2].map((i) => grad(L)(sliceAt(c0s, 0, i))),
      0,
    );
    expectClose(
      interpreted(() => vmap(grad(L))(c0s)),
      ref,
      exact,
      "interpreted (passes)",
    );
    expectClose(
      compiled(() => vmap(grad(L))(c0s)),
      ref,
      exact,
      "compiled",
    ); // was [[34.8, 0], [0, 0], [0, 0]]
  });

  // scatter_add whose updates are a reshape of another scatter_add: the generated kernel reads
  // an undefined buffer (the aliased updates got no kernel).
  it("jit of scatterAdd(…, reshape(scatterAdd(…))) runs", () => {
    const f = (u: Array) =>
      np.scatterAdd(zeros([1, 2]), i32([0], [1]), np.reshape(np.scatterAdd(zeros([2]), i32([1], [1]), u), [1, 2]));
    const u = f64([5], [1]);
    expectClose(
      compiled(() => jit(f)(u)),
      f(u),
      exact,
      "jit vs eager",
    ); // eager [[0, 5]]
  });

  // scatter_add with computed indices and reshaped updates (aliased updates).
  it("jit of scatterAdd(zeros, indices + 1, reshape(updates)) runs", () => {
    const f = (b: Array, u: Array) => np.scatterAdd(zeros([6]), np.add(b, 1), np.reshape(u, [3, 3]));
    const b = i32([0, 1, 1, 0, 1, 1, 0, 1, 1], [3, 3]),
      u = f64([1, 2, 3, 4, 5, 6, 7, 8, 9], [9]);
    expectClose(
      compiled(() => jit(f)(b, u)),
      f(b, u),
      exact,
      "jit vs eager",
    ); // eager [0, 12, 33, 0, 0, 0]
  });

  // scatter_add into a reshaped target with reshaped indices and updates (aliases everywhere).
  it("jit of scatterAdd(reshape(x), reshape(indices), reshape(updates)) runs", () => {
    const f = (x: Array, a: Array, b: Array) =>
      np.scatterAdd(np.reshape(x, [6]), np.reshape(a, [3, 1]), np.reshape(b, [3, 1]), 0);
    const x = f64([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [3, 2]),
      a = i32([0, 0, 1], [3]),
      b = f64([1, 2, 3], [3]);
    expectClose(
      compiled(() => jit(f)(x, a, b)),
      f(x, a, b),
      exact,
      "jit vs eager",
    );
  });

  it("the interpreter runs all of the above correctly (so the bugs are in the compiler)", () => {
    const u = f64([5], [1]);
    const f = (v: Array) =>
      np.scatterAdd(zeros([1, 2]), i32([0], [1]), np.reshape(np.scatterAdd(zeros([2]), i32([1], [1]), v), [1, 2]));
    expect(interpreted(() => jit(f)(u)).toList()).toEqual([[0, 5]]);
  });
});
