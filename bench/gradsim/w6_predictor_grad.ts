// W6 predictor-grad: d/dparams of a RISP state predictor's L1 error on a minibatch — risp-state's
// network (32²×3 images with coordinate channels, stages of 16, 32, 32 channels, a flattened
// head, 9 outputs), `--size` images per batch: the conv-heavy step of every predictor training.
import { jit, random, valueAndGrad, vmap, type Array } from "gradsim";
import { networks } from "gradsim/node";
import { emit, emitError, parseArgs, read, setup, sum, timeIt } from "../lib.js";

const args = parseArgs({ backend: "cpu", size: 16, jit: 1 });
const base = {
  peer: "gradsim",
  workload: "W6-predictor-grad",
  size: args.size,
  backend: args.backend,
  mode: args.jit ? "jit" : "eager",
};
try {
  await setup(args.backend, args.kernels);
  const B = Number(args.size);
  const cfg: networks.PredictorConfig = {
    image: [32, 32, 3],
    outputs: 9,
    widths: [16, 32, 32],
    coordinates: true,
    head: "flatten",
  };
  const params = networks.initPredictor(random.key(1), cfg);
  const images = random.uniform(random.key(2), [B, 32, 32, 3]),
    states = random.uniform(random.key(3), [B, 9]);
  const loss = (p: networks.PredictorParams) =>
    networks.stateError(vmap((im: Array) => networks.predictor(p, cfg, im))(images), states);
  let step = valueAndGrad(loss);
  if (args.jit) step = jit(step);
  const r = await timeIt(async () => {
    const [l, g] = step(params) as [Array, networks.PredictorParams];
    return Promise.all([read(l), read(g.head.w)]);
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
