/**
 * Shared helpers of the render tests: setup A of render-anchors.md §7, pixel lookup, float64
 * finite differences and a small test mesh.
 */
import { expect } from "vitest";
import { np, type Array } from "../src/index.js";
import type * as R from "../src/render/index.js";

export const f64 = (v: unknown): Array => np.array(v, { dtype: "float64" });

/**
 * Setup A: W=H=64, c=33/64, triangle (−c,−c), (c,−c), (−c,c); the left edge x = −c passes through column 15's centres.
 */
export const C_A = 33 / 64;
export function setupA(dx = 0, dy = 0): R.ScreenFaces {
  const c = C_A;
  return {
    xy: f64([
      [
        [-c + dx, -c + dy],
        [c + dx, -c + dy],
        [-c + dx, c + dy],
      ],
    ]),
    z: f64([[2.732, 2.732, 2.732]]),
  };
}

/** Value of an [H, W] or [H, W, C] image at (row, col[, channel]). */
export function pixel(img: Array, row: number, col: number, ch = 0): number {
  const d = img.dataSync();
  const W = img.shape[1]!;
  const C = img.ndim === 3 ? img.shape[2]! : 1;
  return d[(row * W + col) * C + ch]!;
}

/** One-hot [H, W] selector of a pixel (to differentiate a single pixel with grad). */
export function onePixel(H: number, W: number, row: number, col: number): Array {
  const d = new Float64Array(H * W);
  d[row * W + col] = 1;
  return np.reshape(np.array(d, { dtype: "float64" }), [H, W]);
}

export const maxAbsDiff = (a: Array, b: Array): number => {
  expect(a.shape).toEqual(b.shape);
  const x = a.dataSync(),
    y = b.dataSync();
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]! - y[i]!));
  return m;
};

/** Deterministic pseudo-random numbers in [−1, 1). */
export function pseudoRandom(n: number, seed = 1): Float64Array {
  let s = seed >>> 0 || 1;
  return Float64Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}
export const randomLike = (x: Array, seed: number): Array =>
  np.reshape(np.array(pseudoRandom(x.size, seed), { dtype: "float64" }), [...x.shape]);

/** Central difference of a scalar function along direction d. */
export function centralDifference(loss: (t: Array) => Array, theta: Array, d: Array, eps = 1e-6): number {
  return (loss(np.add(theta, np.mul(d, eps))).item() - loss(np.sub(theta, np.mul(d, eps))).item()) / (2 * eps);
}

/**
 * Check ⟨∇L, d⟩ against central differences for a few random directions d.
 * Returns the relative errors (|fd − ad| / max(|fd|, scale)).
 */
export function directionalErrors(
  loss: (t: Array) => Array,
  grad: Array,
  theta: Array,
  seeds: readonly number[],
  eps = 1e-6,
): { ad: number; fd: number; rel: number }[] {
  return seeds.map((s) => {
    const d = randomLike(theta, s);
    const ad = np.sum(np.mul(grad, d)).item();
    const fd = centralDifference(loss, theta, d, eps);
    return { ad, fd, rel: Math.abs(ad - fd) / Math.max(Math.abs(fd), 1e-3) };
  });
}

/** A small generic scene: one tilted triangle pair in front of a default SoftRas camera. */
export function smallMesh(): R.Mesh {
  return {
    vertices: f64([
      [-0.7, -0.5, 0.1],
      [0.6, -0.6, -0.2],
      [-0.2, 0.7, 0.0],
      [0.75, 0.55, 0.3],
    ]),
    faces: np.array(
      [
        [0, 2, 1],
        [1, 2, 3],
      ],
      { dtype: "int32" },
    ),
    colors: f64([
      [0.9, 0.2, 0.1],
      [0.1, 0.8, 0.2],
      [0.2, 0.3, 0.9],
      [0.8, 0.8, 0.1],
    ]),
  };
}
