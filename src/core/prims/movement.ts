/** Movement primitives: broadcast_in_dim, reshape, transpose, slices, pad, concatenate, rev, dynamic slices. */
import type { Array } from "../array.js";
import { ShapedArray } from "../aval.js";
import { scalar } from "../constants.js";
import { typedArrayFor } from "../dtype.js";
import { definePrimitive, type BDim, type Primitive } from "../primitive.js";
import {
  broadcastIndexMap,
  broadcastShapes,
  fmtShape,
  shapeEq,
  sizeOf,
  stridesOf,
  type Shape,
  range,
} from "../shape.js";
import { isUndef, isZero, Zero, type Tangent, type UndefPrimal } from "../tangent.js";
import { bind, bind1 } from "../trace.js";
import { host, requireInt, transposeHost } from "./_helpers.js";
import type { KGraph, KNode } from "../kernel/expr.js";
import { clampIndex, ravel, unravel, viewOf } from "../kernel/view.js";
import { sub } from "./elementwise.js";
import { reduceSum } from "./reduce.js";

const avalOf = (x: Array | UndefPrimal): ShapedArray => x.aval;
const zeroOr = (ct: Tangent, x: Array | UndefPrimal, f: (ct: Array) => Array): Tangent =>
  isZero(ct) ? new Zero(avalOf(x).strong()) : f(ct);

/** Iterate all multi-indices of `shape`, calling fn with the flat output index and the index array. */
function forEachIndex(shape: Shape, fn: (flat: number, idx: number[]) => void): void {
  const n = sizeOf(shape);
  const idx = new globalThis.Array<number>(shape.length).fill(0);
  for (let k = 0; k < n; k++) {
    fn(k, idx);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
}

// ---------------------------------------------------------------- broadcast_in_dim

export interface BroadcastParams {
  readonly shape: readonly number[];
  readonly dims: readonly number[];
}
export const broadcastInDimP: Primitive<BroadcastParams> = definePrimitive<BroadcastParams>({
  name: "broadcast_in_dim",
  lower: ([x], { dims }, [out], g) => {
    const zero = g.const(0, "int32");
    return [viewOf(out!, (idx) => x!.at(dims.map((d, i) => (x!.shape[i] === 1 ? zero : idx[d]!))))];
  },
  shape: ([x], { shape, dims }) => {
    const ok =
      dims.length === x!.ndim &&
      dims.every(
        (d, i) =>
          d >= 0 &&
          d < shape.length &&
          (i === 0 || d > dims[i - 1]!) &&
          (x!.shape[i] === 1 || x!.shape[i] === shape[d]),
      );
    if (!ok) throw new Error(`broadcast_in_dim: cannot broadcast ${x} to ${fmtShape(shape)} with dims [${dims}].`);
    return [x!.withShape(shape)];
  },
  impl: ([x], { shape, dims }, [out]) => {
    const inShape = new globalThis.Array<number>(shape.length).fill(1);
    dims.forEach((d, i) => (inShape[d] = x!.shape[i]!));
    const map = broadcastIndexMap(inShape, shape);
    const o = typedArrayFor(x!.dtype, out!.size);
    if (!map) o.set(x!.data as never);
    else for (let i = 0; i < o.length; i++) o[i] = x!.data[map[i]!]!;
    return [host(o, shape, x!.dtype)];
  },
  jvp: ([x], [t], p) => [
    [bind1(broadcastInDimP, [x!], p)],
    [isZero(t) ? new Zero(x!.aval.strong().withShape(p.shape)) : bind1(broadcastInDimP, [t], p)],
  ],
  transpose: ([ct], [x], { shape, dims }) => [
    zeroOr(ct!, x!, (c) => {
      const xs = avalOf(x!).shape;
      const axes = [...shape.keys()].filter((d) => !dims.includes(d) || (xs[dims.indexOf(d)] === 1 && shape[d] !== 1));
      const r = reduceSum(c, axes);
      return shapeEq(r.shape, xs) ? r : reshape(r, xs);
    }),
  ],
  vmap: ([x], [d], { shape, dims }) => {
    const m = moveAxis(x!, d!, 0);
    return [
      [bind1(broadcastInDimP, [m], { shape: [m.shape[0]!, ...shape], dims: [0, ...dims.map((k) => k + 1)] })],
      [0],
    ];
  },
  printParams: (p) => `shape=${fmtShape(p.shape)} dims=[${p.dims}]`,
});
export const broadcastInDim = (x: Array, shape: Shape, dims: readonly number[]): Array =>
  shapeEq(x.shape, shape) && dims.every((d, i) => d === i)
    ? x
    : bind1(broadcastInDimP, [x], { shape: [...shape], dims: [...dims] });
/** numpy-style broadcast of x to `shape`. */
export function broadcastTo(x: Array, shape: Shape): Array {
  if (shapeEq(x.shape, shape)) return x;
  const out = broadcastShapes("broadcastTo", x.shape, shape);
  if (!shapeEq(out, shape)) throw new Error(`broadcastTo: cannot broadcast ${x.aval} to ${fmtShape(shape)}.`);
  const lead = shape.length - x.ndim;
  return broadcastInDim(
    x,
    shape,
    range(x.ndim).map((i) => i + lead),
  );
}

// ---------------------------------------------------------------- reshape

export interface ReshapeParams {
  readonly shape: readonly number[];
}
export const reshapeP: Primitive<ReshapeParams> = definePrimitive<ReshapeParams>({
  name: "reshape",
  lower: ([x], _p, [out], g) => [viewOf(out!, (idx) => x!.at(unravel(g, ravel(g, idx, out!.shape), x!.shape)))],
  shape: ([x], { shape }) => {
    if (sizeOf(shape) !== x!.size)
      throw new Error(`reshape: cannot reshape ${x} (size ${x!.size}) to ${fmtShape(shape)} (size ${sizeOf(shape)}).`);
    return [x!.withShape(shape)];
  },
  impl: ([x], { shape }) => [host(x!.data, shape, x!.dtype)],
  jvp: ([x], [t], p) => [
    [bind1(reshapeP, [x!], p)],
    [isZero(t) ? new Zero(x!.aval.strong().withShape(p.shape)) : bind1(reshapeP, [t], p)],
  ],
  transpose: ([ct], [x]) => [zeroOr(ct!, x!, (c) => reshape(c, avalOf(x!).shape))],
  vmap: ([x], [d], { shape }) => {
    const m = moveAxis(x!, d!, 0);
    return [[bind1(reshapeP, [m], { shape: [m.shape[0]!, ...shape] })], [0]];
  },
  printParams: (p) => `shape=${fmtShape(p.shape)}`,
});
export const reshape = (x: Array, shape: Shape): Array =>
  shapeEq(x.shape, shape) ? x : bind1(reshapeP, [x], { shape: [...shape] });

// ---------------------------------------------------------------- transpose

export interface TransposeParams {
  readonly perm: readonly number[];
}
export const transposeP: Primitive<TransposeParams> = definePrimitive<TransposeParams>({
  name: "transpose",
  lower: ([x], { perm }, [out]) => [
    viewOf(out!, (idx) => {
      const src = new globalThis.Array<KNode>(perm.length);
      perm.forEach((p, i) => (src[p] = idx[i]!));
      return x!.at(src);
    }),
  ],
  shape: ([x], { perm }) => {
    const ok = perm.length === x!.ndim && [...perm].sort((a, b) => a - b).every((p, i) => p === i);
    if (!ok) throw new Error(`transpose: perm [${perm}] is not a permutation of the ${x!.ndim} axes of ${x}.`);
    return [x!.withShape(perm.map((p) => x!.shape[p]!))];
  },
  impl: ([x], { perm }) => [transposeHost(x!, perm)],
  jvp: ([x], [t], p) => [
    [bind1(transposeP, [x!], p)],
    [isZero(t) ? new Zero(x!.aval.strong().withShape(p.perm.map((k) => x!.shape[k]!))) : bind1(transposeP, [t], p)],
  ],
  transpose: ([ct], [x], { perm }) => [
    zeroOr(ct!, x!, (c) =>
      transpose(
        c,
        perm.map((_, i) => perm.indexOf(i)),
      ),
    ),
  ],
  vmap: ([x], [d], { perm }) => [
    [bind1(transposeP, [moveAxis(x!, d!, 0)], { perm: [0, ...perm.map((p) => p + 1)] })],
    [0],
  ],
  printParams: (p) => `perm=[${p.perm}]`,
});
export const transpose = (x: Array, perm: readonly number[]): Array =>
  perm.length === x.ndim && perm.every((p, i) => p === i) ? x : bind1(transposeP, [x], { perm: [...perm] });
export function moveAxis(x: Array, from: number, to: number): Array {
  if (from === to) return x;
  const perm = range(x.ndim).filter((i) => i !== from);
  perm.splice(to, 0, from);
  return transpose(x, perm);
}

// ---------------------------------------------------------------- slice (static, strided)

export interface SliceParams {
  readonly start: readonly number[];
  readonly limit: readonly number[];
  readonly strides: readonly number[];
}
const sliceShape = ({ start, limit, strides }: SliceParams): number[] =>
  start.map((s, i) => Math.max(0, Math.ceil((limit[i]! - s) / strides[i]!)));
export const sliceP: Primitive<SliceParams> = definePrimitive<SliceParams>({
  name: "slice",
  lower: ([x], p, [out], g) => [
    viewOf(out!, (idx) =>
      x!.at(
        idx.map((v, i) =>
          g.binary("add", g.binary("mul", v, g.const(p.strides[i]!, "int32")), g.const(p.start[i]!, "int32")),
        ),
      ),
    ),
  ],
  shape: ([x], p) => {
    const ok =
      p.start.length === x!.ndim &&
      p.limit.length === x!.ndim &&
      p.strides.length === x!.ndim &&
      p.start.every((s, i) => s >= 0 && s <= p.limit[i]! && p.limit[i]! <= x!.shape[i]! && p.strides[i]! >= 1);
    if (!ok)
      throw new Error(`slice: start [${p.start}] limit [${p.limit}] strides [${p.strides}] are invalid for ${x}.`);
    return [x!.withShape(sliceShape(p))];
  },
  impl: ([x], p, [out]) => {
    const str = stridesOf(x!.shape);
    const o = typedArrayFor(x!.dtype, out!.size);
    forEachIndex(out!.shape, (k, idx) => {
      let off = 0;
      for (let d = 0; d < idx.length; d++) off += (p.start[d]! + idx[d]! * p.strides[d]!) * str[d]!;
      o[k] = x!.data[off]!;
    });
    return [host(o, out!.shape, x!.dtype)];
  },
  jvp: ([x], [t], p) => [
    [bind1(sliceP, [x!], p)],
    [isZero(t) ? new Zero(x!.aval.strong().withShape(sliceShape(p))) : bind1(sliceP, [t], p)],
  ],
  transpose: ([ct], [x], p) => [
    zeroOr(ct!, x!, (c) => {
      const xs = avalOf(x!).shape;
      const n = c.shape;
      const lo = p.start;
      const hi = xs.map((dim, i) => dim - (n[i]! === 0 ? p.start[i]! : p.start[i]! + (n[i]! - 1) * p.strides[i]! + 1));
      return pad(
        c,
        scalar(0, c.dtype),
        lo,
        hi,
        p.strides.map((s) => s - 1),
      );
    }),
  ],
  vmap: ([x], [d], p) => {
    const m = moveAxis(x!, d!, 0);
    return [
      [bind1(sliceP, [m], { start: [0, ...p.start], limit: [m.shape[0]!, ...p.limit], strides: [1, ...p.strides] })],
      [0],
    ];
  },
  printParams: (p) =>
    `start=[${p.start}] limit=[${p.limit}]${p.strides.some((s) => s !== 1) ? ` strides=[${p.strides}]` : ""}`,
});
export const slice = (
  x: Array,
  start: readonly number[],
  limit: readonly number[],
  strides?: readonly number[],
): Array =>
  bind1(sliceP, [x], { start: [...start], limit: [...limit], strides: strides ? [...strides] : start.map(() => 1) });
/** x[..., start:stop, ...] on one axis. */
export function sliceAxis(x: Array, axis: number, start: number, stop: number): Array {
  if (start === 0 && stop === x.shape[axis]) return x;
  const s = x.shape.map(() => 0),
    l = [...x.shape];
  s[axis] = start;
  l[axis] = stop;
  return slice(x, s, l);
}

// ---------------------------------------------------------------- pad

export interface PadParams {
  readonly lo: readonly number[];
  readonly hi: readonly number[];
  readonly interior: readonly number[];
}
const padShape = (shape: Shape, p: PadParams): number[] =>
  shape.map((n, i) => p.lo[i]! + p.hi[i]! + n + Math.max(0, n - 1) * p.interior[i]!);
export const padP: Primitive<PadParams> = definePrimitive<PadParams>({
  name: "pad",
  lower: ([x, v], p, [out], g) => [
    viewOf(out!, (idx) => {
      // Element of x at (idx - lo) / (interior + 1) when that lands on an element, else the padding value.
      let ok = g.const(1, "bool");
      const src = idx.map((i, d) => {
        const q = g.binary("sub", i, g.const(p.lo[d]!, "int32"));
        const step = p.interior[d]! + 1;
        const j = step === 1 ? q : g.binary("floordiv", q, g.const(step, "int32"));
        ok = g.binary("and", ok, g.binary("ge", q, g.const(0, "int32")));
        ok = g.binary("and", ok, g.binary("lt", j, g.const(x!.shape[d]!, "int32")));
        if (step > 1)
          ok = g.binary(
            "and",
            ok,
            g.binary("eq", g.binary("floormod", q, g.const(step, "int32")), g.const(0, "int32")),
          );
        return clampIndex(g, j, x!.shape[d]!);
      });
      return g.select(ok, x!.at(src), v!.at([]));
    }),
  ],
  shape: ([x, v], p) => {
    if (v!.ndim !== 0 || v!.dtype !== x!.dtype)
      throw new Error(`pad: padding value must be a scalar of ${x!.dtype}, got ${v}.`);
    const ok = [p.lo, p.hi, p.interior].every((a) => a.length === x!.ndim) && p.interior.every((k) => k >= 0);
    const shape = padShape(x!.shape, p);
    if (!ok || shape.some((d) => d < 0))
      throw new Error(`pad: padding lo=[${p.lo}] hi=[${p.hi}] interior=[${p.interior}] is invalid for ${x}.`);
    return [x!.withShape(shape)];
  },
  impl: ([x, v], p, [out]) => {
    const o = typedArrayFor(x!.dtype, out!.size);
    o.fill(v!.data[0]!);
    const ostr = stridesOf(out!.shape);
    forEachIndex(x!.shape, (k, idx) => {
      let off = 0;
      for (let d = 0; d < idx.length; d++) {
        const j = p.lo[d]! + idx[d]! * (p.interior[d]! + 1);
        if (j < 0 || j >= out!.shape[d]!) return;
        off += j * ostr[d]!;
      }
      o[off] = x!.data[k]!;
    });
    return [host(o, out!.shape, x!.dtype)];
  },
  jvp: ([x, v], [tx, tv], p) => {
    const out = bind1(padP, [x!, v!], p);
    if (isZero(tx) && isZero(tv)) return [[out], [new Zero(out.aval.strong())]];
    const z = (t: Tangent, like: Array) => (isZero(t) ? broadcastTo(scalar(0, like.dtype), like.shape) : t);
    return [[out], [bind1(padP, [z(tx!, x!), z(tv!, v!)], p)]];
  },
  transpose: ([ct], [x, v], p) => {
    if (isZero(ct)) return [isUndef(x) ? new Zero(x.aval) : null, isUndef(v) ? new Zero(v.aval) : null];
    const c = ct as Array;
    const unpadded = bind1(padP, [c, scalar(0, c.dtype)], {
      lo: p.lo.map((k) => -k),
      hi: p.hi.map((k) => -k),
      interior: p.lo.map(() => 0),
    });
    const tx = slice(
      unpadded,
      unpadded.shape.map(() => 0),
      unpadded.shape,
      p.interior.map((k) => k + 1),
    );
    const all = (a: Array) => reduceSum(a, range(a.ndim));
    return [isUndef(x) ? tx : null, isUndef(v) ? sub(all(c), all(tx)) : null];
  },
  vmap: ([x, v], [dx, dv], p, n) => {
    if (dv !== null) return vmapByLoop(padP, [x!, v!], [dx!, dv!], p, n);
    const m = moveAxis(x!, dx!, 0);
    return [[bind1(padP, [m, v!], { lo: [0, ...p.lo], hi: [0, ...p.hi], interior: [0, ...p.interior] })], [0]];
  },
  printParams: (p) => `lo=[${p.lo}] hi=[${p.hi}]${p.interior.some((k) => k) ? ` interior=[${p.interior}]` : ""}`,
});
export const pad = (
  x: Array,
  value: Array,
  lo: readonly number[],
  hi: readonly number[],
  interior?: readonly number[],
): Array => bind1(padP, [x, value], { lo: [...lo], hi: [...hi], interior: interior ? [...interior] : lo.map(() => 0) });

// ---------------------------------------------------------------- concatenate

export interface ConcatParams {
  readonly axis: number;
}
export const concatenateP: Primitive<ConcatParams> = definePrimitive<ConcatParams>({
  name: "concatenate",
  lower: (xs, { axis }, [out], g) => [
    viewOf(out!, (idx) => {
      const offs: number[] = [];
      let o = 0;
      for (const x of xs) {
        offs.push(o);
        o += x.shape[axis]!;
      }
      let r = xs[xs.length - 1]!.at(
        idx.map((v, d) => (d === axis ? g.binary("sub", v, g.const(offs[xs.length - 1]!, "int32")) : v)),
      );
      for (let k = xs.length - 2; k >= 0; k--) {
        const local = g.binary("sub", idx[axis]!, g.const(offs[k]!, "int32"));
        const inside = g.binary("lt", idx[axis]!, g.const(offs[k]! + xs[k]!.shape[axis]!, "int32"));
        const xk = xs[k]!.at(idx.map((v, d) => (d === axis ? clampIndex(g, local, xs[k]!.shape[axis]!) : v)));
        r = g.select(inside, xk, r);
      }
      return r;
    }),
  ],
  shape: (xs, { axis }) => {
    const f = xs[0]!;
    if (axis < 0 || axis >= f.ndim) throw new Error(`concatenate: axis ${axis} out of range for ${f}.`);
    for (const x of xs) {
      if (x.dtype !== f.dtype || x.ndim !== f.ndim || x.shape.some((d, i) => i !== axis && d !== f.shape[i])) {
        throw new Error(
          `concatenate: arrays ${xs.map(String).join(", ")} must share dtype and all dimensions except axis ${axis}.`,
        );
      }
    }
    const shape = [...f.shape];
    shape[axis] = xs.reduce((a, x) => a + x.shape[axis]!, 0);
    return [
      new ShapedArray(
        shape,
        f.dtype,
        xs.every((x) => x.weak),
      ),
    ];
  },
  impl: (xs, { axis }, [out]) => {
    const o = typedArrayFor(out!.dtype, out!.size);
    const outer = sizeOf(out!.shape.slice(0, axis));
    const inner = sizeOf(out!.shape.slice(axis + 1));
    const rowOut = out!.shape[axis]! * inner;
    let col = 0;
    for (const x of xs) {
      const row = x.shape[axis]! * inner;
      for (let i = 0; i < outer; i++) o.set(x.data.subarray(i * row, (i + 1) * row) as never, i * rowOut + col);
      col += row;
    }
    return [host(o, out!.shape, out!.dtype)];
  },
  jvp: (xs, ts, p) => {
    const out = bind1(concatenateP, xs, p);
    if (ts.every(isZero)) return [[out], [new Zero(out.aval.strong())]];
    return [
      [out],
      [
        bind1(
          concatenateP,
          ts.map((t, i) => (isZero(t) ? broadcastTo(scalar(0, xs[i]!.dtype), xs[i]!.shape) : t)),
          p,
        ),
      ],
    ];
  },
  transpose: ([ct], xs, { axis }) => {
    let off = 0;
    return xs.map((x) => {
      const n = avalOf(x).shape[axis]!;
      const r = isUndef(x) ? zeroOr(ct!, x, (c) => sliceAxis(c, axis, off, off + n)) : null;
      off += n;
      return r;
    });
  },
  vmap: (xs, dims, { axis }, n) => {
    const moved = xs.map((x, i) =>
      dims[i] === null
        ? broadcastInDim(
            x,
            [n, ...x.shape],
            x.shape.map((_, k) => k + 1),
          )
        : moveAxis(x, dims[i]!, 0),
    );
    return [[bind1(concatenateP, moved, { axis: axis + 1 })], [0]];
  },
  printParams: (p) => `axis=${p.axis}`,
});
export const concatenate = (xs: readonly Array[], axis: number): Array =>
  xs.length === 1 ? xs[0]! : bind1(concatenateP, xs, { axis });

// ---------------------------------------------------------------- rev

export interface RevParams {
  readonly dims: readonly number[];
}
export const revP: Primitive<RevParams> = definePrimitive<RevParams>({
  name: "rev",
  lower: ([x], { dims }, [out], g) => [
    viewOf(out!, (idx) =>
      x!.at(idx.map((v, d) => (dims.includes(d) ? g.binary("sub", g.const(x!.shape[d]! - 1, "int32"), v) : v))),
    ),
  ],
  shape: ([x], { dims }) => {
    if (dims.some((d) => d < 0 || d >= x!.ndim)) throw new Error(`rev: dims [${dims}] out of range for ${x}.`);
    return [x!];
  },
  impl: ([x], { dims }) => {
    const str = stridesOf(x!.shape);
    const o = typedArrayFor(x!.dtype, x!.data.length);
    forEachIndex(x!.shape, (k, idx) => {
      let off = 0;
      for (let d = 0; d < idx.length; d++) off += (dims.includes(d) ? x!.shape[d]! - 1 - idx[d]! : idx[d]!) * str[d]!;
      o[k] = x!.data[off]!;
    });
    return [host(o, x!.shape, x!.dtype)];
  },
  jvp: ([x], [t], p) => [[bind1(revP, [x!], p)], [isZero(t) ? t : bind1(revP, [t], p)]],
  transpose: ([ct], [x], p) => [zeroOr(ct!, x!, (c) => bind1(revP, [c], p))],
  vmap: ([x], [d], { dims }) => [[bind1(revP, [moveAxis(x!, d!, 0)], { dims: dims.map((k) => k + 1) })], [0]],
  printParams: (p) => `dims=[${p.dims}]`,
});
export const rev = (x: Array, dims: readonly number[]): Array =>
  dims.length ? bind1(revP, [x], { dims: [...dims] }) : x;

// ---------------------------------------------------------------- dynamic_slice / dynamic_update_slice

const clampStart = (s: number, dim: number, size: number): number => Math.min(Math.max(s, 0), dim - size);
const clampStartNode = (g: KGraph, s: KNode, dim: number, size: number): KNode =>
  g.binary("min", g.binary("max", s, g.const(0, "int32")), g.const(dim - size, "int32"));
function checkStarts(op: string, x: ShapedArray, starts: readonly ShapedArray[]): void {
  if (starts.length !== x.ndim) throw new Error(`${op}: needs ${x.ndim} start indices for ${x}, got ${starts.length}.`);
  for (const s of starts) {
    requireInt(op, "start indices", s);
    if (s.ndim !== 0) throw new Error(`${op}: start indices must be scalars, got ${s}.`);
  }
}

export interface DynSliceParams {
  readonly sizes: readonly number[];
}
export const dynamicSliceP: Primitive<DynSliceParams> = definePrimitive<DynSliceParams>({
  name: "dynamic_slice",
  lower: ([x, ...starts], { sizes }, [out], g) => [
    viewOf(out!, (idx) => {
      const st = starts.map((s, d) => clampStartNode(g, s.at([]), x!.shape[d]!, sizes[d]!));
      return x!.at(idx.map((v, d) => g.binary("add", v, st[d]!)));
    }),
  ],
  shape: ([x, ...starts], { sizes }) => {
    checkStarts("dynamic_slice", x!, starts);
    if (sizes.length !== x!.ndim || sizes.some((s, i) => s < 0 || s > x!.shape[i]!)) {
      throw new Error(`dynamic_slice: sizes [${sizes}] do not fit in ${x}.`);
    }
    return [x!.withShape(sizes)];
  },
  impl: ([x, ...starts], { sizes }, [out]) => {
    const st = starts.map((s, d) => clampStart(s.data[0]!, x!.shape[d]!, sizes[d]!));
    const str = stridesOf(x!.shape);
    const o = typedArrayFor(x!.dtype, out!.size);
    forEachIndex(sizes, (k, idx) => {
      let off = 0;
      for (let d = 0; d < idx.length; d++) off += (st[d]! + idx[d]!) * str[d]!;
      o[k] = x!.data[off]!;
    });
    return [host(o, sizes, x!.dtype)];
  },
  jvp: ([x, ...s], [t], p) => [
    [bind1(dynamicSliceP, [x!, ...s], p)],
    [isZero(t) ? new Zero(x!.aval.strong().withShape(p.sizes)) : bind1(dynamicSliceP, [t, ...s], p)],
  ],
  transpose: ([ct], [x, ...s]) => {
    if (!isUndef(x)) return [null, ...s.map(() => null)];
    const r = zeroOr(ct!, x, (c) => dynamicUpdateSlice(broadcastTo(scalar(0, c.dtype), x.aval.shape), c, s as Array[]));
    return [r, ...s.map(() => null)];
  },
  vmap: (args, dims, p, n) => {
    const [x, ...s] = args;
    if (dims.slice(1).some((d) => d !== null)) return vmapByLoop(dynamicSliceP, args, dims, p, n);
    return [
      [bind1(dynamicSliceP, [moveAxis(x!, dims[0]!, 0), scalar(0, "int32"), ...s], { sizes: [n, ...p.sizes] })],
      [0],
    ];
  },
  printParams: (p) => `sizes=[${p.sizes}]`,
});
export const dynamicSlice = (x: Array, starts: readonly Array[], sizes: readonly number[]): Array =>
  bind1(dynamicSliceP, [x, ...starts], { sizes: [...sizes] });

export const dynamicUpdateSliceP: Primitive<Record<string, never>> = definePrimitive<Record<string, never>>({
  name: "dynamic_update_slice",
  lower: ([x, u, ...starts], _p, [out], g) => [
    viewOf(out!, (idx) => {
      const st = starts.map((s, d) => clampStartNode(g, s.at([]), x!.shape[d]!, u!.shape[d]!));
      let inside = g.const(1, "bool");
      const local = idx.map((v, d) => {
        const q = g.binary("sub", v, st[d]!);
        inside = g.binary(
          "and",
          inside,
          g.binary("and", g.binary("ge", q, g.const(0, "int32")), g.binary("lt", q, g.const(u!.shape[d]!, "int32"))),
        );
        return clampIndex(g, q, u!.shape[d]!);
      });
      return g.select(inside, u!.at(local), x!.at(idx));
    }),
  ],
  shape: ([x, u, ...starts]) => {
    checkStarts("dynamic_update_slice", x!, starts);
    if (u!.dtype !== x!.dtype || u!.ndim !== x!.ndim || u!.shape.some((d, i) => d > x!.shape[i]!)) {
      throw new Error(`dynamic_update_slice: update ${u} does not fit in ${x}.`);
    }
    return [x!];
  },
  impl: ([x, u, ...starts], _p, [out]) => {
    const st = starts.map((s, d) => clampStart(s.data[0]!, x!.shape[d]!, u!.shape[d]!));
    const str = stridesOf(x!.shape);
    const o = typedArrayFor(x!.dtype, out!.size);
    o.set(x!.data as never);
    forEachIndex(u!.shape, (k, idx) => {
      let off = 0;
      for (let d = 0; d < idx.length; d++) off += (st[d]! + idx[d]!) * str[d]!;
      o[off] = u!.data[k]!;
    });
    return [host(o, x!.shape, x!.dtype)];
  },
  jvp: ([x, u, ...s], [tx, tu], p) => {
    const out = bind1(dynamicUpdateSliceP, [x!, u!, ...s], p);
    if (isZero(tx) && isZero(tu)) return [[out], [new Zero(out.aval.strong())]];
    const z = (t: Tangent, like: Array) => (isZero(t) ? broadcastTo(scalar(0, like.dtype), like.shape) : t);
    return [[out], [bind1(dynamicUpdateSliceP, [z(tx!, x!), z(tu!, u!), ...s], p)]];
  },
  transpose: ([ct], [x, u, ...s]) => {
    const starts = s as Array[];
    const nulls = s.map(() => null);
    if (isZero(ct)) return [isUndef(x) ? new Zero(x.aval) : null, isUndef(u) ? new Zero(u.aval) : null, ...nulls];
    const c = ct as Array;
    const ua = avalOf(u!);
    return [
      isUndef(x) ? dynamicUpdateSlice(c, broadcastTo(scalar(0, c.dtype), ua.shape), starts) : null,
      isUndef(u) ? dynamicSlice(c, starts, ua.shape) : null,
      ...nulls,
    ];
  },
  vmap: (args, dims, p, n) => {
    const [x, u, ...s] = args;
    if (dims.slice(2).some((d) => d !== null)) return vmapByLoop(dynamicUpdateSliceP, args, dims, p, n);
    const b = (a: Array, d: BDim) =>
      d === null
        ? broadcastInDim(
            a,
            [n, ...a.shape],
            a.shape.map((_, k) => k + 1),
          )
        : moveAxis(a, d, 0);
    return [[bind1(dynamicUpdateSliceP, [b(x!, dims[0]!), b(u!, dims[1]!), scalar(0, "int32"), ...s], p)], [0]];
  },
});
export const dynamicUpdateSlice = (x: Array, update: Array, starts: readonly Array[]): Array =>
  bind1(dynamicUpdateSliceP, [x, update, ...starts], {});

// ---------------------------------------------------------------- generic batching fallback

/** Batching by a loop over the batch: correct for any primitive, used where a vectorised rule is not worth it. */
export function vmapByLoop<P>(
  prim: Primitive<P>,
  args: readonly Array[],
  dims: readonly BDim[],
  params: P,
  n: number,
): [Array[], BDim[]] {
  const perItem: Array[][] = [];
  for (let b = 0; b < n; b++) {
    const item = args.map((a, i) => {
      const d = dims[i];
      if (d === null || d === undefined) return a;
      const s = sliceAxis(a, d, b, b + 1);
      return reshape(
        s,
        a.shape.filter((_, k) => k !== d),
      );
    });
    perItem.push(bind(prim, item, params));
  }
  const nOut = perItem[0]?.length ?? 0;
  const outs = range(nOut).map((o) =>
    concatenate(
      perItem.map((r) => reshape(r[o]!, [1, ...r[o]!.shape])),
      0,
    ),
  );
  return [outs, outs.map(() => 0)];
}
