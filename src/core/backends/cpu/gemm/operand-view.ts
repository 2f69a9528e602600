/**
 * Views a row-major dot_general operand as strided [batch][row][col] matrices without copying,
 * when each group of axes walks memory as one arithmetic progression (e.g. an operand already
 * in [B,M,K] order, or transposed [K,M], or with a leading batch axis anywhere contiguous).
 * Only when some group is interleaved must the caller transpose the data first.
 */
import type { StridedMatrices } from "./strided.js";

export function rowMajorStrides(shape: readonly number[]): number[] {
  const st = new globalThis.Array<number>(shape.length);
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    st[d] = acc;
    acc *= shape[d]!;
  }
  return st;
}

/**
 * The stride stepping through the flattened index of `dims` (listed order, last fastest), or
 * null when they do not form one progression. Size-1 axes are skipped: their index is always 0.
 */
export function mergedStride(
  shape: readonly number[],
  strides: readonly number[],
  dims: readonly number[],
): number | null {
  let stride = 0,
    next: number | null = null; // `next`: stride the next-slower axis must have
  for (let i = dims.length - 1; i >= 0; i--) {
    const d = dims[i]!;
    if (shape[d] === 1) continue;
    if (next === null) stride = strides[d]!;
    else if (strides[d] !== next) return null;
    next = strides[d]! * shape[d]!;
  }
  return stride;
}

/** The operand as [batch dims][row dims][col dims] matrices, or null if a group needs a transpose. */
export function stridedView(
  data: Float32Array,
  shape: readonly number[],
  batch: readonly number[],
  rows: readonly number[],
  cols: readonly number[],
): StridedMatrices | null {
  const st = rowMajorStrides(shape);
  const batchStride = mergedStride(shape, st, batch),
    rowStride = mergedStride(shape, st, rows),
    colStride = mergedStride(shape, st, cols);
  if (batchStride === null || rowStride === null || colStride === null) return null;
  return { data, offset: 0, batchStride, rowStride, colStride };
}
