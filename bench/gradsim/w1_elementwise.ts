// W1 elementwise: sum(tanh(1.5x+0.5)·exp(−x²) + sin x) over 1M float32 (fwd), or its gradient (grad).
import { grad, jit, np, type Array } from "gradsim";
import { emit, emitError, parseArgs, read, setup, sum, timeIt } from "../lib.js";
import { w1Input } from "../peers/lib/data.mjs";

const args = parseArgs({ backend: "cpu", size: 1_000_000, variant: "fwd", jit: 1 });
const base = {
  peer: "gradsim",
  workload: `W1-elementwise-${args.variant}`,
  size: args.size,
  backend: args.backend,
  mode: args.jit ? "jit" : "eager",
};
try {
  await setup(args.backend, args.kernels);
  const x = np.array(w1Input(Number(args.size)));
  const f = (v: Array) =>
    np.sum(np.add(np.mul(np.tanh(np.add(np.mul(v, 1.5), 0.5)), np.exp(np.neg(np.square(v)))), np.sin(v)));
  let fn: (v: Array) => Array = args.variant === "grad" ? grad(f) : f;
  if (args.jit) fn = jit(fn);
  const r = await timeIt(async () => read(fn(x)), args);
  emit({ ...base, ms_median: r.ms_median, ms_min: r.ms_min, runs: r.runs, checksum: sum(r.out), ms_first: r.ms_first });
} catch (e) {
  emitError(base, e);
}
