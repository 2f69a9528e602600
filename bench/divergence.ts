/**
 * The cost of divergence detection (models' `simulate` checks an eager CPU rollout's states by
 * default, one pass over host memory): the same rollout with checkFinite on and off, side by side,
 * for soft bodies of 120 and 1,080 tets (30 frames × 10 substeps). One JSON row per configuration.
 *
 *   npx tsx bench/divergence.ts
 */
import { init, models } from "../src/index.js";
import { timeIt } from "./lib.js";

await init({ backend: "cpu" });
for (const cells of [[4, 3, 2], [12, 5, 3]] as const) {
  const mesh = models.meshes.tetBox({ cells: [...cells], size: [1, 0.4, 0.3] });
  const { system, state } = models.fem.softBody(mesh, { mu: 2000, lambda: 2000, density: 100, damping: 1, pinned: [0, 1, 2, 3] });
  const tets = mesh.tets.length / 4;
  const opts = { dt: 2e-4, substeps: 10, frames: 30 };
  for (const checkFinite of [true, false]) {
    // Both runs read every state back (the check reads them on the host), so only the check differs.
    const t = await timeIt(async () => { const s = models.particles.simulate(system, state, { ...opts, checkFinite }); await s.x.data(); return s.v.data(); }, { warmup: 2, runs: 7 });
    const stepsPerSec = Math.round((opts.frames * opts.substeps * 1000) / t.ms_median);
    process.stdout.write(JSON.stringify({ workload: `fem-rollout eager${checkFinite ? " (divergence check)" : " (unchecked)"}`, size: tets, backend: "cpu", mode: "eager", stepsPerSec, msMedian: t.ms_median }) + "\n");
  }
}
