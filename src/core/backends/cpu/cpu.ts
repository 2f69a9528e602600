import { ShapedArray } from "../../aval.js";
import { ConcreteArray } from "../../concrete.js";
import { typedArrayFor, type TypedArray } from "../../dtype.js";
import type { Primitive } from "../../primitive.js";
import { registerBackend, type Backend, type HostArray } from "../backend.js";

/** The CPU backend: buffers are typed arrays; primitives run their reference `impl`. */
export const cpuBackend: Backend = {
  name: "cpu",
  upload(data: TypedArray, aval: ShapedArray): TypedArray {
    const buf = typedArrayFor(aval.dtype, aval.size);
    buf.set(data as never);
    return buf;
  },
  execute(
    prim: Primitive,
    inputs: readonly ConcreteArray[],
    params: unknown,
    outAvals: readonly ShapedArray[],
  ): ConcreteArray[] {
    if (!prim.impl) throw new Error(`internal: primitive ${prim.name} has no CPU implementation.`);
    const hosts: HostArray[] = inputs.map((x) => ({ data: x.buffer as TypedArray, shape: x.shape, dtype: x.dtype }));
    const outs = prim.impl(hosts, params, outAvals);
    return outs.map((o, i) => {
      const av = outAvals[i]!;
      if (o.data.length !== av.size)
        throw new Error(`internal: ${prim.name} impl returned ${o.data.length} elements for ${av}.`);
      return new ConcreteArray(av, cpuBackend, o.data);
    });
  },
  async read(arr: ConcreteArray): Promise<TypedArray> {
    return (arr.buffer as TypedArray).slice();
  },
  readSync(arr: ConcreteArray): TypedArray {
    return (arr.buffer as TypedArray).slice();
  },
  free(): void {},
  info: () => ({ name: "cpu", description: "typed-array reference backend (float32, float64, int32, bool)" }),
};
registerBackend(cpuBackend);

/** Wraps host data (no copy) as a CPU array. */
export const fromHost = (h: HostArray, weak = false): ConcreteArray =>
  new ConcreteArray(new ShapedArray(h.shape, h.dtype, weak), cpuBackend, h.data);
