/**
 * Memory profile of 10,000 jitted valueAndGrad steps on webgpu (issue 4, item 5):
 *   XDG_RUNTIME_DIR=/tmp npx tsx bench/webgpu-memory.ts [steps] [every]
 * Prints one JSON line per sample (device bytes live/allocated, GPUBuffers created, RSS) and a
 * summary comparing the first sample after warm-up with the last.
 */
import { init } from "gradsim";
import { runMemoryLoop } from "./webgpu-memory-loop.js";

const steps = Number(process.argv[2] ?? 10000);
const every = Number(process.argv[3] ?? 500);
const backend = await init({ backend: "webgpu" });
console.error(`backend ${backend}; ${steps} steps, a sample every ${every}`);
const mb = (b: number) => (b / 1048576).toFixed(2);
for (const dispose of [false, true]) {
  const mode = dispose ? "dispose() each step" : "no dispose (finalization)";
  const samples = await runMemoryLoop(steps, every, (s) => console.log(JSON.stringify({ mode, ...s })), dispose);
  const warm = samples[Math.min(1, samples.length - 1)]!,
    last = samples[samples.length - 1]!;
  const peak = (f: (s: (typeof samples)[number]) => number) => mb(Math.max(...samples.map(f)));
  console.log(
    JSON.stringify({
      summary: mode,
      steps,
      deviceLiveMB: { afterWarmup: mb(warm.liveBytes), last: mb(last.liveBytes), peak: peak((s) => s.liveBytes) },
      deviceAllocatedMB: {
        afterWarmup: mb(warm.allocatedBytes),
        last: mb(last.allocatedBytes),
        peak: peak((s) => s.allocatedBytes),
      },
      gpuBuffersCreated: { afterWarmup: warm.buffersCreated, last: last.buffersCreated },
      rssMB: { afterWarmup: mb(warm.rssBytes), last: mb(last.rssBytes), peak: peak((s) => s.rssBytes) },
      msPerStep: last.msPerStep.toFixed(3),
      loss: [samples[0]!.loss, last.loss],
    }),
  );
}
process.exit(0);
