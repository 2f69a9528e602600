/**
 * The CPU jit's WebAssembly kernels (src/core/compile/wasmgen.ts) against its JavaScript
 * kernels: the same bits, in four float32 lanes (f32x4), two float64 lanes (f64x2) and one, on one
 * thread and split over worker threads (threads.ts: scatter-adds staged and applied in order), for
 * random programs and their gradients, every scalar op on special values (float64 and float32),
 * scatter-adds with repeated indices, loop lengths that leave lanes past the end (they repeat the last
 * iteration), and the FEM step's kernels; and a jitted float32 program against the eager backend's bits.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grad, jit, lax, np, type Array } from "../src/index.js";
import { setCpuKernels, wasmFourLaneRuns, wasmKernelRuns, type CpuKernels } from "../src/core/compile/wasm-kernel.js";
import { setCpuThreads, threadedRuns, THREAD_MIN_WORK } from "../src/core/compile/threads.js";
import { inlineLogExact, logProbeArguments } from "../src/core/compile/wasm-log.js";
import { INLINE_OPS, inlineMathExact, mathProbeArguments } from "../src/core/compile/wasm-math.js";
import { arbProgram, randomArray } from "../property-tests/gen/programs.js";
import { contact, fem, meshes, particles } from "../src/models/index.js";

/** Kernel forms and thread counts (every kernel, however small, runs threaded here: minWork 0). */
const FORMS: readonly { kernels: CpuKernels; threads: number }[] = [
  { kernels: "js", threads: 1 },
  { kernels: "wasm-scalar", threads: 1 },
  { kernels: "wasm", threads: 1 },
  { kernels: "wasm-f64x2", threads: 1 },
  { kernels: "wasm", threads: 2 },
  { kernels: "wasm-f64x2", threads: 3 },
  { kernels: "wasm-scalar", threads: 3 },
];
const formName = (f: (typeof FORMS)[number]) => `${f.kernels} on ${f.threads} thread(s)`;
let before: CpuKernels;
let threadsBefore: number;
beforeAll(() => {
  before = setCpuKernels("wasm", { minWork: 0 });
  threadsBefore = setCpuThreads(1, { minWork: 0 });
});
afterAll(() => {
  setCpuKernels(before, { minWork: 4096 });
  setCpuThreads(threadsBefore, { minWork: THREAD_MIN_WORK });
});

/**
 * Each output's values under each kernel form, exactly (−0 is not 0; every NaN is one value: its
 * sign and payload are not specified by JavaScript or WebAssembly); all forms must agree.
 */
function sameBitsEveryForm(f: () => Array | Array[] | Record<string, Array>, what: string, mustUseWasm = false): void {
  const bits = (form: (typeof FORMS)[number]): string[] => {
    setCpuKernels(form.kernels);
    setCpuThreads(form.threads);
    const out = f();
    const leaves = globalThis.Array.isArray(out) ? out : "dtype" in out ? [out as Array] : Object.values(out);
    return leaves.map((a) =>
      [...a.dataSync()].map((x) => (Number.isNaN(x) ? "NaN" : Object.is(x, -0) ? "-0" : String(x))).join(" "),
    );
  };
  const runs0 = wasmKernelRuns(),
    threaded0 = threadedRuns();
  const [js, ...rest] = FORMS.map(bits);
  if (mustUseWasm) {
    expect(wasmKernelRuns(), `${what}: no kernel ran as WebAssembly`).toBeGreaterThan(runs0);
    expect(threadedRuns(), `${what}: no kernel ran on threads`).toBeGreaterThan(threaded0);
  }
  rest.forEach((b, i) => expect(b, `${what}: ${formName(FORMS[i + 1]!)} vs js`).toEqual(js));
  setCpuKernels("wasm");
  setCpuThreads(1);
}

/** Values every scalar op is run on (each type adds its own extremes). */
const SPECIAL = [0, -0, 1, -1, 0.5, -0.5, 1.5, -2.5, 3, Infinity, -Infinity, NaN, 2 ** 31, 7.25, -7.75];

/** Every scalar op the kernels have, on x and y (floats) and k (int32): float results, int results, a comparison. */
function everyScalarOp(x: Array, y: Array, k: Array): Array[] {
  const fl = [
    np.neg(x),
    np.abs(x),
    np.sign(x),
    np.exp(x),
    np.log(x),
    np.log1p(x),
    np.expm1(x),
    np.sin(x),
    np.cos(x),
    np.tan(x),
    np.tanh(x),
    np.arcsin(x),
    np.arccos(x),
    np.arctan(x),
    np.sqrt(x),
    np.floor(x),
    np.ceil(x),
    np.round(x),
    np.add(x, y),
    np.sub(x, y),
    np.mul(x, y),
    np.div(x, y),
    np.power(x, y),
    np.maximum(x, y),
    np.minimum(x, y),
    np.arctan2(x, y),
    np.remainder(x, y),
    np.floorDivide(x, y),
    np.where(np.less(x, y), x, y),
    np.where(np.isfinite(x), y, x),
    np.where(np.logicalOr(np.equal(x, y), np.greaterEqual(x, 0.5)), x, np.astype(k, x.dtype)),
    np.astype(np.astype(x, "float32"), x.dtype),
    np.astype(np.notEqual(x, 0), x.dtype),
    np.astype(np.astype(x, "int32"), x.dtype),
    // Integers beyond float32's 24 bits: the cast rounds them (before the add).
    np.add(np.astype(np.mul(k, 16777213), x.dtype), y),
    np.rsqrt(x),
    // Chains: each op's result is rounded to the type before the next (float32.ts), constants too.
    np.add(np.mul(x, y), np.mul(y, 0.1)),
    np.sqrt(np.add(np.square(x), np.square(y))),
    np.div(np.sub(np.mul(x, 1.7), y), np.add(np.abs(y), 0.3)),
  ];
  const k2 = np.add(k, 3);
  const it = [
    np.mul(k, k2),
    np.sub(k, k2),
    np.neg(k),
    np.abs(k),
    np.maximum(k, k2),
    np.minimum(k, k2),
    np.floorDivide(k, 3),
    np.remainder(k, 4),
    np.floorDivide(k, k2),
    np.remainder(k, k2),
    np.where(np.less(k, 0), k, k2),
  ];
  return [np.stack(fl), np.stack(it), np.astype(np.greater(x, y), "int32")];
}

describe("WebAssembly kernels give the JavaScript kernels' bits", () => {
  it("random programs and their gradients, float64 and float32", () => {
    const runs0 = wasmKernelRuns();
    for (const shapes of [
      [[33], [33]],
      [
        [9, 7],
        [9, 7],
      ],
      [[5, 3, 6], [6]],
      [[17, 2], [2]],
    ]) {
      fc.assert(
        fc.property(
          arbProgram({ inShapes: shapes, maxSteps: 8, dataIndices: true, maxSize: 400 }),
          fc.integer({ min: 0, max: 1e6 }),
          fc.boolean(),
          (p, seed, f32) => {
            const xs = p.inShapes.map((s, i) =>
              f32 ? randomArray(seed + i, s).astype("float32") : randomArray(seed + i, s),
            );
            const fn = jit(p.fn);
            sameBitsEveryForm(() => fn(...xs), `values\n${p.text}`);
          },
        ),
        { numRuns: 15 },
      );
      fc.assert(
        fc.property(
          arbProgram({ inShapes: shapes.slice(0, 1), maxSteps: 7, dataIndices: true, maxSize: 400 }),
          fc.integer({ min: 0, max: 1e6 }),
          (p, seed) => {
            const x = randomArray(seed, p.inShapes[0]!);
            const g = jit(grad((v: Array) => np.sum(np.square(p.fn(v)))));
            sameBitsEveryForm(() => g(x) as Array, `gradient\n${p.text}`);
          },
        ),
        { numRuns: 10 },
      );
    }
    expect(wasmKernelRuns() - runs0).toBeGreaterThan(100);
  });

  it("every scalar op on special values, odd and even lengths", () => {
    const special = [...SPECIAL, 1e300, -1e300, 1e-310, -(2 ** 31) - 1];
    for (const n of [special.length, special.length - 1]) {
      const a = np.array(special.slice(0, n), { dtype: "float64" });
      const b = np.array(special.slice(0, n).reverse(), { dtype: "float64" });
      const ints = np.array(
        special.slice(0, n).map((v, i) => (Number.isFinite(v) ? (v * 7) | 0 : i - 5)),
        { dtype: "int32" },
      );
      const f = jit(everyScalarOp);
      sameBitsEveryForm(() => f(a, b, ints) as Array[], `ops at length ${n}`, true);
    }
  });

  it("every scalar op in float32 (four lanes; lengths with 0–3 iterations past the last group of four)", () => {
    const special = [...SPECIAL, 3e38, -3e38, 1e-40, -1e-42, 1.1754944e-38, 0.1, 1 / 3, 16777217, 2.5e-8, 88.7];
    const four0 = wasmFourLaneRuns();
    for (const n of [16, 17, 18, 19, special.length]) {
      const pick = (i: number) => special[i % special.length]!;
      const a = np.array(
        globalThis.Array.from({ length: n }, (_, i) => pick(i)),
        { dtype: "float32" },
      );
      const b = np.array(
        globalThis.Array.from({ length: n }, (_, i) => pick(7 * i + 3)),
        { dtype: "float32" },
      );
      const ints = np.array(
        globalThis.Array.from({ length: n }, (_, i) => (Number.isFinite(pick(i)) ? (pick(i) * 7) | 0 : i - 5)),
        { dtype: "int32" },
      );
      const f = jit(everyScalarOp);
      sameBitsEveryForm(() => f(a, b, ints) as Array[], `float32 ops at length ${n}`, true);
    }
    expect(wasmFourLaneRuns() - four0, "no kernel ran in four float32 lanes").toBeGreaterThan(0);
  });

  it("a jitted float32 program gives the eager bits (each op rounded to float32 as eager stores it)", () => {
    const xs = globalThis.Array.from({ length: 203 }, (_, i) => Math.sin(i * 1.37) * 4 + (i % 7) * 1e-3);
    const x = np.array(xs, { dtype: "float32" }),
      y = np.array(
        xs.map((v) => v * 0.77 - 1.3),
        { dtype: "float32" },
      );
    const k = np.array(
      xs.map((v) => Math.round(v * 3)),
      { dtype: "int32" },
    );
    const idx = np.array(
      xs.map((_, i) => (i * 5) % 11),
      { dtype: "int32" },
    );
    const program = (a: Array, b: Array): Array[] => [
      ...everyScalarOp(a, b, k),
      np.sum(np.mul(np.sin(a), np.sqrt(np.abs(b)))),
      np.scatterAdd(np.zeros([11], { dtype: "float32" }), idx, np.mul(a, np.exp(np.mul(b, 0.2)))),
      grad((v: Array) => np.sum(np.square(np.tanh(np.mul(v, b)))))(a),
    ];
    const bits = (arrays: Array[]) =>
      arrays.map((r) => [...r.dataSync()].map((v) => (Number.isNaN(v) ? "NaN" : Object.is(v, -0) ? "-0" : String(v))));
    const eager = bits(program(x, y));
    for (const form of ["wasm", "wasm-f64x2", "js"] as const) {
      setCpuKernels(form);
      expect(bits(jit(program)(x, y)), `${form} against eager`).toEqual(eager);
    }
    setCpuKernels("wasm");
  });

  it("the logarithm computed in the lanes (fdlibm's, V8's Math.log) gives Math.log's bits across its branches", () => {
    // Node's Math.log is fdlibm's: the two-lane kernels compute it inline (no call out per lane).
    expect(inlineLogExact()).toBe(true);
    // Arguments across every branch (subnormals, zeros, negatives, infinities, NaN, near powers of two, both
    // polynomial forms), pairs of lanes mixing them; an odd count, so the last pair repeats its first lane.
    const xs = logProbeArguments(20_001);
    for (const dtype of ["float64", "float32"] as const) {
      const x = np.array(globalThis.Array.from(xs), { dtype });
      const f = jit((v: Array) => np.add(np.mul(np.log(v), 3), np.log(np.mul(v, 0.25))));
      sameBitsEveryForm(() => f(x), `log ${dtype}`, true);
    }
  });

  it("exp, expm1, tanh, sin and cos computed in the lanes (fdlibm's) give Math's bits across their branches", () => {
    // Node's Math functions are fdlibm's: the kernels compute them inline (no call out per lane).
    for (const op of INLINE_OPS) expect(inlineMathExact(op), op).toBe(true);
    // Arguments across every reduction range, tiny ones, the fallbacks' (beyond the ranges, near multiples of π/2,
    // NaN, infinities), pairs of lanes mixing them; an odd count, so the last pair repeats its first lane.
    const xs = mathProbeArguments(20_001);
    for (const dtype of ["float64", "float32"] as const) {
      const x = np.array(globalThis.Array.from(xs), { dtype });
      const f = jit((v: Array) =>
        np.stack([np.exp(v), np.expm1(v), np.tanh(v), np.sin(v), np.cos(np.mul(v, 0.5)), np.exp(np.mul(v, -0.01))]),
      );
      sameBitsEveryForm(() => f(x), `exp … cos ${dtype}`, true);
    }
  });

  it("scatter-adds with repeated indices keep the JavaScript loop's order (odd length, float32 and float64)", () => {
    for (const dtype of ["float32", "float64"] as const) {
      for (const n of [9, 17, 18, 101, 1000]) {
        // Elements 2j and 2j+1 (lanes 0 and 1) add into one bin, with values spanning e^±30 (the sum depends on the
        // order); the last element has a bin of its own (an odd length's last pair repeats it in lane 1, which must
        // not add).
        const idx = np.array(
          globalThis.Array.from({ length: n }, (_, i) => (i === n - 1 ? 4 : (i >> 1) % 3)),
          { dtype: "int32" },
        );
        const w = randomArray(n, [n], -1e4, 1e4).astype(dtype);
        const f = jit((x: Array) =>
          np.scatterAdd(np.zeros([5], { dtype }), idx, np.mul(np.sin(x), np.exp(np.mul(np.cos(x), 30)))),
        );
        sameBitsEveryForm(() => f(w), `scatter ${dtype} n=${n}`, n > 16);
      }
    }
  });

  it("a kernel called on other arrays, then the first again, reads each (its kept copies follow the operands)", () => {
    const f = jit((x: Array, w: Array) => np.add(np.mul(np.sin(x), w), np.sqrt(np.abs(np.mul(x, w)))));
    const xs = [1, 2, 3].map((s) => randomArray(s, [2000])),
      w = randomArray(9, [2000]);
    setCpuKernels("js");
    const ref = xs.map((x) => f(x, w).toList());
    setCpuKernels("wasm");
    const runs0 = wasmKernelRuns();
    for (const i of [0, 1, 0, 2, 2, 1]) expect(f(xs[i]!, w).toList()).toEqual(ref[i]);
    // As an operand of a scan step (the stacked xs, read at each step's offset) too.
    const g = jit((xs2: Array) =>
      lax.scan(
        (c: Array, x: Array) => [np.add(c, np.mul(np.sin(x), w)), np.cos(np.mul(x, c))],
        np.zeros([2000], { dtype: "float64" }),
        xs2,
      ),
    );
    const stacked = np.stack(xs);
    setCpuKernels("js");
    const gref = (g(stacked) as Array[]).map((a) => a.toList());
    setCpuKernels("wasm");
    expect((g(stacked) as Array[]).map((a) => a.toList())).toEqual(gref);
    expect(wasmKernelRuns() - runs0).toBeGreaterThan(6);
  });

  it("a scan whose constant operand is a buffer the program around it reuses (the next call's value is read)", () => {
    const w = randomArray(7, [2000]);
    const body =
      (k: Array) =>
      (c: Array, x: Array): [Array, Array] => [np.add(np.mul(c, k), np.mul(np.sin(x), w)), np.cos(np.mul(x, c))];
    // k = sin(a) is an intermediate of the jitted program: a buffer rewritten by each call.
    const f = jit((a: Array, xs: Array) => lax.scan(body(np.sin(a)), np.zeros([2000], { dtype: "float64" }), xs));
    // The same, one level deeper: a scan in a scan's body, its constant an intermediate of the outer body.
    const g = jit((a: Array, xs: Array) =>
      lax.scan(
        (c: Array, x: Array): [Array, Array] => {
          const [ci, ys] = lax.scan(body(np.sin(np.add(a, c))), c, np.stack([x, np.mul(x, 2)]));
          return [ci, np.sum(ys, 0)];
        },
        np.zeros([2000], { dtype: "float64" }),
        xs,
      ),
    );
    const as = [1, 2].map((s) => randomArray(s, [2000])),
      xs = np.stack([3, 4, 5].map((s) => randomArray(s, [2000])));
    for (const h of [f, g]) {
      setCpuKernels("js");
      const ref = as.map((a) => (h(a, xs) as Array[]).map((r) => r.toList()));
      setCpuKernels("wasm");
      for (const i of [0, 1, 0, 1]) expect((h(as[i]!, xs) as Array[]).map((r) => r.toList())).toEqual(ref[i]);
    }
  });

  it("a FEM soft body's rollout, forward and gradient, with ground contact", () => {
    const mesh = meshes.tetBox({ cells: [3, 2, 2], size: [0.15, 0.1, 0.1], origin: [0, 0.0005, 0] });
    const { system, state } = fem.softBody(mesh, {
      density: 1000,
      mu: 1e4,
      lambda: 1e4,
      damping: 1,
      velocity: [1, -0.5, 0],
      ground: contact.ground({ ke: 1e4, kd: 10, kf: 10, mu: 0.5 }),
    });
    const sim = (mu: Array) =>
      particles.simulate({ ...system, tets: { ...system.tets!, mu } }, state, { dt: 1 / 1920, substeps: 5, frames: 1 })
        .x;
    const fwd = jit(sim),
      bwd = jit(grad((mu: Array) => np.sum(np.square(sim(mu)))));
    expect(meshes.tetCount(mesh)).toBeGreaterThan(10);
    sameBitsEveryForm(() => fwd(system.tets!.mu), "rollout", true);
    sameBitsEveryForm(() => bwd(system.tets!.mu) as Array, "rollout gradient", true);
  });
});
