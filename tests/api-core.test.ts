/**
 * Unit tests of every public name in API.md's "Arrays and backends" section: backends, np.array
 * and Array properties/readers/methods, each np and nn function, tree and random. Expected
 * values are hand-computed or come from Math.* on the same inputs.
 */
import ndarray from "ndarray";
import { describe, expect, it } from "vitest";
import { Array, defaultBackend, devices, grad, init, nn, np, random, tree } from "../src/index.js";

type Nested = number | boolean | readonly Nested[];
const flat = (v: Nested): number[] =>
  typeof v === "number" ? [v] : typeof v === "boolean" ? [v ? 1 : 0] : v.flatMap(flat);
const shapeOfNested = (v: Nested): number[] =>
  globalThis.Array.isArray(v) ? [v.length, ...shapeOfNested((v as readonly Nested[])[0]!)] : [];

/** Shape and values (to float32 rounding by default) of x against nested JS arrays. */
function expectArray(x: Array, expected: Nested, opts: { dtype?: string; digits?: number } = {}): void {
  expect(x).toBeInstanceOf(Array);
  expect(x.shape).toEqual(shapeOfNested(expected));
  if (opts.dtype) expect(x.dtype).toBe(opts.dtype);
  const got = [...x.dataSync()];
  const want = flat(expected);
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => {
    if (Number.isNaN(want[i]!)) expect(g).toBeNaN();
    else expect(g).toBeCloseTo(want[i]!, opts.digits ?? 5);
  });
}

describe("init, defaultBackend, devices", () => {
  it("init() picks a backend and init({ backend: 'cpu' }) selects the CPU", async () => {
    expect(["cpu", "webgpu"]).toContain(await init());
    expect(await init({ backend: "cpu" })).toBe("cpu");
    expect(defaultBackend()).toBe("cpu");
  });
  it("devices() lists the CPU with a description", () => {
    const cpu = devices().find((d) => d.name === "cpu");
    expect(cpu).toBeDefined();
    expect(JSON.stringify(cpu)).toMatch(/float64/);
  });
});

describe("np.array and Array properties", () => {
  it("from nested JS arrays (float32 by default)", () => {
    const x = np.array([
      [1, 2],
      [3, 4],
    ]);
    expect([x.shape, x.dtype, x.ndim, x.size]).toEqual([[2, 2], "float32", 2, 4]);
    expectArray(x, [
      [1, 2],
      [3, 4],
    ]);
  });
  it("with dtype and backend options", () => {
    const y = np.array([1.5, 2.5], { dtype: "float64", backend: "cpu" });
    expect(y.dtype).toBe("float64");
    expect(y.dataSync()).toBeInstanceOf(Float64Array);
    expectArray(np.array([1.7, -2.7], { dtype: "int32" }), [1, -2], { dtype: "int32" });
  });
  it("from typed arrays: the dtype follows the array type", () => {
    expect(np.array(new Float64Array([1, 2])).dtype).toBe("float64");
    expect(np.array(new Int32Array([1, 2])).dtype).toBe("int32");
    expect(np.array(new Float32Array([1, 2])).dtype).toBe("float32");
  });
  it("from an ndarray view, honouring strides and offset", () => {
    const view = ndarray(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3]).transpose(1, 0); // [[1,4],[2,5],[3,6]]
    expectArray(
      np.array(view),
      [
        [1, 4],
        [2, 5],
        [3, 6],
      ],
      { dtype: "float64" },
    );
    const sub = ndarray(new Float32Array([0, 1, 2, 3, 4, 5, 6, 7]), [2, 4])
      .lo(0, 1)
      .hi(2, 2); // columns 1..2
    expectArray(np.array(sub), [
      [1, 2],
      [5, 6],
    ]);
  });
  it("from numbers and booleans", () => {
    expectArray(np.array(2.5), 2.5);
    expectArray(np.array([true, false]), [1, 0], { dtype: "bool" });
  });
});

describe("reading values", () => {
  const x = np.array([
    [1, 2, 3],
    [4, 5, 6],
  ]);
  it("data() resolves to a row-major typed array", async () => {
    const d = await x.data();
    expect(d).toBeInstanceOf(Float32Array);
    expect([...d]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await np.array([1], { dtype: "int32" }).data()).toBeInstanceOf(Int32Array);
    expect(await np.array([true]).data()).toBeInstanceOf(Uint8Array);
  });
  it("dataSync() reads synchronously on the CPU", () => {
    expect([...x.dataSync()]).toEqual([1, 2, 3, 4, 5, 6]);
  });
  it("toNdarray() returns an ndarray view with the same shape and values", async () => {
    const v = await x.toNdarray();
    expect(v.shape).toEqual([2, 3]);
    expect(v.get(1, 2)).toBe(6);
    expect(v.get(0, 1)).toBe(2);
    const s = await np.array(3).toNdarray();
    expect(s.get()).toBe(3);
  });
  it("String() shows small arrays with their values, NaN and ±Infinity included (JSON would print null)", () => {
    expect(String(np.array([[1.5, -2]]))).toBe("Array(f32[1,2], [[1.5,-2]])");
    expect(String(np.array([NaN, Infinity, -Infinity]))).toBe("Array(f32[3], [NaN,Infinity,-Infinity])");
  });
  it("item() and toList()", () => {
    expect(np.array([[7]]).item()).toBe(7);
    expect(x.toList()).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });
  it("dispose() frees the buffer; later use is a clear error", () => {
    const y = np.array([1, 2]);
    y.dispose();
    expect(() => y.add(1)).toThrow(/disposed/);
  });
});

describe("Array methods", () => {
  const x = np.array([
    [1, 2],
    [3, 4],
  ]);
  it("chain like np", () => {
    expectArray(
      x
        .add(np.array([10, 20]))
        .mul(2)
        .sum(),
      2 * (11 + 22 + 13 + 24),
    );
    expectArray(x.sub(1).div(2).pow(2), [
      [0, 0.25],
      [1, 2.25],
    ]);
    expectArray(x.maximum(2.5).minimum(3.5), [
      [2.5, 2.5],
      [3, 3.5],
    ]);
    expectArray(x.neg().abs().sign(), [
      [1, 1],
      [1, 1],
    ]);
    expectArray(x.mean(0), [2, 3]);
    expectArray(x.max(1, { keepdims: true }), [[2], [4]]);
    expectArray(x.min(), 1);
    expectArray(x.prod(1), [2, 12]);
    expectArray(x.argmax(1), [1, 1], { dtype: "int32" });
    expectArray(x.argmin(0), [0, 0], { dtype: "int32" });
    expectArray(x.cumsum(1), [
      [1, 3],
      [3, 7],
    ]);
    expectArray(x.matmul(x), [
      [7, 10],
      [15, 22],
    ]);
    expectArray(x.flatten(), [1, 2, 3, 4]);
    expectArray(x.expandDims(0).squeeze(), [
      [1, 2],
      [3, 4],
    ]);
    expectArray(x.swapaxes(0, 1), [
      [1, 3],
      [2, 4],
    ]);
    expectArray(
      x.greater(2),
      [
        [0, 0],
        [1, 1],
      ],
      { dtype: "bool" },
    );
    expectArray(x.clip(2, 3), [
      [2, 2],
      [3, 3],
    ]);
    expectArray(x.square().sqrt(), [
      [1, 2],
      [3, 4],
    ]);
    expectArray(x.exp().log(), [
      [1, 2],
      [3, 4],
    ]);
  });
  it("reshape, x.T, astype and at", () => {
    expectArray(x.reshape([4]), [1, 2, 3, 4]);
    expectArray(x.T, [
      [1, 3],
      [2, 4],
    ]);
    const y = x.astype("float64");
    expect(y.dtype).toBe("float64");
    expectArray(np.array([1.9, -1.9]).astype("int32"), [1, -1], { dtype: "int32" });
    expectArray(x.at(np.array([1, 0, 1], { dtype: "int32" })), [
      [3, 4],
      [1, 2],
      [3, 4],
    ]);
    expectArray(x.at([-1]), [[3, 4]]);
  });
  it("iterates over axis 0", () => {
    const rows = [...x];
    expect(rows.length).toBe(2);
    expectArray(rows[1]!, [3, 4]);
  });
});

describe("np creation", () => {
  it("zeros ones full zerosLike onesLike", () => {
    expectArray(
      np.zeros([2, 2]),
      [
        [0, 0],
        [0, 0],
      ],
      { dtype: "float32" },
    );
    expectArray(np.ones(3, { dtype: "int32" }), [1, 1, 1], { dtype: "int32" });
    expectArray(np.full([2], 7.5), [7.5, 7.5]);
    const like = np.array([[1, 2, 3]], { dtype: "float64" });
    expectArray(np.zerosLike(like), [[0, 0, 0]], { dtype: "float64" });
    expectArray(np.onesLike(like), [[1, 1, 1]], { dtype: "float64" });
  });
  it("arange linspace eye", () => {
    expectArray(np.arange(4), [0, 1, 2, 3], { dtype: "int32" });
    expectArray(np.arange(1, 2, 0.25), [1, 1.25, 1.5, 1.75], { dtype: "float32" });
    expectArray(np.arange(5, 1, -2), [5, 3], { dtype: "int32" });
    expectArray(np.linspace(0, 1, 5), [0, 0.25, 0.5, 0.75, 1]);
    expectArray(np.eye(2, 3), [
      [1, 0, 0],
      [0, 1, 0],
    ]);
  });
});

describe("np elementwise math", () => {
  const xs = [-0.75, -0.25, 0.3, 0.9];
  const pos = [0.25, 1, 2.5, 4];
  it.each([
    ["neg", np.neg, xs, (v: number) => -v],
    ["abs", np.abs, xs, Math.abs],
    ["sign", np.sign, [-2, 0, 3], Math.sign],
    ["exp", np.exp, xs, Math.exp],
    ["log", np.log, pos, Math.log],
    ["log1p", np.log1p, xs, Math.log1p],
    ["expm1", np.expm1, xs, Math.expm1],
    ["sin", np.sin, xs, Math.sin],
    ["cos", np.cos, xs, Math.cos],
    ["tan", np.tan, xs, Math.tan],
    ["tanh", np.tanh, xs, Math.tanh],
    ["arcsin", np.arcsin, xs, Math.asin],
    ["arccos", np.arccos, xs, Math.acos],
    ["arctan", np.arctan, xs, Math.atan],
    ["sqrt", np.sqrt, pos, Math.sqrt],
    ["rsqrt", np.rsqrt, pos, (v: number) => 1 / Math.sqrt(v)],
    ["square", np.square, xs, (v: number) => v * v],
    ["floor", np.floor, [-1.5, -0.5, 0.5, 1.5], Math.floor],
    ["ceil", np.ceil, [-1.5, -0.5, 0.5, 1.5], Math.ceil],
    [
      "round (half to even)",
      np.round,
      [-1.5, -0.5, 0.5, 1.5, 2.5, 2.6],
      (v: number) => [-2, -0, 0, 2, 2, 3][[-1.5, -0.5, 0.5, 1.5, 2.5, 2.6].indexOf(v)]!,
    ],
  ] as const)("np.%s", (_name, op, input, ref) => {
    const x = np.array([...input], { dtype: "float64" });
    expectArray((op as (a: Array) => Array)(x), input.map(ref), { dtype: "float64", digits: 12 });
  });
  it.each([
    ["add", np.add, (a: number, b: number) => a + b],
    ["sub", np.sub, (a: number, b: number) => a - b],
    ["mul", np.mul, (a: number, b: number) => a * b],
    ["div", np.div, (a: number, b: number) => a / b],
    ["pow", np.pow, Math.pow],
    ["maximum", np.maximum, Math.max],
    ["minimum", np.minimum, Math.min],
    ["arctan2", np.arctan2, Math.atan2],
  ] as const)("np.%s broadcasts [2,1] with [3]", (_name, op, ref) => {
    const a = [0.5, 2],
      b = [0.25, 1, 3];
    expectArray(
      op(np.array([[a[0]!], [a[1]!]]), np.array(b)),
      a.map((x) => b.map((y) => ref(x, y))),
    );
  });
  it("JS numbers are weakly typed: they do not promote float32", () => {
    expect(np.add(np.ones([2]), 1.5).dtype).toBe("float32");
    expect(np.mul(np.ones([2], { dtype: "float64" }), 2).dtype).toBe("float64");
    expect(np.add(np.ones([2], { dtype: "int32" }), 2).dtype).toBe("int32");
  });
  it("clip where isnan isfinite", () => {
    expectArray(np.clip(np.array([-1, 0.5, 2]), 0, 1), [0, 0.5, 1]);
    expectArray(np.clip(np.array([-1, 2]), null, 1), [-1, 1]);
    expectArray(np.where(np.array([true, false, true]), np.array([1, 2, 3]), 0), [1, 0, 3]);
    expectArray(np.where(np.array([[true], [false]]), 1, np.array([5, 6])), [
      [1, 1],
      [5, 6],
    ]);
    expectArray(np.isnan(np.array([NaN, 1, Infinity])), [1, 0, 0], { dtype: "bool" });
    expectArray(np.isfinite(np.array([NaN, 1, -Infinity])), [0, 1, 0], { dtype: "bool" });
  });
  it("comparisons and logical ops", () => {
    const a = np.array([1, 2, 3]),
      b = np.array([3, 2, 1]);
    expectArray(np.equal(a, b), [0, 1, 0]);
    expectArray(np.notEqual(a, b), [1, 0, 1]);
    expectArray(np.less(a, b), [1, 0, 0]);
    expectArray(np.lessEqual(a, b), [1, 1, 0]);
    expectArray(np.greater(a, b), [0, 0, 1]);
    expectArray(np.greaterEqual(a, b), [0, 1, 1]);
    const p = np.array([true, true, false, false]),
      q = np.array([true, false, true, false]);
    expectArray(np.logicalAnd(p, q), [1, 0, 0, 0], { dtype: "bool" });
    expectArray(np.logicalOr(p, q), [1, 1, 1, 0], { dtype: "bool" });
    expectArray(np.logicalNot(p), [0, 0, 1, 1], { dtype: "bool" });
  });
});

describe("np reductions", () => {
  const x = np.array([
    [1, 5, 3],
    [4, 2, 6],
  ]);
  it("sum mean max min prod with axes, negative axes and keepdims", () => {
    expectArray(np.sum(x), 21);
    expectArray(np.sum(x, 0), [5, 7, 9]);
    expectArray(np.sum(x, -1, { keepdims: true }), [[9], [12]]);
    expectArray(np.mean(x, [0, 1]), 3.5);
    expectArray(np.max(x, 1), [5, 6]);
    expectArray(np.min(x, 0), [1, 2, 3]);
    expectArray(np.prod(x, 1), [15, 48]);
  });
  it("argmax argmin (flattened by default, first on ties)", () => {
    expectArray(np.argmax(x), 5, { dtype: "int32" });
    expectArray(np.argmin(x, 1), [0, 1], { dtype: "int32" });
    expectArray(np.argmax(np.array([2, 7, 7])), 1);
  });
  it("cumsum (flattened by default)", () => {
    expectArray(np.cumsum(x, 0), [
      [1, 5, 3],
      [5, 7, 9],
    ]);
    expectArray(np.cumsum(x), [1, 6, 9, 13, 15, 21]);
  });
  it("norm", () => {
    expectArray(np.norm(np.array([3, 4])), 5);
    expectArray(
      np.norm(
        np.array([
          [3, 4],
          [6, 8],
        ]),
        1,
      ),
      [5, 10],
    );
  });
});

describe("np products", () => {
  it("matmul dot einsum outer cross", () => {
    const a = np.array([
        [1, 2],
        [3, 4],
      ]),
      b = np.array([
        [5, 6],
        [7, 8],
      ]);
    expectArray(np.matmul(a, b), [
      [19, 22],
      [43, 50],
    ]);
    expectArray(np.matmul(a, np.array([1, 1])), [3, 7]);
    expectArray(np.matmul(np.stack([a, b]), a), [
      [
        [7, 10],
        [15, 22],
      ],
      [
        [23, 34],
        [31, 46],
      ],
    ]);
    expectArray(np.dot(np.array([1, 2]), np.array([3, 4])), 11);
    expectArray(np.dot(a, b), [
      [19, 22],
      [43, 50],
    ]);
    expectArray(np.einsum("ij,jk->ki", a, b), [
      [19, 43],
      [22, 50],
    ]);
    expectArray(np.einsum("ij->j", a), [4, 6]);
    expectArray(np.outer(np.array([1, 2]), np.array([3, 4, 5])), [
      [3, 4, 5],
      [6, 8, 10],
    ]);
    expectArray(np.cross(np.array([1, 0, 0]), np.array([0, 1, 0])), [0, 0, 1]);
    expectArray(np.cross(np.array([[1, 2, 3]]), np.array([4, 5, 6])), [[-3, 6, -3]]);
  });
});

describe("np shape functions", () => {
  const x = np.arange(6).reshape([2, 3]);
  it("reshape (with -1) transpose swapaxes expandDims squeeze", () => {
    expectArray(np.reshape(x, [3, -1]), [
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    expectArray(np.transpose(x), [
      [0, 3],
      [1, 4],
      [2, 5],
    ]);
    expect(np.transpose(np.ones([2, 3, 4]), [2, 0, 1]).shape).toEqual([4, 2, 3]);
    expect(np.swapaxes(np.ones([1, 2, 3]), 0, -1).shape).toEqual([3, 2, 1]);
    expect(np.expandDims(x, [0, -1]).shape).toEqual([1, 2, 3, 1]);
    expect(np.squeeze(np.ones([1, 2, 1])).shape).toEqual([2]);
    expect(np.squeeze(np.ones([1, 2, 1]), 0).shape).toEqual([2, 1]);
  });
  it("concatenate stack split", () => {
    expectArray(np.concatenate([x, np.array([[6, 7, 8]], { dtype: "int32" })], 0), [
      [0, 1, 2],
      [3, 4, 5],
      [6, 7, 8],
    ]);
    expectArray(np.concatenate([x, x], -1), [
      [0, 1, 2, 0, 1, 2],
      [3, 4, 5, 3, 4, 5],
    ]);
    expectArray(np.stack([np.array([1, 2]), np.array([3, 4])], 1), [
      [1, 3],
      [2, 4],
    ]);
    const parts = np.split(np.arange(6), 3);
    expect(parts.length).toBe(3);
    expectArray(parts[2]!, [4, 5]);
    expectArray(np.split(np.arange(5), [1, 3])[1]!, [1, 2]);
  });
  it("tile repeat broadcastTo flip pad", () => {
    expectArray(np.tile(np.array([1, 2]), [2, 2]), [
      [1, 2, 1, 2],
      [1, 2, 1, 2],
    ]);
    expectArray(np.repeat(np.array([1, 2]), 2), [1, 1, 2, 2]);
    expectArray(np.repeat(np.array([[1, 2]]), 2, 0), [
      [1, 2],
      [1, 2],
    ]);
    expectArray(np.broadcastTo(np.array([1, 2]), [2, 2]), [
      [1, 2],
      [1, 2],
    ]);
    expectArray(np.flip(x, 1), [
      [2, 1, 0],
      [5, 4, 3],
    ]);
    expectArray(np.flip(x), [
      [5, 4, 3],
      [2, 1, 0],
    ]);
    expectArray(np.pad(np.array([1, 2]), [[1, 2]], { value: 9 }), [9, 1, 2, 9, 9]);
    expectArray(np.pad(np.array([[1]]), 1), [
      [0, 0, 0],
      [0, 1, 0],
      [0, 0, 0],
    ]);
  });
});

describe("np indexing", () => {
  const x = np.array([
    [1, 2, 3],
    [4, 5, 6],
  ]);
  it("take with indices of any shape, negative indices, flattened when axis is omitted", () => {
    expectArray(np.take(x, np.array([[2, 0]], { dtype: "int32" }), 1), [[[3, 1]], [[6, 4]]]);
    expectArray(np.take(x, [-1], 0), [[4, 5, 6]]);
    expectArray(np.take(x, [5, 0]), [6, 1]);
  });
  it("takeAlongAxis", () => {
    expectArray(np.takeAlongAxis(x, np.array([[2], [0]], { dtype: "int32" }), 1), [[3], [4]]);
  });
  it("scatterAdd accumulates repeats and broadcasts updates", () => {
    expectArray(np.scatterAdd(np.zeros([3]), np.array([0, 2, 0], { dtype: "int32" }), np.array([1, 2, 3])), [4, 0, 2]);
    expectArray(np.scatterAdd(np.zeros([2, 2]), np.array([1, 1], { dtype: "int32" }), 1, 1), [
      [0, 2],
      [0, 2],
    ]);
  });
});

describe("nn", () => {
  const xs = [-2, -0.5, 0, 1.5];
  const x = np.array(xs, { dtype: "float64" });
  const sig = (v: number) => 1 / (1 + Math.exp(-v));
  it("sigmoid relu swish softplus", () => {
    expectArray(nn.sigmoid(x), xs.map(sig), { digits: 12 });
    expectArray(
      nn.relu(x),
      xs.map((v) => Math.max(v, 0)),
      { digits: 12 },
    );
    expectArray(
      nn.swish(x),
      xs.map((v) => v * sig(v)),
      { digits: 12 },
    );
    expectArray(
      nn.softplus(x),
      xs.map((v) => Math.log(1 + Math.exp(v))),
      { digits: 12 },
    );
    expectArray(nn.softplus(np.array([1000])), [1000]);
  });
  it("logSumExp and softmax (stable for large inputs)", () => {
    const lse = Math.log(xs.reduce((s, v) => s + Math.exp(v), 0));
    expectArray(nn.logSumExp(x), lse, { digits: 12 });
    expectArray(
      nn.softmax(x),
      xs.map((v) => Math.exp(v - lse)),
      { digits: 12 },
    );
    expectArray(nn.logSumExp(np.array([1000, 1000])), 1000 + Math.log(2), { digits: 3 });
    expect(nn.logSumExp(np.array([-Infinity, -Infinity])).item()).toBe(-Infinity);
    expectArray(
      nn.softmax(
        np.array([
          [1000, 1000],
          [0, Math.log(3)],
        ]),
        -1,
      ),
      [
        [0.5, 0.5],
        [0.25, 0.75],
      ],
    );
  });
  it("conv2d: a hand-computed 3x3 input with a 2x2 kernel, stride and padding", () => {
    const img = np.arange(9, undefined, 1, { dtype: "float32" }).reshape([1, 1, 3, 3]); // [[0,1,2],[3,4,5],[6,7,8]]
    const k = np.array([
      [
        [
          [1, 0],
          [0, -1],
        ],
      ],
    ]); // x[i,j] - x[i+1,j+1]
    expectArray(nn.conv2d(img, k), [
      [
        [
          [-4, -4],
          [-4, -4],
        ],
      ],
    ]);
    expectArray(nn.conv2d(img, k, { stride: 2, padding: 1 }), [
      [
        [
          [0, -2],
          [-6, -4],
        ],
      ],
    ]); // zero-padded: P[2i,2j] − P[2i+1,2j+1]
    expect(nn.conv2d(img, k, { padding: "SAME" }).shape).toEqual([1, 1, 3, 3]);
  });
  it("avgPool2d and maxPool2d", () => {
    const img = np.arange(16, undefined, 1, { dtype: "float32" }).reshape([1, 1, 4, 4]);
    expectArray(nn.avgPool2d(img, 2), [
      [
        [
          [2.5, 4.5],
          [10.5, 12.5],
        ],
      ],
    ]);
    expectArray(nn.maxPool2d(img, 2), [
      [
        [
          [5, 7],
          [13, 15],
        ],
      ],
    ]);
    expectArray(
      nn.maxPool2d(
        np.array([
          [
            [
              [-1, -2],
              [-3, -4],
            ],
          ],
        ]),
        2,
        { stride: 1, padding: "SAME" },
      ),
      [
        [
          [
            [-1, -2],
            [-3, -4],
          ],
        ],
      ],
    );
  });
});

describe("tree", () => {
  const t = { b: [1, null, np.array([2])], a: 3 };
  it("flatten gives leaves in sorted-key order and a structure", () => {
    const [leaves, def] = tree.flatten(t);
    expect(leaves.length).toBe(3);
    expect(leaves[0]).toBe(3);
    expect(leaves[1]).toBe(1);
    expect(tree.treedefString(def)).toBe("{a: *, b: [*, null, *]}");
  });
  it("unflatten inverts flatten", () => {
    const [leaves, def] = tree.flatten(t);
    const back = tree.unflatten(def, leaves) as typeof t;
    expect(back.a).toBe(3);
    expect(back.b[1]).toBeNull();
    expect(back.b[2]).toBe(t.b[2]);
    expect(() => tree.unflatten(def, [1, 2])).toThrow(/too few leaves/);
  });
  it("map over one or several trees of the same structure", () => {
    const doubled = tree.map((v: number) => v * 2, { x: [1, 2], y: 3 });
    expect(doubled).toEqual({ x: [2, 4], y: 6 });
    expect(tree.map((p: number, q: number) => p + q, [1, [2]], [10, [20]])).toEqual([11, [22]]);
    expect(() => tree.map((p: number, q: number) => p + q, [1, 2], [1])).toThrow(/tree\.map: tree 2 has structure/);
  });
});

describe("random", () => {
  it("the same key gives the same numbers; different keys differ", () => {
    const a = random.uniform(random.key(42), [5]).dataSync();
    const b = random.uniform(random.key(42), [5]).dataSync();
    const c = random.uniform(random.key(43), [5]).dataSync();
    expect([...a]).toEqual([...b]);
    expect([...a]).not.toEqual([...c]);
  });
  it("split gives n distinct, reproducible keys", () => {
    const ks = random.split(random.key(0), 3);
    expect(ks.shape).toEqual([3, 2]);
    expect(ks.dtype).toBe("int32");
    expect(random.split(random.key(0), 3).toList()).toEqual(ks.toList());
    const [k1, k2] = random.split(random.key(0));
    expect(k1!.toList()).not.toEqual(k2!.toList());
    expect([...random.uniform(k1!, [3]).dataSync()]).not.toEqual([...random.uniform(k2!, [3]).dataSync()]);
  });
  it("uniform respects shape, dtype and [minval, maxval)", () => {
    const u = random.uniform(random.key(1), [1000], { minval: -2, maxval: 3, dtype: "float64" });
    expect(u.shape).toEqual([1000]);
    expect(u.dtype).toBe("float64");
    const d = [...u.dataSync()];
    expect(Math.min(...d)).toBeGreaterThanOrEqual(-2);
    expect(Math.max(...d)).toBeLessThan(3);
    expect(d.reduce((s, v) => s + v, 0) / d.length).toBeCloseTo(0.5, 0);
  });
  it("normal has mean ≈ 0 and std ≈ 1", () => {
    const d = [...random.normal(random.key(7), [4000]).dataSync()];
    const mean = d.reduce((s, v) => s + v, 0) / d.length;
    const std = Math.sqrt(d.reduce((s, v) => s + (v - mean) ** 2, 0) / d.length);
    expect(Math.abs(mean)).toBeLessThan(0.08);
    expect(Math.abs(std - 1)).toBeLessThan(0.08);
    expect(random.normal(random.key(7), [3]).toList()).toEqual(random.normal(random.key(7), [3]).toList());
  });
});

describe("API.md names", () => {
  const NP =
    `array zeros ones full zerosLike onesLike arange linspace eye add sub mul div neg abs sign exp log log1p expm1 sin
    cos tan tanh arcsin arccos arctan arctan2 sqrt rsqrt square pow maximum minimum clip floor ceil round where equal
    notEqual less lessEqual greater greaterEqual logicalAnd logicalOr logicalNot sum mean max min prod argmax argmin
    cumsum matmul dot einsum outer cross norm reshape transpose swapaxes expandDims squeeze concatenate stack split tile
    repeat broadcastTo take takeAlongAxis scatterAdd pad flip isnan isfinite`.split(/\s+/);
  const NN = "sigmoid relu swish softplus logSumExp softmax conv2d avgPool2d maxPool2d".split(" ");
  it("every np and nn function of the contract exists", () => {
    expect(NP.filter((n) => typeof (np as Record<string, unknown>)[n] !== "function")).toEqual([]);
    expect(NN.filter((n) => typeof (nn as Record<string, unknown>)[n] !== "function")).toEqual([]);
  });
});

describe("regressions found by the renderer", () => {
  it("softplus has slope ½ at 0 (sigmoid(0))", () => {
    expect(grad((x: Array) => nn.softplus(x))(np.array(0, { dtype: "float64" })).item()).toBe(0.5);
  });
  it("takeAlongAxis broadcasts size-1 axes of x against the indices, as numpy does", () => {
    const x = np.array([[1, 2, 3]]);
    const idx = np.array(
      [
        [0, 2],
        [1, 1],
      ],
      { dtype: "int32" },
    );
    expect(np.takeAlongAxis(x, idx, 1).toList()).toEqual([
      [1, 3],
      [2, 2],
    ]);
  });
});
