import { IR, type Eqn, type Var } from "../ir.js";

/** Drop equations that no output needs; effects (debug.print) stay unless `keepEffects` is false. */
export function dce(ir: IR, keepEffects = true): IR {
  const live = new Set<Var>(ir.outs);
  const kept: Eqn[] = [];
  for (let i = ir.eqns.length - 1; i >= 0; i--) {
    const e = ir.eqns[i]!;
    if ((keepEffects && e.prim.effect) || e.outs.some((v) => live.has(v))) {
      kept.push(e);
      e.inputs.forEach((v) => live.add(v));
    }
  }
  return new IR(ir.inVars, ir.constVars, kept.reverse(), ir.outs);
}
