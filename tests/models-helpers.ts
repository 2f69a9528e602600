/** Shared helpers of the models tests: float64 finite differences, deterministic pseudo-random data. */
import { np, type Array } from "../src/index.js";

/** Deterministic pseudo-random numbers in [-1, 1) (a tiny LCG, so tests need no RNG state). */
export function pseudoRandom(n: number, seed = 1): Float64Array {
  let s = seed >>> 0 || 1;
  return Float64Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}

export const f64 = (x: ArrayLike<number> | number[], shape?: number[]): Array => {
  const a = np.array(Float64Array.from(x as ArrayLike<number>), { dtype: "float64" });
  return shape ? a.reshape(shape) : a;
};

export const maxAbs = (a: Array): number => np.max(np.abs(a)).item();

/** ⟨a, b⟩ summed over all elements. */
export const inner = (a: Array, b: Array): number => np.sum(np.mul(a, b)).item();

/** Central difference of a scalar function along direction d: (L(θ+εd) − L(θ−εd)) / 2ε. */
export function centralDifference(loss: (t: Array) => Array, theta: Array, d: Array, eps = 1e-6): number {
  return (loss(np.add(theta, np.mul(d, eps))).item() - loss(np.sub(theta, np.mul(d, eps))).item()) / (2 * eps);
}

/** A random direction shaped like x (float64). */
export const directionLike = (x: Array, seed: number): Array => f64(pseudoRandom(x.size, seed), [...x.shape]);
