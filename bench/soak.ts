/**
 * Soak test (`npm run bench -- soak`): 10,000 steps of a jitted value-and-gradient of a small
 * rollout (a 2-cell soft beam, 10 frames × 5 substeps, the loss a function of its Lamé μ), or with
 * `--workload fit60` of the demo's 60-frame video fit, the parameter updated each step, on the CPU
 * and on WebGPU. Prints RSS and V8 heap every 500 steps
 * and the growth per 1,000 steps after warm-up (from step 1,000 on, or the last four fifths of a shorter run): memory
 * that grows there is a leak.
 *
 *   npx tsx bench/soak.ts [--steps 10000] [--every 500] [--workload rollout|fit60]
 *       (each backend in its own process, with --expose-gc)
 */
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { grad, init, jit, models, np, sysid, type Array } from "gradsim";

export interface SoakSample {
  readonly step: number;
  readonly rssMB: number;
  readonly heapMB: number;
}
export interface SoakRow {
  readonly workload: "soak";
  readonly kind: SoakWorkload;
  readonly backend: string;
  readonly steps: number;
  readonly seconds: number;
  readonly samples: readonly SoakSample[];
  /** Samples from this step on are after warm-up (the first 1,000 steps, or the first fifth of a shorter run). */
  readonly warmUp: number;
  /** Least-squares slope after warm-up, MB per 1,000 steps. */
  readonly rssSlope: number;
  readonly heapSlope: number;
  /** The process's peak resident memory (MB). */
  readonly peakRssMB: number;
}

const slope = (pts: readonly [number, number][]): number => {
  const n = pts.length,
    mx = pts.reduce((s, p) => s + p[0], 0) / n,
    my = pts.reduce((s, p) => s + p[1], 0) / n;
  const sxx = pts.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  return sxx > 0 ? (pts.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0) / sxx) * 1000 : 0;
};

/**
 * rollout: a 2-cell soft beam, 10 frames × 5 substeps; fit60: the demo's 60-frame, 64² rigid-body video fit (the image
 * loss's gradient w.r.t. log mass).
 */
export type SoakWorkload = "rollout" | "fit60";

function workload(kind: SoakWorkload): { loss: (p: Array) => Array; start: number; lr: number } {
  if (kind === "fit60") {
    const scene = sysid.buildRigidScene(sysid.defaultMassScene(64));
    const problem = sysid.rigidProblem(scene);
    const video = problem.render!(
      problem.simulate({ mass: np.array(2.5, { dtype: "float32" }) } as sysid.Params, scene.spec.frames),
    );
    const loss = (u: Array) =>
      np.mean(
        np.square(
          np.sub(problem.render!(problem.simulate({ mass: np.exp(u) } as sysid.Params, scene.spec.frames)), video),
        ),
      );
    return { loss, start: Math.log(6), lr: 1 };
  }
  const mesh = models.meshes.tetBeam(0.4, 0.1, 0.1, [2, 1, 1]);
  const { system, state } = models.fem.softBody(mesh, {
    mu: 500,
    lambda: 500,
    density: 100,
    pinned: [0, 1, 2, 3],
    damping: 1,
  });
  const loss = (mu: Array) => {
    const tets = { ...system.tets!, mu: np.broadcastTo(mu, system.tets!.mu.shape) };
    const x = models.particles.simulate({ ...system, tets }, state, { dt: 1e-3, substeps: 5, frames: 10 }).x;
    return np.mean(np.square(x));
  };
  return { loss, start: 500, lr: 1e-3 };
}

export async function soak(
  backend: "cpu" | "webgpu",
  steps: number,
  every: number,
  log: (m: string) => void,
  kind: SoakWorkload = "rollout",
): Promise<SoakRow> {
  await init({ backend });
  const w = workload(kind);
  const step = jit((mu: Array) => {
    const g = grad(w.loss)(mu);
    return [np.sub(mu, np.mul(g, w.lr)), g] as [Array, Array];
  });
  let mu = np.array(w.start, { dtype: "float32" });
  const samples: SoakSample[] = [];
  const t0 = performance.now();
  for (let k = 1; k <= steps; k++) {
    const [next, g] = step(mu);
    await g.data();
    mu = next;
    if (k % every === 0) {
      // With --expose-gc (as this script runs itself), sample after a full collection: what is still referenced.
      (globalThis as { gc?: () => void }).gc?.();
      const m = process.memoryUsage();
      samples.push({
        step: k,
        rssMB: Number((m.rss / 2 ** 20).toFixed(1)),
        heapMB: Number((m.heapUsed / 2 ** 20).toFixed(1)),
      });
      log(`${kind} ${backend} step ${k}: RSS ${samples.at(-1)!.rssMB} MB, heap ${samples.at(-1)!.heapMB} MB`);
    }
  }
  const warmUp = Math.min(1000, steps / 5);
  const after = samples.filter((s) => s.step >= warmUp);
  return {
    workload: "soak",
    kind,
    backend,
    steps,
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
    samples,
    warmUp,
    rssSlope: Number(slope(after.map((s) => [s.step, s.rssMB])).toFixed(2)),
    heapSlope: Number(slope(after.map((s) => [s.step, s.heapMB])).toFixed(2)),
    peakRssMB: Number((process.resourceUsage().maxRSS / 1024).toFixed(1)),
  };
}

/**
 * One fresh process per backend (with --expose-gc), so one's memory does not show in the other's;
 * the rows of those that finished (a failure is reported on stderr).
 */
export function soakInFreshProcesses(
  backends: readonly string[],
  steps: number,
  every: number,
  kind: SoakWorkload,
  stderr: "inherit" | "pipe" = "pipe",
): SoakRow[] {
  const rows: SoakRow[] = [];
  const env = { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? tmpdir() };
  for (const b of backends) {
    const r = spawnSync(
      process.execPath,
      [
        "--expose-gc",
        "--import",
        "tsx",
        fileURLToPath(import.meta.url),
        "--backend",
        b,
        "--steps",
        String(steps),
        "--every",
        String(every),
        "--workload",
        kind,
      ],
      {
        cwd: fileURLToPath(new URL("..", import.meta.url)),
        env,
        stdio: ["ignore", "pipe", stderr],
        encoding: "utf8",
        timeout: 1800_000,
        maxBuffer: 64 << 20,
      },
    );
    const line = (r.stdout ?? "").split("\n").find((l) => l.startsWith("{"));
    if (line) rows.push(JSON.parse(line) as SoakRow);
    else
      process.stderr.write(
        `soak ${kind} on ${b} failed (exit ${r.status})` +
          `${r.stderr ? `: ${r.stderr.trim().split("\n").slice(-2).join(" | ")}` : ""}\n`,
      );
  }
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (k: string) => {
    const i = process.argv.indexOf(`--${k}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const steps = Number(arg("steps") ?? 10_000),
    every = Number(arg("every") ?? 500);
  const one = arg("backend") as "cpu" | "webgpu" | undefined;
  const kind = (arg("workload") ?? "rollout") as SoakWorkload;
  if (kind !== "rollout" && kind !== "fit60") {
    process.stderr.write(`--workload: rollout or fit60, got ${kind}\n`);
    process.exit(2);
  }
  if (one) {
    const row = await soak(one, steps, every, (m) => process.stderr.write(`${m}\n`), kind);
    process.stdout.write(JSON.stringify(row) + "\n");
  } else {
    for (const row of soakInFreshProcesses(["cpu", "webgpu"], steps, every, kind, "inherit")) {
      process.stdout.write(JSON.stringify(row) + "\n");
      process.stderr.write(
        `soak ${kind} ${row.backend}: ${steps} steps in ${row.seconds} s; peak RSS ${row.peakRssMB} MB; ` +
          `after warm-up RSS ${row.rssSlope} MB and heap ${row.heapSlope} MB per 1,000 steps\n`,
      );
    }
  }
}
