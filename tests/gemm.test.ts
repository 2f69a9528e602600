/**
 * The CPU float32 GEMM (src/core/backends/cpu/gemm) and its use by dot_general.
 *
 * The kernels promise one exact result: each C element is the sequential float32 sum over k in
 * increasing order (product rounded, then add rounded). So both paths (wasm SIMD, JS) are checked
 * bit-for-bit against a naive loop doing exactly that, for every shape and operand layout, and
 * against a float64 reference within float32 error bounds. Non-finite inputs must behave as IEEE
 * (0·Inf = NaN: no zero-skipping).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  gemmF32,
  setGemmPath,
  wasmGemmAvailable,
  type GemmDims,
  type GemmPath,
  type StridedMatrices,
} from "../src/core/backends/cpu/gemm/index.js";
import { gemmJs } from "../src/core/backends/cpu/gemm/js-gemm.js";
import { stridedView } from "../src/core/backends/cpu/gemm/operand-view.js";
import { createWasmGemm } from "../src/core/backends/cpu/gemm/wasm-gemm.js";
import { setCpuThreads, THREAD_MIN_WORK, threadedRuns } from "../src/core/compile/threads.js";
import { grad, jit, np, type Array } from "../src/index.js";

// ---------------------------------------------------------------- helpers

/** Deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const randomF32 = (n: number, rand: () => number): Float32Array =>
  Float32Array.from({ length: n }, () => rand() * 2 - 1);

/** A logical [batch][rows][cols] value function stored in a chosen memory layout. */
type Layout = "normal" | "transposed" | "batch-inner";
function makeOperand(
  batch: number,
  rows: number,
  cols: number,
  layout: Layout,
  value: (b: number, i: number, j: number) => number,
): StridedMatrices {
  const data = new Float32Array(batch * rows * cols);
  // Strides of (b, i, j) for each layout: [B][R][C], [B][C][R], [R][C][B].
  const [sb, si, sj] =
    layout === "normal"
      ? [rows * cols, cols, 1]
      : layout === "transposed"
        ? [rows * cols, 1, rows]
        : [1, cols * batch, batch];
  for (let b = 0; b < batch; b++)
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) data[b * sb + i * si + j * sj] = value(b, i, j);
  return { data, offset: 0, batchStride: sb, rowStride: si, colStride: sj };
}
const at = (x: StridedMatrices, b: number, i: number, j: number): number =>
  x.data[x.offset + b * x.batchStride + i * x.rowStride + j * x.colStride]!;

/** The specified result: sequential float32 accumulation over k. */
function sequentialF32(a: StridedMatrices, b: StridedMatrices, { batch, m, k, n }: GemmDims): Float32Array {
  const out = new Float32Array(batch * m * n);
  for (let bb = 0; bb < batch; bb++)
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let kk = 0; kk < k; kk++) s = Math.fround(s + Math.fround(at(a, bb, i, kk) * at(b, bb, kk, j)));
        out[(bb * m + i) * n + j] = s;
      }
  return out;
}
/** Float64 reference and Σ|a||b| per element (the scale of float32 rounding error). */
function referenceF64(
  a: StridedMatrices,
  b: StridedMatrices,
  { batch, m, k, n }: GemmDims,
): { val: Float64Array; mag: Float64Array } {
  const val = new Float64Array(batch * m * n),
    mag = new Float64Array(batch * m * n);
  for (let bb = 0; bb < batch; bb++)
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let s = 0,
          t = 0;
        for (let kk = 0; kk < k; kk++) {
          const p = at(a, bb, i, kk) * at(b, bb, kk, j);
          s += p;
          t += Math.abs(p);
        }
        val[(bb * m + i) * n + j] = s;
        mag[(bb * m + i) * n + j] = t;
      }
  return { val, mag };
}
/** Bitwise equality (distinguishes -0 and NaN payloads are irrelevant: compare NaN-ness separately). */
function expectSameBits(got: Float32Array, want: Float32Array, what: string): void {
  expect(got.length, what).toBe(want.length);
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length),
    w = new Uint32Array(want.buffer, want.byteOffset, want.length);
  for (let i = 0; i < g.length; i++) {
    if (Number.isNaN(got[i]!) && Number.isNaN(want[i]!)) continue;
    if (g[i] !== w[i]) expect.fail(`${what}: element ${i} is ${got[i]}, expected ${want[i]} (bit-exact)`);
  }
}
/** Within float32 accumulation error: |c − ref| ≤ (k+2)·2⁻²⁴·Σ|a||b| (+ a denormal-sized floor). */
function expectCloseToF64(
  got: Float32Array,
  { val, mag }: { val: Float64Array; mag: Float64Array },
  k: number,
  what: string,
): void {
  for (let i = 0; i < got.length; i++) {
    const tol = (k + 2) * 2 ** -24 * mag[i]! + 1e-30;
    if (!(Math.abs(got[i]! - val[i]!) <= tol))
      expect.fail(`${what}: element ${i} is ${got[i]}, f64 reference ${val[i]} (tol ${tol})`);
  }
}
const classify = (v: number): string =>
  Number.isNaN(v) ? "NaN" : v === Infinity ? "+Inf" : v === -Infinity ? "-Inf" : "finite";

const paths: GemmPath[] = wasmGemmAvailable() ? ["js", "wasm"] : ["js"];
afterEach(() => {
  setGemmPath("auto");
});

// ---------------------------------------------------------------- kernels

describe("gemmF32: shapes × layouts × paths", () => {
  // [batch, m, k, n]: unit sizes, odd sizes, k not a multiple of 4, m crossing the 128-row block,
  // k crossing the 256-deep block (257, 513), n = 1 and n not a multiple of the 8-wide panel.
  const shapes: [number, number, number, number][] = [
    [1, 1, 1, 1],
    [1, 1, 7, 1],
    [1, 5, 3, 1],
    [1, 1, 300, 1],
    [1, 1, 9, 17],
    [1, 3, 5, 7],
    [2, 4, 4, 8],
    [3, 17, 9, 13],
    [1, 37, 129, 61],
    [1, 130, 257, 33],
    [2, 9, 513, 10],
    [1, 64, 64, 64],
    [4, 12, 1, 20],
    [5, 6, 11, 3],
  ];
  const layouts: [Layout, Layout][] = [
    ["normal", "normal"],
    ["transposed", "normal"],
    ["normal", "transposed"],
    ["transposed", "transposed"],
    ["batch-inner", "batch-inner"],
  ];
  for (const [batch, m, k, n] of shapes) {
    it(`batch ${batch}, ${m}×${k} · ${k}×${n}`, () => {
      const rand = rng(batch * 1e6 + m * 1e4 + k * 100 + n);
      const av = randomF32(batch * m * k, rand),
        bv = randomF32(batch * k * n, rand);
      const dims = { batch, m, k, n };
      for (const [la, lb] of layouts) {
        const a = makeOperand(batch, m, k, la, (b, i, j) => av[(b * m + i) * k + j]!);
        const b = makeOperand(batch, k, n, lb, (bb, i, j) => bv[(bb * k + i) * n + j]!);
        const want = sequentialF32(a, b, dims),
          ref = referenceF64(a, b, dims);
        for (const p of paths) {
          setGemmPath(p);
          const got = gemmF32(a, b, dims);
          expectSameBits(got, want, `${p} ${la}/${lb}`);
          expectCloseToF64(got, ref, k, `${p} ${la}/${lb}`);
        }
      }
    });
  }

  it("k = 0 gives zeros, m = 0 or n = 0 gives an empty result", () => {
    for (const p of paths) {
      setGemmPath(p);
      const z = gemmF32(
        makeOperand(2, 3, 0, "normal", () => 0),
        makeOperand(2, 0, 4, "normal", () => 0),
        { batch: 2, m: 3, k: 0, n: 4 },
        new Float32Array(24).fill(7),
      );
      expect([...z]).toEqual(new globalThis.Array(24).fill(0));
      expect(
        gemmF32(
          makeOperand(1, 0, 3, "normal", () => 1),
          makeOperand(1, 3, 4, "normal", () => 1),
          { batch: 1, m: 0, k: 3, n: 4 },
        ).length,
      ).toBe(0);
    }
  });

  it("a non-zero offset into the operand data is honoured", () => {
    const rand = rng(5);
    const base = makeOperand(1, 6, 10, "normal", () => rand());
    const padded = new Float32Array(base.data.length + 3);
    padded.set(base.data, 3);
    const b = makeOperand(1, 10, 9, "normal", () => rand());
    const dims = { batch: 1, m: 6, k: 10, n: 9 };
    for (const p of paths) {
      setGemmPath(p);
      expectSameBits(gemmF32({ ...base, data: padded, offset: 3 }, b, dims), sequentialF32(base, b, dims), p);
    }
  });
});

describe("a gathered B (a convolution's windows read in place)", () => {
  it("gives the dense B's bits on every path; its size must be the product's", () => {
    // k crossing the 256-deep block, n not a multiple of the 8-wide panel; offsets that overlap and repeat.
    for (const [m, k, n] of [
      [5, 300, 13],
      [32, 144, 61],
      [3, 9, 8],
    ] as const) {
      const rand = rng(m * 1000 + k + n);
      const data = randomF32(4 * k + 3 * n, rand);
      // Columns in runs of 10 consecutive places (an image row's output places): some strips move as vectors.
      const rowOffsets = Int32Array.from({ length: k }, (_, i) => (i * 37) % (4 * k)),
        colOffsets = Int32Array.from({ length: n }, (_, j) => (j + 3 * Math.floor(j / 10)) % (3 * n));
      const dense = makeOperand(1, k, n, "normal", (_b, i, j) => data[rowOffsets[i]! + colOffsets[j]!]!);
      const a = makeOperand(1, m, k, "normal", () => rand() * 2 - 1),
        dims = { batch: 1, m, k, n };
      const want = sequentialF32(a, dense, dims);
      for (const p of paths) {
        setGemmPath(p);
        expectSameBits(gemmF32(a, { data, rowOffsets, colOffsets }, dims), want, `${p} ${m}×${k}·${k}×${n}`);
      }
      // The module packs it itself, for every tile width.
      if (wasmGemmAvailable())
        for (const config of [
          { tile: { mr: 3, nv: 4 }, kc: 100, mc: 3 },
          { tile: { mr: 1, nv: 1 }, kc: 7, mc: 1 },
        ]) {
          const out = new Float32Array(m * n);
          expect(createWasmGemm(config)!(a, { data, rowOffsets, colOffsets }, dims, out)).toBe(true);
          expectSameBits(out, want, `${JSON.stringify(config)} ${m}×${k}·${k}×${n}`);
        }
    }
    expect(() =>
      gemmF32(
        makeOperand(1, 2, 3, "normal", () => 1),
        { data: new Float32Array(9), rowOffsets: new Int32Array(3), colOffsets: new Int32Array(4) },
        { batch: 1, m: 2, k: 3, n: 5 },
      ),
    ).toThrow(/a gathered B is one 3×4 matrix, not \[1, 3, 5\]/);
  });
});

describe("determinism", () => {
  const rand = rng(42);
  const dims = { batch: 2, m: 150, k: 300, n: 70 };
  const a = makeOperand(2, 150, 300, "normal", () => rand() * 2 - 1),
    b = makeOperand(2, 300, 70, "normal", () => rand() * 2 - 1);

  it("repeated calls are bit-identical on every path, and the paths agree", () => {
    const results = paths.flatMap((p) => {
      setGemmPath(p);
      return [gemmF32(a, b, dims), gemmF32(a, b, dims)];
    });
    for (const r of results.slice(1)) expectSameBits(r, results[0]!, "repeat");
  });

  it.skipIf(!wasmGemmAvailable())("the wasm result does not depend on tile or block sizes", () => {
    const want = sequentialF32(a, b, dims);
    for (const config of [
      { tile: { mr: 4, nv: 2 }, kc: 256, mc: 128 },
      { tile: { mr: 6, nv: 2 }, kc: 16, mc: 12 },
      { tile: { mr: 3, nv: 4 }, kc: 100, mc: 3 },
      { tile: { mr: 1, nv: 1 }, kc: 1, mc: 1 },
    ]) {
      const out = new Float32Array(2 * 150 * 70);
      expect(createWasmGemm(config)!(a, b, dims, out)).toBe(true);
      expectSameBits(out, want, JSON.stringify(config));
    }
  });

  it.skipIf(!wasmGemmAvailable())("split over two threads by C's column strips: the one thread's bits", () => {
    // Strips not a multiple of the pieces' 4, M and K over a block (the threaded call repeats per block), a gathered B.
    const d = { batch: 1, m: 150, k: 300, n: 8 * 37 + 5 };
    const r = rng(11);
    const x = makeOperand(1, d.m, d.k, "normal", () => r() * 2 - 1),
      y = makeOperand(1, d.k, d.n, "normal", () => r() * 2 - 1);
    const rowOffsets = Int32Array.from({ length: d.k }, (_, i) => i * d.n),
      colOffsets = Int32Array.from({ length: d.n }, (_, j) => j);
    setGemmPath("wasm");
    const before = setCpuThreads(1);
    try {
      const want = gemmF32(x, y, d);
      expectSameBits(want, sequentialF32(x, y, d), "one thread");
      setCpuThreads(2, { minWork: 0 });
      const runs = threadedRuns();
      expectSameBits(gemmF32(x, y, d), want, "two threads");
      expectSameBits(gemmF32(x, { data: y.data, rowOffsets, colOffsets }, d), want, "two threads, gathered");
      // Two K blocks × two M blocks, each a threaded call.
      expect(threadedRuns() - runs).toBe(8);
    } finally {
      setCpuThreads(before, { minWork: THREAD_MIN_WORK });
    }
  });

  it("a 256³ product: JS and wasm bit-identical", () => {
    const r = rng(7),
      d = { batch: 1, m: 256, k: 256, n: 256 };
    const x = makeOperand(1, 256, 256, "normal", () => r() * 2 - 1),
      y = makeOperand(1, 256, 256, "normal", () => r() * 2 - 1);
    const outs = paths.map((p) => {
      setGemmPath(p);
      return gemmF32(x, y, d);
    });
    for (const o of outs) expectSameBits(o, outs[0]!, "256³");
    expectCloseToF64(outs[0]!, referenceF64(x, y, d), 256, "256³");
  });
});

describe("non-finite inputs follow IEEE", () => {
  // Row 0 of A is zero and column 0 of B holds an Inf: 0·Inf must give NaN, not 0.
  // Row 1 meets +Inf and −Inf in column 1 (Inf − Inf = NaN); row 2 has a NaN; row 3 is finite.
  const m = 5,
    k = 70,
    n = 9;
  const aVal = (_b: number, i: number, j: number) =>
    i === 0 ? 0 : i === 2 && j === 3 ? NaN : 1 + ((i * 7 + j) % 5) / 8;
  const bVal = (_b: number, i: number, j: number) =>
    j === 0 && i === 10
      ? Infinity
      : j === 1 && i === 4
        ? Infinity
        : j === 1 && i === 5
          ? -Infinity
          : j === 2 && i === 6
            ? -Infinity
            : ((i + j) % 3) / 4;
  const dims = { batch: 1, m, k, n };

  it("in both kernels", () => {
    for (const [la, lb] of [
      ["normal", "normal"],
      ["transposed", "transposed"],
    ] as [Layout, Layout][]) {
      const a = makeOperand(1, m, k, la, aVal),
        b = makeOperand(1, k, n, lb, bVal);
      const ref = referenceF64(a, b, dims).val;
      expect(classify(ref[0]!)).toBe("NaN"); // the reference itself: 0·Inf
      expect(classify(ref[n + 1]!)).toBe("NaN"); // Inf − Inf
      expect(classify(ref[3 * n + 2]!)).toBe("-Inf");
      for (const p of paths) {
        setGemmPath(p);
        const got = gemmF32(a, b, dims);
        got.forEach((v, i) => expect(classify(v), `${p} ${la}/${lb} element ${i}`).toBe(classify(ref[i]!)));
      }
    }
  });

  it("through np.matmul, eager and jit (a routine when k > 64), for float32 and float64", () => {
    for (const dtype of ["float32", "float64"] as const) {
      const av = makeOperand(1, m, k, "normal", aVal).data,
        bv = makeOperand(1, k, n, "normal", bVal).data;
      const x = np.array(av).reshape([m, k]).astype(dtype),
        y = np.array(bv).reshape([k, n]).astype(dtype);
      const ref = referenceF64(makeOperand(1, m, k, "normal", aVal), makeOperand(1, k, n, "normal", bVal), dims).val;
      for (const fn of [np.matmul, jit((p: Array, q: Array) => np.matmul(p, q))]) {
        const got = fn(x, y).dataSync();
        got.forEach((v, i) => expect(classify(v), `${dtype} element ${i}`).toBe(classify(ref[i]!)));
      }
    }
  });
});

// ---------------------------------------------------------------- dot_general wiring

describe("dot_general uses the GEMM for float32", () => {
  const rand = rng(99);
  /** Compare an np result with a float64 einsum-like reference over named index loops. */
  function check(got: Array, want: Float64Array, mag: Float64Array, k: number): void {
    const g = got.dataSync() as Float32Array;
    expect(got.dtype).toBe("float32");
    expectCloseToF64(g, { val: want, mag }, k, "dot_general");
  }

  it("transposed-contiguous operands (tensordot over lhs axis 0) and interleaved free axes", () => {
    const K = 90,
      M = 7,
      N = 11;
    const xv = randomF32(K * M, rand),
      yv = randomF32(K * N, rand);
    const want = new Float64Array(M * N),
      mag = new Float64Array(M * N);
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++)
        for (let kk = 0; kk < K; kk++) {
          const p = xv[kk * M + i]! * yv[kk * N + j]!;
          want[i * N + j] += p;
          mag[i * N + j] += Math.abs(p);
        }
    for (const p of paths) {
      setGemmPath(p);
      check(np.tensordot(np.array(xv).reshape([K, M]), np.array(yv).reshape([K, N]), [[0], [0]]), want, mag, K);
    }
    // x [2, K, 3]: free axes 0 and 2 are not one stride apart, so the operand is transposed first.
    const zv = randomF32(2 * K * 3, rand);
    const w2 = new Float64Array(6 * N),
      m2 = new Float64Array(6 * N);
    for (let a = 0; a < 2; a++)
      for (let c = 0; c < 3; c++)
        for (let j = 0; j < N; j++)
          for (let kk = 0; kk < K; kk++) {
            const p = zv[(a * K + kk) * 3 + c]! * yv[kk * N + j]!;
            w2[(a * 3 + c) * N + j] += p;
            m2[(a * 3 + c) * N + j] += Math.abs(p);
          }
    check(np.tensordot(np.array(zv).reshape([2, K, 3]), np.array(yv).reshape([K, N]), [[1], [0]]), w2, m2, K);
  });

  it("batch axes anywhere (einsum kmb,bkn->bmn) and batched matmul", () => {
    const B = 3,
      K = 70,
      M = 5,
      N = 6;
    const xv = randomF32(K * M * B, rand),
      yv = randomF32(B * K * N, rand);
    const want = new Float64Array(B * M * N),
      mag = new Float64Array(B * M * N);
    for (let b = 0; b < B; b++)
      for (let i = 0; i < M; i++)
        for (let j = 0; j < N; j++)
          for (let kk = 0; kk < K; kk++) {
            const p = xv[(kk * M + i) * B + b]! * yv[(b * K + kk) * N + j]!;
            want[(b * M + i) * N + j] += p;
            mag[(b * M + i) * N + j] += Math.abs(p);
          }
    const x = np.array(xv).reshape([K, M, B]),
      y = np.array(yv).reshape([B, K, N]);
    check(np.einsum("kmb,bkn->bmn", x, y), want, mag, K);
    check(np.matmul(np.transpose(x, [2, 1, 0]), y), want, mag, K);
  });

  it("grad of a matmul loss (x^T·g and g·w^T contractions) matches float64", () => {
    const M = 40,
      K = 80,
      N = 12;
    const xv = randomF32(M * K, rand),
      wv = randomF32(K * N, rand);
    // loss = Σ (x·w)², dL/dw = 2·x^T·(x·w)
    const xw = new Float64Array(M * N);
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) for (let kk = 0; kk < K; kk++) xw[i * N + j] += xv[i * K + kk]! * wv[kk * N + j]!;
    const want = new Float64Array(K * N),
      mag = new Float64Array(K * N);
    for (let kk = 0; kk < K; kk++)
      for (let j = 0; j < N; j++)
        for (let i = 0; i < M; i++) {
          const p = 2 * xv[i * K + kk]! * xw[i * N + j]!;
          want[kk * N + j] += p;
          mag[kk * N + j] += Math.abs(p);
        }
    const loss = (w: Array, x: Array) => np.sum(np.square(np.matmul(x, w)));
    const x = np.array(xv).reshape([M, K]),
      w = np.array(wv).reshape([K, N]);
    for (const g of [grad(loss), jit(grad(loss))]) {
      const got = g(w, x) as Array;
      // The forward product is rounded to float32 before the backward one: allow two products' error.
      expectCloseToF64(got.dataSync() as Float32Array, { val: want, mag }, 2 * (K + M), "grad");
    }
  });

  it("int32 and float64 keep exact accumulation", () => {
    const a = np.array(new Int32Array([3, -2, 7, 1, 0, 5])).reshape([2, 3]),
      b = np.array(new Int32Array([1, 4, -6, 2, 8, 3])).reshape([3, 2]);
    expect([...np.matmul(a, b).dataSync()]).toEqual([
      3 * 1 - 2 * -6 + 7 * 8,
      3 * 4 - 2 * 2 + 7 * 3,
      1 * 1 + 0 + 5 * 8,
      1 * 4 + 0 + 5 * 3,
    ]);
    // 1 + 2⁻³⁰ − 1 survives in float64 only.
    const c = np.array(new Float64Array([1, 2 ** -30, -1])).reshape([1, 3]),
      d = np.ones([3, 1]).astype("float64");
    expect(np.matmul(c, d).dataSync()[0]).toBe(2 ** -30);
  });
});

describe("fallbacks", () => {
  it("createWasmGemm returns null when the SIMD module does not validate", () => {
    const spy = vi.spyOn(WebAssembly, "validate").mockReturnValue(false);
    try {
      expect(createWasmGemm()).toBeNull();
    } finally {
      spy.mockRestore();
    }
  });

  it("forcing the JS path through dot_general gives the same bits as the default path", () => {
    const r = rng(3);
    const x = np.array(randomF32(96 * 200, r)).reshape([96, 200]),
      y = np.array(randomF32(200 * 50, r)).reshape([200, 50]);
    const auto = np.matmul(x, y).dataSync() as Float32Array;
    setGemmPath("js");
    expectSameBits(np.matmul(x, y).dataSync() as Float32Array, auto, "js vs auto");
  });

  it("gemmJs copes with a strided B whose columns are not contiguous", () => {
    const r = rng(4);
    const a = makeOperand(2, 5, 6, "normal", () => r()),
      b = makeOperand(2, 6, 7, "transposed", () => r());
    const dims = { batch: 2, m: 5, k: 6, n: 7 },
      out = new Float32Array(70);
    gemmJs(a, b, dims, out);
    expectSameBits(out, sequentialF32(a, b, dims), "gemmJs");
  });
});

describe("stridedView", () => {
  const data = new Float32Array(2 * 3 * 4 * 5);
  it("reads [B,M,K], transposed and size-1-padded operands in place", () => {
    expect(stridedView(data, [2, 3, 4], [0], [1], [2])).toMatchObject({ batchStride: 12, rowStride: 4, colStride: 1 });
    expect(stridedView(data, [4, 3], [], [1], [0])).toMatchObject({ rowStride: 1, colStride: 3 });
    expect(stridedView(data, [2, 1, 3, 4], [], [0, 1, 2], [3])).toMatchObject({ rowStride: 4, colStride: 1 });
    expect(stridedView(data, [3, 4, 5], [], [2], [0, 1])).toMatchObject({ rowStride: 1, colStride: 5 });
  });
  it("refuses interleaved groups (the caller transposes)", () => {
    expect(stridedView(data, [2, 3, 4], [], [0, 2], [1])).toBeNull();
    expect(stridedView(data, [2, 3, 4], [], [1], [2, 0])).toBeNull();
  });
});
