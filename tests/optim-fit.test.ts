/** fit: stopping rules, non-finite errors, progress output and loss-curve files. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { np, optim, type Array } from "../src/node.js";
import { readPng } from "../src/io/image.js";
import { f64, nums } from "./optim-helpers.js";

const quiet = { progress: false } as const;
type P = { x: Array };
const bowl = (p: P) => np.sum(np.square(np.sub(p.x, f64([1, -2]))));
const x0 = (): P => ({ x: f64([4, 3]) });

describe("stopping", () => {
  it("runs all steps by default; losses[k] is the loss after k updates and params match the last entry", async () => {
    const r = await optim.fit(bowl, x0(), { optimizer: optim.sgd(0.1), steps: 12, ...quiet });
    expect(r.stopReason).toBe("steps");
    expect(r.steps).toBe(12);
    expect(r.losses).toHaveLength(13);
    expect(r.gradNorms).toHaveLength(13);
    expect(bowl(r.params).item()).toBe(r.losses[12]);
    // Plain gradient descent on a unit bowl contracts the error by (1 − 2η) per step.
    r.losses.forEach((l, k) => expect(l).toBeCloseTo(bowl(x0()).item() * 0.8 ** (2 * k), 12));
  });

  it("stops at the first step whose loss change is within the relative tolerance", async () => {
    const tol = 1e-6;
    const r = await optim.fit(bowl, x0(), { optimizer: optim.sgd(0.05), steps: 10_000, tolerance: tol, ...quiet });
    const L = r.losses;
    const converged = (k: number) =>
      Math.abs(L[k]! - L[k - 1]!) <= tol * Math.max(Math.abs(L[k]!), Math.abs(L[k - 1]!), 1);
    expect(r.stopReason).toBe("tolerance");
    expect(r.steps).toBeLessThan(10_000);
    expect(converged(r.steps)).toBe(true);
    for (let k = 1; k < r.steps; k++) expect(converged(k)).toBe(false);
    expect(bowl(r.params).item()).toBe(L[r.steps]);
  });

  it("stops on targetLoss, gradTolerance and when onStep returns false", async () => {
    const target = await optim.fit(bowl, x0(), { optimizer: optim.sgd(0.1), steps: 500, targetLoss: 1e-3, ...quiet });
    expect(target.stopReason).toBe("targetLoss");
    expect(target.losses[target.steps]!).toBeLessThanOrEqual(1e-3);
    expect(target.losses[target.steps - 1]!).toBeGreaterThan(1e-3);

    const gtol = await optim.fit(bowl, x0(), { optimizer: optim.sgd(0.1), steps: 500, gradTolerance: 1e-4, ...quiet });
    expect(gtol.stopReason).toBe("gradTolerance");
    expect(gtol.gradNorms[gtol.steps]!).toBeLessThanOrEqual(1e-4);
    // ‖∇‖ = 2‖x − x*‖ on this bowl: the reported norm is the real one.
    expect(gtol.gradNorms[0]).toBeCloseTo(2 * Math.hypot(3, 5), 12);

    const seen: number[] = [];
    const cb = await optim.fit(bowl, x0(), {
      optimizer: optim.adam(0.1),
      steps: 500,
      ...quiet,
      onStep: ({ step, loss, params }) => {
        seen.push(step);
        expect(bowl(params).item()).toBe(loss);
        return step < 4;
      },
    });
    expect(cb.stopReason).toBe("callback");
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(cb.steps).toBe(4);
  });
});

describe("non-finite values", () => {
  type Body = { mass: Array; friction: Array };
  const start = (mass: number, friction: number): Body => ({ mass: f64([mass]), friction: f64([friction]) });

  it("a NaN loss names the step; finite parameters are reported as such", async () => {
    // loss = log(m) + f²: gradient descent m ← m − η/m crosses zero, and log turns NaN.
    const loss = (p: Body) => np.add(np.sum(np.log(p.mass)), np.sum(np.square(p.friction)));
    let m = 1,
      step = 0;
    while (m > 0) {
      m -= 0.3 / m;
      step++;
    }
    const run = optim.fit(loss, start(1, 0.5), { optimizer: optim.sgd(0.3), steps: 50, ...quiet });
    await expect(run).rejects.toThrow(new RegExp(`loss is NaN at step ${step} .*All parameter leaves are finite`));
  });

  it("names the parameter leaves that went non-finite in an update, and not the others", async () => {
    // The gradient 1e300 times η = 1e10 overflows the mass to −Infinity in the first update.
    // (f64(1e300), not a bare 1e300: core makes JS numbers weak float32 first, and 1e300 overflows.)
    const loss = (p: Body) => np.add(np.sum(np.mul(p.mass, f64(1e300))), np.sum(np.square(p.friction)));
    const err = await optim
      .fit(loss, start(1, 0.5), { optimizer: optim.sgd(1e10), steps: 5, ...quiet })
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/update at step 0 .*non-finite: mass\b/);
    expect((err as Error).message).not.toMatch(/friction/);
  });

  it("lists non-finite parameter leaves when the loss is non-finite because of them", async () => {
    const loss = (p: Body) => np.add(np.sum(np.square(p.mass)), np.sum(np.square(p.friction)));
    await expect(optim.fit(loss, start(1, NaN), { optimizer: optim.adam(0.1), steps: 5, ...quiet })).rejects.toThrow(
      /loss is NaN at step 0\. Non-finite parameter leaves at step 0: friction\./,
    );
  });
});

describe("progress output", () => {
  const capture = (isTTY: boolean) => {
    const chunks: string[] = [];
    return { stream: { isTTY, columns: 100, write: (s: string) => chunks.push(s) }, text: () => chunks.join("") };
  };

  it("writes a few plain lines when the output is not a terminal", async () => {
    const out = capture(false);
    await optim.fit(bowl, x0(), { optimizer: optim.sgd(0.01), steps: 300, output: out.stream });
    const lines = out.text().trim().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.length).toBeLessThanOrEqual(12);
    expect(lines[0]).toMatch(/step 0\/300 +loss [\d.e+-]+ +[\d.]+ steps\/s/);
    expect(lines[lines.length - 1]).toMatch(/300 steps in .*stopped: steps/);
    expect(out.text()).not.toContain("\r");
  });

  it("redraws one bar line on a terminal", async () => {
    const out = capture(true);
    await optim.fit(bowl, x0(), { optimizer: optim.sgd(0.01), steps: 50, output: out.stream });
    const text = out.text();
    expect(text).toContain("\r");
    expect(text).toMatch(/█+░*\s+50\/50\s+loss [\d.e+-]+\s+[\d.]+ steps\/s/);
    expect(text.trim().split("\n")).toHaveLength(2); // the bar, then the summary
  });

  it("is silent with progress: false", async () => {
    const out = capture(true);
    await optim.fit(bowl, x0(), { optimizer: optim.sgd(0.01), steps: 5, output: out.stream, progress: false });
    expect(out.text()).toBe("");
  });
});

describe("loss curve files", () => {
  const dir = mkdtempSync(join(tmpdir(), "gradsim-optim-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes the CSV with every loss at full precision and a PNG with the curve drawn", async () => {
    const csv = join(dir, "curves/loss.csv"),
      png = join(dir, "curves/loss.png");
    const r = await optim.fit(bowl, x0(), {
      optimizer: optim.adam(0.3),
      steps: 80,
      lossCurveCsv: csv,
      lossCurvePng: png,
      ...quiet,
    });
    const [header, ...rows] = readFileSync(csv, "utf8").trim().split("\n");
    expect(header).toBe("step,loss,grad_norm");
    expect(rows).toHaveLength(r.losses.length);
    rows.forEach((row, k) => {
      const [step, loss, gn] = row.split(",").map(Number);
      expect([step, loss, gn]).toEqual([k, r.losses[k], r.gradNorms[k]]);
    });

    const img = readPng(png);
    expect(img.shape).toEqual([360, 640, 4]);
    const px = nums(img);
    let curve = 0,
      white = 0;
    for (let i = 0; i < px.length; i += 4) {
      const [R, G, B] = [px[i]!, px[i + 1]!, px[i + 2]!];
      if (B > 0.5 && R < 0.35 && G < 0.6) curve++; // the default blue
      if (R === 1 && G === 1 && B === 1) white++;
    }
    expect(curve).toBeGreaterThan(300); // a curve across ~600 px of plot width
    expect(white).toBeGreaterThan(px.length / 4 / 2);
  });

  it("still writes the curve up to the failure when fit throws", async () => {
    const csv = join(dir, "failed.csv");
    const loss = (p: P) => np.sum(np.log(p.x));
    await expect(
      optim.fit(loss, { x: f64([1]) }, { optimizer: optim.sgd(0.5), steps: 10, lossCurveCsv: csv, ...quiet }),
    ).rejects.toThrow(/NaN/);
    const rows = readFileSync(csv, "utf8").trim().split("\n");
    expect(rows[rows.length - 1]).toMatch(/,NaN,/);
  });
});
