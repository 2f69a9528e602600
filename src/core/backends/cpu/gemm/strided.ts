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

/**
 * A single matrix B whose element (i, j) is data[rowOffsets[i] + colOffsets[j]]: a convolution's unfolded windows
 * read in place from its (padded) images — row i a kernel tap, column j an output place — so the kernels pack them
 * straight from the images, with no unfolded copy in between.
 */
export interface GatheredMatrix {
  readonly data: Float32Array;
  readonly rowOffsets: Int32Array;
  readonly colOffsets: Int32Array;
}

export const isGathered = (b: StridedMatrices | GatheredMatrix): b is GatheredMatrix => "rowOffsets" in b;

/** A gathered matrix written out densely, [k][n]. */
export function denseOf(b: GatheredMatrix): StridedMatrices {
  const { data, rowOffsets, colOffsets } = b,
    n = colOffsets.length;
  const dense = new Float32Array(rowOffsets.length * n);
  for (let i = 0; i < rowOffsets.length; i++)
    for (let j = 0, r = rowOffsets[i]!, o = i * n; j < n; j++) dense[o + j] = data[r + colOffsets[j]!]!;
  return contiguous(dense, rowOffsets.length, n);
}
