/**
 * Scalar literals in staged programs: a concrete CPU scalar captured while tracing becomes a
 * `literal` equation (not an input), so the compiler sees its value and folds it
 * (x + 0 → x, x · 1 → x, index bounds, ...).
 */
import { ShapedArray } from "../aval.js";
import { scalar } from "../constants.js";
import type { DType } from "../dtype.js";
import { definePrimitive, type Primitive } from "../primitive.js";
import { Zero } from "../tangent.js";
import { viewOf } from "../kernel/view.js";
import { host } from "./_helpers.js";
import { typedArrayFor } from "../dtype.js";

export interface LiteralParams {
  readonly value: number;
  readonly dtype: DType;
  readonly weak: boolean;
}
export const literalP: Primitive<LiteralParams> = definePrimitive<LiteralParams>({
  name: "literal",
  shape: (_a, p) => [new ShapedArray([], p.dtype, p.weak)],
  impl: (_a, p) => {
    const d = typedArrayFor(p.dtype, 1);
    d[0] = p.value;
    return [host(d, [], p.dtype)];
  },
  // Evaluated outside a trace, a literal is the same CPU scalar constant a JS number becomes (which
  // travels to other devices on use), whatever the default backend is: float64 literals in CPU
  // programs must not land on webgpu.
  evaluate: (_a, p) => [scalar(p.value, p.dtype, p.weak)],
  jvp: (_x, _t, p) => [[scalar(p.value, p.dtype, p.weak)], [new Zero(new ShapedArray([], p.dtype))]],
  vmap: () => {
    throw new Error("internal: literal has no inputs to batch.");
  },
  lower: (_i, p, [out], g) => [viewOf(out!, () => g.const(p.value, p.dtype))],
  printParams: (p) => `${Object.is(p.value, -0) ? "-0" : p.value}`,
});
