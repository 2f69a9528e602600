/**
 * Every first-order primitive run eagerly on webgpu (float32/int32/bool) against the CPU
 * reference implementation (float64 for floats) on the same inputs: elementwise math and
 * integer semantics, casts, movement, gather/scatter with repeated and negative indices (host
 * and device index paths), reductions over various axes incl. big cooperative ones, cumsum,
 * matmul (all three kernels, batched, transposed layouts), conv2d and random bits (exact).
 */
import { it, expect } from "vitest";
import * as lax from "../src/core/prims/index.js";
import { scalar } from "../src/core/constants.js";
import { bind } from "../src/core/trace.js";
import { literalP } from "../src/core/prims/literal.js";
import { np, type Array } from "../src/index.js";
import {
  describeGpu,
  expectMatch,
  expectNoDeviceErrors,
  intSamples,
  pair,
  randPair,
  samples,
  type Pair,
  type Tolerance,
} from "./webgpu-helpers.js";

type Fn = (xs: Array[]) => Array;
/** Runs fn on the webgpu and CPU versions of the inputs and compares. */
async function check(inputs: readonly Pair[], fn: Fn, tol?: Tolerance, label?: string): Promise<void> {
  const g = fn(inputs.map((p) => p.gpu));
  const c = fn(inputs.map((p) => p.cpu));
  await expectMatch(g, c, tol, label);
}
const k = (v: number, like: Array): Array => scalar(v, like.dtype);

describeGpu("webgpu eager: elementwise float32", () => {
  const x = randPair([3, 5], 1, -2, 2);
  const unary: [string, (a: Array) => Array, Pair, Tolerance?][] = [
    ["neg", lax.neg, x],
    ["abs", lax.abs, x],
    ["sign", lax.sign, pair([-2, -0, 0, 0.5, -1e-30, 3, NaN, -Infinity], [8])],
    ["exp", lax.exp, x],
    ["log", lax.log, randPair([3, 5], 2, 0.05, 5)],
    ["log1p", lax.log1p, pair([...samples(10, 3, -0.9, 3), 1e-7, -1e-7, 1e-3, 0, 5e-5], [15])],
    ["expm1", lax.expm1, pair([...samples(10, 4, -3, 3), 1e-7, -1e-6, 1e-3, 0, 4e-5], [15])],
    ["sin", lax.sin, x],
    ["cos", lax.cos, x],
    ["tan", lax.tan, randPair([3, 5], 5, -1.2, 1.2)],
    ["tanh", lax.tanh, pair([...samples(10, 6, -3, 3), 20, -20, 100, -1e-3, 0], [15])],
    ["asin", lax.asin, randPair([3, 5], 7, -0.99, 0.99)],
    ["acos", lax.acos, randPair([3, 5], 8, -0.99, 0.99)],
    ["atan", lax.atan, randPair([3, 5], 9, -5, 5)],
    ["sqrt", lax.sqrt, randPair([3, 5], 10, 0, 4)],
    ["rsqrt", lax.rsqrt, randPair([3, 5], 11, 0.1, 4)],
    ["floor", lax.floor, pair([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.2, 3.7], [8])],
    ["ceil", lax.ceil, pair([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.2, 3.7], [8])],
    ["round (half to even)", lax.round, pair([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.2, 3.7], [8])],
    ["isfinite", lax.isfinite, pair([1, Infinity, -Infinity, NaN, 0, -3e38], [6])],
  ];
  for (const [name, f, inp, tol] of unary) it(name, () => check([inp], ([a]) => f(a!), tol ?? { rtol: 4e-6 }));

  const y = randPair([3, 5], 12, -2, 2);
  const binary: [string, (a: Array, b: Array) => Array, Pair, Pair, Tolerance?][] = [
    ["add", lax.add, x, y],
    ["sub", lax.sub, x, y],
    ["mul", lax.mul, x, y],
    ["div", lax.div, x, y, { rtol: 1e-5 }],
    ["rem", lax.rem, pair([5.5, -5.5, 7, -7, 0.3], [5]), pair([2, 2, -3, 3, 0.1], [5]), { atol: 1e-6 }],
    ["pow (positive base)", lax.pow, randPair([3, 5], 13, 0.1, 3), y, { rtol: 1e-5 }],
    [
      "pow (negative base, integer exponent; zero cases)",
      lax.pow,
      pair([-2, -2, -1.5, 0, 0, -3, 2, 0], [8]),
      pair([3, 2, -1, 2, -1, 0.5, 0, 0], [8]),
      { rtol: 1e-5 },
    ],
    ["max (NaN propagates)", lax.maximum, pair([1, NaN, 3, -1], [4]), pair([2, 1, NaN, -2], [4])],
    ["min (NaN propagates)", lax.minimum, pair([1, NaN, 3, -1], [4]), pair([2, 1, NaN, -2], [4])],
    ["atan2", lax.atan2, x, y, { rtol: 4e-6 }],
    ["broadcast [3,1] + [1,5]", lax.add, randPair([3, 1], 14), randPair([1, 5], 15)],
    ["eq", lax.eq, pair([1, 2, 3, NaN], [4]), pair([1, 3, 3, NaN], [4])],
    ["ne", lax.ne, pair([1, 2, 3, NaN], [4]), pair([1, 3, 3, NaN], [4])],
    ["lt", lax.lt, x, y],
    ["le", lax.le, pair([1, 2, 3], [3]), pair([1, 1, 4], [3])],
    ["gt", lax.gt, x, y],
    ["ge", lax.ge, pair([1, 2, 3], [3]), pair([1, 1, 4], [3])],
  ];
  for (const [name, f, a, b, tol] of binary) it(name, () => check([a, b], ([p, q]) => f(p!, q!), tol));
  it("scalar operands (CPU constants travel to the device)", () =>
    check([x], ([a]) => lax.add(lax.mul(a!, k(3, a!)), k(-0.5, a!))));
  it("np.zeros/ones/full honour { backend } (they used to follow the default backend)", () => {
    const z = np.zeros([2, 3], { dtype: "float64", backend: "cpu" }),
      o = np.ones([2], { dtype: "bool", backend: "cpu" });
    expect([...z.dataSync()]).toEqual([0, 0, 0, 0, 0, 0]); // dataSync: CPU arrays only
    expect([...o.dataSync()]).toEqual([1, 1]);
    expect([...np.full([2], 2.5, { dtype: "float64", backend: "cpu" }).dataSync()]).toEqual([2.5, 2.5]);
  });
  it("more than 65535 workgroups: a 2-D dispatch grid", () =>
    check([randPair([5_000_000], 16)], ([a]) => lax.mul(a!, a!)));
});

describeGpu("webgpu eager: int32 and bool semantics", () => {
  const big = pair([2147483647, -2147483648, 123456789, -7, 7, 0, 46341, -1], [8], "int32");
  const d = pair([1, -1, 1000, 2, -2, 0, 46341, 0], [8], "int32");
  const ops: [string, (a: Array, b: Array) => Array][] = [
    ["add wraps", lax.add],
    ["sub wraps", lax.sub],
    ["mul wraps", lax.mul],
    ["div truncates, x/0 = 0", lax.div],
    ["rem truncates, x%0 = 0", lax.rem],
    ["max", lax.maximum],
    ["min", lax.minimum],
    ["lt", lax.lt],
    ["eq", lax.eq],
  ];
  for (const [name, f] of ops) it(name, () => check([big, d], ([a, b]) => f(a!, b!)));
  it("neg, abs, sign (wrap at INT_MIN)", async () => {
    await check([big], ([a]) => lax.neg(a!));
    await check([big], ([a]) => lax.abs(a!));
    await check([big], ([a]) => lax.sign(a!));
  });
  const p = pair([1, 0, 1, 0, 1], [5], "bool"),
    q = pair([1, 1, 0, 0, 1], [5], "bool");
  it("and, or, not, eq on bool", async () => {
    await check([p, q], ([a, b]) => lax.logicalAnd(a!, b!));
    await check([p, q], ([a, b]) => lax.logicalOr(a!, b!));
    await check([p], ([a]) => lax.logicalNot(a!));
    await check([p, q], ([a, b]) => lax.eq(a!, b!));
  });
  it("select with broadcast predicate", () =>
    check([pair([1, 0, 1], [3, 1], "bool"), randPair([3, 4], 20), randPair([1, 4], 21)], ([c, a, b]) =>
      lax.select(c!, a!, b!),
    ));
});

describeGpu("webgpu eager: casts", () => {
  const f = pair([-2.7, 2.7, 3e9, -3e9, 5e9, NaN, Infinity, -0, 2147483520, 0.5], [10]);
  it("float32 → int32 (truncate, wrap mod 2³², NaN/Inf → 0)", () => check([f], ([a]) => lax.convert(a!, "int32")));
  it("float32 → bool (NaN is true)", () => check([f], ([a]) => lax.convert(a!, "bool")));
  const i = pair([-5, 0, 7, 16777217, -2147483648], [5], "int32");
  it("int32 → float32", () => check([i], ([a]) => lax.convert(a!, "float32")));
  it("int32 → bool → int32 / float32", async () => {
    await check([i], ([a]) => lax.convert(lax.convert(a!, "bool"), "int32"));
    await check([i], ([a]) => lax.convert(lax.convert(a!, "bool"), "float32"));
  });
  it("stop_gradient is the identity", () => check([f], ([a]) => lax.stopGradient(a!)));
});

describeGpu("webgpu eager: movement", () => {
  const x = randPair([2, 3, 4], 30);
  it("broadcast_in_dim", () => check([randPair([3, 1], 31)], ([a]) => lax.broadcastInDim(a!, [2, 3, 5], [1, 2])));
  it("reshape", () => check([x], ([a]) => lax.reshape(a!, [4, 6])));
  it("transpose", () => check([x], ([a]) => lax.transpose(a!, [2, 0, 1])));
  it("slice with strides", () => check([x], ([a]) => lax.slice(a!, [0, 1, 0], [2, 3, 4], [1, 1, 2])));
  it("pad (lo, hi, interior, negative lo)", () =>
    check([x], ([a]) => lax.pad(a!, k(9, a!), [1, -1, 0], [0, 2, 1], [0, 1, 1])));
  it("concatenate", () =>
    check([x, randPair([2, 1, 4], 32), randPair([2, 2, 4], 33)], ([a, b, c]) => lax.concatenate([a!, b!, c!], 1)));
  it("rev", () => check([x], ([a]) => lax.rev(a!, [0, 2])));
  const s = pair([1], [], "int32"),
    s2 = pair([5], [], "int32");
  it("dynamic_slice (starts clamped)", async () => {
    await check([x, s, s2], ([a, i, j]) => lax.dynamicSlice(a!, [i!, j!, i!], [1, 2, 2]));
  });
  it("dynamic_update_slice", () =>
    check([x, randPair([1, 2, 2], 34), s, s2], ([a, u, i, j]) => lax.dynamicUpdateSlice(a!, u!, [i!, i!, j!])));
});

describeGpu("webgpu eager: indexing and random", () => {
  it("iota (int32, float32)", async () => {
    expect([...(await lax.iota("int32", [3, 4], 1).data())]).toEqual([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    expect([...(await lax.iota("float32", [3, 2], 0).data())]).toEqual([0, 0, 1, 1, 2, 2]);
  });
  it("literal", async () => {
    const [v] = bind(literalP, [], { value: 2.5, dtype: "float32", weak: false });
    expect([...(await v!.data())]).toEqual([2.5]);
  });
  const x = randPair([5, 3], 40);
  const idx = pair([4, 0, -1, 4, 2, 0, -5], [7], "int32");
  it("gather axis 0, repeated and negative indices", () => check([x, idx], ([a, i]) => lax.gather(a!, i!, 0)));
  it("gather axis 1 with 2-D indices", () =>
    check([x, pair([2, 0, -1, 1], [2, 2], "int32")], ([a, i]) => lax.gather(a!, i!, 1)));
  const u = randPair([7, 3], 41);
  it("scatter_add axis 0 with repeated indices (host CSR)", () =>
    check([x, idx, u], ([t, i, v]) => lax.scatterAdd(t!, i!, v!, 0)));
  it("scatter_add axis 1 with 2-D indices", () =>
    check([x, pair([2, 0, -1, 2], [2, 2], "int32"), randPair([5, 2, 2], 42)], ([t, i, v]) =>
      lax.scatterAdd(t!, i!, v!, 1),
    ));
  it("scatter_add with indices computed on the device (sort-based CSR)", () =>
    check([x, idx, u], ([t, i, v]) => lax.scatterAdd(t!, lax.add(i!, scalar(0, "int32")), v!, 0)));
  it("scatter_add, many updates into few rows (device and host paths agree)", async () => {
    const n = 3000;
    const ids = pair(intSamples(n, 43, -50, 50), [n], "int32");
    const t = randPair([50, 2], 44),
      v = randPair([n, 2], 45);
    await check([t, ids, v], ([a, i, w]) => lax.scatterAdd(a!, i!, w!, 0), { rtol: 1e-5, atol: 1e-5 }, "host");
    await check(
      [t, ids, v],
      ([a, i, w]) => lax.scatterAdd(a!, lax.mul(i!, scalar(1, "int32")), w!, 0),
      { rtol: 1e-5, atol: 1e-5 },
      "device",
    );
  });
  it("scatter_add int32", () =>
    check(
      [pair([1, 2, 3], [3], "int32"), pair([0, 0, 2, -1], [4], "int32"), pair([5, 6, 7, 8], [4], "int32")],
      ([t, i, v]) => lax.scatterAdd(t!, i!, v!, 0),
    ));
  it("scatter_add out of range index with host indices throws like the CPU", () => {
    const t = randPair([3], 46),
      v = randPair([1], 47),
      bad = pair([3], [1], "int32");
    expect(() => lax.scatterAdd(t.gpu, bad.gpu, v.gpu, 0)).toThrow(
      /scatterAdd: index 3 is out of bounds for axis 0 with size 3/,
    );
  });
  const key = pair([0, 42, 7, -3], [2, 2], "int32");
  it("random_bits int32: bit-identical to the CPU", () => check([key], ([kk]) => lax.randomBits(kk!, [3, 5], "int32")));
  it("random_bits float32 uniform: bit-identical to the CPU", async () => {
    const g = lax.randomBits(key.gpu, [1000], "float32");
    const c = lax.randomBits(lax.convert(key.cpu, "int32"), [1000], "float32");
    expect([...(await g.data())]).toEqual([...c.dataSync()]);
  });
});

describeGpu("webgpu eager: reductions", () => {
  const x = randPair([4, 3, 5], 50);
  const red: [string, (a: Array, axes: number[]) => Array][] = [
    ["sum", lax.reduceSum],
    ["max", lax.reduceMax],
    ["min", lax.reduceMin],
    ["prod", lax.reduceProd],
  ];
  for (const [name, f] of red) {
    it(`${name} over [0], [1], [0,2], all`, async () => {
      for (const axes of [[0], [1], [0, 2], [0, 1, 2]])
        await check([x], ([a]) => f(a!, axes), { rtol: 1e-5 }, `axes ${axes}`);
    });
  }
  it("argmax / argmin with ties and NaN (first wins)", async () => {
    const t = pair([1, 3, 3, 0, NaN, 2, NaN, 5, -1, -1, -1, -1], [3, 4]);
    for (const axis of [0, 1]) {
      await check([t], ([a]) => lax.argmax(a!, axis), {}, `argmax ${axis}`);
      await check([t], ([a]) => lax.argmin(a!, axis), {}, `argmin ${axis}`);
    }
  });
  it("int32 sum and max", async () => {
    const i = pair(intSamples(60, 51, -1000, 1000), [4, 15], "int32");
    await check([i], ([a]) => lax.reduceSum(a!, [1]));
    await check([i], ([a]) => lax.reduceMax(a!, [0, 1]));
  });
  it("full sum of 1M floats (cooperative tree)", () =>
    check([randPair([1 << 20], 52)], ([a]) => lax.reduceSum(a!, [0]), { atol: 2e-6 }));
  it("max / argmax of 1M floats", async () => {
    const big = randPair([1 << 20], 53, -1000, 1000);
    await check([big], ([a]) => lax.reduceMax(a!, [0]));
    await check([big], ([a]) => lax.argmax(a!, 0));
  });
  it("row sums of [8, 100000] and column sums of [3000, 200]", async () => {
    await check([randPair([8, 100000], 54)], ([a]) => lax.reduceSum(a!, [1]), { atol: 2e-6 });
    await check([randPair([3000, 200], 55)], ([a]) => lax.reduceSum(a!, [0]), { atol: 2e-6 });
    await check([randPair([3000, 200], 55)], ([a]) => lax.reduceSum(a!, [1]), { atol: 2e-6 });
  });
  it("cumsum along axes, reverse, long rows (chunked scan), int32", async () => {
    const y = randPair([3, 4, 5], 56);
    for (const axis of [0, 1, 2])
      for (const rev of [false, true])
        await check([y], ([a]) => lax.cumsum(a!, axis, rev), { rtol: 1e-5 }, `axis ${axis} rev ${rev}`);
    await check([randPair([2, 10000], 57)], ([a]) => lax.cumsum(a!, 1), { atol: 1e-5 }, "long rows");
    await check([randPair([10000, 2], 58)], ([a]) => lax.cumsum(a!, 0, true), { atol: 1e-5 }, "long column, reverse");
    await check([pair(intSamples(5000, 59, -9, 9), [5000], "int32")], ([a]) => lax.cumsum(a!, 0), {}, "int32");
  });
});

describeGpu("webgpu eager: contractions", () => {
  const dot = (a: Array, b: Array, lc: number[], rc: number[], lb: number[] = [], rb: number[] = []) =>
    lax.dotGeneral(a, b, { contract: [lc, rc], batch: [lb, rb] });
  it("small matmul (fused kernel)", () =>
    check([randPair([3, 4], 60), randPair([4, 5], 61)], ([a, b]) => dot(a!, b!, [1], [0])));
  it("tiled matmul [70,300]×[300,50]", () =>
    check([randPair([70, 300], 62), randPair([300, 50], 63)], ([a, b]) => dot(a!, b!, [1], [0]), {
      rtol: 1e-5,
      atol: 1e-5,
    }));
  it("long contraction with few outputs (cooperative) [2,3000]×[3000,3]", () =>
    check([randPair([2, 3000], 64), randPair([3000, 3], 65)], ([a, b]) => dot(a!, b!, [1], [0]), { atol: 1e-5 }));
  it("matrix-vector (one thread per output)", () =>
    check([randPair([9000, 100], 66), randPair([100], 67)], ([a, b]) => dot(a!, b!, [1], [0]), { atol: 1e-5 }));
  it("batched with transposed operands", async () => {
    await check(
      [randPair([5, 100, 40], 68), randPair([5, 100, 36], 69)],
      ([a, b]) => dot(a!, b!, [1], [1], [0], [0]),
      { atol: 1e-5 },
      "lhs transposed",
    );
    await check(
      [randPair([100, 3, 40], 70), randPair([3, 36, 100], 71)],
      ([a, b]) => dot(a!, b!, [0], [2], [1], [0]),
      { atol: 1e-5 },
      "batch in the middle",
    );
  });
  it("int32 matmul", () =>
    check(
      [
        pair(intSamples(6 * 100, 72, -5, 5), [6, 100], "int32"),
        pair(intSamples(100 * 4, 73, -5, 5), [100, 4], "int32"),
      ],
      ([a, b]) => dot(a!, b!, [1], [0]),
    ));
  const conv = (x: Array, w: Array, p: Partial<lax.ConvParams> = {}) =>
    lax.conv2dGeneral(x, w, {
      stride: p.stride ?? [1, 1],
      padding: p.padding ?? [
        [0, 0],
        [0, 0],
      ],
      lhsDilation: p.lhsDilation ?? [1, 1],
      rhsDilation: p.rhsDilation ?? [1, 1],
    });
  it("conv2d: plain, strided+padded, dilated, many channels", async () => {
    const x = randPair([2, 3, 8, 8], 74),
      w = randPair([4, 3, 3, 3], 75);
    await check([x, w], ([a, b]) => conv(a!, b!), { rtol: 1e-5 }, "plain");
    await check(
      [x, w],
      ([a, b]) =>
        conv(a!, b!, {
          stride: [2, 1],
          padding: [
            [1, 2],
            [0, 1],
          ],
        }),
      { rtol: 1e-5 },
      "stride/pad",
    );
    await check(
      [x, w],
      ([a, b]) =>
        conv(a!, b!, {
          lhsDilation: [2, 1],
          rhsDilation: [1, 2],
          padding: [
            [1, 1],
            [2, 2],
          ],
        }),
      { rtol: 1e-5 },
      "dilations",
    );
    await check(
      [randPair([1, 16, 6, 6], 76), randPair([2, 16, 3, 3], 77)],
      ([a, b]) => conv(a!, b!),
      { rtol: 1e-5, atol: 1e-5 },
      "C·kh·kw = 144",
    );
  });
  it("no device errors", () => expectNoDeviceErrors());
});
