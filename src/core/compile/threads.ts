/**
 * The CPU jit's second (third, …) core: worker threads that run pieces of a WebAssembly kernel's
 * loop on the kernel's shared memory while the calling thread runs others and then waits for
 * theirs (Atomics; a jitted program's run is synchronous). Node only: the browser's main thread
 * may not block, so there a kernel runs on one thread.
 *
 * Results do not depend on the thread count: a loop's iterations are independent (plain stores
 * to disjoint places) except for scatter-adds, which the threaded kernels stage and add
 * afterwards in the one-thread order (wasmgen's `apply`).
 *
 * A worker instantiates each kernel's module once, from the module, its shared memory and the
 * JS functions it imports, sent as source text (a function that cannot be rebuilt from its
 * source — one that uses its module's other functions — keeps its kernel on one thread).
 */
import { nodeBuiltin } from "../node-builtin.js";

/**
 * The job board, an Int32Array on shared memory that every worker reads: the calling thread posts
 * a kernel run there. Its pieces are claimed one at a time until none are left — the calling
 * thread's from the front, in order, so it applies their scatter-adds as it goes; the workers'
 * from the back, staged, applied afterwards in order. A worker the system does not schedule at
 * once (a busy or shared machine) costs at most the piece it holds, not a fixed share.
 */
const JOB = 0, // job counter: the calling thread increments it to post a job
  KERNEL = 1,
  N = 2, // iterations [0, N)
  PIECES = 3,
  WORKERS = 4, // workers 0 … WORKERS − 1 take part (the thread count may have been lowered)
  FAILED = 5,
  DONE = 6; // DONE + p holds the job counter once piece p is done (by a worker)
/** At most this many pieces per run (the board's size). */
const MAX_PIECES = 64;
/**
 * How long a thread polls a board word before it blocks on it, ms: a worker after its last job,
 * the calling thread for a worker's piece. A jitted program's kernels follow each other within
 * microseconds; with a worker that slept between them (polls of 0.1 ms), the 10,000-tet
 * rollout's backward ran 1.16× faster on two threads than on one, with polls of 2 ms 1.6×.
 */
const SPIN_MS = 2;
/**
 * A worker's poll after its last job where jobs have lately come further apart than SPIN_MS: a
 * predictor's or the ConvLSTM's training step (convolutions as GEMMs between long stretches of
 * one-thread work) ran slower on two threads than on one while a worker polled 2 ms after every job.
 */
const SPIN_MIN_MS = 0.05;
/** How long the calling thread waits for a worker before it gives up (a worker that died never answers). */
const WAIT_LIMIT_MS = 300_000;

/** Where piece p of `pieces` of [0, n) starts (a multiple of 4: a kernel runs iterations in groups of its lanes). */
function pieceBound(n: number, pieces: number, p: number): number {
  return p >= pieces ? n : 4 * Math.floor((n * p) / pieces / 4);
}

const WORKER_SOURCE = `
const { workerData, receiveMessageOnPort } = require("node:worker_threads");
const board = new Int32Array(workerData.board);
const claims = new BigInt64Array(workerData.claims);
const index = workerData.index;
const port = workerData.port;
const kernels = new Map();
function take(m) {
  if (m.kind === "drop") { kernels.delete(m.id); return; }
  const imports = { mem: m.memory };
  for (const [k, src] of Object.entries(m.imports)) imports[k] = new Function("return (" + src + ")")();
  const inst = new WebAssembly.Instance(m.module, { h: imports });
  kernels.set(m.id, inst.exports);
}
let seen = 0;
// The longest recent wait for a job, decaying: a worker polls while jobs come that close together, and sleeps at
// once where they come further apart than SPIN_MS (its poll would have kept a core from the calling thread's JS).
let gap = 0;
for (;;) {
  const idle = performance.now();
  const until = idle + (gap > ${SPIN_MS} ? ${SPIN_MIN_MS} : Math.min(${SPIN_MS}, 1.5 * gap + ${SPIN_MIN_MS}));
  let spins = 0;
  while (Atomics.load(board, ${JOB}) === seen) {
    if ((++spins & 255) === 0 && performance.now() > until) Atomics.wait(board, ${JOB}, seen);
  }
  gap = Math.max(performance.now() - idle, 0.9 * gap);
  seen = Atomics.load(board, ${JOB});
  // The fields are read before the first claim: the calling thread rewrites them for its next
  // job only after moving the claims word to that job, which makes this job's claims fail.
  if (index >= Atomics.load(board, ${WORKERS})) continue;
  const n = Atomics.load(board, ${N}), pieces = Atomics.load(board, ${PIECES}), id = Atomics.load(board, ${KERNEL});
  try {
    let m;
    while ((m = receiveMessageOnPort(port))) take(m.message);
    for (;;) {
      const v = Atomics.load(claims, 0);
      const back = Number((v >> 16n) & 0xffffn);
      if (Number(v >> 32n) !== seen || Number(v & 0xffffn) >= back) break;
      if (Atomics.compareExchange(claims, 0, v, v - 65536n) !== v) continue;
      const p = back - 1;
      const k = kernels.get(id);
      if (!k) throw new Error("kernel " + id + " was never sent to this worker");
      k.run(${pieceBound.name}(n, pieces, p), ${pieceBound.name}(n, pieces, p + 1), 1);
      Atomics.store(board, ${DONE} + p, seen);
      Atomics.notify(board, ${DONE} + p);
    }
  } catch (e) {
    board[${FAILED}] = 1;
    port.postMessage(String(e && e.stack || e));
    for (let q = 0; q < pieces; q++) { Atomics.store(board, ${DONE} + q, seen); Atomics.notify(board, ${DONE} + q); }
  }
}
${pieceBound.toString()}
`;

interface Port {
  postMessage(m: unknown): void;
  unref(): void;
}
interface WorkerThreads {
  Worker: new (src: string, opts: { eval: boolean; workerData: unknown; transferList: unknown[] }) => Port;
  MessageChannel: new () => { port1: Port; port2: Port };
  receiveMessageOnPort(port: Port): { message: unknown } | undefined;
}

/** Threads are available: Node's worker_threads, shared WebAssembly memory, and a thread that may block. */
const workerThreads = nodeBuiltin<WorkerThreads>("node:worker_threads");
const canThread =
  workerThreads !== undefined &&
  typeof SharedArrayBuffer === "function" &&
  typeof Atomics === "object" &&
  (() => {
    try {
      new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
      return true;
    } catch {
      return false;
    }
  })();

/** Whether kernels can run on worker threads here (Node with shared WebAssembly memory). */
export const threadsSupported = (): boolean => canThread;

function defaultThreads(): number {
  if (!canThread) return 1;
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const asked = Number(env?.GRADSIM_CPU_THREADS);
  if (Number.isInteger(asked) && asked >= 1) return asked;
  const os = nodeBuiltin<{ availableParallelism?: () => number }>("node:os");
  return Math.max(1, Math.min(8, os?.availableParallelism?.() ?? 1));
}

let threads = defaultThreads();
/**
 * Float operations per run (iterations × per-iteration operations) below which a kernel runs on
 * one thread. Posting a share costs 10–30 µs, and the workers' staged scatter-adds cost time of
 * their own: the 1,000-tet rollout's kernels (~1M operations) ran no faster on two threads, the
 * 10,000-tet rollout's (4–9M) 1.4–1.6× faster.
 */
export const THREAD_MIN_WORK = 2_000_000;
let threadMinWork = THREAD_MIN_WORK;

/** Threads the CPU jit's WebAssembly kernels use (1 in the browser). */
export const cpuThreads = (): number => threads;
/**
 * Choose how many threads the CPU jit's big WebAssembly kernels use (default: the
 * GRADSIM_CPU_THREADS environment variable, else the cores, at most 8); returns the previous
 * count. Results are the same bits on any count. `minWork` (tests: 0) applies from then on.
 */
export function setCpuThreads(n: number, opts: { minWork?: number } = {}): number {
  if (!(Number.isInteger(n) && n >= 1)) throw new Error(`setCpuThreads: a thread count is an integer ≥ 1, got ${n}.`);
  const prev = threads;
  if (opts.minWork !== undefined) threadMinWork = opts.minWork;
  threads = canThread ? n : 1;
  return prev;
}
export const threadWorthIt = (work: number): boolean => threads > 1 && work >= threadMinWork;

interface Worker {
  /** Our end of the channel to the worker (kernels in, error messages out). */
  readonly port: Port;
  readonly sent: Set<number>;
}
const board = canThread ? new Int32Array(new SharedArrayBuffer((DONE + MAX_PIECES) * 4)) : new Int32Array(0);
/**
 * The claims word: job << 32 | back << 16 | front — pieces [front, back) are unclaimed; the calling
 * thread takes `front`, workers `back − 1` (compare-exchange).
 */
const claimWord = canThread ? new BigInt64Array(new SharedArrayBuffer(8)) : new BigInt64Array(0);
const pool: Worker[] = [];
function worker(i: number): Worker {
  while (pool.length <= i) {
    const { port1, port2 } = new workerThreads!.MessageChannel();
    const w = new workerThreads!.Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { board: board.buffer, claims: claimWord.buffer, index: pool.length, port: port2 },
      transferList: [port2],
    });
    w.unref();
    port1.unref();
    pool.push({ port: port1, sent: new Set() });
  }
  return pool[i]!;
}

/** A kernel as the workers know it: its module, shared memory and imports' source. */
export interface ThreadedKernel {
  readonly id: number;
  readonly module: WebAssembly.Module;
  readonly memory: WebAssembly.Memory;
  readonly imports: Readonly<Record<string, string>>;
  /** The calling thread's instance: iterations [start, end), their scatter-adds applied or (staged ≠ 0) staged. */
  readonly run: (start: number, end: number, staged: number) => void;
  /** Apply the staged scatter-adds of iterations [start, end). */
  readonly apply: (start: number, end: number) => void;
  /** The kernel scatter-adds (so workers stage and this thread applies). */
  readonly scatters: boolean;
}

let threaded = 0;
/** How many kernel runs went through runThreaded so far (tests check that they exercised it). */
export const threadedRuns = (): number => threaded;

let nextId = 1;
export const newKernelId = (): number => nextId++;

/** Workers forget a kernel once the calling thread's copy is collected. */
const forget = new FinalizationRegistry<number>((id) => {
  for (const w of pool) if (w.sent.delete(id)) w.port.postMessage({ kind: "drop", id });
});
export const registerKernel = (owner: object, id: number): void => forget.register(owner, id);

/**
 * Source text for each imported function that a worker can rebuild (Math's functions, or a
 * function using nothing outside itself, checked on probe values); null when one cannot be.
 */
export function importSources(
  fns: Readonly<Record<string, (...a: number[]) => number>>,
): Record<string, string> | null {
  const out: Record<string, string> = {};
  const probes = [-2.5, -1, -0, 0, 0.5, 1, 3, 7.25, 1e10, NaN, Infinity, -Infinity];
  for (const [key, fn] of Object.entries(fns)) {
    const math = Object.getOwnPropertyNames(Math).find((k) => (Math as unknown as Record<string, unknown>)[k] === fn);
    if (math) {
      out[key] = `Math.${math}`;
      continue;
    }
    const src = fn.toString();
    try {
      const rebuilt = new Function(`return (${src})`)() as (...a: number[]) => number;
      for (const a of probes)
        for (const b of [2, -3, 0.5])
          if (!Object.is(rebuilt(a, b), fn(a, b)) && !(Number.isNaN(rebuilt(a, b)) && Number.isNaN(fn(a, b))))
            return null;
    } catch {
      return null;
    }
    out[key] = src;
  }
  return out;
}

/** Pieces per thread of a run: enough that a thread the system holds up leaves the others most of the work. */
const PIECES_PER_THREAD = 8;

/** Wait until piece p of job `job` is done (a worker marks it); throws what a failed worker said. */
function awaitPiece(job: number, p: number): void {
  let spins = 0;
  const t0 = performance.now();
  for (let v = Atomics.load(board, DONE + p); v !== job; v = Atomics.load(board, DONE + p)) {
    if ((++spins & 255) !== 0 || performance.now() < t0 + SPIN_MS) continue;
    Atomics.wait(board, DONE + p, v, 1000);
    if (performance.now() - t0 > WAIT_LIMIT_MS)
      throw new Error(`internal: a CPU kernel worker did not answer within ${WAIT_LIMIT_MS / 1000} s.`);
  }
  if (board[FAILED]) {
    const said = pool.map((w) => workerThreads!.receiveMessageOnPort(w.port)?.message).filter((m) => m);
    throw new Error(`internal: a CPU kernel failed in a worker thread: ${said.join("; ") || "(no message)"}`);
  }
}

/**
 * Run iterations [0, n) of a kernel on `cpuThreads()` threads: this thread claims pieces from the
 * front and runs them with their scatter-adds applied, workers claim from the back and stage
 * theirs, and once the two meet this thread applies the workers' pieces in order as they are done
 * — the one-thread order.
 */
export function runThreaded(k: ThreadedKernel, n: number): void {
  threaded++;
  const workers = Math.min(threads - 1, MAX_PIECES);
  // At least 4 iterations a piece: a piece is never empty (a kernel's loop runs its first group unconditionally).
  const pieces = Math.max(1, Math.min(MAX_PIECES, (workers + 1) * PIECES_PER_THREAD, Math.floor(n / 4)));
  for (let i = 0; i < workers; i++) {
    const w = worker(i);
    if (!w.sent.has(k.id)) {
      w.port.postMessage({ kind: "add", id: k.id, module: k.module, memory: k.memory, imports: k.imports });
      w.sent.add(k.id);
    }
  }
  const job = (board[JOB]! + 1) | 0 || 1;
  // The claims word moves to this job before the fields change (see the workers' claims).
  Atomics.store(claimWord, 0, (BigInt(job) << 32n) | (BigInt(pieces) << 16n));
  Atomics.store(board, KERNEL, k.id);
  Atomics.store(board, N, n);
  Atomics.store(board, PIECES, pieces);
  Atomics.store(board, WORKERS, workers);
  Atomics.store(board, FAILED, 0);
  Atomics.store(board, JOB, job);
  Atomics.notify(board, JOB);
  const bound = (p: number) => pieceBound(n, pieces, p);
  let front = 0;
  for (;;) {
    const v = Atomics.load(claimWord, 0);
    front = Number(v & 0xffffn);
    if (front >= Number((v >> 16n) & 0xffffn)) break;
    if (Atomics.compareExchange(claimWord, 0, v, v + 1n) === v) k.run(bound(front), bound(front + 1), 0);
  }
  for (let p = front; p < pieces; p++) {
    awaitPiece(job, p);
    if (k.scatters) k.apply(bound(p), bound(p + 1));
  }
}
