/**
 * Splitting a staged JVP into its primal ("known") and tangent ("unknown") halves by data
 * dependence on the tangent inputs (autodidax's partial_eval_jaxpr). Higher-order primitives
 * (jit, scan, cond) use it in their jvp rules to emit a primal equation, which runs now, and a
 * tangent equation, which is linear in the tangents and so can be transposed.
 */
import type { Array } from "../core/array.js";
import type { ShapedArray } from "../core/aval.js";
import { closeOverConsts, evalIR, IR, traceToIR, type Eqn, type Var } from "../core/ir.js";
import { dce } from "../core/compile/dce.js";
import { isZero, Zero, type Tangent } from "../core/tangent.js";
import { jvpFlat, tangentAval } from "./jvp.js";
import { instantiate } from "./vjp.js";

export interface SplitIR {
  /** primal inputs → [primal outputs, residuals] */
  readonly known: IR;
  /** [residuals, tangent inputs] → tangent outputs */
  readonly unknown: IR;
  /** For each residual, the index of the primal input it is (or -1 when it is computed). */
  readonly resFromInput: readonly number[];
}

/** Split `ir` whose inputs are [primals (nKnownIn), tangents] and outputs [primals (nKnownOut), tangents]. */
export function partialEval(ir: IR, nKnownIn: number, nKnownOut: number): SplitIR {
  if (ir.constVars.length)
    throw new Error("internal: partialEval expects an IR without constVars (use closeOverConsts).");
  const unknownVars = new Set<Var>(ir.inVars.slice(nKnownIn));
  const known: Eqn[] = [],
    unknown: Eqn[] = [];
  for (const e of ir.eqns) {
    if (e.inputs.some((v) => unknownVars.has(v))) {
      unknown.push(e);
      e.outs.forEach((v) => unknownVars.add(v));
    } else known.push(e);
  }
  const primalOuts = ir.outs.slice(0, nKnownOut),
    tangentOuts = ir.outs.slice(nKnownOut);
  for (const v of primalOuts)
    if (unknownVars.has(v)) throw new Error("internal: a primal output depends on tangents (a jvp rule mixed them).");
  const res: Var[] = [];
  const seen = new Set<Var>();
  const addRes = (v: Var) => {
    if (!unknownVars.has(v) && !seen.has(v)) {
      seen.add(v);
      res.push(v);
    }
  };
  for (const e of unknown) e.inputs.forEach(addRes);
  tangentOuts.forEach(addRes);
  const knownIR = dce(new IR(ir.inVars.slice(0, nKnownIn), [], known, [...primalOuts, ...res]));
  const unknownIR = new IR([...res, ...ir.inVars.slice(nKnownIn)], [], unknown, tangentOuts);
  const inputIndex = new Map(ir.inVars.slice(0, nKnownIn).map((v, i) => [v, i]));
  return { known: knownIR, unknown: unknownIR, resFromInput: res.map((v) => inputIndex.get(v) ?? -1) };
}

/**
 * The JVP of an IR as an IR: inputs [primals..., tangents for the `nonzero` inputs...],
 * outputs [primal outs..., tangent outs (instantiated)...]. Constants captured while tracing
 * the rules become leading inputs (returned as `consts`).
 */
export function jvpIR(ir: IR, nonzero: readonly boolean[]): { ir: IR; consts: Array[] } {
  const tanAvals = ir.inAvals.filter((_, i) => nonzero[i]).map(tangentAval);
  const closed = traceToIR(
    (...xs: Array[]) => {
      const n = ir.inVars.length;
      const primals = xs.slice(0, n);
      let k = n;
      const tangents: Tangent[] = primals.map((p, i) => (nonzero[i] ? xs[k++]! : zeroTangent(p.aval)));
      const [outs, touts] = jvpFlat((...ys) => evalIR(ir, [], ys), primals, tangents);
      return [...outs, ...touts.map((t) => (isZero(t) ? instantiate(t) : t))];
    },
    [...ir.inAvals, ...tanAvals],
    "jvp",
  );
  return { ir: closeOverConsts(closed.ir), consts: [...closed.consts] };
}
const zeroTangent = (a: ShapedArray): Zero => new Zero(tangentAval(a));

/** An IR with its inputs reordered (outputs unchanged). */
export const permuteInputs = (ir: IR, order: readonly number[]): IR =>
  new IR(
    order.map((i) => ir.inVars[i]!),
    [],
    ir.eqns,
    ir.outs,
  );

/**
 * `partialEval` that stores nothing computed: the residuals are the primal inputs the tangent
 * half reads, and the tangent half recomputes every primal value it needs from them (its
 * transpose evaluates those equations forward, see transpose.ts). For loop bodies whose
 * residuals cost more memory traffic than their recomputation.
 */
export function partialEvalRemat(ir: IR, nKnownIn: number, nKnownOut: number): SplitIR {
  if (ir.constVars.length)
    throw new Error("internal: partialEvalRemat expects an IR without constVars (use closeOverConsts).");
  const primalIns = ir.inVars.slice(0, nKnownIn),
    tangentIns = ir.inVars.slice(nKnownIn);
  // The known half runs the effects (debug.print) once; the tangent half's recomputation does not.
  const tangent = dce(new IR(ir.inVars, [], ir.eqns, ir.outs.slice(nKnownOut)), false);
  const read = new Set<Var>([...tangent.eqns.flatMap((e) => e.inputs), ...tangent.outs]);
  const resIdx = primalIns.flatMap((v, i) => (read.has(v) ? [i] : []));
  const knownIR = dce(
    new IR(primalIns, [], ir.eqns, [...ir.outs.slice(0, nKnownOut), ...resIdx.map((i) => primalIns[i]!)]),
  );
  const unknownIR = new IR([...resIdx.map((i) => primalIns[i]!), ...tangentIns], [], tangent.eqns, tangent.outs);
  return { known: knownIR, unknown: unknownIR, resFromInput: resIdx };
}
