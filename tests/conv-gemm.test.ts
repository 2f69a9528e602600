/**
 * conv2d on the CPU as a GEMM (src/core/backends/cpu/conv.ts): the eager implementation,
 * and under jit the routine that big convolutions run as (small ones stay fused kernels). Every
 * path is checked against a float64 loop over the windows within float32 error bounds — with
 * strides, asymmetric padding, kernel dilation, and the input dilation of the strided
 * convolution's gradient — and the gradient of a predictor-sized loss against float64.
 */
import { describe, expect, it } from "vitest";
import { compileCpu } from "../src/core/compile/cpu-program.js";
import { conv2dGeneral } from "../src/core/prims/linalg.js";
import { grad, jit, makeIR, nn, np, type Array } from "../src/index.js";
import { conv2dRef, nd, size, type Nd } from "../property-tests/loop-refs.js";

const values = (shape: number[], seed: number): Nd =>
  nd(
    shape,
    Float64Array.from({ length: size(shape) }, (_, i) =>
      Math.fround(Math.sin(seed * 7.1 + i * 1.37) * Math.cos(i * 0.51 + seed)),
    ),
  );
const f32 = (x: Nd): Array => np.array(Float32Array.from(x.data), { dtype: "float32" }).reshape(x.shape);
const abs = (x: Nd): Nd => nd(x.shape, x.data.map(Math.abs));

/** |got − want| within float32 rounding of a K-term sum of |terms| `mag` (and not NaN). */
function expectClose(
  got: ArrayLike<number>,
  want: ArrayLike<number>,
  mag: ArrayLike<number>,
  K: number,
  what: string,
): void {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    const tol = (K + 2) * 2 ** -23 * mag[i]! + 1e-30;
    if (!(Math.abs(got[i]! - want[i]!) <= tol))
      expect.fail(`${what}: element ${i} is ${got[i]}, want ${want[i]} (± ${tol})`);
  }
}

const routines = (f: (x: Array, w: Array) => Array, x: Array, w: Array) =>
  compileCpu(makeIR(f)(x, w).ir)
    .spec.steps.filter((s) => s.kind === "routine")
    .map((s) => (s.kind === "routine" ? s.eqn.prim.name : ""));

describe("conv2d as a GEMM on the windows read in place on the CPU", () => {
  const cases = [
    {
      name: "stride 2, SAME padding",
      x: [3, 16, 17, 18],
      w: [12, 16, 3, 3],
      stride: [2, 2] as [number, number],
      padding: [
        [0, 1],
        [0, 1],
      ] as const,
      dilation: [1, 1] as [number, number],
    },
    {
      name: "stride (1, 2), asymmetric padding, dilation 2",
      x: [4, 8, 40, 39],
      w: [8, 8, 3, 2],
      stride: [1, 2] as [number, number],
      padding: [
        [2, 1],
        [0, 3],
      ] as const,
      dilation: [2, 2] as [number, number],
    },
    // A padded image above half the chunk's buffer: one image per GEMM, the buffer reused.
    {
      name: "one image per chunk, SAME padding",
      x: [2, 128, 128, 128],
      w: [1, 128, 3, 3],
      stride: [1, 1] as [number, number],
      padding: [
        [1, 1],
        [1, 1],
      ] as const,
      dilation: [1, 1] as [number, number],
    },
    {
      name: "one output channel, 1×1 kernel",
      x: [8, 40, 32, 32],
      w: [1, 40, 1, 1],
      stride: [1, 1] as [number, number],
      padding: [
        [0, 0],
        [0, 0],
      ] as const,
      dilation: [1, 1] as [number, number],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: eager and jit (a GEMM routine) match the float64 loop`, () => {
      const x = values(c.x, 1),
        w = values(c.w, 2);
      const want = conv2dRef(x, w, c.stride, c.padding, c.dilation),
        mag = conv2dRef(abs(x), abs(w), c.stride, c.padding, c.dilation);
      const conv = (a: Array, b: Array) =>
        conv2dGeneral(a, b, { stride: c.stride, padding: c.padding, lhsDilation: [1, 1], rhsDilation: c.dilation });
      expect(routines(conv, f32(x), f32(w))).toEqual(["conv2d"]);
      const K = c.w[1]! * c.w[2]! * c.w[3]!;
      expectClose(conv(f32(x), f32(w)).dataSync(), want.data, mag.data, K, "eager");
      expectClose((jit(conv)(f32(x), f32(w)) as Array).dataSync(), want.data, mag.data, K, "jit");
      // float64 sums in float64: the loop's result to rounding.
      const x64 = np.array(x.data, { dtype: "float64" }).reshape(c.x),
        w64 = np.array(w.data, { dtype: "float64" }).reshape(c.w);
      (conv(x64, w64).dataSync() as Float64Array).forEach((v, i) =>
        expect(Math.abs(v - want.data[i]!)).toBeLessThanOrEqual(1e-12 * (mag.data[i]! + 1)),
      );
    });
  }

  it("a small convolution stays a fused kernel under jit", () => {
    const conv = (a: Array, b: Array) => nn.conv2d(a, b, { padding: "SAME" });
    expect(routines(conv, f32(values([1, 2, 5, 5], 3)), f32(values([2, 2, 3, 3], 4)))).toEqual([]);
  });

  it("the gradient of a strided conv loss (input dilation in the transposes) matches float64, eager and jit", () => {
    // L(x, w) = Σ conv(x, w, stride 2, SAME)²: dL/dx and dL/dw through both transposes.
    const xs = [4, 16, 16, 16],
      ws = [32, 16, 3, 3];
    const x = values(xs, 5),
      w = values(ws, 6);
    const loss = (a: Array, b: Array) => np.sum(np.square(nn.conv2d(a, b, { stride: 2, padding: "SAME" })));
    const x64 = np.array(x.data, { dtype: "float64" }).reshape(xs),
      w64 = np.array(w.data, { dtype: "float64" }).reshape(ws);
    const want = grad(loss, { argnums: [0, 1] })(x64, w64) as [Array, Array];
    for (const g of [grad(loss, { argnums: [0, 1] }), jit(grad(loss, { argnums: [0, 1] }))]) {
      const got = g(f32(x), f32(w)) as [Array, Array];
      for (const k of [0, 1]) {
        const a = got[k]!.dataSync(),
          b = want[k]!.dataSync();
        let scale = 0;
        for (const v of b) scale = Math.max(scale, Math.abs(v));
        a.forEach((v, i) => {
          if (!(Math.abs(v - b[i]!) <= 1e-4 * scale)) expect.fail(`d${k ? "w" : "x"}[${i}] = ${v}, want ${b[i]}`);
        });
      }
    }
  });
});
