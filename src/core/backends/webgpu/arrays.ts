/**
 * Glue between ConcreteArrays and device buffers: wrapping results, uploading host data
 * (with a host mirror for int32 index arrays), and moving CPU operands to the device (CPU
 * scalars are cached by value, bigger CPU arrays by identity, so constants captured by a
 * jitted function are uploaded once).
 */
import { ShapedArray } from "../../aval.js";
import { ConcreteArray } from "../../concrete.js";
import type { TypedArray } from "../../dtype.js";
import type { Backend } from "../backend.js";
import { BufferHandle, isBufferHandle, type DeviceBuffer } from "./buffers.js";
import { gpu } from "./context.js";
import { float64Error } from "./wgsl-lib.js";

let backendRef: Backend | null = null;
export function setWebGPUBackendRef(b: Backend): void {
  backendRef = b;
}
const backend = (): Backend => {
  if (!backendRef) throw new Error("internal: webgpu backend object not registered.");
  return backendRef;
};

/** Host int32 mirrors are kept up to this many elements (index arrays; bigger ones are rare and costly to mirror). */
const MIRROR_MAX = 1 << 24;

/** A new ConcreteArray owning one reference of `buf`. */
export function wrapBuffer(aval: ShapedArray, buf: DeviceBuffer): ConcreteArray {
  return new ConcreteArray(aval, backend(), new BufferHandle(buf));
}

/** The device buffer behind a webgpu array (borrowed: valid while the array is alive). */
export function bufferOf(arr: ConcreteArray): DeviceBuffer {
  const h = arr.buffer;
  if (!isBufferHandle(h))
    throw new Error(`internal: a ${arr.backend.name} array reached the webgpu backend as a webgpu array.`);
  return h.buffer;
}

/** Host data as 32-bit words (bools widen to u32). */
export function toWords(data: TypedArray, aval: ShapedArray): Float32Array | Int32Array | Uint32Array {
  switch (aval.dtype) {
    case "float32":
      return data instanceof Float32Array ? data : Float32Array.from(data as ArrayLike<number>);
    case "int32":
      return data instanceof Int32Array ? data : Int32Array.from(data as ArrayLike<number>);
    case "bool":
      return Uint32Array.from(data as ArrayLike<number>, (v) => (v ? 1 : 0));
    case "float64":
      throw float64Error();
  }
}

/**
 * Copies host data into a new device buffer (one reference). `ownData` = data is immutable and may be kept as the
 * mirror.
 */
export function uploadWords(data: TypedArray, aval: ShapedArray, ownData = false): DeviceBuffer {
  if (aval.dtype === "float64") throw float64Error();
  const ctx = gpu();
  const buf = ctx.pool.allocate(aval.size);
  const words = toWords(data, aval);
  ctx.stream.write(buf, words.length === aval.size ? words : words.subarray(0, aval.size));
  if (aval.dtype === "int32" && aval.size <= MIRROR_MAX) {
    buf.host = ownData && data instanceof Int32Array ? data : Int32Array.from(data as Int32Array);
  }
  return buf;
}

const scalarCache = new Map<string, DeviceBuffer>();
const cpuArrayCache = new WeakMap<ConcreteArray, BufferHandle>();

/**
 * A device buffer holding `arr` (borrowed: valid while `arr` is alive). CPU operands are
 * uploaded once: scalars per value, bigger arrays per array object (arrays are immutable).
 */
export function deviceBufferFor(arr: ConcreteArray): DeviceBuffer {
  if (arr.backend.name === "webgpu") return bufferOf(arr);
  if (arr.dtype === "float64") throw float64Error();
  if (arr.size === 1) {
    const v = arr.dataSync()[0]!;
    const key = `${arr.dtype}:${Object.is(v, -0) ? "-0" : v}`;
    let b = scalarCache.get(key);
    if (!b) {
      b = uploadWords(arr.dataSync(), arr.aval, true);
      if (scalarCache.size < 4096)
        scalarCache.set(key, b); // the cache keeps its reference forever
      else {
        const h = new BufferHandle(b);
        cpuArrayCache.set(arr, h);
      }
    }
    return b;
  }
  let h = cpuArrayCache.get(arr);
  if (!h) {
    h = new BufferHandle(uploadWords(arr.dataSync(), arr.aval, true));
    cpuArrayCache.set(arr, h);
  }
  return h.buffer;
}

let reportedErrors = 0;
/** Reads a webgpu array into a fresh typed array of its dtype. */
export async function readArray(arr: ConcreteArray): Promise<TypedArray> {
  const buf = bufferOf(arr);
  const ctx = gpu();
  const pending = ctx.stream.read(buf, arr.size);
  ctx.pool.collectIfGrown();
  const words = await pending;
  // Device errors (e.g. a shader the driver rejected) arrive asynchronously; the results computed
  // since may be garbage, so the first read after one fails loudly instead of returning them.
  if (ctx.errors.length > reportedErrors) {
    const fresh = ctx.errors.slice(reportedErrors);
    reportedErrors = ctx.errors.length;
    throw new Error(
      `webgpu: the device reported ${fresh.length === 1 ? "an error" : `${fresh.length} errors`}; ` +
        `results computed since may be wrong:\n${fresh.join("\n")}`,
    );
  }
  switch (arr.dtype) {
    case "float32":
      return new Float32Array(words.buffer, words.byteOffset, words.length);
    case "int32":
      return new Int32Array(words.buffer, words.byteOffset, words.length);
    case "bool":
      return Uint8Array.from(words, (w) => (w ? 1 : 0));
    case "float64":
      throw float64Error();
  }
}

export const strongAval = (a: ShapedArray): ShapedArray => (a.weak ? new ShapedArray(a.shape, a.dtype, false) : a);
