/**
 * Physics benchmark (issue 6): FEM rollouts on tet box meshes of ~100, 1,000 and 10,000 tets —
 * forward steps/s and forward+backward steps/s (gradient of a loss on the final state w.r.t. the
 * per-tet μ, λ, damping and activation) — eager and jit, on the CPU backend (and WebGPU when asked
 * for and available). The shape of gradSim's Table 4, whose GPU numbers ride along for reference.
 *
 *   import { physicsBench } from "./physics.js";  const rows = await physicsBench();
 *   npx tsx bench/physics.ts [--backend cpu] [--sizes 100,1000,10000]
 */
import { grad, init, jit, models, np, type Array } from "gradsim";

const { contact, fem, meshes, particles } = models;
import { timeIt } from "./lib.js";

export interface PhysicsBenchRow {
  readonly workload: "fem-forward" | "fem-forward+backward";
  /** Number of tets. */
  readonly size: number;
  readonly backend: string;
  readonly mode: "eager" | "jit";
  readonly stepsPerSec: number;
  /** Steps per timed rollout, and the median of the timed runs (ms). */
  readonly steps: number;
  readonly msMedian: number;
  /** gradSim Table 4 (GPU, dflex): forward DP / backward DP steps/s at this size. */
  readonly paperGpuStepsPerSec: number;
}

export interface PhysicsBenchOptions {
  readonly sizes?: readonly number[];
  readonly backend?: "cpu" | "webgpu";
  readonly modes?: readonly ("eager" | "jit")[];
  readonly runs?: number;
  /** Print a table to stdout (default true). */
  readonly print?: boolean;
}

const PAPER: Record<number, [number, number]> = { 100: [9057, 3721], 1000: [4174, 1644], 10000: [3721, 1429] };

/**
 * Height of the box's bottom face above the ground at t = 0: half a millimetre, so that the body
 * (falling at 0.5 m/s) lands in the second substep and every timed rollout, even the 4-substep
 * one at 10,000 tets, includes ground contact (normal penalty, damping and friction).
 */
export const BOX_LIFT = 0.0005;

/** A box of ~size/5 cubes (5 tets each), as flat as the paper's objects are compact. */
export function boxFor(size: number): models.meshes.TetMesh {
  const cubes = Math.max(1, Math.round(size / 5));
  const nz = Math.max(1, Math.round(Math.cbrt(cubes / 4))),
    ny = Math.max(1, Math.round(Math.sqrt(cubes / (2 * nz))));
  const nx = Math.max(1, Math.round(cubes / (ny * nz)));
  return meshes.tetBox({ cells: [nx, ny, nz], size: [0.05 * nx, 0.05 * ny, 0.05 * nz], origin: [0, BOX_LIFT, 0] });
}

/** Steps per timed rollout: enough work to time, few enough to keep the whole benchmark near a minute. */
export const stepsFor = (tets: number) => (tets <= 200 ? 40 : tets <= 2000 ? 16 : 4);

/** Median ms of `runs` timed calls after one warm-up call (tracing, compilation). */
const time = async (fn: () => Promise<unknown>, runs: number): Promise<number> =>
  (await timeIt(fn, { warmup: 1, runs })).ms_median;

export async function physicsBench(o: PhysicsBenchOptions = {}): Promise<PhysicsBenchRow[]> {
  const backend = o.backend ?? "cpu";
  await init({ backend });
  const rows: PhysicsBenchRow[] = [];
  for (const target of o.sizes ?? [100, 1000, 10000]) {
    const mesh = boxFor(target);
    const tets = meshes.tetCount(mesh);
    const { system, state } = fem.softBody(mesh, {
      density: 1000,
      mu: 1e4,
      lambda: 1e4,
      damping: 1,
      velocity: [1, -0.5, 0],
      ground: contact.ground({ ke: 1e4, kd: 10, kf: 10, mu: 0.5 }),
    });
    const steps = stepsFor(tets);
    const opts = { dt: 1 / 1920, substeps: steps, frames: 1 };
    type Material = { mu: Array; lambda: Array; damping: Array; activation: Array };
    const material: Material = {
      mu: system.tets!.mu,
      lambda: system.tets!.lambda,
      damping: system.tets!.damping,
      activation: system.tets!.activation,
    };
    const forward = (m: Material) => particles.simulate({ ...system, tets: { ...system.tets!, ...m } }, state, opts).x;
    const loss = (m: Material) => np.sum(np.square(forward(m)));
    const runs = o.runs ?? (tets > 5000 ? 3 : 5);
    for (const mode of o.modes ?? (["eager", "jit"] as const)) {
      const fwd = mode === "jit" ? jit(forward) : forward;
      const bwd = mode === "jit" ? jit(grad(loss)) : grad(loss);
      const paper = PAPER[target] ?? [NaN, NaN];
      const msF = await time(() => fwd(material).data(), runs);
      rows.push({
        workload: "fem-forward",
        size: tets,
        backend,
        mode,
        stepsPerSec: round((1000 * steps) / msF),
        steps,
        msMedian: round(msF),
        paperGpuStepsPerSec: paper[0],
      });
      const msB = await time(async () => {
        const g = bwd(material) as Material;
        return g.mu.data();
      }, runs);
      rows.push({
        workload: "fem-forward+backward",
        size: tets,
        backend,
        mode,
        stepsPerSec: round((1000 * steps) / msB),
        steps,
        msMedian: round(msB),
        paperGpuStepsPerSec: paper[1],
      });
    }
  }
  if (o.print ?? true) printTable(rows);
  return rows;
}

const round = (v: number) => Math.round(v * 10) / 10;

export function printTable(rows: readonly PhysicsBenchRow[]): void {
  const head = ["workload", "tets", "backend", "mode", "steps/s", "ms/rollout", "steps", "paper GPU steps/s"];
  const body = rows.map((r) => [
    r.workload,
    String(r.size),
    r.backend,
    r.mode,
    r.stepsPerSec.toFixed(1),
    r.msMedian.toFixed(1),
    String(r.steps),
    String(r.paperGpuStepsPerSec),
  ]);
  const width = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(width[i]!)).join("  ");
  console.log([line(head), line(width.map((w) => "-".repeat(w))), ...body.map(line)].join("\n"));
}

// Run directly: print JSON rows, then the table.
if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const sizes = arg("sizes")?.split(",").map(Number);
  const rows = await physicsBench({
    sizes,
    backend: (arg("backend") as "cpu" | "webgpu" | undefined) ?? "cpu",
    print: false,
  });
  for (const r of rows) console.log(JSON.stringify(r));
  printTable(rows);
}
