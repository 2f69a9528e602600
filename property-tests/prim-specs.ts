/**
 * The per-primitive spec table (JAX's LAX_GRAD_OPS, made exhaustive): one entry for EVERY
 * primitive in the registry. `PrimName` lists the registered names; the table's type makes tsc
 * reject a missing entry, and `missingSpecs()` (checked in prims-grad.prop.test.ts) fails at
 * runtime when a primitive is registered that is not in `PrimName`. A new primitive therefore
 * cannot land without a spec saying how its gradients are tested.
 */
import "../src/index.js"; // registers every primitive, including the higher-order ones in src/transforms
import { allPrimitives } from "../src/core/primitive.js";
import { elementwiseSpecs } from "./specs-elementwise.js";
import { higherOrderSpecs } from "./specs-higher-order.js";
import { indexLinalgSpecs } from "./specs-index-linalg.js";
import { linalgDecompSpecs } from "./specs-linalg-decomp.js";
import { renderSpecs } from "./specs-render.js";
import { structuralSpecs } from "./specs-structural.js";
import type { PrimSpec } from "./spec-types.js";

export type PrimName =
  // elementwise
  | "neg"
  | "abs"
  | "sign"
  | "exp"
  | "log"
  | "log1p"
  | "expm1"
  | "sin"
  | "cos"
  | "tan"
  | "tanh"
  | "asin"
  | "acos"
  | "atan"
  | "sqrt"
  | "rsqrt"
  | "floor"
  | "ceil"
  | "round"
  | "isfinite"
  | "not"
  | "erf"
  | "erfinv"
  | "add"
  | "sub"
  | "mul"
  | "div"
  | "rem"
  | "pow"
  | "max"
  | "min"
  | "atan2"
  | "eq"
  | "ne"
  | "lt"
  | "le"
  | "gt"
  | "ge"
  | "and"
  | "or"
  | "select"
  | "convert_element_type"
  | "stop_gradient"
  // reductions
  | "reduce_sum"
  | "reduce_max"
  | "reduce_min"
  | "reduce_prod"
  | "argmax"
  | "argmin"
  | "cumsum"
  // movement
  | "broadcast_in_dim"
  | "reshape"
  | "transpose"
  | "slice"
  | "pad"
  | "concatenate"
  | "rev"
  | "dynamic_slice"
  | "dynamic_update_slice"
  // indexing, random, contractions
  | "iota"
  | "literal"
  | "gather"
  | "scatter_add"
  | "random_bits"
  | "dot_general"
  | "conv2d"
  // np.linalg
  | "linalg_solve"
  | "slogdet"
  | "cholesky"
  // higher-order and internal
  | "jit_call"
  | "scan"
  | "cond"
  | "while"
  | "checkpoint"
  | "remat_lin"
  | "custom_vjp_call"
  | "custom_lin"
  | "custom_jvp_call"
  | "debug_print"
  // fused rasterizers
  | "softras_geometry"
  | "softras_geometry_jvp"
  | "softras_geometry_vjp"
  | "softras_colour"
  | "softras_colour_jvp"
  | "softras_colour_vjp"
  | "dibr_geometry"
  | "dibr_geometry_jvp"
  | "dibr_geometry_vjp";

export const primSpecs: Record<PrimName, PrimSpec | readonly PrimSpec[]> = {
  ...elementwiseSpecs,
  ...structuralSpecs,
  ...indexLinalgSpecs,
  ...linalgDecompSpecs,
  ...higherOrderSpecs,
  ...renderSpecs,
};

/** Every spec of every primitive, flattened, with its primitive's name. */
export const specEntries = (): [PrimName, PrimSpec][] =>
  (Object.entries(primSpecs) as [PrimName, PrimSpec | readonly PrimSpec[]][]).flatMap(([name, s]) =>
    (globalThis.Array.isArray(s) ? (s as readonly PrimSpec[]) : [s as PrimSpec]).map(
      (x) => [name, x] as [PrimName, PrimSpec],
    ),
  );

/** Registered primitives without a spec (must be empty). */
export const missingSpecs = (): string[] =>
  allPrimitives()
    .map((p) => p.name)
    .filter((n) => !(n in primSpecs));
/** Specs naming a primitive that is not registered (stale entries; must be empty). */
export const staleSpecs = (): string[] => {
  const names = new Set(allPrimitives().map((p) => p.name));
  return Object.keys(primSpecs).filter((n) => !names.has(n));
};
