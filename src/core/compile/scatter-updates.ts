import { IR, Var, type Eqn } from "../ir.js";
import { convertP } from "../prims/elementwise.js";
import { producersAndUses, scatterFusesWithUpdates, type PlanOptions } from "./plan.js";

/**
 * The CPU plan fuses a scatter_add into the kernel that computes its updates (one pass, no
 * routine call). When the updates are not such a kernel's private value — a program input, a
 * value used elsewhere too, a routine's result — give the scatter a kernel of its own: a copy of
 * the updates (a same-dtype convert) that only it reads. Small scatters in scan bodies otherwise
 * run as a routine call each step.
 */
export function isolateScatterUpdates(ir: IR, opts: PlanOptions): IR {
  const { producer, uses } = producersAndUses(ir);
  const eqns: Eqn[] = [];
  for (const e of ir.eqns) {
    const u = e.inputs[2];
    if (
      e.prim.name === "scatter_add" &&
      u &&
      u.aval.dtype !== "bool" &&
      u !== e.inputs[0] &&
      !scatterFusesWithUpdates(e, producer, uses, opts)
    ) {
      const copy = new Var(u.aval);
      eqns.push({ prim: convertP, inputs: [u], params: { dtype: u.aval.dtype, weak: u.aval.weak }, outs: [copy] });
      eqns.push({ ...e, inputs: e.inputs.map((v, i) => (i === 2 ? copy : v)) });
    } else eqns.push(e);
  }
  return new IR(ir.inVars, ir.constVars, eqns, ir.outs);
}
