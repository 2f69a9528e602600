/** Reverse mode: the backward pass over a linear IR (each equation's transpose rule, cotangents accumulated). */
import type { Array } from "../core/array.js";
import { closeOverConsts, traceToIR, type IR, type Var } from "../core/ir.js";
import { scalar } from "../core/constants.js";
import { add, broadcastTo } from "../core/prims/index.js";
import { isUndef, isZero, UndefPrimal, Zero, type Tangent } from "../core/tangent.js";
import { bind } from "../core/trace.js";

/**
 * Transpose `ir` with respect to its inputs that have no known value (`knownIns[i] === null`).
 * Equations whose inputs are all known are evaluated forward first (residual computations);
 * the rest must be linear in their unknown inputs. Returns cotangents for the unknown inputs.
 */
export function backwardPass(
  ir: IR,
  consts: readonly Array[],
  knownIns: readonly (Array | null)[],
  cts: readonly Tangent[],
): Tangent[] {
  const known = new Map<Var, Array>();
  ir.constVars.forEach((v, i) => known.set(v, consts[i]!));
  ir.inVars.forEach((v, i) => {
    const k = knownIns[i];
    if (k) known.set(v, k);
  });
  const linear = [];
  for (const e of ir.eqns) {
    if (e.inputs.every((v) => known.has(v))) {
      const outs = bind(
        e.prim,
        e.inputs.map((v) => known.get(v)!),
        e.params,
      );
      e.outs.forEach((v, i) => known.set(v, outs[i]!));
    } else linear.push(e);
  }
  const ctEnv = new Map<Var, Array>();
  const addCt = (v: Var, ct: Tangent | null | undefined, who: string): void => {
    if (!ct || isZero(ct) || known.has(v)) return;
    if (
      !ct.aval.equals(v.aval.strong()) &&
      !(ct.aval.dtype === v.aval.dtype && ct.shape.join() === v.aval.shape.join())
    ) {
      throw new Error(`internal: transpose of ${who} produced cotangent ${ct.aval} for a value of type ${v.aval}.`);
    }
    const prev = ctEnv.get(v);
    ctEnv.set(v, prev ? add(prev, ct) : ct);
  };
  ir.outs.forEach((v, i) => addCt(v, cts[i], "the output"));
  for (let k = linear.length - 1; k >= 0; k--) {
    const e = linear[k]!;
    const ctsOut = e.outs.map((v) => {
      const c = ctEnv.get(v);
      ctEnv.delete(v);
      return c ?? new Zero(v.aval.strong());
    });
    if (ctsOut.every(isZero)) continue;
    if (!e.prim.transpose) {
      throw new Error(
        `reverse-mode differentiation reached ${e.prim.name}, which has no transpose rule: ` +
          (e.prim.name === "while"
            ? "lax.whileLoop is not reverse-differentiable; use lax.scan " +
              "with a fixed length, or lax.foriLoop with static bounds."
            : "this primitive was applied non-linearly to a tangent (a bug " +
              "in a jvp rule or a customVjp), so it cannot be transposed."),
      );
    }
    const args = e.inputs.map((v) => known.get(v) ?? new UndefPrimal(v.aval));
    const ctsIn = e.prim.transpose(ctsOut, args, e.params);
    e.inputs.forEach((v, i) => {
      if (isUndef(args[i])) addCt(v, ctsIn[i], e.prim.name);
    });
  }
  return ir.inVars.map((v, i) =>
    knownIns[i] ? new Zero(v.aval.strong()) : (ctEnv.get(v) ?? new Zero(v.aval.strong())),
  );
}

/**
 * The transpose of `ir` as an IR: inputs [consts..., known inputs (in order)..., output
 * cotangents...], outputs the cotangents of the unknown inputs (instantiated). `consts` are
 * constants created while tracing the transpose rules.
 */
export function transposeIR(ir: IR, knownMask: readonly boolean[]): { ir: IR; consts: Array[] } {
  const knownAvals = ir.inAvals.filter((_, i) => knownMask[i]);
  const ctAvals = ir.outAvals.map((a) => a.strong());
  const closed = traceToIR(
    (...xs: Array[]) => {
      let k = 0;
      const knownIns = ir.inVars.map((_, i) => (knownMask[i] ? xs[k++]! : null));
      const res = backwardPass(ir, [], knownIns, xs.slice(k));
      return res
        .filter((_, i) => !knownMask[i])
        .map((t) => (isZero(t) ? broadcastTo(scalar(0, t.aval.dtype), t.aval.shape) : t));
    },
    [...knownAvals, ...ctAvals],
    "transpose",
  );
  return { ir: closeOverConsts(closed.ir), consts: [...closed.consts] };
}
