/** Index primitives: iota, gather (take), scatter_add, and counter-based random bits (threefry2x32). */
import type { Array } from "../array.js";
import { ShapedArray } from "../aval.js";
import { scalar } from "../constants.js";
import { typedArrayFor, type DType } from "../dtype.js";
import { definePrimitive, type BDim, type Primitive } from "../primitive.js";
import { fmtShape, range, shapeEq, sizeOf } from "../shape.js";
import { isUndef, isZero, Zero, type Tangent } from "../tangent.js";
import { bind1 } from "../trace.js";
import { clampIndex, ravel, viewOf } from "../kernel/view.js";
import { host, requireInt } from "./_helpers.js";
import { add, lt, mul, select } from "./elementwise.js";
import { broadcastInDim, broadcastTo, moveAxis, reshape, transpose as transposeAxes } from "./movement.js";

// ---------------------------------------------------------------- iota

export interface IotaParams {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly dimension: number;
}
export const iotaP: Primitive<IotaParams> = definePrimitive<IotaParams>({
  name: "iota",
  lower: (_i, { dtype, dimension }, [out], g) => [viewOf(out!, (idx) => g.cast(idx[dimension]!, dtype))],
  shape: (_a, { dtype, shape, dimension }) => {
    if (dimension < 0 || dimension >= shape.length)
      throw new Error(`iota: dimension ${dimension} out of range for shape ${fmtShape(shape)}.`);
    return [new ShapedArray(shape, dtype)];
  },
  impl: (_a, { dtype, shape, dimension }, [out]) => {
    const o = typedArrayFor(dtype, out!.size);
    const inner = sizeOf(shape.slice(dimension + 1));
    const n = shape[dimension]!;
    for (let i = 0; i < o.length; i++) o[i] = Math.floor(i / inner) % n;
    return [host(o, shape, dtype)];
  },
  jvp: (_p, _t, p) => {
    const out = bind1(iotaP, [], p);
    return [[out], [new Zero(out.aval)]];
  },
  vmap: () => {
    throw new Error("internal: iota has no inputs to batch.");
  },
  printParams: (p) => `dtype=${p.dtype} shape=${fmtShape(p.shape)} dimension=${p.dimension}`,
});
export const iota = (dtype: DType, shape: readonly number[], dimension = 0): Array =>
  bind1(iotaP, [], { dtype, shape: [...shape], dimension });

// ---------------------------------------------------------------- gather (take along one axis)

export interface GatherParams {
  readonly axis: number;
}
const gatherShape = (x: ShapedArray, idx: ShapedArray, axis: number): number[] => [
  ...x.shape.slice(0, axis),
  ...idx.shape,
  ...x.shape.slice(axis + 1),
];

function normIndex(op: string, i: number, n: number, axis: number): number {
  const j = i < 0 ? i + n : i;
  if (j < 0 || j >= n) throw new Error(`${op}: index ${i} is out of bounds for axis ${axis} with size ${n}.`);
  return j;
}

export const gatherP: Primitive<GatherParams> = definePrimitive<GatherParams>({
  name: "gather",
  lower: ([x, idx], { axis }, [out], g) => [
    viewOf(out!, (o) => {
      const m = idx!.shape.length;
      const n = x!.shape[axis]!;
      const raw = idx!.at(o.slice(axis, axis + m));
      const norm = g.select(g.binary("lt", raw, g.const(0, "int32")), g.binary("add", raw, g.const(n, "int32")), raw);
      return x!.at([...o.slice(0, axis), clampIndex(g, norm, n), ...o.slice(axis + m)]);
    }),
  ],
  shape: ([x, idx], { axis }) => {
    requireInt("take (gather)", "indices", idx!);
    if (axis < 0 || axis >= x!.ndim) throw new Error(`take (gather): axis ${axis} out of range for ${x}.`);
    if (x!.shape[axis] === 0 && idx!.size > 0)
      throw new Error(`take (gather): cannot index an empty axis ${axis} of ${x}.`);
    return [new ShapedArray(gatherShape(x!, idx!, axis), x!.dtype, x!.weak)];
  },
  impl: ([x, idx], { axis }, [out]) => {
    const outer = sizeOf(x!.shape.slice(0, axis)),
      n = x!.shape[axis]!,
      inner = sizeOf(x!.shape.slice(axis + 1));
    const m = idx!.data.length;
    const o = typedArrayFor(x!.dtype, out!.size);
    const ii = Int32Array.from(idx!.data, (i) => normIndex("take (gather)", i, n, axis));
    const xd = x!.data;
    for (let a = 0; a < outer; a++) {
      for (let j = 0; j < m; j++) {
        const src = (a * n + ii[j]!) * inner,
          dst = (a * m + j) * inner;
        for (let k = 0; k < inner; k++) o[dst + k] = xd[src + k]!;
      }
    }
    return [host(o, out!.shape, x!.dtype)];
  },
  jvp: ([x, idx], [t], p) => [
    [gather(x!, idx!, p.axis)],
    [
      isZero(t)
        ? new Zero(new ShapedArray(gatherShape(x!.aval, idx!.aval, p.axis), x!.dtype))
        : gather(t, idx!, p.axis),
    ],
  ],
  transpose: ([ct], [x, idx], { axis }) => {
    if (isUndef(idx)) throw new Error("internal: gather indices cannot be linear.");
    if (!isUndef(x)) return [null, null];
    if (isZero(ct)) return [new Zero(x.aval), null];
    return [scatterAdd(broadcastTo(scalar(0, x.aval.dtype), x.aval.shape), idx as Array, ct as Array, axis), null];
  },
  vmap: ([x, idx], [dx, di], { axis }, n) => {
    if (di === null) return [[gather(moveAxis(x!, dx!, 0), idx!, axis + 1)], [0]];
    if (dx === null) return [[gather(x!, moveAxis(idx!, di!, 0), axis)], [axis]];
    // Both batched: fold the batch into the gathered axis (offset indices by b·len), then restore the layout.
    const xb = moveAxis(moveAxis(x!, dx!, 0), axis + 1, 1); // [B, len, rest...]
    const len = xb.shape[1]!;
    const rest = xb.shape.slice(2);
    const flat = reshape(xb, [n * len, ...rest]);
    const ib = moveAxis(idx!, di!, 0); // [B, I...]
    const norm = select(lt(ib, scalar(0, "int32")), add(ib, scalar(len, "int32")), ib);
    const offs = broadcastInDim(mul(iota("int32", [n]), scalar(len, "int32")), ib.shape, [0]);
    const g = gather(flat, add(norm, offs), 0); // [B, I..., rest...]
    const ni = ib.ndim - 1;
    // rest = pre (axis dims) then post; want [B, pre..., I..., post...]
    const perm = [
      0,
      ...range(axis).map((k) => 1 + ni + k),
      ...range(ni).map((k) => 1 + k),
      ...range(rest.length - axis).map((k) => 1 + ni + axis + k),
    ];
    return [[transposeAxes(g, perm)], [0]];
  },
  printParams: (p) => `axis=${p.axis}`,
});
export const gather = (x: Array, idx: Array, axis: number): Array => bind1(gatherP, [x, idx], { axis });

// ---------------------------------------------------------------- scatter_add

export const scatterAddP: Primitive<GatherParams> = definePrimitive<GatherParams>({
  name: "scatter_add",
  shape: ([t, idx, u], { axis }) => {
    requireInt("scatterAdd", "indices", idx!);
    if (axis < 0 || axis >= t!.ndim) throw new Error(`scatterAdd: axis ${axis} out of range for ${t}.`);
    const want = gatherShape(t!, idx!, axis);
    if (u!.dtype !== t!.dtype || !shapeEq(u!.shape, want)) {
      throw new Error(
        `scatterAdd: updates ${u} must have dtype ${t!.dtype} and ` +
          `shape ${fmtShape(want)} (target ${t}, indices ${idx}, axis ${axis}).`,
      );
    }
    return [t!];
  },
  impl: ([t, idx, u], { axis }, [out]) => {
    const outer = sizeOf(t!.shape.slice(0, axis)),
      n = t!.shape[axis]!,
      inner = sizeOf(t!.shape.slice(axis + 1));
    const id = idx!.data;
    const m = id.length;
    const rows = new Int32Array(m);
    for (let j = 0; j < m; j++) {
      const i = id[j]!;
      rows[j] = i >= 0 && i < n ? i : normIndex("scatterAdd", i, n, axis);
    }
    // Accumulate in float64 and round once: deterministic, order-independent to rounding.
    const acc = Float64Array.from(t!.data);
    const ud = u!.data;
    for (let a = 0; a < outer; a++) {
      for (let j = 0; j < m; j++) {
        const dst = (a * n + rows[j]!) * inner,
          src = (a * m + j) * inner;
        for (let k = 0; k < inner; k++) acc[dst + k] += ud[src + k]!;
      }
    }
    const o = typedArrayFor(t!.dtype, out!.size);
    o.set(acc);
    return [host(o, out!.shape, out!.dtype)];
  },
  jvp: ([t, idx, u], [tt, , tu], p) => {
    const out = scatterAdd(t!, idx!, u!, p.axis);
    if (isZero(tt) && isZero(tu)) return [[out], [new Zero(out.aval.strong())]];
    const z = (x: Tangent, like: Array) => (isZero(x) ? broadcastTo(scalar(0, like.dtype), like.shape) : x);
    return [[out], [scatterAdd(z(tt!, t!), idx!, z(tu!, u!), p.axis)]];
  },
  transpose: ([ct], [t, idx, u], { axis }) => {
    if (isUndef(idx)) throw new Error("internal: scatter_add indices cannot be linear.");
    if (isZero(ct)) return [isUndef(t) ? new Zero(t.aval) : null, null, isUndef(u) ? new Zero(u.aval) : null];
    return [isUndef(t) ? ct! : null, null, isUndef(u) ? gather(ct as Array, idx as Array, axis) : null];
  },
  vmap: ([t, idx, u], [dt, di, du], { axis }, n) => {
    const b = (a: Array, d: BDim) =>
      d === null
        ? broadcastInDim(
            a,
            [n, ...a.shape],
            a.shape.map((_, k) => k + 1),
          )
        : moveAxis(a, d, 0);
    const tb = b(t!, dt!);
    if (di === null) {
      // updates: [B, pre..., I..., post...]
      return [[scatterAdd(tb, idx!, b(u!, du!), axis + 1)], [0]];
    }
    const ib = moveAxis(idx!, di, 0); // [B, I...]
    const ni = ib.ndim - 1;
    const ub = b(u!, du!); // [B, pre(axis), I..., post]
    const txb = moveAxis(tb, axis + 1, 1); // [B, len, pre, post]
    const len = txb.shape[1]!;
    const rest = txb.shape.slice(2);
    // updates -> [B, I..., pre, post]
    const uperm = [
      0,
      ...range(ni).map((k) => 1 + axis + k),
      ...range(axis).map((k) => 1 + k),
      ...range(rest.length - axis).map((k) => 1 + axis + ni + k),
    ];
    const uf = reshape(transposeAxes(ub, uperm), [sizeOf(ib.shape), ...rest]);
    const norm = select(lt(ib, scalar(0, "int32")), add(ib, scalar(len, "int32")), ib);
    const offs = broadcastInDim(mul(iota("int32", [n]), scalar(len, "int32")), ib.shape, [0]);
    const flatIdx = reshape(add(norm, offs), [sizeOf(ib.shape)]);
    const res = scatterAdd(reshape(txb, [n * len, ...rest]), flatIdx, uf, 0);
    return [[moveAxis(reshape(res, [n, len, ...rest]), 1, axis + 1)], [0]];
  },
  printParams: (p) => `axis=${p.axis}`,
});
export const scatterAdd = (target: Array, idx: Array, updates: Array, axis: number): Array =>
  bind1(scatterAddP, [target, idx, updates], { axis });

// ---------------------------------------------------------------- random bits (threefry2x32, counter-based)

const rotl = (x: number, r: number): number => ((x << r) | (x >>> (32 - r))) >>> 0;
/** Threefry-2x32 with 20 rounds (Salmon et al. 2011), the generator JAX uses. */
export function threefry2x32(k0: number, k1: number, x0: number, x1: number): [number, number] {
  const ks = [k0 >>> 0, k1 >>> 0, (k0 ^ k1 ^ 0x1bd11bda) >>> 0];
  const R = [
    [13, 15, 26, 6],
    [17, 29, 16, 24],
  ];
  x0 = (x0 + ks[0]!) >>> 0;
  x1 = (x1 + ks[1]!) >>> 0;
  for (let i = 0; i < 5; i++) {
    for (const r of R[i % 2]!) {
      x0 = (x0 + x1) >>> 0;
      x1 = rotl(x1, r) ^ x0;
    }
    x0 = (x0 + ks[(i + 1) % 3]!) >>> 0;
    x1 = (x1 + ks[(i + 2) % 3]! + i + 1) >>> 0;
  }
  return [x0, x1];
}

export interface RandomParams {
  readonly shape: readonly number[];
  readonly dtype: DType;
}
/** Keys [..., 2] int32 → [..., *shape]: raw 32-bit words (int32) or uniform [0, 1) floats. Element i uses counter i. */
export const randomBitsP: Primitive<RandomParams> = definePrimitive<RandomParams>({
  name: "random_bits",
  lower: ([k], { shape, dtype }, [out], g) => [
    viewOf(out!, (idx) => {
      const lead = idx.slice(0, k!.shape.length - 1);
      const k0 = k!.at([...lead, g.const(0, "int32")]),
        k1 = k!.at([...lead, g.const(1, "int32")]);
      const ctr = ravel(g, idx.slice(lead.length), shape);
      return g.threefry(k0, k1, ctr, dtype === "int32" ? 0 : dtype === "float32" ? 1 : 2);
    }),
  ],
  shape: ([k], { shape, dtype }) => {
    if (k!.dtype !== "int32" || k!.shape[k!.ndim - 1] !== 2)
      throw new Error(`random: a key must be an int32 array of shape [..., 2] (from random.key), got ${k}.`);
    if (dtype === "bool") throw new Error("random: bool output is not supported; compare a uniform sample instead.");
    return [new ShapedArray([...k!.shape.slice(0, -1), ...shape], dtype)];
  },
  impl: ([k], { shape, dtype }, [out]) => {
    const m = sizeOf(shape);
    const o = typedArrayFor(dtype, out!.size);
    const nk = k!.data.length / 2;
    for (let b = 0; b < nk; b++) {
      const k0 = k!.data[2 * b]!,
        k1 = k!.data[2 * b + 1]!;
      for (let i = 0; i < m; i++) {
        const [y0, y1] = threefry2x32(k0, k1, i, 0);
        o[b * m + i] =
          dtype === "int32"
            ? y0 | 0
            : dtype === "float32"
              ? (y0 >>> 9) / 8388608
              : (y0 * 2097152 + (y1 >>> 11)) / 9007199254740992;
      }
    }
    return [host(o, out!.shape, dtype)];
  },
  jvp: ([k], _t, p) => {
    const out = bind1(randomBitsP, [k!], p);
    return [[out], [new Zero(out.aval)]];
  },
  vmap: ([k], [d], p) => [[bind1(randomBitsP, [moveAxis(k!, d!, 0)], p)], [0]],
  printParams: (p) => `shape=${fmtShape(p.shape)} dtype=${p.dtype}`,
});
export const randomBits = (key: Array, shape: readonly number[], dtype: DType): Array =>
  bind1(randomBitsP, [key], { shape: [...shape], dtype });
