/**
 * The compiled CPU scan loop (src/transforms/scan.ts: scanOnCpu) runs its body's kernels on each
 * step's slices of the stacked xs and ys in place (offsets into the arrays), alternates two reused
 * carry buffers and hands out the stacked outputs as views of one allocation. Each case compares
 * it with the same scan run step by step through the interpreter, exactly.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jit, lax, np, type Array } from "../src/index.js";
import { setCpuCompile } from "../src/core/run-ir.js";
import { f64 } from "../property-tests/gen/programs.js";

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
const values = (xs: readonly Array[]) => xs.map((x) => ({ shape: x.shape, dtype: x.dtype, data: [...x.dataSync()] }));
const hits = np.array([0, 5, 0], { dtype: "int32" });
const ramp = (n: number, shape: number[], scale: number) =>
  f64(
    globalThis.Array.from({ length: n }, (_, i) => Math.sin(i * scale)),
    shape,
  );

/**
 * A body with a small and a large carry, x passed through as a y and into a carry, a carry
 * passed through unchanged, a scatter into x's slice, and int32 / bool outputs beside float64.
 */
function rollout(T: number, small: number, large: number, reverse: boolean, scale: Array | number = 1): Array[] {
  const xsSmall = ramp(T * small, [T, small], 0.7),
    xsLarge = ramp(T * large, [T, large], 0.3);
  const init = {
    a: np.mul(ramp(small, [small], 1.1), scale),
    b: ramp(large, [large], 0.9),
    kept: f64([2, 3], [2]),
    seen: np.zeros([small], { dtype: "float64" }),
  };
  type C = typeof init;
  const body = (c: C, x: { s: Array; l: Array }): [C, Array[]] => {
    const a = np.add(np.mul(0.5, np.flip(c.a)), np.sin(x.s)); // reads other positions of the carry it replaces
    const b = np.sub(np.mul(c.b, 0.9), np.mul(np.sum(a), np.cos(x.l)));
    return [
      { a, b, kept: c.kept, seen: x.s },
      [
        x.s,
        np.mul(b, 2),
        np.sum(b),
        np.astype(np.floor(np.mul(a, 10)), "int32"),
        np.greater(x.l, 0),
        np.scatterAdd(x.l, hits, np.take(a, [0, 0, 0])),
      ],
    ];
  };
  const [c, ys] = lax.scan(body, init, { s: xsSmall, l: xsLarge }, { reverse });
  return [c.a, c.b, c.kept, c.seen, ...ys];
}

describe("compiled CPU scan loop", () => {
  it("equals the interpreted loop for small and large operands, forwards and reversed", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(1, 3, 64, 65),
        fc.constantFrom(64, 65, 200),
        fc.boolean(),
        (T, small, large, reverse) => {
          expect(values(compiled(() => rollout(T, small, large, reverse)))).toEqual(
            values(interpreted(() => rollout(T, small, large, reverse))),
          );
        },
      ),
      { numRuns: 24 },
    );
  });

  it("arrays a scan returns stay intact when the same compiled body runs again", () => {
    // Under jit the scan keeps one body, so the second call reuses the first one's loop buffers.
    const run = jit((scale: Array) => rollout(4, 3, 100, false, scale));
    const first = compiled(() => run(f64([1], [])));
    const expected = values(first);
    compiled(() => run(f64([2], [])));
    expect(values(first)).toEqual(expected);
  });
});
