// W3 mlp-grad: d/dparams of mean((MLP(X) − Y)²), MLP 64→256→256→8 (tanh hidden), batch 1024.
import { grad, jit, np, type Array } from "gradsim";
import { emit, emitError, parseArgs, read, setup, sum, timeIt } from "../lib.js";
import { W3_PARAM_NAMES, w3Inputs } from "../peers/lib/data.mjs";

const args = parseArgs({ backend: "cpu", size: 1024, jit: 1 });
const base = {
  peer: "gradsim",
  workload: "W3-mlp-grad",
  size: args.size,
  backend: args.backend,
  mode: args.jit ? "jit" : "eager",
};
try {
  await setup(args.backend, args.kernels);
  const inp = w3Inputs(Number(args.size));
  const shapes = inp.shapes as Record<string, number[]>;
  const params: Record<string, Array> = Object.fromEntries(
    W3_PARAM_NAMES.map((k: string) => [
      k,
      np.array((inp.params as Record<string, Float32Array>)[k]!).reshape(shapes[k]!),
    ]),
  );
  const X = np.array(inp.X).reshape(shapes.X!),
    Y = np.array(inp.Y).reshape(shapes.Y!);
  const loss = (p: Record<string, Array>, x: Array, y: Array) => {
    const h1 = np.tanh(np.add(np.matmul(x, p.W1!), p.b1!));
    const h2 = np.tanh(np.add(np.matmul(h1, p.W2!), p.b2!));
    return np.mean(np.square(np.sub(np.add(np.matmul(h2, p.W3!), p.b3!), y)));
  };
  let g = grad(loss);
  if (args.jit) g = jit(g);
  const r = await timeIt(async () => {
    const gs = g(params, X, Y) as Record<string, Array>;
    return Promise.all(W3_PARAM_NAMES.map((k: string) => read(gs[k]!)));
  }, args);
  emit({
    ...base,
    ms_median: r.ms_median,
    ms_min: r.ms_min,
    runs: r.runs,
    checksum: r.out.reduce((s, a) => s + sum(a, true), 0),
    ms_first: r.ms_first,
  });
} catch (e) {
  emitError(base, e);
}
