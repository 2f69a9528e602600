/**
 * The CPU jit's second (third, …) core: worker threads that run a share of a WebAssembly kernel's
 * loop on the kernel's shared memory, while the calling thread runs the first share and then
 * waits (Atomics; a jitted program's run is synchronous). Node only: the browser's main thread
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

/** Per worker, an Int32Array on shared memory: the job the calling thread posts and the worker's answer. */
const JOB = 0, // job counter: the calling thread increments it to post a job
  KERNEL = 1,
  START = 2,
  END = 3,
  PIECES = 4, // the share is run in this many pieces, one after the other
  DONE = 5, // pieces done (the calling thread sets it to 0 before posting)
  FAILED = 6;
const CTRL_INTS = 8;
/**
 * How long a thread polls a control word before it blocks on it, ms: a worker after its last
 * job, the calling thread for a worker's pieces. A jitted program's kernels follow each other
 * within microseconds; with a worker that slept between them (polls of 0.1 ms), the 10,000-tet
 * rollout's backward ran 1.16× faster on two threads than on one, with polls of 2 ms 1.6×.
 */
const SPIN_MS = 2;
/** How long the calling thread waits for a worker before it gives up (a worker that died never answers). */
const WAIT_LIMIT_MS = 300_000;

/** Where piece p of `pieces` of [start, end) starts (even: a two-lane kernel runs iterations in pairs). */
function pieceBound(start: number, end: number, pieces: number, p: number): number {
  return p >= pieces ? end : start + 2 * Math.floor(((end - start) * p) / pieces / 2);
}

const WORKER_SOURCE = `
const { workerData, receiveMessageOnPort } = require("node:worker_threads");
const ctrl = new Int32Array(workerData.ctrl);
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
for (;;) {
  const until = performance.now() + ${SPIN_MS};
  let spins = 0;
  while (Atomics.load(ctrl, ${JOB}) === seen) {
    if ((++spins & 255) === 0 && performance.now() > until) Atomics.wait(ctrl, ${JOB}, seen);
  }
  seen = Atomics.load(ctrl, ${JOB});
  let m;
  while ((m = receiveMessageOnPort(port))) take(m.message);
  const start = ctrl[${START}], end = ctrl[${END}], pieces = ctrl[${PIECES}];
  try {
    const k = kernels.get(ctrl[${KERNEL}]);
    if (!k) throw new Error("kernel " + ctrl[${KERNEL}] + " was never sent to this worker");
    for (let p = 0; p < pieces; p++) {
      k.run(${pieceBound.name}(start, end, pieces, p), ${pieceBound.name}(start, end, pieces, p + 1), 1);
      Atomics.store(ctrl, ${DONE}, p + 1);
      Atomics.notify(ctrl, ${DONE});
    }
  } catch (e) {
    ctrl[${FAILED}] = 1;
    port.postMessage(String(e && e.stack || e));
    Atomics.store(ctrl, ${DONE}, pieces);
    Atomics.notify(ctrl, ${DONE});
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

const nodeModule = <T>(name: string): T | undefined => {
  const proc = (globalThis as { process?: { getBuiltinModule?: (m: string) => unknown } }).process;
  return proc?.getBuiltinModule?.(name) as T | undefined;
};

/** Threads are available: Node's worker_threads, shared WebAssembly memory, and a thread that may block. */
const workerThreads = nodeModule<WorkerThreads>("node:worker_threads");
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

function defaultThreads(): number {
  if (!canThread) return 1;
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const asked = Number(env?.GRADSIM_CPU_THREADS);
  if (Number.isInteger(asked) && asked >= 1) return asked;
  const os = nodeModule<{ availableParallelism?: () => number }>("node:os");
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
  readonly ctrl: Int32Array;
  readonly sent: Set<number>;
}
const pool: Worker[] = [];
function worker(i: number): Worker {
  while (pool.length <= i) {
    const sab = new SharedArrayBuffer(CTRL_INTS * 4);
    const { port1, port2 } = new workerThreads!.MessageChannel();
    const w = new workerThreads!.Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { ctrl: sab, port: port2 },
      transferList: [port2],
    });
    w.unref();
    port1.unref();
    pool.push({ port: port1, ctrl: new Int32Array(sab), sent: new Set() });
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

/**
 * Pieces a worker's share of a scattering kernel is run in: this thread applies a piece's staged
 * scatter-adds while the worker runs the next one.
 */
const PIECES_STAGED = 4;

/**
 * Run iterations [0, n) of a kernel on `cpuThreads()` threads: equal shares, the first on this
 * thread with its scatter-adds applied as it goes; the workers stage theirs, which this thread
 * then applies in order, piece by piece as the workers finish them.
 */
export function runThreaded(k: ThreadedKernel, n: number): void {
  threaded++;
  const shares = Math.max(1, Math.min(threads, Math.floor(n / 2)));
  const pieces = k.scatters ? PIECES_STAGED : 1;
  const posted: Worker[] = [];
  for (let s = 1; s < shares; s++) {
    const w = worker(s - 1);
    if (!w.sent.has(k.id)) {
      w.port.postMessage({ kind: "add", id: k.id, module: k.module, memory: k.memory, imports: k.imports });
      w.sent.add(k.id);
    }
    const c = w.ctrl;
    c[KERNEL] = k.id;
    c[START] = pieceBound(0, n, shares, s);
    c[END] = pieceBound(0, n, shares, s + 1);
    c[PIECES] = pieces;
    c[DONE] = 0;
    c[FAILED] = 0;
    Atomics.store(c, JOB, c[JOB]! + 1);
    Atomics.notify(c, JOB);
    posted.push(w);
  }
  k.run(0, pieceBound(0, n, shares, 1), 0);
  for (const w of posted) {
    const c = w.ctrl,
      start = c[START]!,
      end = c[END]!;
    for (let p = 0; p < pieces; p++) {
      let spins = 0;
      const t0 = performance.now();
      while (Atomics.load(c, DONE) <= p) {
        if ((++spins & 255) !== 0 || performance.now() < t0 + SPIN_MS) continue;
        Atomics.wait(c, DONE, p, 1000);
        if (performance.now() - t0 > WAIT_LIMIT_MS)
          throw new Error(`internal: a CPU kernel worker did not answer within ${WAIT_LIMIT_MS / 1000} s.`);
      }
      if (c[FAILED]) {
        const m = workerThreads!.receiveMessageOnPort(w.port);
        throw new Error(`internal: a CPU kernel failed in a worker thread: ${String(m?.message ?? "(no message)")}`);
      }
      if (k.scatters) k.apply(pieceBound(start, end, pieces, p), pieceBound(start, end, pieces, p + 1));
    }
  }
}
