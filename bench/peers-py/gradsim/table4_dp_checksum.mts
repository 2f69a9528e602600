/**
 * gradsim's Table 4 DP workload (the code of bench/table4.ts's DP rows) with checksums to compare
 * with table4_dp_jax.py -- sum of the final positions, sum of their squares, sum |d loss / d material| --
 * and its first-call (trace + compile + run) and steady-state times, same protocol as bench/lib.ts.
 *   npx tsx table4_dp_checksum.mts --gradsim <path to a gradsim checkout> [--sizes 1000,10000] [--steps S]
 * (run from the gradsim checkout so that its node_modules resolve).
 */
import path from "node:path";
const arg = (k: string) => {
  const i = process.argv.indexOf(`--${k}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const root = path.resolve(arg("gradsim") ?? ".");
const { grad, init, jit, np } = await import(path.join(root, "src/index.ts"));
const { contact, fem, meshes, particles } = await import(path.join(root, "src/models/index.ts"));
const { boxFor, stepsFor } = await import(path.join(root, "bench/physics.ts"));
const { timeIt } = await import(path.join(root, "bench/lib.ts"));
await init({ backend: "cpu" });
for (const target of (arg("sizes") ?? "1000,10000").split(",").map(Number)) {
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
  const material = {
    mu: system.tets.mu,
    lambda: system.tets.lambda,
    damping: system.tets.damping,
    activation: system.tets.activation,
  };
  const steps = arg("steps") ? Number(arg("steps")) : stepsFor(tets),
    dt = 1 / 1920;
  const final = (m: typeof material) =>
    particles.simulate({ ...system, tets: { ...system.tets, ...m } }, state, { dt, substeps: steps, frames: 1 }).x;
  const fwd = jit(final),
    bwd = jit(grad((m: typeof material) => np.sum(np.square(final(m)))));
  const runs = Number(arg("runs") ?? 5);
  const rf = await timeIt(() => fwd(material).data(), { warmup: 1, runs });
  let s = 0,
    s2 = 0;
  for (const v of Array.from(rf.out as ArrayLike<number>)) {
    s += v;
    s2 += v * v;
  }
  const rb = await timeIt(
    async () => {
      const g = bwd(material);
      const o: Record<string, ArrayLike<number>> = {};
      for (const k of Object.keys(material)) o[k] = await g[k].data();
      return o;
    },
    { warmup: 1, runs },
  );
  const cs: Record<string, number> = {};
  for (const k of Object.keys(material).sort()) {
    let a = 0;
    for (const v of rb.out[k]) a += Math.abs(v);
    cs[k] = a;
  }
  process.stdout.write(
    JSON.stringify({
      peer: "gradsim",
      size: tets,
      steps,
      fwd_ms_median: rf.ms_median,
      fwd_ms_first: rf.ms_first,
      bwd_ms_median: rb.ms_median,
      bwd_ms_first: rb.ms_first,
      checksum_forward: s,
      loss: s2,
      checksum_backward: cs,
    }) + "\n",
  );
}
