/**
 * The fused rasterizers on one thread and on all (src/render/fused/raster-threads.ts), side by side
 * in one process: forward and forward+backward (the gradient of an image MSE w.r.t. the vertices)
 * of bench/render.ts's lit 1,280-face icosphere under `jit` on the CPU, the thread count
 * alternating between rounds (`init({ cpuThreads })`), and the gradients checked equal bit for
 * bit across thread counts.
 *
 *   npx tsx bench/raster-threads.ts [--sizes 64,128,256] [--rasterizers softras,dibr] [--rounds 5] [--threads 2]
 * One JSON line per row (median ms over the rounds' medians, 1 thread and N, their ratio), then a table.
 */
import { fileURLToPath } from "node:url";
import { grad, init, jit, np, render as R, type Array } from "gradsim";
import { startRasterWorkers } from "../src/render/fused/raster-threads.js";
import { cpuThreads } from "../src/core/compile/threads.js";
import { parseArgs, round, timeIt } from "./lib.js";

export interface RasterThreadsRow {
  readonly workload: string;
  readonly size: number;
  readonly threads: number;
  readonly ms1: number;
  readonly msN: number;
  /** ms on one thread ÷ ms on `threads`. */
  readonly speedup: number;
  readonly sameBits: boolean;
}

const median = (a: readonly number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;

export async function rasterThreadsBench(o: {
  sizes: readonly number[];
  rasterizers: readonly ("softras" | "dibr")[];
  rounds: number;
  threads: number;
}): Promise<RasterThreadsRow[]> {
  await init({ backend: "cpu", cpuThreads: o.threads });
  const workers = await startRasterWorkers();
  if (workers < o.threads - 1)
    throw new Error(`raster-threads: ${workers} of ${o.threads - 1} rasterizer workers started.`);
  const mesh = R.meshFromData(R.icosphereData(3, 1), { colors: [0.85, 0.45, 0.25] });
  const camera = R.perspectiveCamera({ distance: 3.2, elevation: 20, azimuth: 30 });
  const lights: R.Lights = { ambient: 0.35, directional: [{ direction: [0.4, 1, -0.6], color: 0.65 }] };
  const rows: RasterThreadsRow[] = [];
  for (const size of o.sizes)
    for (const rasterizer of o.rasterizers) {
      const options: R.RenderOptions = {
        width: size,
        rasterizer,
        softras: { sigma: 1 / size ** 2 },
        dibr: { sigmaInv: (size * size) / 4, boxLen: 0.036 * Math.sqrt(7000 / ((size * size) / 4)) },
      };
      const target = np.zeros([size, size, 4]);
      const forward = (v: Array) => R.render({ ...mesh, vertices: v }, camera, lights, undefined, options);
      const loss = (v: Array) => np.mean(np.square(np.sub(forward(v), target)));
      for (const [kind, fn] of [
        ["forward", jit(forward)],
        ["forward+backward", jit(grad(loss))],
      ] as const) {
        const times: Record<number, number[]> = { 1: [], [o.threads]: [] };
        const results: Record<number, Float32Array> = {};
        for (let r = 0; r < o.rounds; r++)
          for (const n of [1, o.threads]) {
            await init({ cpuThreads: n });
            const t = await timeIt(async () => fn(mesh.vertices).data(), {
              warmup: 2,
              runs: 5,
              warmupMs: 300,
              runsMs: 500,
            });
            times[n]!.push(t.ms_median);
            results[n] ??= Float32Array.from(await fn(mesh.vertices).data());
          }
        const ms1 = median(times[1]!),
          msN = median(times[o.threads]!);
        const a = results[1]!,
          b = results[o.threads]!;
        const sameBits = a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
        const row = {
          workload: `${rasterizer}-${kind}`,
          size,
          threads: o.threads,
          ms1: round(ms1),
          msN: round(msN),
          speedup: round(ms1 / msN, 2),
          sameBits,
        };
        process.stdout.write(`${JSON.stringify(row)}\n`);
        rows.push(row);
      }
    }
  await init({ cpuThreads: o.threads });
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = parseArgs({
    sizes: "64,128,256",
    rasterizers: "softras,dibr",
    rounds: 5,
    threads: Math.max(2, cpuThreads()),
  });
  const rows = await rasterThreadsBench({
    sizes: String(args.sizes).split(",").map(Number),
    rasterizers: String(args.rasterizers).split(",") as ("softras" | "dibr")[],
    rounds: Number(args.rounds),
    threads: Number(args.threads),
  });
  process.stdout.write(
    "\n| workload | size | 1 thread ms | N threads ms | speedup | same bits |\n|---|---:|---:|---:|---:|---|\n",
  );
  for (const r of rows)
    process.stdout.write(
      `| ${r.workload} | ${r.size}² | ${r.ms1} | ${r.msN} (${r.threads}) | ${r.speedup}× | ${r.sameBits} |\n`,
    );
}
