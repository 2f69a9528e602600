/**
 * Latencies of the webgpu backend (medians over repeated runs, each including the readback):
 *   XDG_RUNTIME_DIR=/tmp npx tsx bench/webgpu-ops.ts
 * eager op latency (one small op + read; 100 chained small ops + read), W1 (elementwise + full
 * sum over 1M floats: forward and gradient, jitted), W2 (512×512 matmul) and a jitted scan.
 */
import { grad, init, jit, lax, np, type Array } from "gradsim";
// Internal on purpose: the WebGPU backend's buffer-pool counters are not public API.
import { webgpuMemory } from "../src/core/backends/webgpu/index.js";
import { timeIt } from "./lib.js";

await init({ backend: "webgpu" });

async function time(
  name: string,
  f: () => Promise<unknown>,
  runs = 15,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const t = await timeIt(f, { warmup: 3, runs }); // warm-up: compile, pool
  console.log(JSON.stringify({ name, ms_median: t.ms_median, ms_min: t.ms_min, runs, ...extra }));
}

const x = np.array([1, 2, 3, 4]);
await time("eager: one small op + read", () => x.add(1).data(), 50);
await time(
  "eager: 100 chained small ops + read",
  async () => {
    let y: Array = x;
    for (let i = 0; i < 100; i++) y = y.mul(1.0001).add(0.5);
    return y.data();
  },
  10,
  { note: "200 ops" },
);

const N = 1 << 20;
const big = np.linspace(-1, 1, N);
const w1 = (a: Array) => np.sum(np.add(np.mul(np.tanh(a.mul(1.5).add(0.5)), np.exp(np.neg(np.square(a)))), np.sin(a)));
const w1j = jit(w1);
await time("W1 fwd jit, N=1M", () => w1j(big).data());
const w1g = jit(grad(w1));
await time("W1 grad jit, N=1M", () => w1g(big).data());
await time("W1 fwd eager, N=1M", () => w1(big).data());

const m = np.array(Float32Array.from({ length: 512 * 512 }, (_, i) => Math.sin(i))).reshape([512, 512]);
await time("W2 matmul 512 (eager)", () => np.matmul(m, m).data());

const h0 = np.zeros([64]).add(np.array(new Float32Array(64)));
const xs = np.array(Float32Array.from({ length: 100 * 64 }, (_, i) => Math.cos(i))).reshape([100, 64]);
const W = np.array(Float32Array.from({ length: 64 * 64 }, (_, i) => Math.sin(i) * 0.1)).reshape([64, 64]);
const rollout = jit(
  (h: Array, s: Array, w: Array) =>
    lax.scan(
      (c: Array, xt: Array) => {
        const c2 = np.tanh(np.add(np.matmul(w, c), xt));
        return [c2, np.sum(c2)];
      },
      h,
      s,
    ) as [Array, Array],
);
await time("jit scan, 100 steps of tanh(W h + x), h: 64", async () => (rollout(h0, xs, W) as Array[])[1]!.data());
console.log(JSON.stringify({ memory: webgpuMemory() }));
process.exit(0);
