/**
 * The floor of soft rasterization for the render benchmark's scene (1,280-face icosphere, σ one
 * pixel², SoftRas): a soft rasterizer must evaluate every pixel–face pair within the coverage's
 * prune radius ("kept" pairs), at a few hundred floating-point operations each, and reject the
 * others near each face. Counted by the fused kernels' own pair test; operations per pair counted
 * by hand from softras-colour-cpu.ts (a transcendental function counted as 20):
 *   forward  ≈ 215: barycentrics 15, distance bound 5, point–segment distances 48, log σ and σ 60,
 *                   clipped barycentrics and depth 17, exponent 4, colour 15, online softmax 28, S 2
 *   backward ≈ 260: the pair again 69, σ 25, colour geometry 16, weight 23, colour 15, ∂/∂(u, c, w) 24,
 *                   depth and barycentric adjoints 35, ∂w/∂vertices 45, ∂d²/∂vertices 10
 *   rejected ≈ 25 per pass (barycentrics, bound).
 * The time floor is those operations at this machine's scalar rate, measured here with a plain
 * JavaScript loop of independent multiply-adds over cache-resident arrays (one core, no SIMD).
 */
import { performance } from "node:perf_hooks";
import { init, np, render as R } from "gradsim";
// Internal on purpose: the floor is measured on the fused SoftRas kernel's own face table, bins and prune threshold.
import { ndcX, ndcY } from "../src/render/fused/faces.js";
import { binsOf, faceTableFor, Pair, pair } from "../src/render/fused/softras-pair.js";
import { pruneThreshold } from "../src/render/softras.js";
import type { RenderBenchRow } from "./render.js";

export const OPS = { forward: 215, backward: 260, rejected: 25 } as const;

export interface FloorRow {
  readonly workload: "softras-floor";
  readonly size: number;
  readonly keptPairs: number;
  readonly rejectedPairs: number;
  /** Operations of one forward+backward frame. */
  readonly mflop: number;
  /** Scalar multiply-add rate of this machine's JavaScript engine, GFlop/s. */
  readonly gflops: number;
  readonly floorMs: number;
  /** The fused kernels' measured forward+backward time under jit (null when not measured). */
  readonly measuredMs: number | null;
}

/**
 * GFlop/s of a plain JavaScript loop over cache-resident float64 arrays, 3 multiplies and 2 adds
 * per element with no dependency between elements: what one core sustains on throughput-bound
 * scalar arithmetic (a loop-carried chain would measure latency instead).
 */
function scalarRate(): number {
  const n = 4096,
    reps = 20_000,
    m = 0.9999,
    k = 1e-4;
  const x = new Float64Array(n).map((_, i) => i * 1e-3),
    y = new Float64Array(n).fill(1);
  const run = () => {
    for (let r = 0; r < reps; r++)
      for (let i = 0; i < n; i++) {
        const a = x[i]!,
          b = y[i]!;
        y[i] = (a * m + b * k) * 0.5 + a * 1e-3;
      }
  };
  run();
  const t0 = performance.now();
  run();
  const s = (performance.now() - t0) / 1000;
  if (!Number.isFinite(y[n - 1]!)) throw new Error("unreachable");
  return (5 * n * reps) / s / 1e9;
}

/** Kept and rejected pixel–face pairs of the benchmark scene at `size`². */
export async function pairCounts(size: number): Promise<{ kept: number; rejected: number }> {
  await init({ backend: "cpu" });
  const mesh = R.meshFromData(R.icosphereData(3, 1));
  const camera = R.perspectiveCamera({ distance: 3.2, elevation: 20, azimuth: 30 });
  const proj = R.projectPoints(camera, mesh.vertices);
  const xy = np.take(proj.xy, mesh.faces, 0).dataSync(),
    z = np.take(proj.depth, mesh.faces, 0).dataSync();
  const F = mesh.faces.shape[0]!,
    sigma = 1 / size ** 2,
    T = pruneThreshold(1e-4);
  const p = {
    width: size,
    height: size,
    sigma,
    prune: T,
    distFunc: "euclidean" as const,
    gamma: 1e-4,
    near: 1,
    far: 100,
    layers: 1,
    margin: Math.sqrt(T * sigma),
  };
  const t = faceTableFor(xy, z, F, p);
  const bins = binsOf(t, { include: new Uint8Array(F).fill(1), colour: new Uint8Array(F).fill(1) }, p);
  const pr = new Pair();
  let kept = 0,
    rejected = 0;
  for (let r = 0; r < size; r++)
    for (let c = 0; c < size; c++) {
      const tile = Math.floor(r / bins.size) * bins.nx + Math.floor(c / bins.size),
        px = ndcX(c, size),
        py = ndcY(r, size);
      for (let i = bins.start[tile]!; i < bins.start[tile + 1]!; i++) {
        const f = bins.faces[i]!;
        if (px < t.lo[2 * f]! || px > t.hi[2 * f]! || py < t.lo[2 * f + 1]! || py > t.hi[2 * f + 1]!) continue;
        pair(t, f, px, py, p, pr);
        if (pr.keep) kept++;
        else rejected++;
      }
    }
  return { kept, rejected };
}

export async function renderFloor(rows: readonly RenderBenchRow[]): Promise<FloorRow[]> {
  const gflops = scalarRate();
  // The floor is the CPU's: scalar JavaScript on one core.
  const sizes = [
    ...new Set(rows.filter((r) => r.workload === "softras-forward+backward" && r.backend === "cpu").map((r) => r.size)),
  ];
  const out: FloorRow[] = [];
  for (const size of sizes) {
    const { kept, rejected } = await pairCounts(size);
    const flops = kept * (OPS.forward + OPS.backward) + 2 * rejected * OPS.rejected;
    const floorMs = (flops / (gflops * 1e9)) * 1000;
    const measured = rows.find(
      (r) =>
        r.workload === "softras-forward+backward" &&
        r.size === size &&
        r.mode === "jit" &&
        r.path === "fused" &&
        r.backend === "cpu",
    );
    out.push({
      workload: "softras-floor",
      size,
      keptPairs: kept,
      rejectedPairs: rejected,
      mflop: Number((flops / 1e6).toFixed(1)),
      gflops: Number(gflops.toFixed(2)),
      floorMs: Number(floorMs.toFixed(1)),
      measuredMs: measured?.msMedian ?? null,
    });
  }
  return out;
}
