// W2 matmul: n×n @ n×n float32.
import { jit, np, type Array } from "gradsim";
import { emit, emitError, parseArgs, read, setup, sum, timeIt } from "../lib.js";
import { w2Inputs } from "../peers/lib/data.mjs";

const args = parseArgs({ backend: "cpu", size: 512, jit: 1 });
const base = {
  peer: "gradsim",
  workload: "W2-matmul",
  size: args.size,
  backend: args.backend,
  mode: args.jit ? "jit" : "eager",
};
try {
  await setup(args.backend, args.kernels);
  const { A, B, n } = w2Inputs(Number(args.size));
  const a = np.array(A).reshape([n, n]),
    b = np.array(B).reshape([n, n]);
  let fn = (p: Array, q: Array) => np.matmul(p, q);
  if (args.jit) fn = jit(fn);
  const r = await timeIt(async () => read(fn(a, b)), args);
  emit({ ...base, ms_median: r.ms_median, ms_min: r.ms_min, runs: r.runs, checksum: sum(r.out), ms_first: r.ms_first });
} catch (e) {
  emitError(base, e);
}
