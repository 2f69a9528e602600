import ndarray from "ndarray";
import type { ShapedArray } from "./aval.js";
import type { DType, TypedArray } from "./dtype.js";
import type { IndexSpec, IndexUpdate } from "./np/at-index.js";

/**
 * Anything `np` accepts where an array is expected: an Array, a JS number or boolean, or nested JS arrays of numbers.
 */
export type ArrayLike = Array | number | boolean | readonly ArrayLike[];
export type Axis = number | readonly number[] | null | undefined;

/** The chainable methods of Array are implemented by `np`; it installs them here (keeps core free of import cycles). */
export interface ArrayMethodImpls {
  [name: string]: (...args: never[]) => unknown;
}
const methods: Record<string, (...args: unknown[]) => unknown> = {};
export function installArrayMethods(impls: Record<string, (...args: never[]) => unknown>): void {
  Object.assign(methods, impls);
}
const call = <T>(name: string, ...args: unknown[]): T => {
  const f = methods[name];
  if (!f) throw new Error(`internal: Array method ${name} is not installed (import "gradsim" or src/core/np).`);
  return f(...args) as T;
};

/**
 * An immutable n-dimensional array. Concrete arrays hold a device buffer; inside a
 * transform, functions receive tracers, which are Arrays too.
 */
export abstract class Array {
  abstract get aval(): ShapedArray;
  get shape(): readonly number[] {
    return this.aval.shape;
  }
  get dtype(): DType {
    return this.aval.dtype;
  }
  get ndim(): number {
    return this.aval.shape.length;
  }
  get size(): number {
    return this.aval.size;
  }

  /** Reads the values (row-major) as a fresh typed array. */
  abstract data(): Promise<TypedArray>;
  /** Reads the values synchronously; CPU backend only. */
  abstract dataSync(): TypedArray;
  /**
   * The values as an `ndarray` package view (row-major copy, the interop type of the public API); works on every
   * backend.
   */
  async toNdarray(): Promise<ndarray.NdArray<TypedArray>> {
    return ndarray(await this.data(), [...this.shape]);
  }
  /** The single value of a size-1 array as a JS number (CPU only). */
  item(): number {
    if (this.size !== 1)
      throw new Error(`item: array has shape [${this.shape}] (size ${this.size}); item() needs exactly one element.`);
    return this.dataSync()[0]!;
  }
  /** Nested JS arrays of numbers (CPU only). */
  toList(): unknown {
    const d = this.dataSync();
    const sh = this.shape;
    const rec = (dim: number, off: number): unknown => {
      if (dim === sh.length) return d[off];
      const stride = sh.slice(dim + 1).reduce((a, b) => a * b, 1);
      return globalThis.Array.from({ length: sh[dim]! }, (_, i) => rec(dim + 1, off + i * stride));
    };
    return rec(0, 0);
  }
  dispose(): void {}

  add(y: ArrayLike): Array {
    return call("add", this, y);
  }
  sub(y: ArrayLike): Array {
    return call("sub", this, y);
  }
  mul(y: ArrayLike): Array {
    return call("mul", this, y);
  }
  div(y: ArrayLike): Array {
    return call("div", this, y);
  }
  pow(y: ArrayLike): Array {
    return call("pow", this, y);
  }
  maximum(y: ArrayLike): Array {
    return call("maximum", this, y);
  }
  minimum(y: ArrayLike): Array {
    return call("minimum", this, y);
  }
  neg(): Array {
    return call("neg", this);
  }
  abs(): Array {
    return call("abs", this);
  }
  sign(): Array {
    return call("sign", this);
  }
  exp(): Array {
    return call("exp", this);
  }
  log(): Array {
    return call("log", this);
  }
  sin(): Array {
    return call("sin", this);
  }
  cos(): Array {
    return call("cos", this);
  }
  tanh(): Array {
    return call("tanh", this);
  }
  sqrt(): Array {
    return call("sqrt", this);
  }
  square(): Array {
    return call("square", this);
  }
  floor(): Array {
    return call("floor", this);
  }
  clip(lo: ArrayLike | null, hi: ArrayLike | null): Array {
    return call("clip", this, lo, hi);
  }
  equal(y: ArrayLike): Array {
    return call("equal", this, y);
  }
  notEqual(y: ArrayLike): Array {
    return call("notEqual", this, y);
  }
  less(y: ArrayLike): Array {
    return call("less", this, y);
  }
  lessEqual(y: ArrayLike): Array {
    return call("lessEqual", this, y);
  }
  greater(y: ArrayLike): Array {
    return call("greater", this, y);
  }
  greaterEqual(y: ArrayLike): Array {
    return call("greaterEqual", this, y);
  }
  sum(axis?: Axis, opts?: { keepdims?: boolean }): Array {
    return call("sum", this, axis, opts);
  }
  mean(axis?: Axis, opts?: { keepdims?: boolean }): Array {
    return call("mean", this, axis, opts);
  }
  max(axis?: Axis, opts?: { keepdims?: boolean }): Array {
    return call("max", this, axis, opts);
  }
  min(axis?: Axis, opts?: { keepdims?: boolean }): Array {
    return call("min", this, axis, opts);
  }
  prod(axis?: Axis, opts?: { keepdims?: boolean }): Array {
    return call("prod", this, axis, opts);
  }
  argmax(axis?: number): Array {
    return call("argmax", this, axis);
  }
  argmin(axis?: number): Array {
    return call("argmin", this, axis);
  }
  cumsum(axis?: number): Array {
    return call("cumsum", this, axis);
  }
  matmul(y: ArrayLike): Array {
    return call("matmul", this, y);
  }
  dot(y: ArrayLike): Array {
    return call("dot", this, y);
  }
  reshape(shape: readonly number[]): Array {
    return call("reshape", this, shape);
  }
  transpose(perm?: readonly number[]): Array {
    return call("transpose", this, perm);
  }
  swapaxes(a: number, b: number): Array {
    return call("swapaxes", this, a, b);
  }
  expandDims(axis: number | readonly number[]): Array {
    return call("expandDims", this, axis);
  }
  squeeze(axis?: Axis): Array {
    return call("squeeze", this, axis);
  }
  flatten(): Array {
    return call("reshape", this, [-1]);
  }
  astype(dtype: DType): Array {
    return call("astype", this, dtype);
  }
  take(indices: ArrayLike, axis?: number): Array {
    return call("take", this, indices, axis);
  }
  /** Gather on axis 0 (like x[idx]). For JAX's `x.at[i].set(v)` updates, see {@link Array.atIndex}. */
  at(indices: ArrayLike): Array {
    return call("take", this, indices, 0);
  }
  /**
   * JAX's `x.at[i]`: `x.atIndex(i).set(v)`, `.add(v)`, `.mul(v)`, `.min(v)`, `.max(v)` return
   * updated copies, `.get()` reads. `i` is an integer, an int32 Array (positions on axis 0), or a
   * list with one entry per leading axis (`x.atIndex([r, c])`, JAX's `x.at[r, c]`). See np.atIndex.
   */
  atIndex(index: IndexSpec): IndexUpdate {
    return call("atIndex", this, index);
  }
  get T(): Array {
    return call("transpose", this);
  }
  /** Iterates over axis 0: `const [k1, k2] = random.split(key)`. */
  *[Symbol.iterator](): Iterator<Array> {
    if (this.ndim === 0) throw new Error(`cannot iterate over a scalar array (${this.aval}).`);
    for (let i = 0; i < this.shape[0]!; i++) yield call<Array>("index", this, i);
  }
  toString(): string {
    return `Array(${this.aval})`;
  }
  /**
   * What `console.log(x)` prints in Node: the dtype and shape, and the values where they can be
   * read synchronously (CPU arrays of up to 1,000 elements), instead of the object's internals.
   */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    const head = `Array(${this.aval})`;
    if (this.size > 1000) return `${head} (${this.size} values; x.toList() or await x.data() reads them)`;
    let values: unknown;
    try {
      values = this.toList();
    } catch {
      return `${head} (values not readable synchronously here: await x.data())`;
    }
    return `${head} ${JSON.stringify(values)}`;
  }
}

export const isArray = (x: unknown): x is Array => x instanceof Array;
