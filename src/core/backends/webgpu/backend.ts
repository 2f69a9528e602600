/** The webgpu Backend object: uploads, eager execution, async readback, freeing, adapter info. */
import type { ShapedArray } from "../../aval.js";
import type { ConcreteArray } from "../../concrete.js";
import type { TypedArray } from "../../dtype.js";
import type { Primitive } from "../../primitive.js";
import type { Backend } from "../backend.js";
import { readArray, uploadWords, deviceBufferFor, setWebGPUBackendRef } from "./arrays.js";
import { BufferHandle, isBufferHandle } from "./buffers.js";
import { gpu } from "./context.js";
import { executeEager } from "./eager.js";
import { fromTyped } from "../../create.js";
import { float64Error } from "./wgsl-lib.js";

export const webgpuBackend: Backend = {
  name: "webgpu",
  upload(data: TypedArray, aval: ShapedArray): BufferHandle {
    if (aval.dtype === "float64") throw float64Error();
    // Scalars (JS numbers moved next to device operands) share one cached buffer per value.
    if (aval.size === 1)
      return new BufferHandle(deviceBufferFor(fromTyped(data, aval.shape, aval.dtype, { backend: "cpu" })).retain());
    return new BufferHandle(uploadWords(data, aval));
  },
  execute(
    prim: Primitive,
    inputs: readonly ConcreteArray[],
    params: unknown,
    outAvals: readonly ShapedArray[],
  ): ConcreteArray[] {
    return executeEager(prim, inputs, params, outAvals);
  },
  read(arr: ConcreteArray): Promise<TypedArray> {
    return readArray(arr);
  },
  readSync(arr: ConcreteArray): TypedArray {
    throw new Error(
      `dataSync() cannot read a webgpu array (${arr.aval}): GPU readback is asynchronous. ` +
        "Use `await x.data()` (or `await x.toNdarray()`); item() and " +
        "toList() read synchronously too, so use data() for them on webgpu.",
    );
  },
  free(buffer: unknown): void {
    if (isBufferHandle(buffer)) buffer.release();
  },
  info(): Record<string, unknown> {
    const ctx = gpu();
    return { ...ctx.info, software: ctx.software, memory: ctx.pool.stats(), pipelines: ctx.pipelines.size };
  },
};
setWebGPUBackendRef(webgpuBackend);
