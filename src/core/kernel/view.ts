/**
 * Lazy arrays for lowering: a View is a shape plus a function from an index (one node per
 * dimension) to the scalar node of that element. Primitive `lower` rules compose views; the
 * compiler decides which views become buffers (kernel outputs) and which stay inlined.
 */
import type { ShapedArray } from "../aval.js";
import type { DType } from "../dtype.js";
import { stridesOf } from "../shape.js";
import type { KGraph, KNode, ReduceOp } from "./expr.js";

export interface View {
  readonly shape: readonly number[];
  readonly dtype: DType;
  at(idx: readonly KNode[]): KNode;
}

/** A view whose element function is memoised by index (each element node built once per kernel). */
export function view(shape: readonly number[], dtype: DType, at: (idx: readonly KNode[]) => KNode): View {
  const memo = new Map<string, KNode>();
  return {
    shape,
    dtype,
    at: (idx) => {
      const key = idx.map((n) => n.id).join(",");
      let n = memo.get(key);
      if (!n) memo.set(key, (n = at(idx)));
      return n;
    },
  };
}
export const viewOf = (aval: ShapedArray, at: (idx: readonly KNode[]) => KNode): View =>
  view(aval.shape, aval.dtype, at);

export function ravel(g: KGraph, idx: readonly KNode[], shape: readonly number[]): KNode {
  const st = stridesOf(shape);
  let acc = g.const(0, "int32");
  idx.forEach((v, i) => {
    if (shape[i] !== 1) acc = g.binary("add", acc, g.binary("mul", v, g.const(st[i]!, "int32")));
  });
  return acc;
}
export function unravel(g: KGraph, flat: KNode, shape: readonly number[]): KNode[] {
  const st = stridesOf(shape);
  return shape.map((d, i) =>
    d === 1
      ? g.const(0, "int32")
      : g.binary("floormod", g.binary("floordiv", flat, g.const(st[i]!, "int32")), g.const(d, "int32")),
  );
}

/** The view of a buffer in input slot `slot` (row-major). */
export const loadView = (g: KGraph, slot: number, shape: readonly number[], dtype: DType): View =>
  view(shape, dtype, (idx) => g.load(slot, dtype, ravel(g, idx, shape)));

/** numpy broadcast of a view to `out` (right-aligned, size-1 dims read index 0). */
export function broadcastView(g: KGraph, v: View, out: readonly number[]): View {
  if (v.shape.length === out.length && v.shape.every((d, i) => d === out[i])) return v;
  const lead = out.length - v.shape.length;
  const zero = g.const(0, "int32");
  return view(out, v.dtype, (idx) => v.at(v.shape.map((d, i) => (d === 1 ? zero : idx[lead + i]!))));
}

let freshId = 0;
/** Inner reductions up to this many terms are unrolled into straight-line code (so CSE shares terms). */
export const UNROLL_REDUCE_MAX = 16;

/** Reduce `body(rvars)` over the given extents: unrolled when small, else nested inner loops. */
export function reduceOver(
  g: KGraph,
  op: ReduceOp,
  extents: readonly number[],
  body: (rvars: KNode[]) => KNode,
): KNode {
  const total = extents.reduce((a, b) => a * b, 1);
  if (total <= UNROLL_REDUCE_MAX && total > 0 && op !== "argmax" && op !== "argmin") {
    let acc: KNode | null = null;
    for (let k = 0; k < total; k++) {
      let rem = k;
      const idx = extents.map(() => 0);
      for (let d = extents.length - 1; d >= 0; d--) {
        idx[d] = rem % extents[d]!;
        rem = Math.floor(rem / extents[d]!);
      }
      const term = body(idx.map((i) => g.const(i, "int32")));
      acc = acc === null ? term : g.binary(op, acc, term);
    }
    return acc!;
  }
  const rvars = extents.map((e) => g.var(`r${freshId++}`, e));
  let acc = body(rvars);
  for (let i = rvars.length - 1; i >= 0; i--) acc = g.reduce(op, rvars[i]!, acc);
  return acc;
}

export const clampIndex = (g: KGraph, i: KNode, n: number): KNode =>
  g.binary("min", g.binary("max", i, g.const(0, "int32")), g.const(Math.max(0, n - 1), "int32"));
