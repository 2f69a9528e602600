// W5: vmap of W4's energy+gradient over 64 deformed copies with per-copy mu (64 × 1000 tets).
import { jit, np, valueAndGrad, vmap, type Array } from "gradsim";
import { emit, emitError, parseArgs, read, setup, sum, timeIt } from "../lib.js";
import { w5Inputs } from "../peers/lib/data.mjs";
import { femEnergy } from "../workloads/fem.js";

const args = parseArgs({ backend: "cpu", size: "64x1000", jit: 1 });
const base = {
  peer: "gradsim",
  workload: "W5-fem-vmap-energy-grad",
  size: args.size,
  backend: args.backend,
  mode: args.jit ? "jit" : "eager",
};
try {
  await setup(args.backend, args.kernels);
  const [B, T0] = String(args.size).split("x").map(Number) as [number, number];
  const d = w5Inputs(B, T0);
  const T = d.T as number;
  const xb = np.array(d.xb).reshape([B, d.N, 3]);
  const mu = np.array(d.muB);
  const tets = np.array(d.tets, { dtype: "int32" }).reshape([T, 4]);
  const DmInv = np.array(d.DmInv).reshape([T, 3, 3]);
  const vol = np.array(d.vol);
  let f = vmap(valueAndGrad((x: Array, m: Array) => femEnergy(x, tets, DmInv, vol, m, d.lam)));
  if (args.jit) f = jit(f);
  const r = await timeIt(async () => {
    const [E, g] = f(xb, mu) as [Array, Array];
    return { E: sum(await read(E)), g: await read(g) };
  }, args);
  emit({
    ...base,
    ms_median: r.ms_median,
    ms_min: r.ms_min,
    runs: r.runs,
    checksum: sum(r.out.g, true),
    ms_first: r.ms_first,
    energy: r.out.E,
  });
} catch (e) {
  emitError(base, e);
}
