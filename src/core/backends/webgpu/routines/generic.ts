/**
 * Higher-order primitives (cond, while, custom_lin, remat_lin, ...) run through `bind` on
 * webgpu arrays: their `evaluate` rules call runIR, which comes back to the webgpu runner for
 * each body. Work stays in stream order; only `while` needs its predicate on the host, and it
 * says so (no synchronous reads on webgpu).
 */
import type { ConcreteArray } from "../../../concrete.js";
import type { Eqn } from "../../../ir.js";
import { bind } from "../../../trace.js";
import { deviceBufferFor, wrapBuffer } from "../arrays.js";
import type { Routine } from "./types.js";

export function genericRoutine(eqn: Eqn): Routine {
  return (inputs) => {
    const args = inputs.map((b, i) => wrapBuffer(eqn.inputs[i]!.aval.strong(), b.retain()));
    try {
      const outs = bind(eqn.prim, args, eqn.params) as ConcreteArray[];
      const bufs = outs.map((o) => deviceBufferFor(o).retain());
      for (const o of new Set(outs)) if (o.backend.name === "webgpu") o.dispose();
      return bufs;
    } finally {
      for (const a of args) a.dispose();
    }
  };
}
