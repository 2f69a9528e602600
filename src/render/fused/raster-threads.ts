/**
 * The fused rasterizers on every core: a kernel's loop (image rows, or faces for the adjoints) is
 * cut into pieces that the calling thread and rasterizer worker threads claim one at a time from a
 * shared counter, each piece writing its own part of the outputs (raster-kernels.ts). Pieces are
 * independent, so the outputs are the one-thread bits whatever the thread count and whoever ran
 * which piece.
 *
 * The workers load raster-worker.ts (the same kernel code) as a module; the operands travel in a
 * SharedArrayBuffer, copied in once per call, and the outputs are copied out of it. Node only
 * (the browser's main thread may not block), as many threads as the CPU jit's kernels use
 * (`cpuThreads`), and only for calls with enough work (`threadWorthIt` of the kernel's estimate).
 * A worker that is not running yet — they start on the first big render and take a fraction of a
 * second — or that could not load its module (a bundle without the file beside it) simply claims
 * nothing: the calling thread runs every piece.
 */
import { nodeBuiltin } from "../../core/node-builtin.js";
import { cpuThreads, threadWorthIt } from "../../core/compile/threads.js";
import type { TypedArray } from "../../core/dtype.js";
import type { Piece } from "./faces.js";
import { RASTER_KERNELS, type RasterArrays, type RasterKernel, type RasterKernelName } from "./raster-kernels.js";

/** The float types the kernels compute in and write (the geometry's dtype, checked by the primitives). */
export type RasterFloat = "float32" | "float64";
/** An output's element type and length. */
export type RasterOutput = readonly [RasterFloat | "int32", number];

/**
 * Calls keep one shared buffer for their operands and outputs while it is at most this big (no
 * allocation, zeroing and first-touch page faults per call); bigger calls get their own.
 */
const KEPT_ARENA_BYTES = 64 << 20;
let keptArena: SharedArrayBuffer | null = null;
/** Pieces per thread: a thread that the system holds up leaves the others most of the work. */
const PIECES_PER_THREAD = 6;
/** How long the calling thread waits for a worker's piece before it gives up (a dead worker never answers). */
const WAIT_LIMIT_MS = 300_000;

// The control words of a call: next piece to claim, pieces done, a worker failed.
const NEXT = 0,
  DONE = 1,
  FAILED = 2,
  CONTROL_WORDS = 3;

const CTORS = { float32: Float32Array, float64: Float64Array, int32: Int32Array, uint8: Uint8Array } as const;
type ElementType = keyof typeof CTORS;
const elementType = (a: TypedArray | Uint8Array): ElementType =>
  a instanceof Float32Array
    ? "float32"
    : a instanceof Float64Array
      ? "float64"
      : a instanceof Int32Array
        ? "int32"
        : "uint8";

/** Where an array sits in a call's shared memory. */
export interface ArenaSlot {
  readonly name: string;
  readonly type: ElementType;
  readonly byteOffset: number;
  readonly length: number;
}

/** A job as a worker receives it. */
export interface RasterJob {
  readonly kernel: RasterKernelName;
  readonly params: unknown;
  readonly arena: SharedArrayBuffer;
  readonly control: SharedArrayBuffer;
  readonly ins: readonly ArenaSlot[];
  readonly outs: readonly ArenaSlot[];
  readonly pieces: number;
  readonly units: number;
}

/** Piece p's units [start, end) of `units` cut into `pieces`. */
export const pieceOf = (units: number, pieces: number, p: number): Piece => [
  Math.floor((units * p) / pieces),
  Math.floor((units * (p + 1)) / pieces),
];

export const viewsOf = (arena: SharedArrayBuffer, slots: readonly ArenaSlot[]): Record<string, TypedArray> =>
  Object.fromEntries(
    slots.map((s) => [
      s.name,
      new CTORS[s.type](arena as unknown as ArrayBuffer, s.byteOffset, s.length) as TypedArray,
    ]),
  );

/**
 * Claim and run pieces of a job until none are left. Each piece's count goes into `counts` (the
 * calling thread sums them in piece order). A worker passes `tally` (the pool's count of pieces
 * workers ran, added to before a piece counts as done, so the calling thread sees it once the call
 * returns) and `report` (its message to the calling thread about a piece that throws, sent before
 * that piece counts as done); a piece that throws ends this thread's part.
 */
export function runPieces(
  job: RasterJob,
  ins: RasterArrays,
  outs: RasterArrays,
  counts: Float64Array,
  tally: Int32Array | null = null,
  report: (e: unknown) => void = () => {},
): void {
  const control = new Int32Array(job.control, 0, CONTROL_WORDS);
  const k = RASTER_KERNELS[job.kernel] as RasterKernel<unknown, unknown>;
  let prepared: unknown;
  for (let p = Atomics.add(control, NEXT, 1); p < job.pieces; p = Atomics.add(control, NEXT, 1)) {
    try {
      prepared ??= k.prepare(ins, job.params);
      counts[p] = k.run(prepared, ins, outs, job.params, pieceOf(job.units, job.pieces, p)) ?? 0;
    } catch (e) {
      report(e);
      Atomics.store(control, FAILED, 1);
      Atomics.add(control, DONE, 1);
      Atomics.notify(control, DONE);
      throw e;
    }
    if (tally) Atomics.add(tally, 0, 1);
    Atomics.add(control, DONE, 1);
    Atomics.notify(control, DONE);
  }
}

/** The counts of a job's pieces, after its control words. */
export const countsOf = (control: SharedArrayBuffer, pieces: number): Float64Array =>
  new Float64Array(control, 8 * Math.ceil(CONTROL_WORDS / 2), pieces);

interface Port {
  postMessage(m: unknown): void;
  unref(): void;
}
interface WorkerThreads {
  Worker: new (
    src: string,
    opts: { eval: boolean; workerData: unknown; transferList: unknown[]; execArgv: string[] },
  ) => Port & { on(e: string, f: (x: unknown) => void): void };
  MessageChannel: new () => { port1: Port; port2: Port };
  receiveMessageOnPort(port: Port): { message: unknown } | undefined;
}
const workerThreads = nodeBuiltin<WorkerThreads>("node:worker_threads");
const canThread = workerThreads !== undefined && typeof SharedArrayBuffer === "function";

/**
 * The worker's module beside this one: raster-worker.ts when running from the sources (tsx,
 * vitest: the worker registers tsx's loader first, a dev dependency), raster-worker.js from dist.
 */
function workerUrl(): string | null {
  // Looked up when workers start, never at import: a bundle to CommonJS has no import.meta.url.
  try {
    const here: unknown = import.meta.url;
    return typeof here === "string"
      ? new URL(`./raster-worker.${here.endsWith(".ts") ? "ts" : "js"}`, here).href
      : null;
  } catch {
    return null;
  }
}
const BOOT = `
const { workerData } = require("node:worker_threads");
(async () => {
  if (workerData.url.endsWith(".ts")) (await import("tsx/esm/api")).register();
  await import(workerData.url);
})().catch(() => {
  // No rasterizer worker here (a bundle without its module): the caller runs every piece.
  Atomics.store(new Int32Array(workerData.ready), workerData.index, -1);
});
`;

interface RasterWorker {
  readonly port: Port;
}
/** Per worker, 1 once its module is loaded and it listens (the calling thread posts jobs only to those), −1 if not. */
const ready = canThread ? new Int32Array(new SharedArrayBuffer(4 * 8)) : new Int32Array(0);
const pool: RasterWorker[] = [];
function startWorkers(n: number): void {
  const url = pool.length < Math.min(n, ready.length) ? workerUrl() : null;
  while (url && pool.length < Math.min(n, ready.length)) {
    const index = pool.length;
    const { port1, port2 } = new workerThreads!.MessageChannel();
    const w = new workerThreads!.Worker(BOOT, {
      eval: true,
      execArgv: [],
      workerData: { url, port: port2, ready: ready.buffer, index, pieces: workerPieces.buffer },
      transferList: [port2],
    });
    w.on("error", () => {}); // a worker that cannot start claims nothing (see above)
    w.unref();
    port1.unref();
    pool.push({ port: port1 });
  }
}

/**
 * Start the rasterizer workers for `cpuThreads()` threads and wait until they run (tests and
 * benchmarks that compare thread counts; renders start them by themselves). Returns how many run.
 */
export async function startRasterWorkers(timeoutMs = 30_000): Promise<number> {
  if (!canThread) return 0;
  const want = Math.min(cpuThreads() - 1, ready.length);
  startWorkers(want);
  // Each worker's word turns 1 once it listens, −1 if its module did not load.
  const until = Date.now() + timeoutMs;
  while (ready.slice(0, want).includes(0) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  return ready.slice(0, want).filter((r) => r === 1).length;
}

let threadedCalls = 0;
/** How many rasterizer calls were split over threads so far (tests check that they exercised it). */
export const rasterThreadedCalls = (): number => threadedCalls;
/** Pieces the workers ran so far (all workers, one shared word). */
const workerPieces = canThread ? new Int32Array(new SharedArrayBuffer(4)) : new Int32Array(1);
export const rasterWorkerPieces = (): number => Atomics.load(workerPieces, 0);
let callerClaims = true;
/**
 * Tests: with `false` the calling thread leaves every piece of a threaded call to the workers (so
 * that the workers' path is what runs, whatever the timing); returns the previous setting.
 */
export function setRasterCallerClaims(on: boolean): boolean {
  const prev = callerClaims;
  callerClaims = on;
  return prev;
}

/** Wait until the count of done pieces satisfies `until` (a worker marks each piece it ends, failed or not). */
function awaitDone(words: Int32Array, until: (done: number) => boolean): void {
  const t0 = performance.now();
  for (let d = Atomics.load(words, DONE); !until(d); d = Atomics.load(words, DONE)) {
    Atomics.wait(words, DONE, d, 1000);
    if (performance.now() - t0 > WAIT_LIMIT_MS)
      throw new Error(`internal: a rasterizer worker did not answer within ${WAIT_LIMIT_MS / 1000} s.`);
  }
}

/**
 * Run a rasterizer kernel on its operands: outputs of the given types and lengths, and the sum of
 * the pieces' counts. Split over threads where that pays (see the header); the same bits either way.
 */
export function runRaster<P extends { width: number; height: number }>(
  name: RasterKernelName,
  ins: Readonly<Record<string, TypedArray | Uint8Array>>,
  outs: Readonly<Record<string, RasterOutput>>,
  p: P,
): { outs: Record<string, TypedArray>; count: number } {
  const k = RASTER_KERNELS[name] as RasterKernel<P, unknown>;
  const units = k.units(ins as RasterArrays, p);
  const threads =
    canThread && units > 1 && cpuThreads() > 1 && threadWorthIt(k.work(ins as RasterArrays, p)) ? cpuThreads() : 1;
  if (threads > 1) startWorkers(threads - 1);
  const helpers = pool.slice(0, threads - 1).filter((_, i) => Atomics.load(ready, i) === 1);
  if (helpers.length === 0) {
    const o = Object.fromEntries(Object.entries(outs).map(([n, [t, size]]) => [n, new CTORS[t](size) as TypedArray]));
    const count = k.run(k.prepare(ins as RasterArrays, p), ins as RasterArrays, o, p, [0, units]) ?? 0;
    return { outs: o, count };
  }
  threadedCalls++;
  // Lay out operands and outputs in one shared buffer (8-byte aligned), operands copied in.
  let bytes = 0;
  const slot = (name: string, type: ElementType, length: number): ArenaSlot => {
    const s = { name, type, byteOffset: bytes, length };
    bytes += Math.ceil((length * CTORS[type].BYTES_PER_ELEMENT) / 8) * 8;
    return s;
  };
  const inSlots = Object.entries(ins).map(([n, a]) => slot(n, elementType(a), a.length));
  const outSlots = Object.entries(outs).map(([n, [t, size]]) => slot(n, t, size));
  // Every output element is written by some piece (raster-kernels.ts), so a kept buffer's old contents never show.
  let arena: SharedArrayBuffer;
  if (bytes > KEPT_ARENA_BYTES) arena = new SharedArrayBuffer(bytes);
  else {
    if (!keptArena || keptArena.byteLength < bytes)
      keptArena = new SharedArrayBuffer(Math.max(bytes, 2 * (keptArena?.byteLength ?? 0)));
    arena = keptArena;
  }
  const inViews = viewsOf(arena, inSlots);
  for (const s of inSlots) inViews[s.name]!.set(ins[s.name] as never);
  const outViews = viewsOf(arena, outSlots);
  const pieces = Math.min(units, threads * PIECES_PER_THREAD);
  const control = new SharedArrayBuffer(8 * Math.ceil(CONTROL_WORDS / 2) + 8 * pieces);
  const job: RasterJob = { kernel: name, params: p, arena, control, ins: inSlots, outs: outSlots, pieces, units };
  for (const w of helpers) w.port.postMessage(job);
  const counts = countsOf(control, pieces);
  const words = new Int32Array(control, 0, CONTROL_WORDS);
  try {
    if (callerClaims) runPieces(job, inViews, outViews, counts);
    awaitDone(words, (done) => done >= pieces || Atomics.load(words, FAILED) === 1);
  } finally {
    // Nothing may write into the (kept) buffer once this call returns: stop the claims, wait for the claimed pieces.
    const claimed = Math.min(Atomics.exchange(words, NEXT, pieces), pieces);
    awaitDone(words, (done) => done >= claimed);
  }
  if (Atomics.load(words, FAILED)) {
    const said = helpers.map((w) => workerThreads!.receiveMessageOnPort(w.port)?.message).filter((m) => m);
    throw new Error(`internal: a rasterizer kernel failed in a worker thread: ${said.join("; ") || "(no message)"}`);
  }
  // Copies on ordinary memory: what callers keep must not be shared with the workers.
  const o = Object.fromEntries(outSlots.map((s) => [s.name, outViews[s.name]!.slice()]));
  let count = 0;
  for (let p = 0; p < pieces; p++) count += counts[p]!;
  return { outs: o, count };
}
