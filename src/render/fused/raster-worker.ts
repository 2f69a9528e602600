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
  try {
    const n = runPieces(
      job,
      viewsOf(job.arena, job.ins),
      viewsOf(job.arena, job.outs),
      countsOf(job.control, job.pieces),
    );
    Atomics.add(ran, 0, n);
  } catch (e) {
    port.postMessage(String((e as Error)?.stack ?? e));
  }
});
Atomics.store(new Int32Array(ready), index, 1);
