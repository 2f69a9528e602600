/**
 * Driver of the WebAssembly SIMD GEMM: owns the one wasm Memory, packs A and B blocks into it
 * (from any strides, so transposed operands cost nothing extra), runs the macro-kernel per
 * (K block, M block) — a big one split over the CPU threads by strips of C's columns — and copies C out.
 *
 * Memory layout (bytes, all 16-aligned): [ a threaded call's arguments (64 bytes) | C: Mp×Np | Bpack: KC×Np |
 * Apack: MC×KC ], with
 * Mp, Np = m, n rounded up to the micro-tile. Padded rows/columns are zero-filled in the packs
 * and dropped on copy-out; K is never padded, so padding cannot change any kept element.
 */
import {
  newKernelId,
  runThreaded,
  threadsSupported,
  threadWorthIt,
  type ThreadedKernel,
} from "../../../compile/threads.js";
import { buildGemmModule, GEMM_PARAMS_BYTES, type MicroTile } from "./kernel-module.js";
import { isGathered, type GatheredMatrix, type GemmDims, type StridedMatrices } from "./strided.js";

/** Writes the contiguous [batch, m, n] product; false (nothing written) when it cannot fit in wasm memory. */
export type WasmGemmFn = (
  a: StridedMatrices,
  b: StridedMatrices | GatheredMatrix,
  dims: GemmDims,
  out: Float32Array,
) => boolean;

export interface WasmGemmConfig {
  readonly tile: MicroTile;
  /** K block: one B micro-panel (KC×NR floats) stays in L1 while the A block streams by. */
  readonly kc: number;
  /** M block (multiple of tile.mr): the packed A block (MC×KC floats) stays in L2. */
  readonly mc: number;
}

/**
 * Measured on Zen 5 (48 KB L1d, 1 MB L2), 512³: 4×8 ≈ 8 ms; 5×8, 6×8, 4×12, 4×16, 3×16, 8×4 all
 * 10–16 ms. V8 allocates 15 xmm registers; 4×8 needs 8 accumulators + 2 B vectors + 1 broadcast
 * + 1 product temporary, bigger tiles spill. Unrolling k ×2/×4 was slower too. kc 128–512 and
 * mc 64–256 are within noise of each other; 256/128 keeps the B micro-panel (8 KB) in L1 and the
 * packed A block (128 KB) in L2.
 */
export const DEFAULT_WASM_CONFIG: WasmGemmConfig = { tile: { mr: 4, nv: 2 }, kc: 256, mc: 128 };

const PAGE = 65536;
/** Beyond this the JS path is used: wasm32 memories stop at 4 GB and V8 may refuse earlier. */
const MAX_BYTES = 2 ** 31;

/** The module's `run(start, end, staged)`: strips [start, end) of the call whose arguments are in memory. */
type RunFn = (start: number, end: number, staged: number) => void;

/**
 * The module and its memory: where threads can run (Node), a shared memory and the module as a threaded kernel
 * whose pieces are strips of C's columns; elsewhere the module's own memory.
 */
function instantiate(tile: MicroTile): { mem: WebAssembly.Memory; run: RunFn; threaded: ThreadedKernel | null } | null {
  const maxPages = MAX_BYTES / PAGE;
  const threads = threadsSupported() ? { maxPages } : undefined;
  const bytes = buildGemmModule(tile, threads);
  if (!WebAssembly.validate(bytes)) return null;
  // Synchronous compile: the module is < 4 KB, under browsers' main-thread limit for sync compiles.
  const module = new WebAssembly.Module(bytes);
  if (!threads) {
    const inst = new WebAssembly.Instance(module);
    return { mem: inst.exports.mem as WebAssembly.Memory, run: inst.exports.run as RunFn, threaded: null };
  }
  const mem = new WebAssembly.Memory({ initial: 1, maximum: maxPages, shared: true });
  const exports = new WebAssembly.Instance(module, { h: { mem } }).exports as unknown as Pick<
    ThreadedKernel,
    "run" | "apply"
  >;
  const threaded: ThreadedKernel = { id: newKernelId(), module, memory: mem, imports: {}, scatters: false, ...exports };
  return { mem, run: exports.run, threaded };
}

/** Returns null where WebAssembly SIMD is missing (or the module fails to validate). */
export function createWasmGemm(config: WasmGemmConfig = DEFAULT_WASM_CONFIG): WasmGemmFn | null {
  if (typeof WebAssembly !== "object") return null;
  const made = instantiate(config.tile);
  if (!made) return null;
  const { mem, run, threaded } = made;
  const { mr, nv } = config.tile,
    nr = 4 * nv;
  const KC = config.kc,
    MC = Math.max(mr, Math.floor(config.mc / mr) * mr);
  let f32 = new Float32Array(mem.buffer);

  /** Grows the memory to hold `bytes`; false if that is impossible. */
  function reserve(bytes: number): boolean {
    if (bytes > MAX_BYTES) return false;
    if (mem.buffer.byteLength < bytes) {
      try {
        mem.grow(Math.ceil((bytes - mem.buffer.byteLength) / PAGE));
      } catch {
        return false;
      }
    }
    if (f32.buffer !== mem.buffer) f32 = new Float32Array(mem.buffer); // growing detaches the old view
    return true;
  }

  // The pack loops take the memory view as a parameter: a local (not the reassignable closure
  // variable) lets V8 keep the typed array's base and length in registers. Full panels of the
  // default 4×8 tile are unrolled (about 2× faster than the generic loops, which are dominated
  // by loop overhead at 4 or 8 iterations).

  /** Packs an mc×kc block of A (from `base`) as micro-panels of mr rows, each [kc][mr]. */
  function packA(f: Float32Array, a: StridedMatrices, base: number, mc: number, kc: number, dst: number): void {
    const d = a.data,
      sam = a.rowStride,
      sak = a.colStride;
    for (let r0 = 0; r0 < mc; r0 += mr, dst += kc * mr) {
      const rows = Math.min(mr, mc - r0),
        s0 = base + r0 * sam;
      if (rows === 4 && mr === 4) {
        const s1 = s0 + sam,
          s2 = s1 + sam,
          s3 = s2 + sam;
        for (let k = 0, o = dst, q = 0; k < kc; k++, o += 4, q += sak) {
          f[o] = d[s0 + q]!;
          f[o + 1] = d[s1 + q]!;
          f[o + 2] = d[s2 + q]!;
          f[o + 3] = d[s3 + q]!;
        }
        continue;
      }
      if (rows < mr) f.fill(0, dst, dst + kc * mr);
      for (let r = 0; r < rows; r++) {
        for (let k = 0, o = dst + r, src = s0 + r * sam; k < kc; k++, o += mr, src += sak) f[o] = d[src]!;
      }
    }
  }

  /** Packs kc rows of B (from `base`, all n columns) as micro-panels of nr columns, each [kc][nr]. */
  function packB(f: Float32Array, b: StridedMatrices, base: number, kc: number, n: number, dst: number): void {
    const d = b.data,
      sbk = b.rowStride,
      sbn = b.colStride;
    for (let j0 = 0; j0 < n; j0 += nr, dst += kc * nr) {
      const cols = Math.min(nr, n - j0),
        s0 = base + j0 * sbn;
      if (cols === 8 && nr === 8) {
        const s1 = s0 + sbn,
          s2 = s1 + sbn,
          s3 = s2 + sbn,
          s4 = s3 + sbn,
          s5 = s4 + sbn,
          s6 = s5 + sbn,
          s7 = s6 + sbn;
        for (let k = 0, o = dst, q = 0; k < kc; k++, o += 8, q += sbk) {
          f[o] = d[s0 + q]!;
          f[o + 1] = d[s1 + q]!;
          f[o + 2] = d[s2 + q]!;
          f[o + 3] = d[s3 + q]!;
          f[o + 4] = d[s4 + q]!;
          f[o + 5] = d[s5 + q]!;
          f[o + 6] = d[s6 + q]!;
          f[o + 7] = d[s7 + q]!;
        }
        continue;
      }
      if (cols < nr) f.fill(0, dst, dst + kc * nr);
      for (let c = 0; c < cols; c++) {
        for (let k = 0, o = dst + c, src = s0 + c * sbn; k < kc; k++, o += nr, src += sbk) f[o] = d[src]!;
      }
    }
  }

  return function gemmWasm(a, b, dims, out): boolean {
    const { batch, m, k: K, n } = dims;
    if (batch === 0 || m === 0 || n === 0) return true;
    if (K === 0) {
      out.fill(0, 0, batch * m * n);
      return true;
    }
    const Mp = Math.ceil(m / mr) * mr,
      Np = Math.ceil(n / nr) * nr,
      kcMax = Math.min(KC, K);
    const cF = GEMM_PARAMS_BYTES / 4,
      bF = cF + Mp * Np,
      aF = bF + kcMax * Np, // float offsets
      gF = aF + Math.min(MC, Mp) * kcMax;
    // A gathered B packs itself in the module (on the threads, a piece its own strips): its images, row offsets,
    // column offsets (padded to Np) and each strip's first column where its NR columns are consecutive, else −1.
    const gathered = isGathered(b) ? b : null,
      strided = isGathered(b) ? null : b;
    const rowsF = gF + (gathered?.data.length ?? 0),
      colsF = rowsF + (gathered ? K : 0),
      basesF = colsF + (gathered ? Np : 0),
      endF = basesF + (gathered ? Np / nr : 0);
    if (!reserve(4 * endF)) return false;
    const nStrips = Np / nr,
      ldc = 4 * Np;
    if (gathered) {
      f32.set(gathered.data, gF);
      const i32 = new Int32Array(mem.buffer);
      i32.set(gathered.rowOffsets, rowsF);
      i32.set(gathered.colOffsets, colsF);
      i32.fill(0, colsF + n, colsF + Np);
      for (let s = 0; s < nStrips; s++) {
        const j0 = s * nr,
          c0 = gathered.colOffsets[j0]!;
        let consecutive = j0 + nr <= n;
        for (let c = 1; consecutive && c < nr; c++) consecutive = gathered.colOffsets[j0 + c] === c0 + c;
        i32[basesF + s] = consecutive ? c0 : -1;
      }
    }
    const params = new Int32Array(mem.buffer, 0, GEMM_PARAMS_BYTES / 4);
    for (let bb = 0; bb < batch; bb++) {
      const aBase = a.offset + bb * a.batchStride;
      for (let k0 = 0; k0 < K; k0 += KC) {
        const kc = Math.min(KC, K - k0);
        if (strided) packB(f32, strided, strided.offset + bb * strided.batchStride + k0 * strided.rowStride, kc, n, bF);
        for (let i0 = 0; i0 < m; i0 += MC) {
          const mc = Math.min(MC, m - i0);
          packA(f32, a, aBase + i0 * a.rowStride + k0 * a.colStride, mc, kc, aF);
          // The call's arguments in GEMM_PARAM's order (ap … first, then pack and the gathered B's places).
          params.set([4 * aF, 4 * bF, 4 * (cF + i0 * Np), Math.ceil(mc / mr), kc, ldc, k0 === 0 ? 1 : 0]);
          // The first M block packs the gathered B's strips of this K block; the others reuse them.
          params.set(gathered ? [i0 === 0 ? 1 : 0, 4 * gF, 4 * (rowsF + k0), 4 * colsF, 4 * basesF] : [0], 7);
          // Enough strips for a few per piece, and enough work to pay for posting them.
          if (threaded && nStrips >= 8 && threadWorthIt(2 * mc * kc * Np)) runThreaded(threaded, nStrips);
          else run(0, nStrips, 0);
        }
      }
      const o = bb * m * n;
      if (Np === n) out.set(f32.subarray(cF, cF + m * n), o);
      else for (let i = 0; i < m; i++) out.set(f32.subarray(cF + i * Np, cF + i * Np + n), o + i * n);
    }
    return true;
  };
}
