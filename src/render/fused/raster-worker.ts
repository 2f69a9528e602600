/**
 * A rasterizer worker thread (raster-threads.ts): runs pieces of the jobs the calling thread posts,
 * on the job's shared memory, until none are left. Loaded as a module by the worker's boot script.
 */
import { workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { countsOf, runPieces, viewsOf, type RasterJob } from "./raster-threads.js";

const { port, ready, index, pieces } = workerData as {
  port: MessagePort;
  ready: SharedArrayBuffer;
  index: number;
  /** The pool's count of pieces run by workers. */
  pieces: SharedArrayBuffer;
};
const ran = new Int32Array(pieces);
port.on("message", (job: RasterJob) => {
  const report = (e: unknown) => port.postMessage(String((e as Error)?.stack ?? e));
  try {
    const views = [viewsOf(job.arena, job.ins), viewsOf(job.arena, job.outs)] as const;
    runPieces(job, ...views, countsOf(job.control, job.pieces), ran, report);
  } catch {
    // Reported by runPieces before its piece counted as done; the calling thread throws it.
  }
});
Atomics.store(new Int32Array(ready), index, 1);
