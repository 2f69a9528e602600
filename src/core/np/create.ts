/** Array creation: zeros, ones, full, arange, linspace, eye. */
import type { Array } from "../array.js";
import { scalar } from "../constants.js";
import { fromTyped } from "../create.js";
import { checkDType, typedArrayFor, type DType } from "../dtype.js";
import { broadcastTo } from "../prims/index.js";
import { checkShape } from "../shape.js";
import type { BackendName } from "../backends/backend.js";

export interface CreateOptions {
  readonly dtype?: DType;
  readonly backend?: BackendName;
}
const dt = (o: CreateOptions | undefined, def: DType = "float32"): DType =>
  o?.dtype === undefined ? def : checkDType(o.dtype, "np");

export function full(shape: readonly number[] | number, value: number | boolean, opts?: CreateOptions): Array {
  const s = checkShape("np.full", typeof shape === "number" ? [shape] : shape);
  const d = dt(opts);
  if (opts?.backend === undefined) return broadcastTo(scalar(value, d), s);
  // On the backend asked for (the scalar constant alone would follow the default backend).
  const one = typedArrayFor(d, 1);
  one[0] = Number(value);
  return broadcastTo(fromTyped(one, [], d, { backend: opts.backend }), s);
}
export const zeros = (shape: readonly number[] | number, opts?: CreateOptions): Array => full(shape, 0, opts);
export const ones = (shape: readonly number[] | number, opts?: CreateOptions): Array => full(shape, 1, opts);
export const zerosLike = (x: Array, opts?: CreateOptions): Array => full(x.shape, 0, { dtype: opts?.dtype ?? x.dtype });
export const onesLike = (x: Array, opts?: CreateOptions): Array => full(x.shape, 1, { dtype: opts?.dtype ?? x.dtype });

/** np.arange(stop) / arange(start, stop, step); int32 when all arguments are integers. */
export function arange(a: number, b?: number, step = 1, opts?: CreateOptions): Array {
  const [start, stop] = b === undefined ? [0, a] : [a, b];
  if (step === 0 || !Number.isFinite(step))
    throw new Error(`np.arange: step must be a finite non-zero number, got ${step}.`);
  // NaN/Infinity bounds used to give a NaN-sized array or a bare RangeError.
  if (!Number.isFinite(start) || !Number.isFinite(stop))
    throw new Error(`np.arange: start and stop must be finite numbers, got ${start} and ${stop}.`);
  const allInt = [start, stop, step].every(Number.isInteger);
  const d = dt(opts, allInt ? "int32" : "float32");
  const n = Math.max(0, Math.ceil((stop - start) / step));
  const buf = typedArrayFor(d, n);
  for (let i = 0; i < n; i++) buf[i] = start + i * step;
  return fromTyped(buf, [n], d, { backend: opts?.backend });
}

export function linspace(
  start: number,
  stop: number,
  num = 50,
  opts: CreateOptions & { endpoint?: boolean } = {},
): Array {
  if (!Number.isInteger(num) || num < 0)
    throw new Error(`np.linspace: num must be a non-negative integer, got ${num}.`);
  const d = dt(opts);
  const div = (opts.endpoint ?? true) ? num - 1 : num;
  const buf = typedArrayFor(d, num);
  for (let i = 0; i < num; i++) buf[i] = div > 0 ? start + ((stop - start) * i) / div : start;
  return fromTyped(buf, [num], d, { backend: opts.backend });
}

export function eye(n: number, m?: number, opts?: CreateOptions & { k?: number }): Array {
  const cols = m ?? n;
  // Negative or fractional sizes used to produce an array with an invalid shape.
  for (const v of [n, cols])
    if (!Number.isInteger(v) || v < 0)
      throw new Error(`np.eye: sizes must be non-negative integers, got n=${n}, m=${m}.`);
  if (opts?.k !== undefined && !Number.isInteger(opts.k))
    throw new Error(`np.eye: k must be an integer, got ${opts.k}.`);
  const d = dt(opts);
  const buf = typedArrayFor(d, n * cols);
  const k = opts?.k ?? 0;
  for (let i = 0; i < n; i++) {
    const j = i + k;
    if (j >= 0 && j < cols) buf[i * cols + j] = 1;
  }
  return fromTyped(buf, [n, cols], d, { backend: opts?.backend });
}
