/**
 * Rendering benchmark: frames per second of forward and forward+backward (gradient of an image
 * MSE w.r.t. the vertex positions) renders of a lit 1,280-face icosphere at 64², 128² and 256²,
 * SoftRas and DIB-R, eager and jit, through the fused kernels and through the array programs
 * (`fused: false`), side by side in one run; on the CPU backend (WebGPU when asked for). Then the
 * floor: the pixel–face pairs a soft rasterizer must evaluate for this scene, the arithmetic per
 * pair, and the time that takes at this machine's measured scalar rate, beside the measured time.
 *
 *   import { renderBench } from "./render.js";  const rows = await renderBench();
 *   npx tsx bench/render.ts [--sizes 64,128,256] [--rasterizers softras,dibr] [--modes eager,jit] [--paths fused,array]
 *                           [--runs 5] [--timeout 300]
 */
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { grad, init, jit, np, render as R, type Array } from "gradsim";
import { timeIt } from "./lib.js";
import { renderFloor } from "./render-floor.js";

export interface RenderBenchRow {
  /** e.g. "softras-forward", "dibr-forward+backward". */
  readonly workload: string;
  /** Image side in pixels. */
  readonly size: number;
  readonly backend: string;
  readonly mode: "eager" | "jit";
  /** Fused kernels or the array programs. */
  readonly path: "fused" | "array";
  /** Frames per second (null when the configuration failed; see error). */
  readonly fps: number | null;
  readonly faces: number;
  readonly msMedian: number | null;
  /** Faces per tile slot count used under jit (eager sizes buckets itself). */
  readonly capacity?: number;
  readonly error?: string;
}

export interface RenderBenchOptions {
  readonly sizes?: readonly number[];
  readonly rasterizers?: readonly ("softras" | "dibr")[];
  readonly modes?: readonly ("eager" | "jit")[];
  readonly paths?: readonly ("fused" | "array")[];
  readonly backend?: "cpu" | "webgpu";
  readonly runs?: number;
  readonly print?: boolean;
}

/**
 * Median ms of at least `runs` timed calls (and 2 s of them) after at least 3 warm-up calls and 2 s
 * of them (tracing, compilation, the JavaScript engine's optimisation, which for a 20 ms kernel is
 * still under way after 3 calls).
 */
const time = async (fn: () => Promise<unknown>, runs: number): Promise<number> =>
  (await timeIt(fn, { warmup: 3, runs, warmupMs: 2000, runsMs: 2000 })).ms_median;

interface Config {
  readonly size: number;
  readonly rasterizer: "softras" | "dibr";
  readonly mode: "eager" | "jit";
  readonly path: "fused" | "array";
  readonly kind: "forward" | "forward+backward";
  readonly backend: "cpu" | "webgpu";
  readonly runs: number;
}

/** Measure one configuration in this process. */
export async function measureRender(c: Config): Promise<RenderBenchRow> {
  await init({ backend: c.backend });
  const mesh = R.meshFromData(R.icosphereData(3, 1), { colors: [0.85, 0.45, 0.25] });
  const faces = mesh.faces.shape[0]!;
  const camera = R.perspectiveCamera({ distance: 3.2, elevation: 20, azimuth: 30 });
  const lights: R.Lights = { ambient: 0.35, directional: [{ direction: [0.4, 1, -0.6], color: 0.65 }] };
  const { size } = c;
  // σ ≈ (half a pixel)² and a DIB-R band of about a pixel (anchors §2 "Recommended hyperparameters").
  const fused = c.path === "fused";
  const base: R.RenderOptions = {
    width: size,
    rasterizer: c.rasterizer,
    softras: { sigma: 1 / size ** 2, fused },
    dibr: { sigmaInv: (size * size) / 4, boxLen: 0.036 * Math.sqrt(7000 / ((size * size) / 4)), fused },
  };
  // The array programs under jit need a static slot count: the eager maximum plus 10% headroom (the fused kernels bin
  // for themselves).
  const capacity = c.mode === "jit" && !fused ? Math.ceil(R.estimateCapacity(mesh, camera, base) * 1.1) : undefined;
  const options = { ...base, capacity };
  const target = np.zeros([size, size, 4]);
  const forward = (v: Array) => R.render({ ...mesh, vertices: v }, camera, lights, undefined, options);
  const loss = (v: Array) => np.mean(np.square(np.sub(forward(v), target)));
  const plain = c.kind === "forward" ? forward : grad(loss);
  const fn = c.mode === "jit" ? jit(plain) : plain;
  const workload = `${c.rasterizer}-${c.kind}`;
  const ms = await time(async () => fn(mesh.vertices).data(), c.runs);
  return {
    workload,
    size,
    backend: c.backend,
    mode: c.mode,
    path: c.path,
    fps: 1000 / ms,
    faces,
    msMedian: ms,
    ...(capacity ? { capacity } : {}),
  };
}

/**
 * All configurations, each in a fresh child process (isolated memory, and a time limit so one
 * pathological configuration cannot stall the run). Prints a table; returns the rows.
 */
export async function renderBench(opts: RenderBenchOptions & { timeoutS?: number } = {}): Promise<RenderBenchRow[]> {
  const backend = opts.backend ?? "cpu";
  const rows: RenderBenchRow[] = [];
  const tsx = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin", "tsx");
  if (opts.print !== false) process.stdout.write(`render benchmark: 1280-face icosphere, lit (Gouraud), ${backend}\n`);
  for (const size of opts.sizes ?? [64, 128, 256])
    for (const rasterizer of opts.rasterizers ?? ["softras", "dibr"]) {
      for (const mode of opts.modes ?? ["eager", "jit"])
        for (const path of opts.paths ?? ["fused", "array"])
          for (const kind of ["forward", "forward+backward"] as const) {
            // The array programs op by op at 256² take minutes per frame; their jitted rows are the reference.
            if (path === "array" && mode === "eager" && size > 64) continue;
            const config: Config = { size, rasterizer, mode, path, kind, backend, runs: opts.runs ?? 5 };
            const res = spawnSync(tsx, [fileURLToPath(import.meta.url), "--one", JSON.stringify(config)], {
              encoding: "utf8",
              timeout: (opts.timeoutS ?? 300) * 1000,
              maxBuffer: 16 << 20,
              env: { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? tmpdir() },
            });
            const line = (res.stdout ?? "").split("\n").find((l) => l.startsWith("{"));
            const row: RenderBenchRow = line
              ? (JSON.parse(line) as RenderBenchRow)
              : {
                  workload: `${rasterizer}-${kind}`,
                  size,
                  backend,
                  mode,
                  path,
                  fps: null,
                  faces: 1280,
                  msMedian: null,
                  error: res.error
                    ? `timeout after ${opts.timeoutS ?? 300} s`
                    : ((res.stderr ?? "")
                        .trim()
                        .split("\n")
                        .filter((l) => l.trim() && !l.startsWith("Node.js v"))
                        .slice(-1)[0]
                        ?.slice(0, 200) ?? `exit ${res.status}`),
                };
            rows.push(row);
            if (opts.print !== false) printRow(row);
          }
    }
  return rows;
}

function printRow(r: RenderBenchRow): void {
  const fps =
    r.fps === null ? `failed: ${r.error}` : `${r.fps.toFixed(r.fps < 1 ? 3 : 2)} fps (${r.msMedian!.toFixed(0)} ms)`;
  process.stdout.write(
    `${r.workload.padEnd(26)} ${String(r.size).padStart(4)}²  ${r.backend.padEnd(6)} ` +
      `${r.mode.padEnd(5)} ${r.path.padEnd(5)} ${fps}\n`,
  );
}

// CLI: `--one <config json>` measures one configuration (used by renderBench); otherwise runs them all.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (k: string) => {
    const i = process.argv.indexOf(`--${k}`);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const one = arg("one");
  if (one) {
    const row = await measureRender(JSON.parse(one) as Config);
    process.stdout.write(JSON.stringify(row) + "\n", () => process.exit(0));
  } else {
    const list = (k: string) => arg(k)?.split(",");
    const rows = await renderBench({
      sizes: list("sizes")?.map(Number),
      rasterizers: list("rasterizers") as ("softras" | "dibr")[] | undefined,
      modes: list("modes") as ("eager" | "jit")[] | undefined,
      paths: list("paths") as ("fused" | "array")[] | undefined,
      runs: arg("runs") ? Number(arg("runs")) : undefined,
      backend: arg("backend") as "cpu" | "webgpu" | undefined,
      timeoutS: arg("timeout") ? Number(arg("timeout")) : undefined,
    });
    // One JSON row per line, as bench/physics.ts: bench/run.ts collects them into the results.
    for (const { workload, size, backend, mode, path, fps, faces, error } of rows)
      process.stdout.write(
        JSON.stringify({ workload, size, backend, mode, path, fps, faces, ...(error ? { error } : {}) }) + "\n",
      );
    for (const f of await renderFloor(rows)) {
      process.stdout.write(JSON.stringify(f) + "\n");
      process.stderr.write(
        `floor ${f.size}²: ${f.keptPairs} kept + ${f.rejectedPairs} rejected pairs, ` +
          `${f.mflop} MFlop per forward+backward frame; ` +
          `at ${f.gflops} GFlop/s ${f.floorMs} ms; ` +
          `measured ${f.measuredMs?.toFixed(1) ?? "—"} ms ` +
          `(${f.measuredMs ? (f.measuredMs / f.floorMs).toFixed(1) : "—"}× the floor)\n`,
      );
    }
  }
}
