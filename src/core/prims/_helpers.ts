import { ShapedArray } from "../aval.js";
import type { HostArray } from "../backends/backend.js";
import { DTYPE_SHORT, typedArrayFor, type DType, type TypedArray } from "../dtype.js";
import { broadcastShapes, fmtShape, shapeEq, type Shape } from "../shape.js";

export const host = (data: TypedArray, shape: Shape, dtype: DType): HostArray => ({ data, shape: [...shape], dtype });
export const newHost = (aval: ShapedArray): HostArray =>
  host(typedArrayFor(aval.dtype, aval.size), aval.shape, aval.dtype);

export const fmtAvals = (avals: readonly ShapedArray[]): string => avals.map(String).join(", ");

export function requireFloat(op: string, a: ShapedArray): void {
  if (a.dtype !== "float32" && a.dtype !== "float64") {
    throw new Error(`${op}: expected a floating-point array, got ${a}. Convert first with x.astype("float32").`);
  }
}
export function requireNumeric(op: string, a: ShapedArray): void {
  if (a.dtype === "bool")
    throw new Error(`${op}: expected a numeric array, got ${a} (bool). Convert with x.astype("int32") or ("float32").`);
}
export function requireBool(op: string, a: ShapedArray): void {
  if (a.dtype !== "bool")
    throw new Error(`${op}: expected a bool array, got ${a}. Use a comparison (e.g. np.notEqual(x, 0)) to make one.`);
}
export function requireSameDType(op: string, avals: readonly ShapedArray[]): DType {
  const d = avals[0]!.dtype;
  for (const a of avals) {
    if (a.dtype !== d) {
      throw new Error(
        `${op}: operands have different dtypes (${fmtAvals(avals)}); convert ` +
          `one with .astype(...) (np.* functions promote automatically).`,
      );
    }
  }
  return d;
}
export function requireInt(op: string, what: string, a: ShapedArray): void {
  if (a.dtype !== "int32") throw new Error(`${op}: ${what} must be int32, got ${a}. Convert with x.astype("int32").`);
}

export const allWeak = (avals: readonly ShapedArray[]): boolean => avals.every((a) => a.weak);

/** Shape rule of an n-ary broadcasting elementwise op whose operands share one dtype. */
export function broadcastingShape(op: string, avals: readonly ShapedArray[], outDType?: DType): ShapedArray {
  const d = requireSameDType(op, avals);
  const shape = broadcastShapes(op, ...avals.map((a) => a.shape));
  return new ShapedArray(shape, outDType ?? d, outDType ? false : allWeak(avals));
}

/**
 * Reference n-ary elementwise loop with numpy broadcasting. Broadcast operands are read through
 * per-dimension strides (0 on broadcast dims) advanced incrementally, so no index maps are built.
 */
export function mapHost(inputs: readonly HostArray[], out: ShapedArray, fn: (...v: number[]) => number): HostArray {
  const res = newHost(out);
  const o = res.data;
  const n = out.size;
  const ds = inputs.map((x) => x.data);
  const same = inputs.map((x) => x.data.length === n && shapeEq(x.shape, out.shape));
  if (inputs.length === 1 && same[0]) {
    const a = ds[0]!;
    for (let i = 0; i < n; i++) o[i] = fn(a[i]!);
    return res;
  }
  if (inputs.length === 2 && same[0] && same[1]) {
    const a = ds[0]!,
      b = ds[1]!;
    for (let i = 0; i < n; i++) o[i] = fn(a[i]!, b[i]!);
    return res;
  }
  if (inputs.length === 2 && (same[0] || ds[0]!.length === 1) && (same[1] || ds[1]!.length === 1)) {
    const a = ds[0]!,
      b = ds[1]!;
    if (same[0]) {
      const y = b[0]!;
      for (let i = 0; i < n; i++) o[i] = fn(a[i]!, y);
    } else if (same[1]) {
      const x = a[0]!;
      for (let i = 0; i < n; i++) o[i] = fn(x, b[i]!);
    } else {
      const v = fn(a[0]!, b[0]!);
      o.fill(v);
    }
    return res;
  }
  // General broadcasting: walk the output row-major, advancing each operand's offset by its stride.
  const nd = out.shape.length;
  const str = inputs.map((x) => {
    const st = new globalThis.Array<number>(nd).fill(0);
    let acc = 1;
    for (let d = x.shape.length - 1; d >= 0; d--) {
      const od = nd - x.shape.length + d;
      if (x.shape[d] !== 1) st[od] = acc;
      acc *= x.shape[d]!;
    }
    return st;
  });
  const idx = new globalThis.Array<number>(nd).fill(0);
  const off = inputs.map(() => 0);
  const k = inputs.length;
  const v = new globalThis.Array<number>(k);
  const last = nd - 1;
  const inner = nd ? out.shape[last]! : 1;
  const innerStr = str.map((st) => (nd ? st[last]! : 0));
  for (let i = 0; i < n; ) {
    // One row of the innermost dimension at a time.
    if (k === 2) {
      const a = ds[0]!,
        b = ds[1]!,
        sa = innerStr[0]!,
        sb = innerStr[1]!;
      let pa = off[0]!,
        pb = off[1]!;
      for (let j = 0; j < inner; j++, pa += sa, pb += sb) o[i + j] = fn(a[pa]!, b[pb]!);
    } else {
      for (let j = 0; j < inner; j++) {
        for (let q = 0; q < k; q++) v[q] = ds[q]![off[q]! + j * innerStr[q]!]!;
        o[i + j] = fn(...v);
      }
    }
    i += inner;
    for (let d = last - 1; d >= 0; d--) {
      idx[d]!++;
      for (let q = 0; q < k; q++) off[q]! += str[q]![d]!;
      if (idx[d]! < out.shape[d]!) break;
      for (let q = 0; q < k; q++) off[q]! -= str[q]![d]! * out.shape[d]!;
      idx[d] = 0;
    }
  }
  return res;
}

export const describeShape = (a: ShapedArray): string => `${DTYPE_SHORT[a.dtype]}${fmtShape(a.shape)}`;

/** Permute host data axes (reference implementation shared by several primitives). */
export function transposeHost(x: HostArray, perm: readonly number[]): HostArray {
  const nd = x.shape.length;
  const outShape = perm.map((p) => x.shape[p]!);
  const out = typedArrayFor(x.dtype, x.data.length);
  const inStr = new globalThis.Array<number>(nd);
  let acc = 1;
  for (let i = nd - 1; i >= 0; i--) {
    inStr[i] = acc;
    acc *= x.shape[i]!;
  }
  const str = perm.map((p) => inStr[p]!);
  const idx = new globalThis.Array<number>(nd).fill(0);
  let off = 0;
  const n = x.data.length;
  for (let k = 0; k < n; k++) {
    out[k] = x.data[off]!;
    for (let d = nd - 1; d >= 0; d--) {
      idx[d]!++;
      off += str[d]!;
      if (idx[d]! < outShape[d]!) break;
      off -= str[d]! * outShape[d]!;
      idx[d] = 0;
    }
  }
  return host(out, outShape, x.dtype);
}
