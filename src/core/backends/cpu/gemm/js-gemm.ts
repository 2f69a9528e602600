/**
 * Plain-JS float32 GEMM: the fallback when WebAssembly SIMD is unavailable, and the path for
 * products too small to amortise the wasm packing.
 *
 * Bit-identical to the wasm kernel: every C element is the sequential sum over k in increasing
 * order, each product rounded to float32 (Math.fround; exact before rounding since 24+24 bits
 * fit a double) and each add rounded to float32 by the Float32Array store (a double add of two
 * float32 values rounded once more to float32 equals the float32 add: 53 ≥ 2·24+2 bits, so the
 * double rounding is innocuous). No zero-skipping, so 0·Inf = NaN propagates as in IEEE.
 *
 * Blocking: i-k-j order over a KC×NC block of B (128 KB, L2-resident) so the inner loop streams
 * one contiguous B row into C row segments, four C rows at a time.
 */
import type { GemmDims, StridedMatrices } from "./strided.js";

const KC = 128,
  NC = 256;

export function gemmJs(
  a: StridedMatrices,
  b: StridedMatrices,
  { batch, m, k: K, n }: GemmDims,
  out: Float32Array,
): void {
  out.fill(0, 0, batch * m * n);
  const ad = a.data,
    sam = a.rowStride,
    sak = a.colStride;
  for (let bb = 0; bb < batch; bb++) {
    // The inner loop wants unit-stride B rows: copy B when its columns are strided (transposed B).
    let bd = b.data,
      bOff = b.offset + bb * b.batchStride,
      sbk = b.rowStride;
    if (b.colStride !== 1 && n > 1) {
      const copy = new Float32Array(K * n);
      for (let kk = 0; kk < K; kk++)
        for (let j = 0; j < n; j++) copy[kk * n + j] = bd[bOff + kk * sbk + j * b.colStride]!;
      bd = copy;
      bOff = 0;
      sbk = n;
    }
    const aOff = a.offset + bb * a.batchStride,
      cBase = bb * m * n;
    for (let j0 = 0; j0 < n; j0 += NC) {
      const j1 = Math.min(n, j0 + NC);
      for (let k0 = 0; k0 < K; k0 += KC) {
        const k1 = Math.min(K, k0 + KC);
        let i = 0;
        // Four C rows per pass share each B element load; per-element k order is unchanged.
        for (; i + 4 <= m; i += 4) {
          const c0 = cBase + i * n,
            c1 = c0 + n,
            c2 = c1 + n,
            c3 = c2 + n,
            a0 = aOff + i * sam;
          for (let kk = k0; kk < k1; kk++) {
            const ak = a0 + kk * sak;
            const v0 = ad[ak]!,
              v1 = ad[ak + sam]!,
              v2 = ad[ak + 2 * sam]!,
              v3 = ad[ak + 3 * sam]!;
            const bRow = bOff + kk * sbk;
            for (let j = j0; j < j1; j++) {
              const bv = bd[bRow + j]!;
              out[c0 + j] += Math.fround(v0 * bv);
              out[c1 + j] += Math.fround(v1 * bv);
              out[c2 + j] += Math.fround(v2 * bv);
              out[c3 + j] += Math.fround(v3 * bv);
            }
          }
        }
        for (; i < m; i++) {
          const cRow = cBase + i * n,
            aRow = aOff + i * sam;
          for (let kk = k0; kk < k1; kk++) {
            const av = ad[aRow + kk * sak]!;
            const bRow = bOff + kk * sbk;
            for (let j = j0; j < j1; j++) out[cRow + j] += Math.fround(av * bd[bRow + j]!);
          }
        }
      }
    }
  }
}
