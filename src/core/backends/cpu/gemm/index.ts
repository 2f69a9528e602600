/**
 * Float32 GEMM for the CPU backend: C[b] = A[b] · B[b], deterministic (each element is the
 * sequential float32 sum over k), via the WebAssembly SIMD kernel when the host supports it and
 * the product is big enough to amortise packing, else the bit-identical plain-JS kernel.
 */
import { gemmJs } from "./js-gemm.js";
import { denseOf, isGathered, type GatheredMatrix, type GemmDims, type StridedMatrices } from "./strided.js";
import { createWasmGemm, type WasmGemmFn } from "./wasm-gemm.js";

export type { GatheredMatrix, GemmDims, StridedMatrices } from "./strided.js";

/** "auto": wasm when available and worthwhile; "js"/"wasm" force a path (tests, benchmarks). */
export type GemmPath = "auto" | "js" | "wasm";

/**
 * Below this many multiply-adds per matrix the JS loop wins (packing + call overhead dominate; measured crossover ≈
 * 512).
 */
const WASM_MIN_MACS = 1024;

let wasm: WasmGemmFn | null | undefined; // undefined: not tried yet
let path: GemmPath = "auto";

function wasmGemm(): WasmGemmFn | null {
  if (wasm === undefined) {
    try {
      wasm = createWasmGemm();
    } catch {
      wasm = null;
    } // e.g. a CSP forbidding wasm compilation
  }
  return wasm;
}

export const wasmGemmAvailable = (): boolean => wasmGemm() !== null;

/** Forces a path; returns the previous one. "wasm" throws where the SIMD kernel is unavailable. */
export function setGemmPath(p: GemmPath): GemmPath {
  if (p === "wasm" && !wasmGemm()) throw new Error("gemm: WebAssembly SIMD is not available on this host.");
  const prev = path;
  path = p;
  return prev;
}

/** Returns the contiguous [batch, m, n] float32 product (a gathered B: batch 1). */
export function gemmF32(
  a: StridedMatrices,
  b: StridedMatrices | GatheredMatrix,
  dims: GemmDims,
  out = new Float32Array(dims.batch * dims.m * dims.n),
): Float32Array {
  if (isGathered(b) && (dims.batch !== 1 || b.rowOffsets.length !== dims.k || b.colOffsets.length !== dims.n))
    throw new Error(
      `gemm: a gathered B is one ${b.rowOffsets.length}×${b.colOffsets.length} matrix, ` +
        `not [${dims.batch}, ${dims.k}, ${dims.n}].`,
    );
  const w = path === "js" ? null : wasmGemm();
  // Matrix-vector shapes use each packed element once, so packing cannot pay off: JS is faster there.
  const worth = dims.m * dims.k * dims.n >= WASM_MIN_MACS && dims.m > 1 && dims.n > 1;
  const big = path === "wasm" || worth;
  if (!(w && big && w(a, b, dims, out))) gemmJs(a, isGathered(b) ? denseOf(b) : b, dims, out);
  return out;
}
