/**
 * Unknowns' names are checked: by `tsc` where they are written as literals (the simulator's
 * `params`, `initial`, `prior`), and at run time otherwise, where reading a name that is not an
 * unknown, when the simulation then fails, adds a line naming it and listing the unknowns (the
 * error used to be only "mul: … got undefined" deep in the math).
 */
import { describe, expect, it } from "vitest";
import { np, sysid, type Array } from "../src/index.js";

const FRAMES = 4;
const frames = np.array([0, 1, 2, 3], { dtype: "float32" });
const observed = { states: np.add(1, np.mul(2, frames)) };
const spec = {
  frames: FRAMES,
  observed,
  method: "states",
  settings: { optimizer: "lbfgs", steps: 2, progress: false },
} as const;

describe("unknowns' names", () => {
  it("tsc checks the simulator's params, the initial guess and the prior against the unknowns", () => {
    const run = () =>
      sysid.estimate({
        ...spec,
        unknowns: [{ name: "x0" }, { name: "speed" }],
        // @ts-expect-error: "sped" is not an unknown.
        simulate: (p) => np.add(p.x0, np.mul(p.sped, frames)),
        // @ts-expect-error: the initial guess misses "speed".
        initial: { x0: 0, sped: 1 },
        // @ts-expect-error: a prior for a name that is not an unknown.
        prior: { spede: [0, 1] },
      });
    expect(run).toBeTypeOf("function"); // (the call itself is checked below, where it runs)
  });

  it("a simulation that fails after reading a name that is not an unknown says so, listing the unknowns", async () => {
    const layout = new sysid.Layout([{ name: "x0" }, { name: "speed" }]);
    const p = layout.params(np.array([1, 2], { dtype: "float32" })) as sysid.Params;
    // Probing an optional parameter is not an error by itself (simulators write p.ke ?? default).
    expect(layout.explainMisreads(() => (p.ke ?? p.speed)!.shape)).toEqual([]);
    expect(Object.keys(p)).toEqual(["x0", "speed"]);
    expect(() => layout.explainMisreads(() => np.mul(p.sped!, 2))).toThrow(
      /params\.sped, but "sped" is not an unknown \(unknowns: x0, speed\)/,
    );
    // Untyped names (a string-typed unknown list, as from a file or JavaScript) are checked when the simulation fails.
    const unknowns: sysid.Unknown[] = [{ name: "x0" }, { name: "speed" }];
    await expect(
      sysid.estimate({
        ...spec,
        unknowns,
        initial: { x0: 0, speed: 1 },
        simulate: (q: sysid.Params) => np.add(q.x0!, np.mul(q.sped!, frames)),
      }),
    ).rejects.toThrow(/"sped" is not an unknown \(unknowns: x0, speed\)/);
  });

  it("a correctly named problem still fits", async () => {
    const r = await sysid.estimate({
      ...spec,
      settings: { ...spec.settings, steps: 20 },
      unknowns: [{ name: "x0" }, { name: "speed" }],
      simulate: (p): Array => np.add(p.x0, np.mul(p.speed, frames)),
      initial: { x0: 0, speed: 1 },
    });
    expect(r.estimate.x0 as number).toBeCloseTo(1, 3);
    expect(r.estimate.speed as number).toBeCloseTo(2, 3);
  });
});
