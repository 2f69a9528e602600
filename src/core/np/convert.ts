/** Turning user input into Arrays, and dtype promotion between operands. */
import { Array, type ArrayLike } from "../array.js";
import type { ShapedArray } from "../aval.js";
import { exactValue, scalar } from "../constants.js";
import { ConcreteArray } from "../concrete.js";
import { fromTyped } from "../create.js";
import {
  checkDType,
  dtypeOfTypedArray,
  isFloat,
  promoteTypes,
  typedArrayFor,
  type DType,
  type TypedArray,
} from "../dtype.js";
import type { BackendName } from "../backends/backend.js";
import { convert } from "../prims/index.js";

export interface ArrayOptions {
  readonly dtype?: DType;
  readonly backend?: BackendName;
}

interface NdarrayLike {
  data: ArrayLike | TypedArray | number[];
  shape: number[];
  stride: number[];
  offset: number;
  get?: (...i: number[]) => number;
}
const isNdarray = (x: unknown): x is NdarrayLike =>
  typeof x === "object" && x !== null && "shape" in x && "stride" in x && "offset" in x && "data" in x;
const isTyped = (x: unknown): x is TypedArray =>
  x instanceof Float32Array || x instanceof Float64Array || x instanceof Int32Array || x instanceof Uint8Array;

/** np.array: from nested JS arrays, typed arrays, ndarray views, numbers, booleans or Arrays. */
export function array(x: unknown, opts: ArrayOptions = {}): Array {
  const dtype = opts.dtype === undefined ? undefined : checkDType(opts.dtype, "np.array");
  if (x instanceof Array) {
    const y = dtype && dtype !== x.dtype ? convert(x, dtype) : x;
    if (
      opts.backend &&
      "backend" in y &&
      (y as unknown as { backend: { name: string } }).backend.name !== opts.backend
    ) {
      return fromTyped(y.dataSync(), y.shape, y.dtype, { backend: opts.backend });
    }
    return y;
  }
  if (isTyped(x)) {
    const d = dtype ?? dtypeOfTypedArray(x);
    if (d === "int32" && !(x instanceof Int32Array)) requireInt32(x);
    return fromTyped(retype(x, d), [x.length], d, { backend: opts.backend });
  }
  if (isNdarray(x)) {
    const shape = [...x.shape];
    const n = shape.reduce((a, b) => a * b, 1);
    const src = x.data as unknown as { readonly [i: number]: number };
    const d = dtype ?? (isTyped(src) ? dtypeOfTypedArray(src) : "float32");
    const out = typedArrayFor(d, n);
    const idx = new globalThis.Array<number>(shape.length).fill(0);
    for (let k = 0; k < n; k++) {
      let off = x.offset;
      for (let i = 0; i < shape.length; i++) off += idx[i]! * x.stride[i]!;
      out[k] = Number(src[off]);
      for (let i = shape.length - 1; i >= 0; i--) {
        if (++idx[i]! < shape[i]!) break;
        idx[i] = 0;
      }
    }
    if (d === "int32")
      requireInt32(
        globalThis.Array.from({ length: n }, (_, k) => out[k]!),
        shape,
      );
    return fromTyped(out, shape, d, { backend: opts.backend });
  }
  const shape: number[] = [];
  let probe: unknown = x;
  while (globalThis.Array.isArray(probe)) {
    shape.push(probe.length);
    probe = probe[0];
  }
  const flat: number[] = [];
  let sawBool = false;
  const rec = (v: unknown, depth: number, path: string): void => {
    if (depth === shape.length) {
      if (typeof v === "number") flat.push(v);
      else if (typeof v === "boolean") {
        flat.push(v ? 1 : 0);
        sawBool = true;
      } else if (v instanceof Array && v.size === 1) flat.push(v.item());
      else
        throw new Error(
          `np.array: element at ${path || "top level"} ` +
            `is ${globalThis.Array.isArray(v) ? "a nested array (ragged input)" : typeof v}; expected a number.`,
        );
      return;
    }
    if (!globalThis.Array.isArray(v) || v.length !== shape[depth]) {
      throw new Error(
        `np.array: ragged nested array at ${path || "top level"}: expected ` +
          `length ${shape[depth]}, got ${globalThis.Array.isArray(v) ? v.length : typeof v}.`,
      );
    }
    v.forEach((e, i) => rec(e, depth + 1, `${path}[${i}]`));
  };
  rec(x, 0, "");
  const d = dtype ?? (sawBool && flat.every((v) => v === 0 || v === 1) ? "bool" : "float32");
  if (d === "int32") requireInt32(flat, shape);
  const buf = typedArrayFor(d, flat.length);
  flat.forEach((v, i) => (buf[i] = v));
  return fromTyped(buf, shape, d, { backend: opts.backend });
}

const INT32_MIN = -(2 ** 31),
  INT32_MAX = 2 ** 31 - 1;

/**
 * Values bound for int32 must fit: a typed-array store would wrap 3e9 to −1294967296 and turn
 * NaN into 0 without a word. (Fractions are truncated towards zero, as NumPy and JAX do.)
 */
function requireInt32(
  values: { readonly length: number; readonly [i: number]: number },
  shape: readonly number[] = [values.length],
): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isFinite(v) && v >= INT32_MIN && v < INT32_MAX + 1) continue;
    const at: number[] = [];
    for (let k = shape.length - 1, r = i; k >= 0; k--) {
      at.unshift(r % shape[k]!);
      r = Math.floor(r / shape[k]!);
    }
    throw new Error(
      `np.array: element [${at.join(", ")}] is ${v}, which int32 cannot hold ` +
        `(${Number.isFinite(v) ? `its range is ${INT32_MIN}…${INT32_MAX}` : "it has no NaN or infinity"}); ` +
        "keep it as float32/float64, or clip and replace non-finite values before converting.",
    );
  }
}

function retype(x: TypedArray, d: DType): TypedArray {
  if (dtypeOfTypedArray(x) === d) return x;
  const out = typedArrayFor(d, x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i]!;
  return out;
}

/** A JS number as a weakly typed scalar: integers are weak int32, others weak float32. */
export function asArray(x: ArrayLike, what = "np"): Array {
  if (x instanceof Array) return x;
  if (typeof x === "number") return scalar(x, Number.isInteger(x) && Math.abs(x) < 2 ** 31 ? "int32" : "float32", true);
  if (typeof x === "boolean") return scalar(x, "bool", true);
  if (globalThis.Array.isArray(x)) return array(x);
  throw new Error(`${what}: expected an Array or a number, got ${x === null ? "null" : typeof x}.`);
}

/** Promote operands to one dtype (numpy rules with JAX weak types). */
export function promote(op: string, xs: readonly ArrayLike[]): Array[] {
  const arrs = xs.map((x) => asArray(x, op));
  const { dtype, weak } = promoteTypes(arrs.map((a) => a.aval));
  return arrs.map((a) => {
    if (a.dtype === dtype && a.aval.weak === weak) return a;
    // Literal scalars are re-created in the target dtype rather than converted by an op.
    if (a instanceof ConcreteArray && a.aval.weak && a.size === 1 && a.backend.name === "cpu" && a.ndim === 0)
      return scalar(exactValue(a), dtype, weak);
    return convert(a, dtype, weak);
  });
}

/** For float-only math: ints and bools become float32 (weak scalars stay weak). */
export function asFloat(x: ArrayLike, op: string): Array {
  const a = asArray(x, op);
  return isFloat(a.dtype) ? a : convert(a, "float32", a.aval.weak);
}

export const avalOf = (x: Array): ShapedArray => x.aval;
