import { ShapedArray } from "./aval.js";
import { ConcreteArray } from "./concrete.js";
import type { DType, TypedArray } from "./dtype.js";
import { getBackend, type BackendName } from "./backends/backend.js";

/** A concrete array holding a copy of `data` on a backend (default: the current default backend). */
export function fromTyped(
  data: TypedArray,
  shape: readonly number[],
  dtype: DType,
  opts: { backend?: BackendName; weak?: boolean } = {},
): ConcreteArray {
  const aval = new ShapedArray(shape, dtype, opts.weak ?? false);
  const b = getBackend(opts.backend);
  if (dtype === "float64" && b.name !== "cpu") {
    throw new Error(
      `float64 arrays exist on the CPU backend only (requested on ${b.name}); use float32 or { backend: "cpu" }.`,
    );
  }
  return new ConcreteArray(aval, b, b.upload(data, aval));
}
