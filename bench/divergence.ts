/**
 * The cost of divergence detection (models' `simulate` checks an eager CPU rollout's states by
 * default, one pass over host memory): the check alone on a rollout's states, and the same rollout
 * with checkFinite on and off, timed in alternation (so drift in the machine's load hits both
 * alike), for soft bodies of 120 and 900 tets (30 frames × 10 substeps). One JSON row each.
 *
 *   npx tsx bench/divergence.ts
 */
import { init, models } from "gradsim";

const { findDivergence } = models;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

await init({ backend: "cpu" });
for (const cells of [
  [4, 3, 2],
  [12, 5, 3],
] as const) {
  const mesh = models.meshes.tetBox({ cells: [...cells], size: [1, 0.4, 0.3] });
  const { system, state } = models.fem.softBody(mesh, {
    mu: 2000,
    lambda: 2000,
    density: 100,
    damping: 1,
    pinned: [0, 1, 2, 3],
  });
  const tets = mesh.tets.length / 4;
  const opts = { dt: 2e-4, substeps: 10, frames: 30 };
  // Both read every state back (the check reads them on the host), so only the check differs.
  const once = async (checkFinite: boolean) => {
    const t0 = performance.now();
    const s = models.particles.simulate(system, state, { ...opts, checkFinite });
    await s.x.data();
    await s.v.data();
    return performance.now() - t0;
  };
  for (let i = 0; i < 3; i++) {
    await once(true);
    await once(false);
  }
  const times: Record<"on" | "off", number[]> = { on: [], off: [] };
  for (let i = 0; i < 15; i++) {
    times.on.push(await once(true));
    times.off.push(await once(false));
  }
  // The check alone, on the same states: what the rollout pays for it.
  const states = models.particles.simulate(system, state, { ...opts, checkFinite: false });
  const check: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    findDivergence(states, opts.frames);
    check.push(performance.now() - t0);
  }
  process.stdout.write(
    JSON.stringify({
      workload: "divergence check alone",
      size: tets,
      backend: "cpu",
      mode: "eager",
      msMedian: Number(median(check).toFixed(3)),
    }) + "\n",
  );
  for (const k of ["on", "off"] as const) {
    const ms = median(times[k]);
    process.stdout.write(
      JSON.stringify({
        workload: `fem-rollout eager (divergence check ${k})`,
        size: tets,
        backend: "cpu",
        mode: "eager",
        stepsPerSec: Math.round((opts.frames * opts.substeps * 1000) / ms),
        msMedian: Number(ms.toFixed(2)),
      }) + "\n",
    );
  }
}
