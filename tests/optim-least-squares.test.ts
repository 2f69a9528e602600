/**
 * optim.levenbergMarquardt and its host linear algebra: Cholesky against a known solution,
 * the normal equations against an explicit JᵀJ, Rosenbrock as residuals, a float32 curve fit,
 * stopping at an exact minimum, and bad input.
 */
import { describe, expect, it } from "vitest";
import { np, optim, type Array } from "../src/index.js";
import { choleskySolve, normalEquations, solveDamped } from "../src/optim/least-squares.js";
import { expectClose, f64, nums } from "./optim-helpers.js";

const quiet = { progress: false } as const;

describe("host linear algebra", () => {
  it("choleskySolve solves an SPD system and rejects an indefinite one", () => {
    // A = MᵀM + I for a fixed M, b = A·x★.
    const n = 4,
      m = [
        [2, -1, 0, 3],
        [1, 4, -2, 0],
        [0, 1, 1, -1],
        [3, 0, 2, 1],
      ];
    const a = new Float64Array(n * n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) a[i * n + j] = m.reduce((s, row) => s + row[i]! * row[j]!, 0) + (i === j ? 1 : 0);
    const xStar = [0.5, -2, 3, 1.25];
    const b = Float64Array.from({ length: n }, (_, i) => xStar.reduce((s, x, j) => s + a[i * n + j]! * x, 0));
    expectClose([...choleskySolve(a, b, n)!], xStar, 1e-12);
    expect(choleskySolve(Float64Array.from([1, 2, 2, 1]), Float64Array.from([1, 1]), 2)).toBeNull();
  });

  it("normalEquations equals JᵀJ and Jᵀr written out", () => {
    const j = [1, 2, 0, -1, 3, 0.5],
      r = [0.5, -1, 2]; // J is 3×2
    const { jtj, jtr } = normalEquations(j, r, 2);
    expectClose([...jtj], [1 + 0 + 9, 2 + 0 + 1.5, 2 + 0 + 1.5, 4 + 1 + 0.25], 1e-15);
    expectClose([...jtr], [0.5 + 0 + 6, 1 + 1 + 1], 1e-15);
    expect(() => normalEquations(j, r, 3)).toThrow(/expected 3×3/);
  });

  it("solveDamped keeps an unknown the residual does not see at zero step", () => {
    // Second unknown has a zero column: the floor on diag(JᵀJ) keeps the system solvable.
    const delta = solveDamped(Float64Array.from([4, 0, 0, 0]), Float64Array.from([2, 0]), 1e-3)!;
    expectClose([...delta], [-2 / (4 * 1.001), 0], 1e-12);
  });
});

describe("levenbergMarquardt", () => {
  it("solves Rosenbrock written as residuals (10(y − x²), 1 − x) from (−1.2, 1)", async () => {
    const residual = (p: Array) => np.stack([np.mul(10, np.sub(p.at(1), np.square(p.at(0)))), np.sub(1, p.at(0))]);
    const r = await optim.levenbergMarquardt(residual, f64([-1.2, 1]), { iterations: 50, ...quiet });
    expectClose(nums(r.params), [1, 1], 1e-9);
    expect(r.losses[r.losses.length - 1]!).toBeLessThan(1e-20);
    expect(r.iterations).toBeLessThan(50);
    for (let k = 1; k < r.losses.length; k++) expect(r.losses[k]!).toBeLessThan(r.losses[k - 1]!);
  });

  it("fits a·exp(−b·t) + c to float32 data in a few iterations, keeping the dtype", async () => {
    const t = np.linspace(0, 4, 40).astype("float32");
    const model = (p: Array) => np.add(np.mul(p.at(0), np.exp(np.neg(np.mul(p.at(1), t)))), p.at(2));
    const truth = np.array([2.5, 1.3, 0.4], { dtype: "float32" });
    const data = model(truth);
    const r = await optim.levenbergMarquardt(
      (p) => np.sub(model(p), data),
      np.array([1, 0.5, 0], { dtype: "float32" }),
      { iterations: 30, ...quiet },
    );
    expect(r.params.dtype).toBe("float32");
    expectClose(nums(r.params), [2.5, 1.3, 0.4], 1e-4);
    expect(r.losses[r.losses.length - 1]!).toBeLessThan(1e-10);
  });

  it("stops as stalled without moving when started at the exact minimum", async () => {
    const r = await optim.levenbergMarquardt(
      (p: Array) => np.sub(p, np.array([1, 2], { dtype: "float64" })),
      f64([1, 2]),
      { iterations: 5, ...quiet },
    );
    expect(r.stopReason).toBe("stalled");
    expect(r.iterations).toBe(0);
    expect(r.losses).toEqual([0]);
    expect(nums(r.params)).toEqual([1, 2]);
  });

  it("names bad input", async () => {
    await expect(
      optim.levenbergMarquardt((p: Array) => p, np.zeros([2, 2]), { iterations: 1, ...quiet }),
    ).rejects.toThrow(/x0 must be 1-D/);
    await expect(optim.levenbergMarquardt((p: Array) => p, f64([1]), { iterations: -1, ...quiet })).rejects.toThrow(
      /iterations must be a non-negative integer/,
    );
    await expect(
      optim.levenbergMarquardt((p: Array) => np.log(p), f64([-1]), { iterations: 1, ...quiet }),
    ).rejects.toThrow(/not finite at x0/);
  });
});
