/**
 * jit on webgpu against the CPU reference: random programs (fast-check), gradients of jitted
 * functions (jit(grad), grad(jit)), vmap with jit, lax.scan compiled on the device (forward and
 * reverse mode), cond, the binding-limit fallback, every matmul kernel, determinism (two runs
 * bit-identical) and the compile cache (a second call compiles nothing).
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { grad, jit, lax, np, vmap, type Array } from "../src/index.js";
import { webgpuMemory } from "../src/core/backends/webgpu/index.js";
import { compiledProgramCount } from "../src/core/backends/webgpu/runner.js";
import { forceMatmulKernel, type MatmulKernel } from "../src/core/backends/webgpu/routines/matmul.js";
import * as laxp from "../src/core/prims/index.js";
import {
  describeGpu,
  expectIdentical,
  expectMatch,
  expectNoDeviceErrors,
  pair,
  randPair,
  samples,
} from "./webgpu-helpers.js";
import { arbGpuProgram } from "./webgpu-programs.js";

const FC_SEED = Number(process.env.FC_SEED ?? 20261121);
const inputsFor = (shapes: readonly (readonly number[])[], seed: number) =>
  shapes.map((s, i) => randPair(s, seed + i, -1.5, 1.5));
const TOL = { rtol: 2e-4, atol: 2e-5 };

describeGpu("webgpu jit: random programs", () => {
  it("jit(f)(x) on webgpu matches eager f on the CPU (float64)", async () => {
    await fc.assert(
      fc.asyncProperty(arbGpuProgram(2, 7), fc.integer({ min: 1, max: 1000 }), async (p, seed) => {
        const ins = inputsFor(p.inShapes, seed);
        const g = jit(p.fn)(...ins.map((x) => x.gpu));
        const c = p.fn(...ins.map((x) => x.cpu));
        try {
          await expectMatch(g, c, TOL);
        } catch (e) {
          throw new Error(`${(e as Error).message}\nprogram:\n${p.text}`);
        }
      }),
      { numRuns: 24, seed: FC_SEED, endOnFailure: true },
    );
  });

  it("gradients: jit(grad(f)) and grad(jit(f)) on webgpu match grad(f) on the CPU", async () => {
    await fc.assert(
      fc.asyncProperty(arbGpuProgram(2, 5), fc.integer({ min: 1, max: 1000 }), async (p, seed) => {
        const ins = inputsFor(p.inShapes, seed);
        const loss = (a: Array, b: Array) => np.sum(np.sin(p.fn(a, b)));
        const want = grad(loss, { argnums: [0, 1] })(...(ins.map((x) => x.cpu) as [Array, Array]));
        const viaJitGrad = jit(grad(loss, { argnums: [0, 1] }))(...(ins.map((x) => x.gpu) as [Array, Array]));
        const viaGradJit = grad(jit(loss), { argnums: [0, 1] })(...(ins.map((x) => x.gpu) as [Array, Array]));
        try {
          for (let i = 0; i < 2; i++) {
            await expectMatch(viaJitGrad[i]!, want[i]!, TOL, `jit(grad) d/dx${i}`);
            await expectMatch(viaGradJit[i]!, want[i]!, TOL, `grad(jit) d/dx${i}`);
          }
        } catch (e) {
          throw new Error(`${(e as Error).message}\nprogram:\n${p.text}`);
        }
      }),
      { numRuns: 12, seed: FC_SEED + 1, endOnFailure: true },
    );
  });
});

describeGpu("webgpu jit: composition and control flow", () => {
  const W = pair(samples(16, 90, -0.5, 0.5), [4, 4]);
  const step = (h: Array, x: Array, w: Array) => np.tanh(np.add(np.matmul(w, h), x));
  const rollout = (h0: Array, xs: Array, w: Array) =>
    lax.scan(
      (h: Array, x: Array) => {
        const h2 = step(h, x, w);
        return [h2, np.sum(np.square(h2))];
      },
      h0,
      xs,
    ) as [Array, Array];

  it("jit of lax.scan runs the compiled body on the device (carry and stacked ys)", async () => {
    const h0 = randPair([4], 91),
      xs = randPair([12, 4], 92);
    const [hg, yg] = jit(rollout)(h0.gpu, xs.gpu, W.gpu);
    const [hc, yc] = rollout(h0.cpu, xs.cpu, W.cpu);
    await expectMatch(hg, hc, TOL, "final carry");
    await expectMatch(yg, yc, TOL, "ys");
  });
  it("reverse-mode through a jitted scan (a reverse scan on the device)", async () => {
    const h0 = randPair([4], 93),
      xs = randPair([12, 4], 94);
    const loss = (h: Array, x: Array, w: Array) => np.sum(rollout(h, x, w)[1]);
    const want = grad(loss, { argnums: [0, 2] })(h0.cpu, xs.cpu, W.cpu) as Array[];
    const got = jit(grad(loss, { argnums: [0, 2] }))(h0.gpu, xs.gpu, W.gpu) as Array[];
    await expectMatch(got[0]!, want[0]!, TOL, "d/dh0");
    await expectMatch(got[1]!, want[1]!, TOL, "d/dW");
  });
  it("vmap(jit(f)) and jit(vmap(f))", async () => {
    const f = (x: Array) => np.sum(np.sin(x).mul(x), [-1]);
    const x = randPair([5, 7], 95);
    const want = vmap(f)(x.cpu);
    await expectMatch(vmap(jit(f))(x.gpu), want, TOL, "vmap(jit)");
    await expectMatch(jit(vmap(f))(x.gpu), want, TOL, "jit(vmap)");
  });
  it("lax.cond with a device predicate evaluates both branches and selects", async () => {
    const f = (x: Array) =>
      lax.cond(
        np.greater(np.sum(x), 0),
        (y: Array) => np.sin(y),
        (y: Array) => np.cos(y).mul(2),
        x,
      );
    for (const seed of [96, 97]) {
      const x = randPair([6], seed, seed === 96 ? 0 : -1, seed === 96 ? 1 : 0);
      await expectMatch(jit(f)(x.gpu), f(x.cpu), TOL, `seed ${seed}`);
    }
  });
  it("lax.whileLoop needs a host-readable predicate: clear error on webgpu", () => {
    const x = randPair([3], 98);
    expect(() =>
      lax.whileLoop(
        (c: Array) => np.less(np.sum(c), 10),
        (c: Array) => c.add(1),
        x.gpu,
      ),
    ).toThrow(/predicate must be readable on the host; on webgpu use lax.foriLoop\/scan/);
  });
  it("a fused kernel reading more buffers than the device binds packs them (binding limit)", async () => {
    const xs = globalThis.Array.from({ length: 20 }, (_, i) => randPair([33], 100 + i));
    const f = (...a: Array[]) => a.reduce((s, v, i) => np.add(s, np.mul(v, i + 1)));
    const g = (...a: Array[]) => [f(...a), ...a.slice(0, 18).map((v) => np.sin(v))];
    await expectMatch(jit(f)(...xs.map((x) => x.gpu)), f(...xs.map((x) => x.cpu)), TOL, "20 inputs");
    const outs = jit(g)(...xs.map((x) => x.gpu)) as Array[];
    const want = g(...xs.map((x) => x.cpu));
    for (let i = 0; i < outs.length; i += 6) await expectMatch(outs[i]!, want[i]!, TOL, `output ${i} of 19`);
  });
});

describeGpu("webgpu jit: matmul kernels", () => {
  const kernels: MatmulKernel[] = ["tiled", "blocked", "cooperative", "per-output"];
  for (const k of kernels) {
    it(`${k} kernel: batched, transposed and ragged shapes`, async () => {
      forceMatmulKernel(k);
      try {
        const mm = (a: Array, b: Array) => laxp.dotGeneral(a, b, { contract: [[2], [1]], batch: [[0], [0]] });
        await expectMatch(
          mm(randPair([2, 70, 130], 110).gpu, randPair([2, 130, 45], 111).gpu),
          mm(randPair([2, 70, 130], 110).cpu, randPair([2, 130, 45], 111).cpu),
          TOL,
          "[2,70,130]×[2,130,45]",
        );
        const t = (a: Array, b: Array) => laxp.dotGeneral(a, b, { contract: [[0], [0]], batch: [[], []] });
        await expectMatch(
          t(randPair([90, 5], 112).gpu, randPair([90, 3], 113).gpu),
          t(randPair([90, 5], 112).cpu, randPair([90, 3], 113).cpu),
          TOL,
          "Aᵀ·B",
        );
      } finally {
        forceMatmulKernel(null);
      }
    });
  }
});

describeGpu("webgpu jit: determinism and caching", () => {
  const w1 = (x: Array) =>
    np.sum(np.add(np.mul(np.tanh(x.mul(1.5).add(0.5)), np.exp(np.neg(np.square(x)))), np.sin(x)));
  it("two runs are bit-identical (big reduction, scatter, matmul, gradient)", async () => {
    const x = randPair([300000], 120);
    const f = jit(w1);
    await expectIdentical(f(x.gpu), f(x.gpu));
    const g = jit(grad(w1));
    await expectIdentical(g(x.gpu), g(x.gpu));
    const idx = pair(
      Int32Array.from({ length: 5000 }, (_, i) => (i * 7919) % 100),
      [5000],
      "int32",
    );
    const u = randPair([5000, 3], 121),
      t = randPair([100, 3], 122);
    const sc = jit((a: Array, i: Array, v: Array) => np.scatterAdd(a, i, v, 0));
    await expectIdentical(sc(t.gpu, idx.gpu, u.gpu), sc(t.gpu, idx.gpu, u.gpu));
    const m = randPair([200, 300], 123);
    await expectIdentical(np.matmul(m.gpu, m.gpu.T), np.matmul(m.gpu, m.gpu.T));
  });
  it("the second call with the same signature compiles nothing", async () => {
    const f = jit((x: Array, y: Array) => np.sum(np.mul(np.sin(x), y), [0]));
    const x = randPair([50, 3], 124),
      y = randPair([50, 3], 125);
    await f(x.gpu, y.gpu).data();
    const programs = compiledProgramCount(),
      pipelines = webgpuMemory()!.pipelines;
    await f(randPair([50, 3], 126).gpu, y.gpu).data();
    expect(f.traceCount).toBe(1);
    expect(compiledProgramCount()).toBe(programs);
    expect(webgpuMemory()!.pipelines).toBe(pipelines);
  });
  it("no device errors", () => expectNoDeviceErrors());
});
