/**
 * Batched small-vector and 3×3 matrix helpers over the last axes of arrays: vectors are
 * [..., 3], matrices [..., 3, 3] stored row-major. Everything is written with `np`, so it is
 * differentiable, vmappable and jittable; no JS branches on values.
 */
import type { Array, ArrayLike } from "../../core/array.js";
import { np } from "../../core/np/index.js";

/** a·b over the last axis (keepdims: [..., 1]). */
export const dot = (a: ArrayLike, b: ArrayLike, keepdims = false): Array => np.sum(np.mul(a, b), -1, { keepdims });
export const cross = (a: ArrayLike, b: ArrayLike): Array => np.cross(a, b);
/** |a|² over the last axis. */
export const squaredNorm = (a: ArrayLike, keepdims = false): Array => np.sum(np.square(a), -1, { keepdims });
/** |a| over the last axis. Not differentiable at 0; use `smoothNorm` where a may vanish. */
export const norm = (a: ArrayLike, keepdims = false): Array => np.sqrt(squaredNorm(a, keepdims));
/** √(|a|² + ε²): a norm with a finite gradient at 0 (a smooth stand-in where a may vanish). */
export const smoothNorm = (a: ArrayLike, eps: number, keepdims = false): Array =>
  np.sqrt(np.add(squaredNorm(a, keepdims), eps * eps));

/** The k slices of x along `axis`, with that axis removed: rows(M, -2) gives the rows of [..., k, n]. */
export function unstack(x: Array, axis: number): Array[] {
  const ax = axis < 0 ? axis + x.ndim : axis;
  return np.split(x, x.shape[ax]!, ax).map((p) => np.squeeze(p, ax));
}
/** x, y, z components of [..., 3]. */
export const components = (v: Array): [Array, Array, Array] => unstack(v, -1) as [Array, Array, Array];

/** Batched matrix product on the last two axes. */
export const matmul = (a: ArrayLike, b: ArrayLike): Array => np.matmul(a, b);
/** Swap the last two axes (batched transpose). */
export const mT = (a: Array): Array => np.swapaxes(a, -1, -2);
/** Batched matrix–vector product: [..., n, m] · [..., m] → [..., n]. */
export const matvec = (m: ArrayLike, v: ArrayLike): Array => np.sum(np.mul(m, np.expandDims(v, -2)), -1);

/**
 * det M and the columns of cof(M) = ∂det(M)/∂M, for 3×3 matrices given by their columns
 * c0, c1, c2: cof(M) has columns (c1×c2, c2×c0, c0×c1) and det M = c0·(c1×c2).
 */
export function detAndCofactorColumns(c0: Array, c1: Array, c2: Array): { det: Array; cof: [Array, Array, Array] } {
  const k0 = cross(c1, c2),
    k1 = cross(c2, c0),
    k2 = cross(c0, c1);
  return { det: dot(c0, k0), cof: [k0, k1, k2] };
}

/** det of [..., 3, 3]. */
export function det3(m: Array): Array {
  const [r0, r1, r2] = unstack(m, -2) as [Array, Array, Array];
  return dot(r0, cross(r1, r2));
}

/** Inverse of [..., 3, 3] via the adjugate (rows of M⁻¹ are cross products of columns / det). */
export function inv3(m: Array): Array {
  // For M with rows r0, r1, r2: M⁻¹ has columns (r1×r2, r2×r0, r0×r1) / det.
  const [r0, r1, r2] = unstack(m, -2) as [Array, Array, Array];
  const c0 = cross(r1, r2),
    c1 = cross(r2, r0),
    c2 = cross(r0, r1);
  const det = np.expandDims(dot(r0, c0), [-1, -2]);
  return np.div(np.stack([c0, c1, c2], -1), det);
}

/** Skew-symmetric cross-product matrix [w]× of [..., 3] → [..., 3, 3] (so [w]× v = w × v). */
export function skew(w: Array): Array {
  const [x, y, z] = components(w);
  const zero = np.zerosLike(x);
  return np.stack(
    [np.stack([zero, np.neg(z), y], -1), np.stack([z, zero, np.neg(x)], -1), np.stack([np.neg(y), x, zero], -1)],
    -2,
  );
}

/** Smooth hinge h_δ(z) = ½(z + √(z² + δ²)) ≈ max(z, 0), C∞, with h' ∈ (0, 1). */
export const smoothRelu = (z: ArrayLike, delta: ArrayLike): Array =>
  np.mul(0.5, np.add(z, np.sqrt(np.add(np.square(z), np.square(delta)))));
/** h_δ'(z) = ½(1 + z/√(z² + δ²)): a smooth step from 0 to 1 of width ~δ. */
export const smoothStep = (z: ArrayLike, delta: ArrayLike): Array =>
  np.mul(0.5, np.add(1, np.div(z, np.sqrt(np.add(np.square(z), np.square(delta))))));
