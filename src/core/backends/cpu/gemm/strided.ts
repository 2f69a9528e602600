/**
 * How the GEMM sees an operand: a batch of matrices inside a flat array, element (b, i, j) at
 * offset + b·batchStride + i·rowStride + j·colStride. Arbitrary strides let dot_general hand
 * over operands that are already [B,M,K] or transposed ([B,K,M]) without copying them first;
 * the kernels pack what they read anyway.
 */
export interface StridedMatrices {
  readonly data: Float32Array;
  readonly offset: number;
  readonly batchStride: number;
  readonly rowStride: number;
  readonly colStride: number;
}

/** Batched product sizes: C[b] (m×n) = A[b] (m×k) · B[b] (k×n), b < batch. */
export interface GemmDims {
  readonly batch: number;
  readonly m: number;
  readonly k: number;
  readonly n: number;
}

export const contiguous = (data: Float32Array, rows: number, cols: number): StridedMatrices => ({
  data,
  offset: 0,
  batchStride: rows * cols,
  rowStride: cols,
  colStride: 1,
});
