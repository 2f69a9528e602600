import type { RasterThreadsRow } from "./raster-threads.js";
import type { SoakRow } from "./soak.js";

/** Benchmark tables: for each workload, gradsim's time per backend, the best peer per backend class, and the ratios. */
export interface Row {
  readonly peer: string;
  readonly workload: string;
  readonly size: string | number;
  readonly backend: string;
  readonly mode?: string;
  readonly ms_median: number | null;
  readonly ms_min?: number | null;
  readonly checksum?: number | null;
  readonly error?: string;
  readonly skipped?: string;
}

/** CPU-class backends are compared with CPU-class backends, GPU with GPU. */
const classOf = (backend: string): "cpu" | "gpu" => (backend === "webgpu" ? "gpu" : "cpu");
const fmt = (v: number | null | undefined): string =>
  v === null || v === undefined ? "—" : v < 10 ? v.toFixed(2) : v.toFixed(1);

/** Memory over a soak run (bench/soak.ts): peak and range of RSS after warm-up, and its growth. */
export function soakMarkdown(soaks: readonly SoakRow[]): string {
  const warm = (r: SoakRow) => r.samples.filter((s) => s.step >= r.warmUp);
  const range = (v: readonly number[]) =>
    v.length ? `${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)}` : "—";
  return [
    "Memory (bench/soak.ts: jitted value-and-gradient steps, RSS and heap after a full collection; " +
      "growth = least-squares slope after warm-up):",
    "",
    "| workload | backend | steps | s | peak RSS MB | RSS MB after warm-up " +
      "| heap MB after warm-up | RSS / heap growth, MB per 1,000 steps |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
    ...soaks.map(
      (r) =>
        `| ${r.kind} | ${r.backend} | ${r.steps} | ${r.seconds} | ${r.peakRssMB} | ` +
        `${range(warm(r).map((s) => s.rssMB))} | ${range(warm(r).map((s) => s.heapMB))} | ` +
        `${r.rssSlope} / ${r.heapSlope} |`,
    ),
  ].join("\n");
}

export function summarize(
  rows: readonly Row[],
  modelRows: readonly unknown[],
  meta: { date: string; machine: string },
): string {
  const ok = rows.filter((r) => r.ms_median !== null && !r.error);
  const key = (r: Row) => `${r.workload}|${r.size}`;
  const workloads = [...new Set(rows.filter((r) => r.peer === "gradsim").map(key))];
  const lines = [
    `# Benchmarks, ${meta.date}`,
    "",
    meta.machine,
    "",
    "Median ms (lower is better). Ratio = gradsim / other (below 1 means gradsim is faster). " +
      "Peers are compared on the same class of backend (CPU: cpu/wasm/js/c; GPU: webgpu).",
    "",
    "| workload | size | class | gradsim (best mode) | best peer | ratio | C reference | gradsim / C | plain JS |",
    "|---|---|---|---:|---|---:|---:|---:|---:|",
  ];
  for (const k of workloads) {
    for (const cls of ["cpu", "gpu"] as const) {
      const mine = ok.filter((r) => r.peer === "gradsim" && key(r) === k && classOf(r.backend) === cls);
      if (!mine.length) continue;
      const best = mine.reduce((a, b) => (a.ms_median! <= b.ms_median! ? a : b));
      const peers = ok.filter(
        (r) => (r.peer === "jax-js" || r.peer === "tfjs") && key(r) === k && classOf(r.backend) === cls,
      );
      const bp = peers.length ? peers.reduce((a, b) => (a.ms_median! <= b.ms_median! ? a : b)) : null;
      const c = ok.find((r) => r.peer === "c-reference" && key(r) === k && r.backend === "c-f32");
      const js = ok.find((r) => (r.peer === "js-reference" || r.peer === "plain-js") && key(r) === k);
      lines.push(
        `| ${k.split("|")[0]} | ${k.split("|")[1]} | ${cls} | ` +
          `${fmt(best.ms_median)} (${best.backend} ${best.mode ?? ""}) | ` +
          `${bp ? `${fmt(bp.ms_median)} (${bp.peer} ${bp.backend})` : "—"} | ` +
          `${bp ? (best.ms_median! / bp.ms_median!).toFixed(2) : "—"} | ` +
          `${c ? fmt(c.ms_median) : "—"} | ${c ? (best.ms_median! / c.ms_median!).toFixed(1) : "—"} | ` +
          `${js ? fmt(js.ms_median) : "—"} |`,
      );
    }
  }
  const failed = rows.filter((r) => r.error);
  if (failed.length) {
    lines.push(
      "",
      "Failures:",
      "",
      ...failed.map((r) => `- ${r.peer} ${r.workload} ${r.backend} ${r.size}: ${String(r.error).slice(0, 200)}`),
    );
  }
  lines.push(
    "",
    "All gradsim rows:",
    "",
    "| workload | size | backend | mode | median ms | min ms | checksum |",
    "|---|---|---|---|---:|---:|---:|",
  );
  for (const r of rows.filter((x) => x.peer === "gradsim"))
    lines.push(
      `| ${r.workload} | ${r.size} | ${r.backend} | ${r.mode ?? ""} | ` +
        `${fmt(r.ms_median)} | ${fmt(r.ms_min)} | ${r.checksum ?? r.error ?? ""} |`,
    );
  if (modelRows.length) {
    type ModelRow = {
      workload: string;
      size: number;
      backend: string;
      mode: string;
      path?: string;
      stepsPerSec?: number;
      fps?: number | null;
      faces?: number;
      msMedian?: number;
      paperGpuStepsPerSec?: number;
      error?: string;
    };
    type FloorRow = {
      workload: "softras-floor";
      size: number;
      keptPairs: number;
      rejectedPairs: number;
      mflop: number;
      gflops: number;
      floorMs: number;
      measuredMs: number | null;
    };
    const floors = (modelRows as unknown as FloorRow[]).filter((r) => r.workload === "softras-floor");
    const soaks = (modelRows as unknown as SoakRow[]).filter((r) => r.workload === "soak");
    const threadRows = (modelRows as unknown as RasterThreadsRow[]).filter((r) => r.speedup !== undefined);
    modelRows = modelRows.filter(
      (r) =>
        !["softras-floor", "soak"].includes((r as { workload: string }).workload) && !threadRows.includes(r as never),
    );
    const rate = (r: ModelRow) =>
      r.stepsPerSec !== undefined
        ? `${r.stepsPerSec} steps/s`
        : r.fps
          ? `${r.fps.toPrecision(3)} fps`
          : r.msMedian !== undefined
            ? `${r.msMedian} ms`
            : `failed: ${r.error ?? "no result"}`;
    lines.push(
      "",
      "Physics (bench/physics.ts: tets, semi-implicit Euler steps; paper Table 4 on a GPU beside) " +
        "and rendering (bench/render.ts: 1,280-face lit icosphere, image side in pixels); " +
        "one fit step of Tables 1–2 (bench/sysid-objective.ts):",
      "",
      "| workload | size | backend | mode | rate | paper (GPU) |",
      "|---|---:|---|---|---:|---:|",
      ...(modelRows as ModelRow[]).map(
        (r) =>
          `| ${r.workload} | ${r.size} | ${r.backend} | ${r.mode}${r.path ? ` (${r.path})` : ""} | ` +
          `${rate(r)} | ${r.paperGpuStepsPerSec !== undefined ? `${r.paperGpuStepsPerSec} steps/s` : "—"} |`,
      ),
    );
    if (floors.length) {
      lines.push(
        "",
        "The floor of soft rasterization for that scene " +
          "(bench/render-floor.ts: pixel–face pairs within the prune radius × operations per pair, " +
          "at this machine's scalar multiply-add rate) " +
          "beside the fused kernels' measured forward+backward:",
        "",
        "| image | kept pairs | rejected pairs | MFlop / frame | GFlop/s (scalar) | floor ms | measured ms | × floor |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        ...floors.map(
          (f) =>
            `| ${f.size}² | ${f.keptPairs} | ${f.rejectedPairs} | ${f.mflop} | ` +
            `${f.gflops} | ${f.floorMs} | ${f.measuredMs?.toFixed(1) ?? "—"} | ` +
            `${f.measuredMs ? (f.measuredMs / f.floorMs).toFixed(1) : "—"} |`,
        ),
      );
    }
    if (threadRows.length)
      lines.push(
        "",
        "The fused rasterizers on one thread and on all (bench/raster-threads.ts: the same scene under `jit`, " +
          "the thread count alternating in one process, medians over rounds; " +
          "same bits: the gradients equal bit for bit):",
        "",
        "| workload | size | 1 thread ms | all threads ms | threads | speedup | same bits |",
        "|---|---:|---:|---:|---:|---:|---|",
        ...threadRows.map(
          (r) =>
            `| ${r.workload} | ${r.size}² | ${r.ms1} | ${r.msN} | ${r.threads} | ${r.speedup}× | ` +
            `${r.sameBits ? "yes" : "no"} |`,
        ),
      );
    if (soaks.length) lines.push("", soakMarkdown(soaks));
  }
  return lines.join("\n") + "\n";
}
