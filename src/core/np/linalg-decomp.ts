/**
 * np.linalg: solve, inv, det, slogdet, cholesky over the last two axes, batched over the leading
 * ones (numpy's conventions). Differentiable (jvp, grad), vmap-able and jit-able on the CPU
 * backend; float64 there for gradient checks. WebGPU programs using them are refused with a message.
 */
import type { Array, ArrayLike } from "../array.js";
import { isFloat } from "../dtype.js";
import * as lax from "../prims/index.js";
import { cholesky as choleskyPrim, slogdet as slogdetPrim, solve as solvePrim } from "../prims/linalg-decomp.js";
import { broadcastShapes } from "../shape.js";
import { asArray, promote } from "./convert.js";
import { eye } from "./create.js";
import { astype, exp, mul } from "./math.js";

/** Integer and bool matrices become float32 (numpy would use float64, absent on WebGPU). */
function floatMatrix(op: string, x: ArrayLike): Array {
  const a = asArray(x, op);
  const f = isFloat(a.dtype) ? a : astype(a, "float32");
  if (f.ndim < 2 || f.shape[f.ndim - 1] !== f.shape[f.ndim - 2]) {
    throw new Error(`np.linalg.${op}: expected square matrices in the last two axes ([..., n, n]), got ${f.aval}.`);
  }
  return f;
}

/**
 * Solves a·x = b for x (numpy's linalg.solve). `a` is [..., n, n]; `b` is [..., n, k], or a
 * vector [n] (then x is [..., n]). Leading axes broadcast. An exactly singular matrix is an error.
 */
export function solve(a: ArrayLike, b: ArrayLike): Array {
  let [A, B] = promote("np.linalg.solve", [floatMatrix("solve", a), b]) as [Array, Array];
  if (!isFloat(B.dtype)) B = astype(B, A.dtype);
  const n = A.shape[A.ndim - 1]!;
  const vector = B.ndim === 1;
  if (vector && B.shape[0] === n) B = lax.reshape(B, [n, 1]);
  if (B.ndim < 2 || B.shape[B.ndim - 2] !== n) {
    throw new Error(`np.linalg.solve: b must be [${n}] or [..., ${n}, k] for a ${A.aval}, got ${B.aval}.`);
  }
  const batch = broadcastShapes("np.linalg.solve (leading axes)", A.shape.slice(0, -2), B.shape.slice(0, -2));
  const x = solvePrim(lax.broadcastTo(A, [...batch, n, n]), lax.broadcastTo(B, [...batch, n, B.shape[B.ndim - 1]!]));
  return vector ? lax.reshape(x, [...batch, n]) : x;
}

/** The inverse of each matrix in the last two axes (a solve against the identity). */
export function inv(a: ArrayLike): Array {
  const A = floatMatrix("inv", a);
  const n = A.shape[A.ndim - 1]!;
  return solvePrim(A, lax.broadcastTo(eye(n, undefined, { dtype: A.dtype }), A.shape));
}

/** [sign, log|det|] of each matrix (numpy's slogdet): sign is 0 and log|det| −∞ for a singular one. */
export function slogdet(a: ArrayLike): [Array, Array] {
  return slogdetPrim(floatMatrix("slogdet", a));
}

/** The determinant of each matrix in the last two axes: sign·exp(log|det|). */
export function det(a: ArrayLike): Array {
  const [s, l] = slogdetPrim(floatMatrix("det", a));
  return mul(s, exp(l));
}

/**
 * The lower Cholesky factor L with a = L·Lᵀ (numpy's linalg.cholesky), from a's lower triangle.
 * A matrix that is not positive definite is an error.
 */
export function cholesky(a: ArrayLike): Array {
  return choleskyPrim(floatMatrix("cholesky", a));
}

/** numpy's `np.linalg` namespace. */
export const linalg = { solve, inv, det, slogdet, cholesky };
