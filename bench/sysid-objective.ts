/**
 * One step of a system-identification fit: the jitted value and gradient of Table 1's and
 * Table 2's objectives (a rigid body under contact, 60 frames × 16 substeps, rendered or as 3-D
 * states) w.r.t. the unknowns, on the CPU. What a paper-size reproduction spends its time in.
 * One JSON row per objective.
 *
 *   npx tsx bench/sysid-objective.ts [--runs 20]
 */
import { init, jit, makeRng, np, sysid, type Array } from "gradsim";
import { contactBenchmark } from "../examples/rigid-contact.js";
import { massBenchmark } from "../examples/rigid-mass.js";
import { parseArgs, round, timeIt } from "./lib.js";

const args = parseArgs({ runs: 20, warmup: 3 });
await init({ backend: "cpu" });
const scenes: [string, sysid.RigidTaskConfig][] = [
  ["table1-mass", massBenchmark(false)],
  ["table2-contact", contactBenchmark(false)],
];
for (const [name, config] of scenes) {
  const task = sysid.rigidDatasetTask(config, { progress: false });
  const draw = task.sample(makeRng(1));
  const layout = new sysid.Layout(task.unknowns);
  const problem = draw.problem();
  const observed = sysid.observe(
    problem,
    layout.params(np.array(layout.flat(draw.truth, "truth"), { dtype: "float32" })),
    true,
  );
  const u = np.array(layout.flat(draw.initial, "initial"), { dtype: "float32" });
  for (const kind of ["pixels", "states"] as const) {
    const objective = sysid.buildObjective(problem, observed, layout, { kind });
    const valueAndGrad = jit((x: Array) => objective.valueAndGrad(x));
    const t = await timeIt(
      async () => {
        const [, g] = valueAndGrad(u) as [Array, Array];
        return g.data();
      },
      { warmup: args.warmup, runs: args.runs },
    );
    process.stdout.write(
      JSON.stringify({
        workload: `${name} objective value+grad (${kind})`,
        size: `${problem.frames} frames`,
        backend: "cpu",
        mode: "jit",
        msMedian: t.ms_median,
        msMin: t.ms_min,
        msFirst: round(t.ms_first, 0),
      }) + "\n",
    );
  }
}
