import { describe, expect, it } from "vitest";
import { np, optim, sysid, type NDArray } from "../src/index.js";

describe("principalAxis", () => {
  it("finds the covariance's longest axis and its variance", () => {
    const { axis, variance } = sysid.principalAxis([
      [1, 0],
      [0, 4],
    ]);
    expect(Math.abs(axis[1]!)).toBeCloseTo(1, 9);
    expect(variance).toBeCloseTo(4, 9);
    // [[2, 1], [1, 2]]: eigenvalues 3 along (1, 1)/√2 and 1.
    const tilted = sysid.principalAxis([
      [2, 1],
      [1, 2],
    ]);
    expect(Math.abs(tilted.axis[0]! * tilted.axis[1]!)).toBeCloseTo(0.5, 9);
    expect(tilted.variance).toBeCloseTo(3, 9);
  });
});

describe("profileAlongAxis", () => {
  // A valley along u0 (u1 pinned at 0.2·u0 by a steep residual) whose floor has two basins, at u0 = 1 (the estimate)
  // and u0 = 4, with a ridge between: the loss along the valley is 0.01·(u0 − 1)²(u0 − 4)².
  const residual = (u: NDArray) => {
    const [a, b] = np.split(u, 2, 0) as [NDArray, NDArray];
    return np.concatenate([np.mul(np.sub(b, np.mul(a, 0.2)), 10), np.mul(np.mul(np.sub(a, 1), np.sub(a, 4)), 0.1)]);
  };
  const layout = new sysid.Layout([{ name: "a" }, { name: "b" }]);
  // The Laplace interval: ±1 along u0, ±0.2 along u1 (the valley's direction has the larger variance).
  const sd = [1 / 1.96, 0.2 / 1.96];
  const laplace: sysid.Uncertainty = {
    unknowns: [
      { name: "a", sd: sd[0]!, interval: [0, 2], relativeHalfWidth: 1 },
      { name: "b", sd: sd[1]!, interval: [0, 0.4], relativeHalfWidth: 1 },
    ],
    runsQuantile: 1.96,
    clusters: 1,
    condition: 1,
  };
  const cov = [
    [sd[0]! ** 2, 0],
    [0, sd[1]! ** 2],
  ];

  it("walks the valley past a ridge into a second basin and widens the interval to hold it", async () => {
    const p = await sysid.profileAlongAxis(residual, [1, 0.2], cov, 0, 0.02);
    expect(Math.abs(p.axis[0]!)).toBeCloseTo(1, 6);
    expect(p.halfLength).toBeCloseTo(1, 6);
    const sign = Math.sign(p.axis[0]!);
    const at = (step: number) => p.points.find((x) => x.step === step * sign && !x.interpolated)!;
    // u1 re-fitted to the valley at each point; the ridge rejected, the second basin at u0 = 4 accepted.
    expect(at(2).u[1]).toBeCloseTo(0.2 * at(2).u[0]!, 3);
    expect(at(1).consistent).toBe(false);
    expect(at(1.5).loss).toBeGreaterThan(at(1).loss); // the ridge, 2.5 allowances high
    expect(at(3).consistent).toBe(true);
    expect(at(3).loss).toBeLessThan(1e-8);
    // On the other side the loss rises twice, to beyond four allowances, and the walk stops.
    expect(p.points.filter((x) => Math.sign(x.step) === -sign).length).toBe(2);
    const wide = sysid.widenedByProfile(laplace, layout, p);
    // Up to where the loss crosses the allowance beyond the second basin (linearly between u0 = 4 and 5).
    const crossing = p.points.find((x) => x.interpolated)!;
    expect(crossing.u[0]).toBeCloseTo(4.125, 2); // 0.01·(u0 − 1)²(u0 − 4)² is 0.16 at u0 = 5
    expect(wide.unknowns[0]!.interval).toEqual([0, crossing.u[0]]);
    expect(wide.unknowns[0]!.relativeHalfWidth).toBeCloseTo(crossing.u[0]! / 2, 6);
    expect(wide.unknowns[1]!.interval[1]).toBeCloseTo(0.2 * crossing.u[0]!, 3);
    expect(wide.profile).toBe(p);
  });

  it("keeps the Laplace interval where the loss rises as it predicts", async () => {
    const p = await sysid.profileAlongAxis(residual, [1, 0.2], cov, 0, 1e-4);
    expect(p.points.some((x) => x.consistent && Math.abs(x.step) > 2)).toBe(false);
    const wide = sysid.widenedByProfile(laplace, layout, p);
    expect(wide.unknowns.map((u) => u.interval)).toEqual(laplace.unknowns.map((u) => u.interval));
  });
});

describe("levenbergMarquardt's data arguments", () => {
  it("re-fits with other data through the same compiled residual", async () => {
    let traces = 0;
    const residual = (x: NDArray, target: NDArray) => {
      traces++;
      return np.sub(np.square(x), target);
    };
    const fitTo = async (t: number) =>
      (
        await (
          await optim.levenbergMarquardt(residual, np.array([1, 1], { dtype: "float32" }), {
            iterations: 30,
            progress: false,
            data: [np.array([t, 2 * t], { dtype: "float32" })],
          })
        ).params.data()
      ).map(Number);
    const a = await fitTo(4);
    const compiled = traces;
    const b = await fitTo(9);
    expect(a[0]).toBeCloseTo(2, 4);
    expect(b[1]).toBeCloseTo(Math.sqrt(18), 4);
    expect(traces).toBe(compiled);
  });
});
