import { ShapedArray } from "./aval.js";
import { ConcreteArray } from "./concrete.js";
import { typedArrayFor, type DType } from "./dtype.js";
import { cpuBackend } from "./backends/cpu/cpu.js";

/** Cached constants are shared, so disposing one is a no-op. */
class ConstantArray extends ConcreteArray {
  dispose(): void {}
}
const cache = new Map<string, ConcreteArray>();

/** A scalar constant (shape []) on the CPU; backends accept CPU scalars as inputs. Cached: arrays are immutable. */
export function scalar(value: number | boolean, dtype: DType, weak = false): ConcreteArray {
  const v = typeof value === "boolean" ? (value ? 1 : 0) : value;
  const key = `${dtype}:${weak}:${Object.is(v, -0) ? "-0" : v}`;
  let c = cache.get(key);
  if (!c) {
    const buf = typedArrayFor(dtype, 1);
    buf[0] = v;
    c = new ConstantArray(new ShapedArray([], dtype, weak), cpuBackend, buf);
    if (cache.size < 4096) cache.set(key, c);
  }
  return c;
}
