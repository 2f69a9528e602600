/**
 * The `smoke` experiment (initial velocities → target image) in its quick mode, a PNG target, and bad --target input.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { np } from "../src/index.js";
import { writePng } from "../src/io/image.js";
import { experiment as smoke } from "../examples/smoke.js";
import { ringTarget } from "../examples/lib/smoke-target.js";
import { cli, outDir, readResult, runQuiet } from "./experiments-helpers.js";

describe("smoke (quick)", () => {
  it("shapes the smoke into the built-in ring (MSE to the target drops by >90%)", async () => {
    const { code, out } = await runQuiet(smoke);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(r.runs).toHaveLength(1);
    expect(r.runs[0].lossRatio).toBeLessThan(0.1);
    for (const f of r.files) expect(existsSync(join(out, f))).toBe(true);
  }, 120_000);

  it("reads a PNG target (grey, resized to the grid) and fits it", async () => {
    const dir = outDir("smoke-target");
    const n = 64,
      ring = ringTarget(n, { cx: 0.4, cy: 0.5 });
    const target = join(dir, "target.png");
    writePng(target, np.reshape(np.array(ring, { dtype: "float32" }), [n, n]));
    const { code, out } = await runQuiet(smoke, ["--target", target]);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(r.runs[0].target).toBe(target);
    expect(r.runs[0].lossRatio).toBeLessThan(0.2);
  }, 120_000);

  it("exits with code 2 and a clear message when the target file is missing", () => {
    const r = cli([
      "smoke",
      "--quick",
      "--backend",
      "cpu",
      "--target",
      "/nonexistent/target.png",
      "--out",
      outDir("smoke-missing"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no such file");
  });
});
