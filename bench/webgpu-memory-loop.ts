/**
 * The memory-profile workload shared by tests/webgpu-memory.test.ts (few steps) and
 * bench/webgpu-memory.ts (10,000 steps): an optimisation loop of jitted valueAndGrad steps of a
 * small MLP regression on webgpu, without any dispose() calls (old parameters become garbage and
 * must be freed by finalization), sampling device memory and process RSS along the way.
 */
import { jit, np, valueAndGrad, type Array } from "gradsim";
// Internal on purpose: the WebGPU backend's buffer-pool counters and queue drain are not public API.
import { webgpuMemory, webgpuSync } from "../src/core/backends/webgpu/index.js";

export interface MemorySample {
  readonly step: number;
  readonly loss: number;
  /** Device bytes referenced by arrays/programs, and all device bytes the allocator holds (incl. pool). */
  readonly liveBytes: number;
  readonly allocatedBytes: number;
  readonly liveBuffers: number;
  /** GPUBuffers created so far: a flat profile stops creating them once the pool is warm. */
  readonly buffersCreated: number;
  readonly rssBytes: number;
  readonly msPerStep: number;
}

const f32 = (n: number, seed: number, scale: number): Float32Array => {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return ((s / 4294967296) * 2 - 1) * scale;
  });
};

/**
 * Runs `steps` optimisation steps, sampling every `every` steps (and at the end). With
 * `dispose`, the previous parameters are disposed each step (device memory is then exactly
 * flat); without, they are left to finalization (flat up to the garbage collector's rhythm).
 */
export async function runMemoryLoop(
  steps: number,
  every: number,
  onSample?: (s: MemorySample) => void,
  dispose = false,
): Promise<MemorySample[]> {
  const batch = 256,
    din = 32,
    hidden = 64;
  const X = np.array(f32(batch * din, 1, 1)).reshape([batch, din]);
  const Y = np.array(f32(batch, 2, 1)).reshape([batch, 1]);
  let W1: Array = np.array(f32(din * hidden, 3, 0.2)).reshape([din, hidden]);
  let b1: Array = np.array(new Float32Array(hidden));
  let W2: Array = np.array(f32(hidden, 4, 0.2)).reshape([hidden, 1]);
  const loss = (w1: Array, c1: Array, w2: Array) =>
    np.mean(np.square(np.matmul(np.tanh(np.add(np.matmul(X, w1), c1)), w2).sub(Y)));
  const step = jit((w1: Array, c1: Array, w2: Array) => {
    const [l, [g1, gc, g2]] = valueAndGrad(loss, { argnums: [0, 1, 2] })(w1, c1, w2) as [Array, Array[]];
    const lr = 0.05;
    return [l, w1.sub(g1.mul(lr)), c1.sub(gc.mul(lr)), w2.sub(g2.mul(lr))];
  });
  const samples: MemorySample[] = [];
  let t0 = performance.now(),
    lastStep = 0;
  for (let i = 1; i <= steps; i++) {
    const [l, a, b, c] = step(W1, b1, W2) as Array[];
    if (dispose) {
      W1.dispose();
      b1.dispose();
      W2.dispose();
    }
    W1 = a!;
    b1 = b!;
    W2 = c!;
    if (i % every === 0 || i === steps) {
      // Reading the loss is the host sync a training loop does anyway; it keeps the host from running far ahead.
      const lossValue = (await l!.data())[0]!;
      if (dispose) l!.dispose();
      await webgpuSync();
      const m = webgpuMemory()!;
      const s: MemorySample = {
        step: i,
        loss: lossValue,
        liveBytes: m.liveBytes,
        allocatedBytes: m.allocatedBytes,
        liveBuffers: m.liveBuffers,
        buffersCreated: m.created,
        rssBytes: process.memoryUsage().rss,
        msPerStep: (performance.now() - t0) / (i - lastStep),
      };
      samples.push(s);
      onSample?.(s);
      t0 = performance.now();
      lastStep = i;
    } else if (dispose) l!.dispose();
  }
  return samples;
}
