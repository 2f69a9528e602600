/**
 * Bad input gives a clear Error naming the operation, the shapes/dtypes/values involved and
 * the fix. Assertions are on message content, not just on throwing.
 */
import { describe, expect, it } from "vitest";
import * as lax from "../src/core/prims/index.js";
import {
  customVjp,
  grad,
  init,
  jit,
  jvp,
  lax as control,
  nn,
  np,
  random,
  vjp,
  vmap,
  type Array,
} from "../src/index.js";

/** The message of the error `f` throws (fails the test when nothing is thrown). */
function messageOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(Error);
    return (e as Error).message;
  }
  throw new Error("expected an error, but the call returned normally");
}

describe("shape and dtype mismatches", () => {
  it("broadcasting failure names the op and both shapes", () => {
    const m = messageOf(() => np.add(np.ones([2, 3]), np.ones([4])));
    expect(m).toMatch(/^add:/);
    expect(m).toContain("[2,3]");
    expect(m).toContain("[4]");
    expect(m).toMatch(/broadcast/);
  });
  it("Array methods report the same way", () => {
    const m = messageOf(() => np.ones([2, 3]).mul(np.ones([3, 2])));
    expect(m).toMatch(/^mul:.*\[2,3\].*\[3,2\]/);
  });
  it("lax-level dtype mismatch names both dtypes and how to convert", () => {
    const m = messageOf(() => lax.add(np.ones([2, 3]), np.ones([2, 3], { dtype: "float64" })));
    expect(m).toMatch(/^add:/);
    expect(m).toContain("f32[2,3]");
    expect(m).toContain("f64[2,3]");
    expect(m).toContain("astype");
  });
  it("matmul inner dimensions", () => {
    const m = messageOf(() => np.matmul(np.ones([2, 3]), np.ones([2, 2])));
    expect(m).toMatch(/^matmul:/);
    expect(m).toContain("f32[2,3]");
    expect(m).toContain("f32[2,2]");
    expect(m).toContain("3 vs 2");
  });
  it("reshape to a different size", () => {
    const m = messageOf(() => np.ones([2, 3]).reshape([4]));
    expect(m).toMatch(/^reshape:.*f32\[2,3\].*size 6.*\[4\].*size 4/);
  });
  it("concatenate with mismatched dims", () => {
    const m = messageOf(() => np.concatenate([np.ones([2, 3]), np.ones([2, 2])], 0));
    expect(m).toMatch(/^concatenate:.*f32\[2,3\].*f32\[2,2\].*axis 0/);
  });
  it("conv2d with different channel counts", () => {
    const m = messageOf(() => nn.conv2d(np.ones([1, 2, 4, 4]), np.ones([1, 3, 2, 2])));
    expect(m).toMatch(/^conv2d:/);
    expect(m).toContain("C=2");
    expect(m).toContain("C=3");
  });
  it("scatterAdd with updates of the wrong shape", () => {
    const m = messageOf(() => np.scatterAdd(np.zeros([3]), np.array([0, 1], { dtype: "int32" }), np.ones([3])));
    expect(m).toMatch(/^scatterAdd:.*f32\[3\].*\[2\]/);
  });
  it("float-only math on integers", () => {
    const m = messageOf(() => lax.log(np.array([1], { dtype: "int32" })));
    expect(m).toMatch(/^log:.*i32\[1\].*astype/);
  });
  it("unknown dtype", () => {
    const m = messageOf(() => np.zeros([2], { dtype: "float16" as never }));
    expect(m).toContain("float16");
    expect(m).toContain("float32");
  });
});

describe("axes", () => {
  it.each([
    ["sum", () => np.sum(np.ones([2, 3]), 5)],
    ["max", () => np.max(np.ones([2, 3]), -3)],
    ["cumsum", () => np.cumsum(np.ones([2, 3]), 2)],
    ["argmax", () => np.argmax(np.ones([2, 3]), 2)],
    ["transpose", () => np.transpose(np.ones([2, 3]), [0, 2])],
  ] as const)("%s: out-of-range axis names the op, the axis, the rank and the valid range", (op, f) => {
    const m = messageOf(f);
    expect(m.startsWith(`${op}:`)).toBe(true);
    expect(m).toMatch(/axis -?\d+ is out of range for an array of rank 2 \(valid: -2\.\.1\)/);
  });
  it("vmap inAxes out of range", () => {
    const m = messageOf(() => vmap((a: Array) => a, { inAxes: 2 })(np.ones([2])));
    expect(m).toMatch(/^vmap.*axis 2.*rank 1/);
  });
});

describe("differentiation errors", () => {
  it("integer input to grad names the argument, its dtype and the fix", () => {
    const m = messageOf(() => grad((a: Array) => np.sum(a))(np.array([1, 2], { dtype: "int32" })));
    expect(m).toMatch(/^grad:/);
    expect(m).toContain("argument 0");
    expect(m).toContain("i32[2]");
    expect(m).toContain("astype");
  });
  it("non-scalar output of grad names the output's shape and suggests a reduction", () => {
    const m = messageOf(() => grad((a: Array) => a.mul(2))(np.array([1, 2])));
    expect(m).toMatch(/^grad:/);
    expect(m).toContain("f32[2]");
    expect(m).toMatch(/np\.sum|vjp|jacrev/);
  });
  it("argnums out of range", () => {
    expect(messageOf(() => grad((a: Array) => np.sum(a), { argnums: 3 })(np.ones([2])))).toMatch(
      /^grad: argnums 3 is out of range for a call with 1 argument/,
    );
  });
  it("vjp cotangent of the wrong shape", () => {
    const m = messageOf(() => vjp((a: Array) => a.mul(2), np.array([1, 2]))[1](np.ones([3])));
    expect(m).toMatch(/^vjp: cotangent 0 has shape \[3\] but the output has shape \[2\]/);
  });
  it("jvp tangent of the wrong shape", () => {
    const m = messageOf(() => jvp((a: Array) => a, [np.ones([2])], [np.ones([3])]));
    expect(m).toMatch(/^jvp:.*\[3\].*f32\[2\]/);
  });
  it("whileLoop under reverse mode points to scan", () => {
    const m = messageOf(() =>
      grad((a: Array) =>
        control.whileLoop(
          (c: Array) => c.less(10),
          (c: Array) => c.mul(2),
          a,
        ),
      )(np.array(1)),
    );
    expect(m).toContain("whileLoop");
    expect(m).toContain("lax.scan");
  });
  it("customVjp under forward mode says to use reverse mode", () => {
    const f = customVjp(
      (x: Array) => x.mul(2),
      (x: Array) => [x.mul(2), null],
      (_res: unknown, g: Array) => [g.mul(2)],
    );
    const m = messageOf(() => jvp(f, [np.ones([1])], [np.ones([1])]));
    expect(m).toMatch(/^customVjp: forward-mode .* not supported; use reverse mode/);
  });
});

describe("leaked tracers", () => {
  it("a tracer stored during grad and used afterwards names its aval, the transform and the fix", () => {
    let leaked: Array | null = null;
    grad((a: Array) => {
      leaked = a;
      return np.sum(a);
    })(np.array([1, 2]));
    const m = messageOf(() => leaked!.add(1));
    expect(m).toContain("leaked tracer");
    expect(m).toContain("f32[2]");
    expect(m).toMatch(/after that transform finished/);
    expect(m).toMatch(/Return values from the transformed function/);
  });
  it("a tracer leaked from jit cannot be used either", () => {
    let leaked: Array | null = null;
    jit((a: Array) => {
      leaked = a.mul(2);
      return a;
    })(np.array([1, 2]));
    expect(messageOf(() => np.sum(leaked!))).toContain("leaked tracer");
  });
  it("reading a traced value inside jit explains why", () => {
    const m = messageOf(() =>
      jit((a: Array) => {
        a.dataSync();
        return a;
      })(np.array([1])),
    );
    expect(m).toMatch(/cannot read the values of a traced f32\[1\] array inside jit/);
  });
});

describe("backends", () => {
  it("unknown backend names it and lists the valid ones", async () => {
    await expect(init({ backend: "tpu" as never })).rejects.toThrow(
      /^init: unknown backend "tpu"; use "cpu", "webgpu" or "auto"/,
    );
  });
});

describe("invalid sizes and arguments (these used to return garbage or fail with a bare RangeError)", () => {
  it("np.eye with a negative or fractional size", () => {
    expect(messageOf(() => np.eye(-1))).toMatch(/^np\.eye: sizes must be non-negative integers, got n=-1/);
    expect(messageOf(() => np.eye(2.5))).toMatch(/^np\.eye: sizes must be non-negative integers/);
  });
  it("np.arange with non-finite bounds", () => {
    expect(messageOf(() => np.arange(NaN))).toMatch(
      /^np\.arange: start and stop must be finite numbers, got 0 and NaN/,
    );
    expect(messageOf(() => np.arange(0, Infinity))).toMatch(/^np\.arange: .*Infinity/);
  });
  it("np.tile with negative reps", () => {
    expect(messageOf(() => np.tile(np.ones([2]), -1))).toMatch(/^tile: reps must be non-negative integers, got -1/);
  });
  it("np.transpose with a perm that does not cover every axis", () => {
    expect(messageOf(() => np.transpose(np.ones([2, 3]), [0]))).toMatch(
      /^transpose: perm \[0\] is not a permutation of the 2 axes of f32\[2,3\]/,
    );
    expect(messageOf(() => np.transpose(np.ones([2, 3]), [1, -1]))).toMatch(
      /^transpose: perm \[1,-1\] is not a permutation/,
    );
  });
  it("astype to an unknown dtype", () => {
    expect(messageOf(() => np.ones([2]).astype("float16" as never))).toMatch(/^astype: unknown dtype "float16"/);
  });
  it("maxPool2d with a window larger than the input", () => {
    expect(messageOf(() => nn.maxPool2d(np.ones([1, 1, 2, 2]), 3))).toMatch(
      /^maxPool2d: window 3x3 does not fit input f32\[1,1,2,2\]/,
    );
  });
});

describe("indices and input data", () => {
  it("out-of-range take index names the index, the axis and its size", () => {
    expect(messageOf(() => np.take(np.array([1, 2, 3]), np.array([5], { dtype: "int32" })))).toMatch(
      /^take \(gather\): index 5 is out of bounds for axis 0 with size 3/,
    );
    expect(messageOf(() => np.take(np.array([1, 2, 3]), [-4]))).toMatch(
      /index -4 is out of bounds for axis 0 with size 3/,
    );
  });
  it("float indices are refused, not rounded (Arrays and JS lists)", () => {
    expect(messageOf(() => np.take(np.array([1, 2, 3]), np.array([1.0])))).toMatch(
      /^take: indices must be int32, got f32\[1\]/,
    );
    expect(messageOf(() => np.take(np.array([1, 2, 3]), [[0, 1.5]]))).toMatch(
      /^take: indices must be integers, got \[\[0,1\.5\]\]/,
    );
  });
  it("out-of-range scatterAdd index", () => {
    expect(messageOf(() => np.scatterAdd(np.zeros([2]), np.array([2], { dtype: "int32" }), np.ones([1])))).toMatch(
      /^scatterAdd: index 2 is out of bounds for axis 0 with size 2/,
    );
  });
  it("ragged np.array input names the position", () => {
    expect(messageOf(() => np.array([[1, 2], [3]]))).toMatch(
      /^np\.array: ragged nested array at \[1\]: expected length 2, got 1/,
    );
    expect(messageOf(() => np.array([1, [2, 3]] as never))).toMatch(
      /^np\.array: element at \[1\] is a nested array \(ragged input\)/,
    );
  });
  it("non-numeric np.array elements", () => {
    expect(messageOf(() => np.array(["a"] as never))).toMatch(/^np\.array: element at \[0\] is string/);
  });
  it("random functions check their key", () => {
    expect(messageOf(() => random.uniform(np.ones([2]), [2]))).toMatch(
      /^random\.uniform: expected a key .*got f32\[2\]/,
    );
  });
  it("item() of a non-scalar", () => {
    expect(messageOf(() => np.ones([2, 3]).item())).toMatch(/^item: array has shape \[2,3\]/);
  });
});
