/**
 * Running a kernel compiled by wasmgen: its buffers are copied into the module's memory, the
 * loop runs there, and the outputs are copied back (a few elements per iteration against
 * hundreds of operations in the fused kernels this is for). Which form the CPU jit uses is a
 * process-wide setting, read at every run, so benchmarks and tests can compare them side by side.
 */
import type { DType, TypedArray } from "../dtype.js";
import type { KGraph } from "../kernel/expr.js";
import type { KernelStep } from "./plan.js";
import { importSources, newKernelId, registerKernel, runThreaded, type ThreadedKernel } from "./threads.js";
import { kernelToWasm, kernelWork, wasmUnsupported, type WasmRegion } from "./wasmgen.js";

/**
 * "wasm": SIMD kernels where possible (four float32 lanes for a kernel whose floats are all float32, else two
 * float64 lanes); "wasm-f64x2": two float64 lanes always; "wasm-scalar": one lane; "js": JavaScript only. All give
 * the same bits.
 */
export type CpuKernels = "wasm" | "wasm-f64x2" | "wasm-scalar" | "js";

/**
 * Float operations per run (iterations × per-iteration nodes) below which a kernel stays
 * JavaScript: under it, copying the buffers and calling in costs more than the lanes save.
 */
export const WASM_MIN_WORK = 4096;
/**
 * Float operations per JS call a kernel needs to run as WebAssembly (W1's gradient: 4 calls in ~20 operations stays
 * JS).
 */
const CALL_COST = 8;
let minWork = WASM_MIN_WORK;

const SIMD_PROBE = new Uint8Array([
  // (func (result v128) v128.const 0)
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 11,
]);
const hasWasm = typeof WebAssembly === "object";
const hasSimd = hasWasm && WebAssembly.validate(SIMD_PROBE);

let mode: CpuKernels = hasSimd ? "wasm" : "js";
/**
 * Choose the CPU jit's kernel form (benchmarks and tests compare them); returns the previous one.
 * Without WebAssembly SIMD, "wasm" means "wasm-scalar". `minWork` (tests: 0, every supported
 * kernel, however many JS calls it makes) applies to kernels compiled from then on.
 */
export function setCpuKernels(m: CpuKernels, opts: { minWork?: number } = {}): CpuKernels {
  const prev = mode;
  if (opts.minWork !== undefined) minWork = opts.minWork;
  if (m !== "js" && !hasWasm)
    throw new Error(`setCpuKernels("${m}"): this JavaScript engine has no WebAssembly; use "js".`);
  mode = (m === "wasm" || m === "wasm-f64x2") && !hasSimd ? "wasm-scalar" : m;
  return prev;
}
export const cpuKernels = (): CpuKernels => mode;
let runs = 0,
  fourLaneRuns = 0;
/** How many kernel runs took the WebAssembly path so far (tests check that they exercised it). */
export const wasmKernelRuns = (): number => runs;
/** How many of them ran four float32 lanes. */
export const wasmFourLaneRuns = (): number => fourLaneRuns;

const CTOR: Record<DType, new (n: number) => TypedArray> = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  bool: Uint8Array,
};

/**
 * Arrays known not to change, each with the epoch of that knowledge: a kernel that copied one into
 * its memory, from the same place and in the same epoch, need not copy it again. Permanent: the
 * operands of a top-level program run and its constants (arrays are immutable). Scoped
 * (`holdDuring`): a scan's constant operands, fixed for the scan but possibly buffers that the
 * program around it reuses on its next run.
 */
const immutable = new WeakMap<TypedArray, number>();
let epoch = 0;
export function markImmutable(a: TypedArray): void {
  if (!immutable.has(a)) immutable.set(a, ++epoch);
}
export function holdDuring<T>(arrays: readonly TypedArray[], f: () => T): T {
  const scoped = arrays.filter((a) => !immutable.has(a));
  for (const a of scoped) immutable.set(a, ++epoch);
  try {
    return f();
  } finally {
    for (const a of scoped) immutable.delete(a);
  }
}

interface Bound {
  readonly region: WasmRegion;
  readonly view: TypedArray;
  readonly ctor: new (n: number) => TypedArray;
  readonly offset: boolean;
  /** The immutable array (offset, epoch) the region holds a copy of, if any (weakly: it may be collected). */
  held: WeakRef<TypedArray> | null;
  heldAt: number;
  heldEpoch: number;
}

/** The threaded form's imports cannot be rebuilt in a worker: the kernel keeps its one-thread form. */
class NotThreadable extends Error {}

export class WasmKernel {
  private readonly reads: Bound[];
  private readonly writes: Bound[];
  private readonly fn: () => void;
  private readonly lanes: 1 | 2 | 4;
  constructor(
    k: KernelStep,
    buffer: (id: number) => { dtype: DType; size: number },
    lanes: 1 | 2 | 4,
    offsetBufs: ReadonlySet<number>,
    graph: KGraph,
    threaded = false,
  ) {
    const m = kernelToWasm(k, buffer, lanes, graph, threaded);
    const module = new WebAssembly.Module(m.bytes);
    this.lanes = m.lanes;
    let memory: WebAssembly.Memory;
    if (threaded) {
      const imports = importSources(m.imports);
      if (!imports) throw new NotThreadable();
      const pages = m.memoryBytes / 65536;
      memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
      const inst = new WebAssembly.Instance(module, { h: { ...m.imports, mem: memory } });
      const exports = inst.exports as unknown as Pick<ThreadedKernel, "run" | "apply">;
      const shared: ThreadedKernel = { id: newKernelId(), module, memory, imports, ...exports, scatters: m.scatters };
      const n = k.loop.reduce((a, b) => a * b, 1);
      registerKernel(this, shared.id);
      this.fn = () => runThreaded(shared, n);
    } else {
      const inst = new WebAssembly.Instance(module, { h: m.imports });
      memory = inst.exports.mem as WebAssembly.Memory;
      this.fn = inst.exports.run as () => void;
    }
    const bind = (r: WasmRegion): Bound => {
      const ctor = CTOR[r.dtype];
      const view = new (ctor as unknown as new (b: ArrayBuffer, o: number, n: number) => TypedArray)(
        memory.buffer,
        r.byteOffset,
        r.size,
      );
      return { region: r, view, ctor, offset: offsetBufs.has(r.buf), held: null, heldAt: 0, heldEpoch: 0 };
    };
    this.reads = m.reads.map(bind);
    this.writes = m.writes.map(bind);
  }

  /** Run on the program's buffer table; false (nothing done) when a buffer is not of the compiled type. */
  run(B: readonly TypedArray[], O: Int32Array): boolean {
    for (const b of this.reads) if (!(B[b.region.buf] instanceof b.ctor)) return false;
    for (const b of this.writes) if (!(B[b.region.buf] instanceof b.ctor)) return false;
    for (const b of this.reads) {
      const src = B[b.region.buf]!,
        at = b.offset ? O[b.region.buf]! : 0,
        n = b.region.size;
      const e = immutable.get(src);
      if (e !== undefined && e === b.heldEpoch && at === b.heldAt && b.held?.deref() === src) continue;
      b.view.set((at === 0 && src.length === n ? src : src.subarray(at, at + n)) as never);
      b.held = e !== undefined ? new WeakRef(src) : null;
      b.heldAt = at;
      b.heldEpoch = e ?? 0;
    }
    this.fn();
    runs++;
    if (this.lanes === 4) fourLaneRuns++;
    for (const b of this.writes) B[b.region.buf]!.set(b.view as never, b.offset ? O[b.region.buf]! : 0);
    return true;
  }
}

/** Float operations per run of a kernel (iterations × per-iteration operations). */
export const kernelRunWork = (k: KernelStep): number => k.loop.reduce((a, b) => a * b, 1) * kernelWork(k).floatOps;

/**
 * The kernel's WebAssembly form for `lanes`, threaded (threads.ts) or not, or null (unsupported
 * kernel, too little work, no WebAssembly, or imports a worker cannot rebuild).
 */
export function wasmKernelFor(
  k: KernelStep,
  buffer: (id: number) => { dtype: DType; size: number },
  lanes: 1 | 2 | 4,
  offsetBufs: ReadonlySet<number>,
  graph: KGraph,
  threaded = false,
): WasmKernel | null {
  if (!hasWasm || wasmUnsupported(k) !== null) return null;
  const { floatOps, calls } = kernelWork(k);
  if (kernelRunWork(k) < minWork) return null;
  // Each lane's call out to JS (exp, sin, …) costs about what JS's own call does, plus moving the
  // lane out and back: kernels made mostly of such calls (W1's tanh·exp + sin) run faster as JS —
  // on one thread; split over threads they run faster still.
  if (calls * CALL_COST > floatOps && minWork > 0 && !threaded) return null;
  try {
    return new WasmKernel(k, buffer, lanes, offsetBufs, graph, threaded);
  } catch (e) {
    if (e instanceof NotThreadable) return null;
    // Too much memory for one module (or none to be had): the JavaScript kernel runs instead.
    if (e instanceof RangeError) return null;
    throw e;
  }
}
