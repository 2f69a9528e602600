/** Shared helpers for the optimizer tests: float64 arrays, plain-JS readback, tolerance checks. */
import { expect } from "vitest";
import { np, type Array } from "../src/index.js";

export const f64 = (x: number | readonly number[] | readonly (readonly number[])[]): Array =>
  np.array(x as never, { dtype: "float64" });

export const nums = (x: Array): number[] => globalThis.Array.from(x.dataSync(), Number);

/** |a − b| ≤ tol·max(1, |b|) elementwise, with a message naming the index. */
export function expectClose(actual: readonly number[], expected: readonly number[], tol: number, what = ""): void {
  expect(actual.length, `${what} length`).toBe(expected.length);
  actual.forEach((a, i) => {
    const e = expected[i]!;
    const err = Math.abs(a - e) / Math.max(1, Math.abs(e));
    if (!(err <= tol))
      throw new Error(`${what}[${i}]: got ${a}, expected ${e} (relative error ${err.toExponential(2)} > ${tol})`);
  });
}

/** Plain-JS vector helpers for the reference implementations. */
export const vec = {
  dot: (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0),
  add: (a: readonly number[], b: readonly number[]) => a.map((x, i) => x + b[i]!),
  sub: (a: readonly number[], b: readonly number[]) => a.map((x, i) => x - b[i]!),
  scale: (a: readonly number[], k: number) => a.map((x) => x * k),
  norm: (a: readonly number[]) => Math.sqrt(a.reduce((s, x) => s + x * x, 0)),
};
