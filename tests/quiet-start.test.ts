/**
 * A run that computes on the CPU prints nothing of Dawn's: the `webgpu` package is loaded only
 * when WebGPU will compute, and `init()`'s adapter probe runs in a child process (lavapipe's
 * two "artificially reduced" warnings come from C++ and would otherwise reach stderr).
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;
function run(script: string): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? "/tmp" },
  });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}
const compute = `const { np } = await import("./src/index.ts");
  console.log("sum:" + np.sum(np.add(np.array([1, 2, 3]), 1)).item());`;

describe("a CPU run is quiet on stderr", () => {
  it("init({ backend: 'cpu' }) and a computation print nothing to stderr", () => {
    const r = run(`import { init } from "./src/index.ts"; await init({ backend: "cpu" }); ${compute}`);
    expect(r.stdout).toContain("sum:9");
    expect(r.stderr).toBe("");
  });
  it("no init at all prints nothing to stderr", () => {
    const r = run(compute);
    expect(r.stdout).toContain("sum:9");
    expect(r.stderr).toBe("");
  });
  it.runIf(process.platform === "linux")(
    "init() (auto) shows no Dawn warning; with only a software adapter, its one notice and nothing else",
    () => {
      const r = run(`import { init, devices } from "./src/index.ts";
      const b = await init();
      console.log("auto:" + b + " webgpu-loaded:" + devices().some((d) => d.name === "webgpu"));
      ${compute}`);
      expect(r.stdout).toContain("sum:9");
      expect(r.stderr).not.toMatch(/Warning|artificially reduced/);
      if (r.stdout.includes("auto:cpu")) {
        // The CPU was chosen without loading Dawn in this process.
        expect(r.stdout).toContain("webgpu-loaded:false");
        const lines = r.stderr.split("\n").filter(Boolean);
        expect(lines.length).toBeLessThanOrEqual(1);
        if (lines.length) expect(lines[0]).toMatch(/^gradsim: the only WebGPU adapter is a software one/);
      }
    },
  );
});
