/**
 * Dense linear algebra over the last two axes, batched over the leading ones: linalg_solve
 * (partial-pivot LU), slogdet and cholesky. The CPU impls factor in float64 (float32 operands are
 * rounded once at the end). Derivatives are written with these primitives and contractions:
 *   solve:    Ẋ = A⁻¹(Ḃ − Ȧ X)              (linear in B: transpose is a solve with Aᵀ)
 *   slogdet:  d log|det A| = tr(A⁻¹ Ȧ)
 *   cholesky: L̇ = L Φ(L⁻¹ Ȧₛ L⁻ᵀ), Ȧₛ = (Ȧ + Ȧᵀ)/2, Φ = lower triangle with the diagonal halved
 * so grad, jvp, vmap and jit compose as for any primitive. WebGPU has no kernels for them (pivoting
 * is sequential per matrix): a program using them on webgpu is refused with a message.
 */
import type { Array } from "../array.js";
import { ShapedArray } from "../aval.js";
import { scalar } from "../constants.js";
import { typedArrayFor } from "../dtype.js";
import { definePrimitive, type BDim, type Primitive } from "../primitive.js";
import { range, sizeOf } from "../shape.js";
import { isUndef, isZero, Zero } from "../tangent.js";
import { bind, bind1 } from "../trace.js";
import { host, requireFloat } from "./_helpers.js";
import { add, convert, eq, gt, mul, select, sub } from "./elementwise.js";
import { iota } from "./indexing.js";
import { dotGeneral } from "./linalg.js";
import { broadcastInDim, moveAxis, transpose } from "./movement.js";
import { reduceSum } from "./reduce.js";

type NoParams = Record<string, never>;

function squareBatch(op: string, a: ShapedArray): { batch: number[]; n: number } {
  requireFloat(op, a);
  const n = a.shape[a.ndim - 1];
  if (a.ndim < 2 || n !== a.shape[a.ndim - 2])
    throw new Error(`${op}: expected square matrices in the last two axes ([..., n, n]), got ${a}.`);
  return { batch: a.shape.slice(0, -2), n: n! };
}

/** Batched matmul over equal leading axes: [..., n, m] @ [..., m, k]. */
function bmm(x: Array, y: Array): Array {
  const nb = x.ndim - 2,
    bd = range(nb);
  return dotGeneral(x, y, { contract: [[nb + 1], [nb]], batch: [bd, bd] });
}
/** Swap the last two axes. */
export function mT(x: Array): Array {
  const p = range(x.ndim);
  [p[x.ndim - 2], p[x.ndim - 1]] = [p[x.ndim - 1]!, p[x.ndim - 2]!];
  return transpose(x, p);
}
/** Batch dim to the front, or an unbatched operand broadcast along a new front axis of size n. */
const front = (a: Array, d: BDim, n: number): Array =>
  d === null
    ? broadcastInDim(
        a,
        [n, ...a.shape],
        a.shape.map((_, k) => k + 1),
      )
    : moveAxis(a, d, 0);

// ---------------------------------------------------------------- host factorizations (float64)

/**
 * In-place LU with partial pivoting of an n×n row-major block; returns the pivot sign, or 0 when a pivot is exactly 0.
 */
function luInPlace(m: Float64Array, n: number, perm: Int32Array): number {
  let sign = 1;
  for (let i = 0; i < n; i++) perm[i] = i;
  for (let k = 0; k < n; k++) {
    let p = k,
      best = Math.abs(m[k * n + k]!);
    for (let i = k + 1; i < n; i++) {
      const v = Math.abs(m[i * n + k]!);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    if (best === 0 || Number.isNaN(best)) return 0;
    if (p !== k) {
      for (let j = 0; j < n; j++) {
        const t = m[k * n + j]!;
        m[k * n + j] = m[p * n + j]!;
        m[p * n + j] = t;
      }
      const t = perm[k]!;
      perm[k] = perm[p]!;
      perm[p] = t;
      sign = -sign;
    }
    const piv = m[k * n + k]!;
    for (let i = k + 1; i < n; i++) {
      const f = (m[i * n + k]! /= piv);
      if (f !== 0) for (let j = k + 1; j < n; j++) m[i * n + j]! -= f * m[k * n + j]!;
    }
  }
  return sign;
}

const block = (data: ArrayLike<number>, b: number, size: number): Float64Array =>
  Float64Array.from({ length: size }, (_, i) => data[b * size + i]!);

// ---------------------------------------------------------------- linalg_solve

export const linalgSolveP: Primitive<NoParams> = definePrimitive<NoParams>({
  name: "linalg_solve",
  shape: ([a, b]) => {
    const { batch, n } = squareBatch("linalg.solve", a!);
    if (b!.dtype !== a!.dtype) throw new Error(`linalg.solve: a ${a} and b ${b} have different dtypes.`);
    if (b!.ndim !== a!.ndim || b!.shape.slice(0, -2).join() !== batch.join() || b!.shape[b!.ndim - 2] !== n) {
      throw new Error(`linalg.solve: b must be [${[...batch, n, "k"]}] for a ${a}, got ${b}.`);
    }
    return [b!.strong()];
  },
  impl: ([a, b], _p, [out]) => {
    const n = a!.shape[a!.shape.length - 1]!,
      k = b!.shape[b!.shape.length - 1]!;
    const nb = sizeOf(a!.shape.slice(0, -2));
    const o = typedArrayFor(out!.dtype, out!.size);
    const perm = new Int32Array(n);
    for (let q = 0; q < nb; q++) {
      const m = block(a!.data, q, n * n);
      if (luInPlace(m, n, perm) === 0) {
        throw new Error(
          `linalg.solve: matrix ${q} of the batch (${n}×${n}) is singular (an exactly zero pivot); ` +
            `no unique solution exists. ` +
            `Regularize it (a + ε·I) or use a least-squares method.`,
        );
      }
      const rhs = block(b!.data, q, n * k);
      const x = new Float64Array(n * k);
      for (let c = 0; c < k; c++) {
        // Forward substitution with the unit lower factor on the permuted rhs, then back substitution.
        for (let i = 0; i < n; i++) {
          let s = rhs[perm[i]! * k + c]!;
          for (let j = 0; j < i; j++) s -= m[i * n + j]! * x[j * k + c]!;
          x[i * k + c] = s;
        }
        for (let i = n - 1; i >= 0; i--) {
          let s = x[i * k + c]!;
          for (let j = i + 1; j < n; j++) s -= m[i * n + j]! * x[j * k + c]!;
          x[i * k + c] = s / m[i * n + i]!;
        }
      }
      o.set(x, q * n * k);
    }
    return [host(o, out!.shape, out!.dtype)];
  },
  jvp: ([a, b], [ta, tb]) => {
    const x = solve(a!, b!);
    if (isZero(ta) && isZero(tb)) return [[x], [new Zero(x.aval.strong())]];
    let rhs: Array | null = isZero(tb) ? null : tb;
    if (!isZero(ta)) {
      const ax = bmm(ta, x);
      rhs = rhs ? sub(rhs, ax) : mul(ax, scalar(-1, ax.dtype));
    }
    return [[x], [solve(a!, rhs!)]];
  },
  transpose: ([ct], [a, b]) => {
    if (isUndef(a))
      throw new Error("internal: linalg_solve transposed in its matrix (it is linear in the right-hand side only).");
    if (!isUndef(b)) return [null, null];
    return [null, isZero(ct) ? new Zero(b.aval) : solve(mT(a), ct as Array)];
  },
  vmap: ([a, b], [da, db], _p, n) => [[solve(front(a!, da!, n), front(b!, db!, n))], [0]],
  gpu: () => {
    throw gpuRefusal("linalg.solve");
  },
  printParams: () => "",
});
/** A X = B for X, batched over leading axes: a [..., n, n], b [..., n, k] with the same leading axes. */
export const solve = (a: Array, b: Array): Array => bind1(linalgSolveP, [a, b], {});

function gpuRefusal(op: string): Error {
  return new Error(
    `${op} has no WebGPU implementation (its factorization pivots sequentially per matrix); ` +
      `compute it on the CPU: np.array(x, { backend: "cpu" }) ` +
      `for the operands, or init({ backend: "cpu" }).`,
  );
}

// ---------------------------------------------------------------- slogdet

export const slogdetP: Primitive<NoParams> = definePrimitive<NoParams>({
  name: "slogdet",
  shape: ([a]) => {
    const { batch } = squareBatch("linalg.slogdet", a!);
    return [new ShapedArray(batch, a!.dtype, false), new ShapedArray(batch, a!.dtype, false)];
  },
  impl: ([a], _p, [sOut, lOut]) => {
    const n = a!.shape[a!.shape.length - 1]!;
    const nb = sizeOf(a!.shape.slice(0, -2));
    const s = typedArrayFor(sOut!.dtype, nb),
      l = typedArrayFor(lOut!.dtype, nb);
    const perm = new Int32Array(n);
    for (let q = 0; q < nb; q++) {
      const m = block(a!.data, q, n * n);
      let sign = luInPlace(m, n, perm),
        logabs = 0;
      if (sign === 0) {
        s[q] = 0;
        l[q] = -Infinity;
        continue;
      }
      for (let i = 0; i < n; i++) {
        const d = m[i * n + i]!;
        if (d < 0) sign = -sign;
        logabs += Math.log(Math.abs(d));
      }
      s[q] = sign;
      l[q] = logabs;
    }
    return [host(s, sOut!.shape, sOut!.dtype), host(l, lOut!.shape, lOut!.dtype)];
  },
  jvp: ([a], [ta]) => {
    const [s, l] = slogdet(a!);
    if (isZero(ta))
      return [
        [s, l],
        [new Zero(s.aval), new Zero(l.aval)],
      ];
    // tr(A⁻¹ Ȧ): the diagonal of solve(A, Ȧ) summed.
    const n = a!.shape[a!.ndim - 1]!;
    const eye = convert(eq(iota("int32", [n, n], 0), iota("int32", [n, n], 1)), a!.dtype);
    return [
      [s, l],
      [new Zero(s.aval), reduceSum(mul(solve(a!, ta), eye), [a!.ndim - 2, a!.ndim - 1])],
    ];
  },
  vmap: ([a], [d]) => [slogdet(moveAxis(a!, d!, 0)), [0, 0]],
  gpu: () => {
    throw gpuRefusal("linalg.slogdet");
  },
  printParams: () => "",
});
/** [sign, log|det|] of each matrix in the last two axes (sign 0 and −∞ for a singular one). */
export const slogdet = (a: Array): [Array, Array] => bind(slogdetP, [a], {}) as [Array, Array];

// ---------------------------------------------------------------- cholesky

export const choleskyP: Primitive<NoParams> = definePrimitive<NoParams>({
  name: "cholesky",
  shape: ([a]) => {
    squareBatch("linalg.cholesky", a!);
    return [a!.strong()];
  },
  impl: ([a], _p, [out]) => {
    const n = a!.shape[a!.shape.length - 1]!;
    const nb = sizeOf(a!.shape.slice(0, -2));
    const o = typedArrayFor(out!.dtype, out!.size);
    for (let q = 0; q < nb; q++) {
      // Reads the lower triangle only (LAPACK's potrf with uplo = L).
      const m = block(a!.data, q, n * n);
      const L = new Float64Array(n * n);
      for (let j = 0; j < n; j++) {
        let d = m[j * n + j]!;
        for (let k = 0; k < j; k++) d -= L[j * n + k]! ** 2;
        if (!(d > 0)) {
          throw new Error(
            `linalg.cholesky: matrix ${q} of the batch (${n}×${n}) is not positive definite (pivot ${j} is ${d}). ` +
              `A covariance or Gram matrix near singular needs a jitter: a + ε·I.`,
          );
        }
        const ljj = Math.sqrt(d);
        L[j * n + j] = ljj;
        for (let i = j + 1; i < n; i++) {
          let s = m[i * n + j]!;
          for (let k = 0; k < j; k++) s -= L[i * n + k]! * L[j * n + k]!;
          L[i * n + j] = s / ljj;
        }
      }
      o.set(L, q * n * n);
    }
    return [host(o, out!.shape, out!.dtype)];
  },
  jvp: ([a], [ta]) => {
    const L = cholesky(a!);
    if (isZero(ta)) return [[L], [new Zero(L.aval.strong())]];
    const n = a!.shape[a!.ndim - 1]!;
    const half = scalar(0.5, a!.dtype);
    const sym = mul(add(ta, mT(ta)), half);
    const inner = solve(L, mT(solve(L, sym))); // L⁻¹ Ȧₛ L⁻ᵀ
    const i = iota("int32", [n, n], 0),
      j = iota("int32", [n, n], 1);
    const phi = select(gt(i, j), scalar(1, a!.dtype), select(eq(i, j), half, scalar(0, a!.dtype)));
    return [[L], [bmm(L, mul(inner, phi))]];
  },
  vmap: ([a], [d]) => [[cholesky(moveAxis(a!, d!, 0))], [0]],
  gpu: () => {
    throw gpuRefusal("linalg.cholesky");
  },
  printParams: () => "",
});
/** The lower Cholesky factor L (A = L Lᵀ) of each matrix in the last two axes; reads A's lower triangle. */
export const cholesky = (a: Array): Array => bind1(choleskyP, [a], {});
