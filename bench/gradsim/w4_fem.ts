// W4 fem: stable Neo-Hookean energy over a tet box mesh (variant energy), or energy + gradient w.r.t. positions (grad).
import { jit, np, valueAndGrad, type Array } from "gradsim";
import { emit, emitError, parseArgs, read, setup, sum, timeIt } from "../lib.js";
import { w4Inputs } from "../peers/lib/data.mjs";
import { femEnergy } from "../workloads/fem.js";

const args = parseArgs({ backend: "cpu", size: 10000, variant: "grad", jit: 1, kernels: "wasm" });
const base = {
  peer: "gradsim",
  workload: args.variant === "grad" ? "W4-fem-energy-grad" : "W4-fem-energy",
  size: args.size,
  backend: args.backend,
  mode: args.jit ? "jit" : "eager",
  kernels: args.kernels,
};
try {
  await setup(args.backend, args.kernels);
  const d = w4Inputs(Number(args.size));
  const T = d.T as number;
  const x = np.array(d.x).reshape([d.N, 3]);
  const tets = np.array(d.tets, { dtype: "int32" }).reshape([T, 4]);
  const DmInv = np.array(d.DmInv).reshape([T, 3, 3]);
  const vol = np.array(d.vol);
  const energy = (p: Array) => femEnergy(p, tets, DmInv, vol, d.mu, d.lam);
  if (args.variant === "grad") {
    let vg = valueAndGrad(energy);
    if (args.jit) vg = jit(vg);
    const r = await timeIt(async () => {
      const [E, g] = vg(x) as [Array, Array];
      return { E: (await read(E))[0]!, g: await read(g) };
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
  } else {
    const e = args.jit ? jit(energy) : energy;
    const r = await timeIt(async () => (await read(e(x)))[0]!, args);
    emit({ ...base, ms_median: r.ms_median, ms_min: r.ms_min, runs: r.runs, checksum: r.out, ms_first: r.ms_first });
  }
} catch (e) {
  emitError(base, e);
}
