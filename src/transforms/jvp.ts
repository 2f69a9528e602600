/** Forward mode: JvpTrace carries (primal, tangent) pairs and applies each primitive's jvp rule. */
import type { Array } from "../core/array.js";
import type { ShapedArray } from "../core/aval.js";
import { ConcreteArray } from "../core/concrete.js";
import { isFloat } from "../core/dtype.js";
import type { Primitive } from "../core/primitive.js";
import { isZero, Zero, type Tangent } from "../core/tangent.js";
import { bind, fullRaise, Trace, Tracer, withMain, type MainTrace } from "../core/trace.js";

/** Tangents of integer/bool values are always zero; float tangents share the primal's dtype (never weak). */
export const tangentAval = (a: ShapedArray): ShapedArray => a.strong();

export class JvpTracer extends Tracer {
  constructor(
    trace: Trace,
    readonly primal: Array,
    readonly tangent: Tangent,
  ) {
    super(trace);
  }
  get aval(): ShapedArray {
    return this.primal.aval;
  }
  concrete(): ConcreteArray | null {
    const p = this.primal;
    return p instanceof ConcreteArray ? p : p instanceof Tracer ? p.concrete() : null;
  }
}

export class JvpTrace extends Trace {
  pure(x: Array): Tracer {
    return new JvpTracer(this, x, new Zero(tangentAval(x.aval)));
  }
  processPrimitive(prim: Primitive, tracers: Tracer[], params: unknown): Array[] {
    const ts = tracers as JvpTracer[];
    const primals = ts.map((t) => t.primal);
    const tangents = ts.map((t) => t.tangent);
    if (tangents.every(isZero)) {
      return bind(prim, primals, params).map((o) => new JvpTracer(this, o, new Zero(tangentAval(o.aval))));
    }
    const [po, to] = prim.jvp(primals, tangents, params);
    return po.map((p, i) => {
      const t = to[i]!;
      if (!isZero(t) && !t.aval.equals(tangentAval(p.aval))) {
        throw new Error(`internal: jvp rule of ${prim.name} produced tangent ${t.aval} for primal ${p.aval}.`);
      }
      return new JvpTracer(this, p, isFloat(p.dtype) ? t : new Zero(tangentAval(p.aval)));
    });
  }
}

/**
 * Run f on (primal, tangent) pairs. Returns primal outputs and tangent outputs (symbolic
 * zeros kept). Used by `jvp` (concrete tangents) and by `linearize` (staged tangents).
 */
export function jvpFlat(
  f: (...xs: Array[]) => Array[],
  primals: readonly Array[],
  tangents: readonly Tangent[],
): [Array[], Tangent[]] {
  return withMain(JvpTrace, "jvp", null, (main: MainTrace) => {
    const trace = new JvpTrace(main);
    const ins = primals.map((p, i) => new JvpTracer(trace, p, tangents[i]!));
    const outs = f(...ins).map((o) => fullRaise(trace, o) as JvpTracer);
    return [outs.map((o) => o.primal), outs.map((o) => o.tangent)];
  });
}
