/** Smoke test of examples/vmap-guesses.ts in a reduced mode (8 guesses, short rollouts). */
import { describe, expect, it } from "vitest";
import { grad, np, type Array } from "../src/index.js";
import { lossFor, main, trajectory, TRUTH } from "../examples/vmap-guesses.js";
import { expectClose } from "../property-tests/gen/check.js";
import { dotAll, fdDirectional } from "../property-tests/gen/fd.js";

describe("examples/vmap-guesses.ts", () => {
  it("main({ guesses: 8 }) batches loss and gradient like a loop, prints a comparison, improves the best guess", () => {
    const lines: string[] = [];
    const r = main({ guesses: 8, steps: 40, refine: 4, log: (l) => lines.push(l) });
    expect(r.losses.shape).toEqual([8]);
    expect(r.grads.shape).toEqual([8, 3]);
    expectClose(r.losses, r.loopLosses, { rtol: 1e-5, atol: 1e-6 }, "vmap losses vs loop");
    expectClose(r.grads, r.loopGrads, { rtol: 1e-4, atol: 1e-5 }, "vmap grads vs loop");
    expect(r.bestLoss).toBe(Math.min(...r.losses.dataSync()));
    expect(r.refinedLoss).toBeLessThanOrEqual(r.bestLoss);
    const text = lines.join("\n");
    expect(text).toMatch(/JS loop of valueAndGrad : \d+ ms {2}→ vmap is [\d.]+x faster/);
    expect(text).toMatch(/best guess #\d+: speed/);
  });

  it("the rollout's gradient matches finite differences (float64)", () => {
    const target = trajectory(np.array([...TRUTH], { dtype: "float64" }), 30);
    const loss = lossFor(target);
    const p = np.array([11, 0.7, 0.05], { dtype: "float64" }),
      v = np.array([1, 0.1, 0.01], { dtype: "float64" });
    const g = grad(loss)(p) as Array;
    expectClose(dotAll(g, v), fdDirectional(loss, p, v).item(), { rtol: 1e-6 }, "<grad, v> vs FD");
  });
});
