import { ShapedArray } from "./aval.js";
import { ConcreteArray } from "./concrete.js";
import { typedArrayFor, type DType } from "./dtype.js";
import { cpuBackend } from "./backends/cpu/cpu.js";

/**
 * A cached scalar constant. Shared, so disposing one is a no-op. `exact` keeps the JS number it
 * was made from, so a weak literal promoted to float64 keeps its full precision (0.1 stays 0.1).
 */
export class ConstantArray extends ConcreteArray {
  constructor(
    aval: ShapedArray,
    backend: typeof cpuBackend,
    buffer: unknown,
    readonly exact: number,
  ) {
    super(aval, backend, buffer);
  }
  dispose(): void {}
}
/** The exact value of a scalar literal (a JS number's own value for weak constants). */
export const exactValue = (x: ConcreteArray): number => (x instanceof ConstantArray ? x.exact : x.dataSync()[0]!);
const cache = new Map<string, ConcreteArray>();

/** A scalar constant (shape []) on the CPU; backends accept CPU scalars as inputs. Cached: arrays are immutable. */
export function scalar(value: number | boolean, dtype: DType, weak = false): ConcreteArray {
  const v = typeof value === "boolean" ? (value ? 1 : 0) : value;
  const key = `${dtype}:${weak}:${Object.is(v, -0) ? "-0" : v}`;
  let c = cache.get(key);
  if (!c) {
    const buf = typedArrayFor(dtype, 1);
    buf[0] = v;
    c = new ConstantArray(new ShapedArray([], dtype, weak), cpuBackend, buf, v);
    if (cache.size < 4096) cache.set(key, c);
  }
  return c;
}
