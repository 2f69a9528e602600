/** Image losses of sysid: Gaussian blur and the blurred-correlation loss. */
import { describe, expect, it } from "vitest";
import { grad, init, np, sysid, type Array } from "../src/index.js";

await init({ backend: "cpu" });

/** A 32×32 single-channel image with a small square at column x (fractional: antialiased edges). */
function dot(x: number): Array {
  const img = new Float64Array(32 * 32);
  for (let r = 14; r < 18; r++)
    for (let c = 0; c < 32; c++) img[r * 32 + c] = Math.max(0, Math.min(1, Math.min(c + 1 - x, x + 3 - c)));
  return np.reshape(np.array(img, { dtype: "float64" }), [32, 32, 1]);
}

describe("sysid image losses", () => {
  it("gaussianBlur spreads a point into a normalised Gaussian away from the edges", () => {
    const img = new Float64Array(32 * 32);
    img[16 * 32 + 16] = 1;
    const b = sysid.gaussianBlur(np.reshape(np.array(img, { dtype: "float64" }), [32, 32, 1]), 2).dataSync();
    const g = (d: number) => Math.exp(-0.5 * (d / 2) ** 2) / (Math.sqrt(2 * Math.PI) * 2);
    expect(b[16 * 32 + 16]).toBeCloseTo(g(0) * g(0), 12);
    expect(b[16 * 32 + 19]).toBeCloseTo(g(0) * g(3), 12);
    expect(b[13 * 32 + 18]).toBeCloseTo(g(3) * g(2), 12);
    expect(globalThis.Array.from(b, Number).reduce((a, v) => a + v, 0)).toBeCloseTo(1, 6);
    expect(() => sysid.gaussianBlur(np.zeros([4, 4, 1]), 0)).toThrow(/σ > 0/);
  });

  it("the blurred-correlation loss is zero at the target and falls as a far object nears it; the MSE is flat", () => {
    const target = dot(24);
    const loss = (x: number) => sysid.blurredCorrelationLoss(dot(x), target, [0, 2, 4, 8]).item();
    expect(loss(24)).toBeLessThan(1e-12);
    const xs = [2, 6, 10, 14, 18, 22];
    const values = xs.map(loss);
    for (let i = 1; i < values.length; i++) expect(values[i]!).toBeLessThan(values[i - 1]!);
    // The plain MSE does not see the distance while the two do not overlap.
    expect(sysid.mse(dot(2), target).item()).toBeCloseTo(sysid.mse(dot(10), target).item(), 12);
    // Its gradient pulls the object towards the target from far away (the same square, differentiable in its column).
    const columns = np.reshape(np.arange(32, undefined, 1, { dtype: "float64" }), [1, 32, 1]);
    const rows = np.reshape(
      np.array(
        globalThis.Array.from({ length: 32 }, (_, r) => (r >= 14 && r < 18 ? 1 : 0)),
        { dtype: "float64" },
      ),
      [32, 1, 1],
    );
    const square = (x: Array) =>
      np.mul(rows, np.clip(np.minimum(np.sub(np.add(columns, 1), x), np.sub(np.add(x, 3), columns)), 0, 1));
    expect(square(np.array(6, { dtype: "float64" })).dataSync()).toEqual(dot(6).dataSync());
    const g = grad((x: Array) => sysid.blurredCorrelationLoss(square(x), target, [0, 2, 4, 8]))(
      np.array(6, { dtype: "float64" }),
    ).item();
    expect(g).toBeLessThan(0);
  });
});
