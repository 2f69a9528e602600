/** Whether a program contains an effect (debug.print), directly or in a nested body (jit, scan, cond…). */
import { IR } from "./ir.js";

const memo = new WeakMap<IR, boolean>();
const nestedIRs = (v: unknown): IR[] =>
  v instanceof IR ? [v] : globalThis.Array.isArray(v) ? v.flatMap(nestedIRs) : [];

export function hasEffects(ir: IR): boolean {
  let r = memo.get(ir);
  if (r === undefined) {
    r = ir.eqns.some(
      (e) =>
        e.prim.effect === true ||
        Object.values((e.params ?? {}) as Record<string, unknown>).some((v) => nestedIRs(v).some(hasEffects)),
    );
    memo.set(ir, r);
  }
  return r;
}
