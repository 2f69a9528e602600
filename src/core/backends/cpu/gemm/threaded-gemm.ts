/**
 * The WebAssembly GEMM on several threads (compile/threads.ts): the batch items of a batched
 * product — a convolution's images — are split over the calling thread and the workers. Each
 * thread packs and multiplies whole items in its own slot of one shared memory, from copies of
 * the operands there, so every element is computed exactly as on one thread (the same packs,
 * the same kernel calls): the same bits on any thread count.
 *
 * Memory (floats, 16-byte aligned): [ header | A's span | B's span | C: batch×m×n | slot 0 | slot 1 | … ],
 * a slot being one thread's [ C: Mp×Np | Bpack: KC×Np | Apack: MC×KC ] (wasm-gemm.ts).
 */
import { cpuThreads, newKernelId, runThreaded, type ThreadedKernel } from "../../../compile/threads.js";
import { buildGemmModule } from "./kernel-module.js";
import type { GemmDims, StridedMatrices } from "./strided.js";
import { DEFAULT_WASM_CONFIG, gemmDriver, gemmDriverSource, type GemmKernel } from "./wasm-gemm.js";

const PAGE = 65536;
/** The shared memory's maximum (reserved address space, not memory in use): 1 GiB. */
const MAX_PAGES = 16384;
/** Header fields (int32 at float index i): the operands' layout and the regions (wasm-gemm.ts's gemmDriver). */
const HEADER = 32;

/** Floats from an operand's offset to its last element, +1 (strides are non-negative). */
const span = (x: StridedMatrices, batch: number, rows: number, cols: number): number =>
  (batch - 1) * x.batchStride + (rows - 1) * x.rowStride + (cols - 1) * x.colStride + 1;
const align4 = (x: number): number => Math.ceil(x / 4) * 4;

/** A threaded GEMM, or null where threads or shared WebAssembly memory are unavailable. */
export function createThreadedGemm(
  config = DEFAULT_WASM_CONFIG,
): ((a: StridedMatrices, b: StridedMatrices, dims: GemmDims, out: Float32Array) => boolean) | null {
  let memory: WebAssembly.Memory, module: WebAssembly.Module, gemm: GemmKernel;
  try {
    memory = new WebAssembly.Memory({ initial: 1, maximum: MAX_PAGES, shared: true });
    module = new WebAssembly.Module(buildGemmModule(config.tile, MAX_PAGES));
    gemm = (new WebAssembly.Instance(module, { h: { mem: memory } }).exports as { gemm: typeof gemm }).gemm;
  } catch {
    return null;
  }
  const { mr, nv } = config.tile,
    nr = 4 * nv;
  const MC = Math.max(mr, Math.floor(config.mc / mr) * mr);
  const kernel: ThreadedKernel = {
    id: newKernelId(),
    module,
    memory,
    imports: {},
    scatters: false,
    driver: gemmDriverSource(),
    run: gemmDriver({ gemm }, memory, 0).run,
    apply: () => {},
  };
  return (a, b, dims, out) => {
    const { batch, m, k: K, n } = dims;
    if ([a, b].some((x) => x.batchStride < 0 || x.rowStride < 0 || x.colStride < 0)) return false;
    const Mp = Math.ceil(m / mr) * mr,
      Np = Math.ceil(n / nr) * nr,
      kcMax = Math.min(config.kc, K);
    const aSpan = span(a, batch, m, K),
      bSpan = span(b, batch, K, n);
    const aAt = HEADER,
      bAt = align4(aAt + aSpan),
      cAt = align4(bAt + bSpan),
      slots = align4(cAt + batch * m * n),
      slotFloats = align4(Mp * Np + kcMax * Np + Math.min(MC, Mp) * kcMax);
    const bytes = 4 * (slots + cpuThreads() * slotFloats);
    if (bytes > MAX_PAGES * PAGE) return false;
    if (memory.buffer.byteLength < bytes) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE));
    const f = new Float32Array(memory.buffer);
    f.set(a.data.subarray(a.offset, a.offset + aSpan), aAt);
    f.set(b.data.subarray(b.offset, b.offset + bSpan), bAt);
    new Int32Array(memory.buffer, 0, HEADER).set([
      aAt,
      a.batchStride,
      a.rowStride,
      a.colStride,
      bAt,
      b.batchStride,
      b.rowStride,
      b.colStride,
      m,
      K,
      n,
      cAt,
      slots,
      slotFloats,
      mr,
      nr,
      config.kc,
      MC,
    ]);
    runThreaded(kernel, batch);
    out.set(f.subarray(cAt, cAt + batch * m * n));
    return true;
  };
}
