/**
 * The WebGPU benchmarks for a machine with a real GPU: W4 (energy, energy + gradient at 10k and
 * 100k tets), the Table 4 rows (DP forward/backward, DR forward, DP+DR backward) and the renderer
 * (SoftRas and DIB-R, forward and forward+backward, jit, fused kernels), in one process under a
 * time budget, written to one JSON file (rewritten after every row, so a run cut short still
 * leaves what it measured). Bundled with its dependencies by bench/device/pack.sh and run by
 * bench/device/run.sh; here, `npx tsx bench/device/bench.ts --out x.json` works too.
 *
 *   bench.mjs --out FILE [--budget 420] [--backend webgpu]
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { devices, init, jit, np, valueAndGrad, type Array } from "gradsim";
import { timeIt } from "../lib.js";
import { w4Inputs } from "../peers/lib/data.mjs";
import { femEnergy } from "../workloads/fem.js";
import { measureRender } from "../render.js";
import { table4 } from "../table4.js";

const arg = (k: string) => {
  const i = process.argv.indexOf(`--${k}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const out = arg("out") ?? "device-bench.json";
const budgetS = Number(arg("budget") ?? 420);
const backend = (arg("backend") ?? "webgpu") as "cpu" | "webgpu";
const t0 = performance.now();
const elapsedS = () => (performance.now() - t0) / 1000;

type Row = Record<string, unknown>;
const report: {
  started: string;
  node: string;
  platform: string;
  backend: string;
  budget_s: number;
  environment: Record<string, string | undefined>;
  adapter?: unknown;
  rows: Row[];
  skipped: string[];
  errors: Row[];
  elapsed_s?: number;
  finished?: boolean;
} = {
  started: new Date().toISOString(),
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  backend,
  budget_s: budgetS,
  environment: {
    VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES,
    LD_LIBRARY_PATH: process.env.LD_LIBRARY_PATH,
    DEVICE_NOTES: process.env.DEVICE_NOTES,
  },
  rows: [],
  skipped: [],
  errors: [],
};
const save = () => {
  report.elapsed_s = Math.round(elapsedS() * 10) / 10;
  writeFileSync(out, JSON.stringify(report, null, 1) + "\n");
};
const log = (m: string) => process.stderr.write(`[${elapsedS().toFixed(0)} s] ${m}\n`);
const record = (r: Row) => {
  report.rows.push(r);
  save();
  log(JSON.stringify(r));
};

/** Runs one measurement unless the budget would be exceeded (each is given its expected seconds). */
async function step(name: string, expectS: number, fn: () => Promise<void>): Promise<void> {
  if (elapsedS() + expectS > budgetS) {
    report.skipped.push(`${name} (budget: ${elapsedS().toFixed(0)} s used of ${budgetS})`);
    save();
    return;
  }
  try {
    await fn();
  } catch (e) {
    report.errors.push({ name, error: String((e as Error).message ?? e).slice(0, 500) });
    save();
    log(`${name} failed: ${(e as Error).message}`);
  }
}

save();
try {
  await init({ backend });
  report.adapter = devices().find((d) => d.name === backend) ?? devices();
  save();
  log(`adapter: ${JSON.stringify(report.adapter)}`);
} catch (e) {
  report.errors.push({ name: "init", error: String((e as Error).message ?? e) });
  report.finished = false;
  save();
  process.exit(1);
}

// W4: energy and energy + gradient (jit), 10k and 100k tets.
for (const size of [10000, 100000])
  for (const variant of ["energy", "grad"] as const) {
    await step(`W4 ${variant} ${size}`, size > 50000 ? 30 : 15, async () => {
      const d = w4Inputs(size);
      const T = d.T as number;
      const x = np.array(d.x).reshape([d.N, 3]);
      const tets = np.array(d.tets, { dtype: "int32" }).reshape([T, 4]);
      const DmInv = np.array(d.DmInv).reshape([T, 3, 3]);
      const vol = np.array(d.vol);
      const energy = (p: Array) => femEnergy(p, tets, DmInv, vol, d.mu, d.lam);
      const f = variant === "grad" ? jit(valueAndGrad(energy)) : jit(energy);
      const r = await timeIt(
        async () => {
          const o = f(x);
          if (globalThis.Array.isArray(o)) {
            const [E, g] = o as [Array, Array];
            await g.data();
            return (await E.data())[0]!;
          }
          return (await (o as Array).data())[0]!;
        },
        { warmup: 3, runs: 11 },
      );
      record({
        workload: variant === "grad" ? "W4-fem-energy-grad" : "W4-fem-energy",
        size,
        backend,
        mode: "jit",
        ms_median: r.ms_median,
        ms_min: r.ms_min,
        ms_first: r.ms_first,
        runs: r.runs,
        energy: r.out,
      });
    });
  }

// Table 4: all four rows at 1,000 and 10,000 tets; the renderer at 64² and 128²; then the other
// Table 4 sizes and 256² as the budget allows (on a software adapter they do not all fit).
const table4At = (size: number) =>
  step(`Table 4 ${size}`, size >= 5000 ? 90 : 45, () => table4(backend, [size], (r) => record({ ...r })));
const renderAt = async (size: number) => {
  for (const rasterizer of ["softras", "dibr"] as const)
    for (const kind of ["forward", "forward+backward"] as const) {
      await step(`render ${rasterizer} ${kind} ${size}`, size >= 256 ? 25 : 12, async () => {
        record({ ...(await measureRender({ size, rasterizer, mode: "jit", path: "fused", kind, backend, runs: 5 })) });
      });
    }
};
await table4At(1000);
await table4At(10000);
await renderAt(64);
await renderAt(128);
await table4At(100);
await renderAt(256);
await table4At(5000);

report.finished = true;
save();
log(`wrote ${out}`);
process.exit(0);
