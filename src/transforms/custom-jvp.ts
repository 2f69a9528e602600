/**
 * customJvp: a function with a user-given forward-mode rule (JAX's custom_jvp). The rule runs
 * inside the jvp trace, so under grad it is linearized and transposed like any other code: the
 * tangent output must be linear in the tangents (products with primal-derived values, sums,
 * reshapes…). Primal evaluation, vmap and jit see f itself; vmap batches f and the rule alike.
 */
import type { Array } from "../core/array.js";
import { closeOverConsts, evalIR, traceToIR, type IR } from "../core/ir.js";
import { definePrimitive, type Primitive } from "../core/primitive.js";
import { isZero } from "../core/tangent.js";
import { bind } from "../core/trace.js";
import { flatten, treedefEqual, treedefString, unflatten } from "../core/tree.js";
import { flattenArgs, flattenFun, leafToArray } from "./api-util.js";
import { batchAll } from "./custom.js";
import { instantiate } from "./vjp.js";
import { vmapFlat, vmapIR } from "./vmap.js";

interface CustomJvpParams {
  readonly ir: IR; // f, consts first
  readonly nConsts: number;
  /** The rule on flat leaves: (primals, tangents) → [outputs, output tangents]. */
  readonly rule: (xs: Array[], ts: Array[]) => [Array[], Array[]];
}

export const customJvpCallP: Primitive<CustomJvpParams> = definePrimitive<CustomJvpParams>({
  name: "custom_jvp_call",
  shape: (_a, p) => p.ir.outAvals,
  evaluate: (args, p) => evalIR(p.ir, [], args),
  jvp: (primals, tangents, p) => {
    if (tangents.slice(0, p.nConsts).some((t) => !isZero(t))) {
      throw new Error(
        "customJvp: the function closes over a value that is being differentiated; " +
          "pass that value as an argument instead.",
      );
    }
    const xs = primals.slice(p.nConsts);
    return p.rule(xs as Array[], tangents.slice(p.nConsts).map(instantiate));
  },
  vmap: (args, dims, p, n) => {
    const batched = batchAll(args, dims, n);
    const zeros = (k: number) => new globalThis.Array<number>(k).fill(0);
    const rule = (xs: Array[], ts: Array[]): [Array[], Array[]] => {
      let nOut = 0;
      const flat = vmapFlat(
        (...ys) => {
          const [o, t] = p.rule(ys.slice(0, xs.length), ys.slice(xs.length));
          nOut = o.length;
          return [...o, ...t];
        },
        [...xs, ...ts],
        zeros(xs.length + ts.length),
        zeros,
        n,
      );
      return [flat.slice(0, nOut), flat.slice(nOut)];
    };
    const v = vmapIR(
      p.ir,
      batched.map(() => true),
      n,
    );
    const outs = bind(customJvpCallP, [...v.consts, ...batched], {
      ir: v.ir,
      nConsts: v.consts.length + p.nConsts,
      rule,
    });
    return [outs, outs.map(() => 0)];
  },
  printParams: () => "",
});

/**
 * customJvp(f, jvpRule): f with a user-defined forward-mode derivative (JAX's custom_jvp).
 * `jvpRule(primals, tangents)` gets f's arguments and one tangent per argument (same
 * structures; zeros where an argument is not differentiated) and returns
 * `[f(...primals), tangentOut]`. grad, vjp and jacrev work too: the rule's tangent output is
 * linearized and transposed, so it must be linear in the tangents. Use it for numerically
 * stable derivatives (log1p(exp x)), for derivatives at singular points, or to cut a
 * derivative through an iterative solver. The rule must not close over values being
 * differentiated: pass them as arguments.
 */
export function customJvp<F extends (...args: any[]) => any>(
  f: F,
  jvpRule: (primals: Parameters<F>, tangents: Parameters<F>) => [ReturnType<F>, ReturnType<F>],
): F {
  return ((...args: unknown[]) => {
    const [leaves, inDef] = flattenArgs(args, "customJvp");
    const flat = flattenFun(f, inDef, "customJvp");
    const closed = traceToIR(
      flat.f,
      leaves.map((l) => l.aval),
      "customJvp",
    );
    const outDef = flat.outDef();
    const rule = (xs: Array[], ts: Array[]): [Array[], Array[]] => {
      const r = jvpRule(unflatten(inDef, xs) as Parameters<F>, unflatten(inDef, ts) as Parameters<F>);
      if (!globalThis.Array.isArray(r) || r.length !== 2)
        throw new Error("customJvp: the jvp rule must return [primalOut, tangentOut].");
      const [ol, od] = flatten(r[0]);
      const [tl, td] = flatten(r[1]);
      if (!treedefEqual(od, outDef))
        throw new Error(
          `customJvp: the rule's primal output has structure ${treedefString(od)}, f's has ${treedefString(outDef)}.`,
        );
      if (!treedefEqual(td, outDef))
        throw new Error(
          `customJvp: the rule's tangent output has structure ${treedefString(td)}, ` +
            `f's output has ${treedefString(outDef)}.`,
        );
      const outs = ol.map((l) => leafToArray(l, "customJvp rule output"));
      const touts = tl.map((l, i) => {
        const t = leafToArray(l, "customJvp rule tangent");
        const o = closed.ir.outAvals[i]!;
        if (t.shape.join() !== o.shape.join())
          throw new Error(
            `customJvp: the rule's tangent output ${i} has shape [${t.shape}], f's output has [${o.shape}].`,
          );
        return t.dtype === o.dtype ? t : t.astype(o.dtype);
      });
      return [outs, touts];
    };
    const outs = bind(customJvpCallP, [...closed.consts, ...leaves], {
      ir: closeOverConsts(closed.ir),
      nConsts: closed.consts.length,
      rule,
    });
    return unflatten(outDef, outs);
  }) as F;
}
