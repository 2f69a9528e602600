/**
 * Device memory on webgpu: dispose() frees, unreachable arrays are freed by finalization, a
 * jitted optimisation loop keeps a flat profile (device bytes, GPUBuffers created, RSS; the
 * numbers are printed), and the webgpu-specific errors are clear (float64, synchronous reads).
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as v8 from "node:v8";
import * as vm from "node:vm";
import { describe, expect, it } from "vitest";
import { devices, jit, np, type Array } from "../src/index.js";
import { webgpuMemory, webgpuSync } from "../src/core/backends/webgpu/index.js";
import { finalizedHandles } from "../src/core/backends/webgpu/buffers.js";
import { isSoftwareAdapter } from "../src/core/backends/webgpu/device.js";
import { runMemoryLoop, type MemorySample } from "../bench/webgpu-memory-loop.js";
import { describeGpu, expectNoDeviceErrors, samples } from "./webgpu-helpers.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
/** Collect garbage and let finalizers run (they are queued as tasks after a collection). */
async function collect(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
}
const live = () => webgpuMemory()!.liveBytes;

describeGpu("webgpu memory", () => {
  it("dispose() frees the device buffer; use after dispose says so", async () => {
    await collect();
    const before = live();
    const x = np.array(samples(100000, 1));
    expect(live()).toBeGreaterThanOrEqual(before + 400000);
    x.dispose();
    expect(live()).toBe(before);
    x.dispose(); // idempotent
    expect(() => x.add(1)).toThrow(/was disposed; it cannot be used any more/);
  });

  it("arrays that become unreachable are freed by finalization", async () => {
    const chain = () => {
      let y = np.array(samples(50000, 2));
      for (let i = 0; i < 40; i++) y = y.mul(1.001).add(0.5); // 80 intermediate arrays, none disposed
    };
    chain(); // warm-up: the scalar constants' device copies are cached for good
    await webgpuSync();
    await collect();
    const before = live(),
      finalizedBefore = finalizedHandles();
    chain();
    await webgpuSync();
    await collect();
    expect(finalizedHandles() - finalizedBefore).toBeGreaterThanOrEqual(40);
    expect(live()).toBeLessThanOrEqual(before);
  });

  it("a reshape shares its buffer (the buffer lives while either array does)", async () => {
    const x = np.array(samples(12, 3));
    const y = x.reshape([3, 4]);
    x.dispose();
    expect([...(await y.data())]).toEqual([...samples(12, 3)]);
  });

  it("jitted calls release their intermediates (no growth over many calls)", async () => {
    const f = jit((a: Array) => np.sum(np.tanh(a.mul(2)).mul(np.exp(a.neg())), [1]));
    const x = np.array(samples(64 * 500, 4)).reshape([500, 64]);
    for (let i = 0; i < 5; i++) await f(x).data();
    await collect();
    const m0 = webgpuMemory()!;
    for (let i = 0; i < 200; i++) f(x).dispose();
    await webgpuSync();
    await collect();
    const m1 = webgpuMemory()!;
    expect(m1.liveBytes).toBe(m0.liveBytes);
    expect(m1.created - m0.created).toBeLessThanOrEqual(2);
  });

  it("an optimisation loop of jitted valueAndGrad steps keeps a flat memory profile", async () => {
    const fmt = (x: MemorySample) =>
      `step ${x.step}: loss ${x.loss.toFixed(5)}, device live ${(x.liveBytes / 1024).toFixed(1)} KiB, ` +
      `allocated ${(x.allocatedBytes / 1024).toFixed(1)} KiB, GPUBuffers created ${x.buffersCreated}, ` +
      `RSS ${(x.rssBytes / 1048576).toFixed(1)} MiB, ${x.msPerStep.toFixed(2)} ms/step`;
    await collect(); // garbage of earlier tests must not count
    // Old parameters disposed each step: exactly flat after the first steps.
    const d = await runMemoryLoop(500, 100, undefined, true);
    // Old parameters left to the garbage collector: a sawtooth bounded by its rhythm.
    const f = await runMemoryLoop(1000, 100);
    console.log(
      `webgpu memory profile (bench/webgpu-memory.ts runs 10,000 steps):` +
        `\n dispose() each step:\n  ${d.map(fmt).join("\n  ")}` +
        `\n no dispose (finalization):\n  ${f.map(fmt).join("\n  ")}`,
    );
    for (const s of [d, f]) expect(s[s.length - 1]!.loss).toBeLessThan(s[0]!.loss); // it is optimising
    const dw = d[1]!,
      dl = d[d.length - 1]!;
    expect(dl.liveBytes).toBeLessThanOrEqual(dw.liveBytes);
    expect(dl.buffersCreated).toBe(dw.buffersCreated);
    // RSS moves with the JS heap's collections (tens of MiB either way); the device counters are exact.
    expect(dl.rssBytes - dw.rssBytes).toBeLessThan(128 * 1048576);
    // Without dispose: after a collection everything but the parameters is back in the pool, and
    // the pool stops growing (the second half creates few GPUBuffers compared with the first).
    await collect();
    expect(live()).toBeLessThanOrEqual(dl.liveBytes + 64 * 1024);
    const half = f[Math.floor(f.length / 2)]!,
      fl = f[f.length - 1]!;
    expect(fl.buffersCreated - half.buffersCreated).toBeLessThan(
      Math.max(64, half.buffersCreated - f[0]!.buffersCreated),
    );
    expect(fl.rssBytes - f[1]!.rssBytes).toBeLessThan(128 * 1048576);
  });

  it("devices() describes the adapter", () => {
    const d = devices().find((x) => x.name === "webgpu");
    expect(d).toBeDefined();
    expect(d!.limits).toBeDefined();
    expect(JSON.stringify(d)).toMatch(/maxStorageBuffersPerShaderStage/);
  });
});

describeGpu("webgpu error messages", () => {
  it("float64 on webgpu", () => {
    expect(() => np.array(new Float64Array([1, 2]), { backend: "webgpu" })).toThrow(
      /float64 arrays exist on the CPU backend only/,
    );
    expect(() => np.array([1, 2], { backend: "webgpu" }).astype("float64")).toThrow(
      /float64 exists on the CPU backend only/,
    );
  });
  it("dataSync / item / toList on webgpu point to await x.data()", () => {
    const x = np.array([1, 2, 3], { backend: "webgpu" });
    expect(() => x.dataSync()).toThrow(
      /dataSync\(\) cannot read a webgpu array \(f32\[3\]\): GPU readback is asynchronous\. Use `await x\.data\(\)`/,
    );
    expect(() => np.sum(x).item()).toThrow(/await x\.data\(\)/);
    expect(() => x.toList()).toThrow(/await x\.data\(\)/);
  });
  it("no device errors", () => expectNoDeviceErrors());
});

describe("a software adapter only", () => {
  it("is recognised from the adapter's info as Dawn, Mesa and Chromium give it", () => {
    // Chromium's SwiftShader (vendor "google") names itself only in its architecture and isFallbackAdapter.
    expect(
      isSoftwareAdapter({ architecture: "swiftshader", device: "", description: "", isFallbackAdapter: true }),
    ).toBe(true);
    expect(isSoftwareAdapter({ architecture: "swiftshader", description: "" })).toBe(true);
    expect(isSoftwareAdapter({ architecture: "", description: "", isFallbackAdapter: true })).toBe(true);
    expect(isSoftwareAdapter({ architecture: "software", description: "llvmpipe (LLVM 15.0.6, 256 bits)" })).toBe(true);
    expect(
      isSoftwareAdapter({ architecture: "ampere", description: "NVIDIA GeForce RTX 3080", isFallbackAdapter: false }),
    ).toBe(false);
    expect(isSoftwareAdapter({ architecture: "", description: "" })).toBe(false);
  });
  it.runIf(process.platform === "linux")(
    "init() prefers the CPU and says why; init({ backend: 'webgpu' }) still uses the adapter",
    () => {
      const script = `import { devices, init } from "./src/index.ts";
      const wanted = await init({ backend: "webgpu" });
      const software = devices().find((d) => d.name === "webgpu")?.software;
      console.log("webgpu:" + wanted + " software:" + software + " auto:" + await init());`;
      const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: new URL("..", import.meta.url).pathname,
        encoding: "utf8",
        env: { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? "/tmp" },
      });
      // This machine's (and CI's) only adapter is lavapipe; on a machine with a GPU, auto keeps WebGPU.
      const software = /software:true/.test(r.stdout);
      expect(r.stdout).toContain("webgpu:webgpu");
      expect(r.stdout).toContain(software ? "auto:cpu" : "auto:webgpu");
      if (software) expect(r.stderr).toMatch(/the only WebGPU adapter is a software one \(.*\).*computing on the CPU/);
    },
  );
});

describe("webgpu unavailable", () => {
  it.runIf(process.platform === "linux")(
    "init({ backend: 'webgpu' }) throws a clear error; init() falls back to the CPU",
    () => {
      // A process whose Vulkan loader finds no driver (so no adapter exists).
      const script = `import { init } from "./src/index.ts";
      console.log("auto:" + await init());
      try { await init({ backend: "webgpu" }); console.log("no error"); }
      catch (e) { console.log("error:" + e.message); }`;
      const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: new URL("..", import.meta.url).pathname,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
        env: { ...process.env, VK_ICD_FILENAMES: "/nonexistent-icd.json", CI: "" },
      });
      expect(out).toContain("auto:cpu");
      expect(out).toMatch(
        /error:init: WebGPU is unavailable: no WebGPU adapter was found .*Use init\(\{ backend: "cpu" \}\)/,
      );
    },
  );
});
