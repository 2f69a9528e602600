/**
 * The staged program (JAX's jaxpr): typed variables, one equation per primitive application.
 * `IRTrace` records equations; `evalIR` replays them through `bind` at whatever trace level
 * is current, which is how every transform applies to staged code.
 */
import type { Array } from "./array.js";
import type { ShapedArray } from "./aval.js";
import { ConcreteArray } from "./concrete.js";
import type { Primitive } from "./primitive.js";
import { bind, fullRaise, Trace, Tracer, withMain, type MainTrace } from "./trace.js";
import { literalP } from "./prims/literal.js";
import { exactValue } from "./constants.js";

let nextVarId = 0;
export class Var {
  readonly id = nextVarId++;
  constructor(readonly aval: ShapedArray) {}
}

export interface Eqn {
  readonly prim: Primitive;
  readonly inputs: readonly Var[];
  readonly params: unknown;
  readonly outs: readonly Var[];
}

/** A program: consts come first as inputs bound to captured values (see ClosedIR). */
export class IR {
  constructor(
    readonly inVars: readonly Var[],
    readonly constVars: readonly Var[],
    readonly eqns: readonly Eqn[],
    readonly outs: readonly Var[],
  ) {}
  get inAvals(): ShapedArray[] {
    return this.inVars.map((v) => v.aval);
  }
  get outAvals(): ShapedArray[] {
    return this.outs.map((v) => v.aval);
  }
  toString(): string {
    return printIR(this);
  }
}

/** An IR with values for its constVars (captured arrays or outer tracers). */
export interface ClosedIR {
  readonly ir: IR;
  readonly consts: readonly Array[];
}

/** Evaluate an IR by binding each equation at the current trace level. */
export function evalIR(ir: IR, consts: readonly Array[], args: readonly Array[]): Array[] {
  if (args.length !== ir.inVars.length)
    throw new Error(`internal: evalIR got ${args.length} args for ${ir.inVars.length} inputs.`);
  const env = new Map<Var, Array>();
  ir.constVars.forEach((v, i) => env.set(v, consts[i]!));
  ir.inVars.forEach((v, i) => env.set(v, args[i]!));
  const read = (v: Var): Array => {
    const x = env.get(v);
    if (!x) throw new Error(`internal: IR variable ${v.id} (${v.aval}) used before definition.`);
    return x;
  };
  for (const e of ir.eqns) {
    const outs = bind(e.prim, e.inputs.map(read), e.params);
    e.outs.forEach((v, i) => env.set(v, outs[i]!));
  }
  return ir.outs.map(read);
}

/**
 * Per-IR memo for derived programs (jvp splits, transposes, batched forms): keyed by the IR
 * object, so a cached program is reused (and its compiled code) as long as the IR lives.
 */
const derivedTable = new WeakMap<IR, Map<string, unknown>>();
export function memoOnIR<T>(ir: IR, key: string, make: () => T): T {
  let m = derivedTable.get(ir);
  if (!m) derivedTable.set(ir, (m = new Map()));
  if (!m.has(key)) m.set(key, make());
  return m.get(key) as T;
}

/** Move constVars to the front of inVars (for bodies of higher-order primitives, whose consts become operands). */
export const closeOverConsts = (ir: IR): IR => new IR([...ir.constVars, ...ir.inVars], [], ir.eqns, ir.outs);

// ---------------------------------------------------------------- staging trace

export class IRTracer extends Tracer {
  constructor(
    trace: Trace,
    readonly v: Var,
  ) {
    super(trace);
  }
  get aval(): ShapedArray {
    return this.v.aval;
  }
}

export class IRBuilder {
  readonly eqns: Eqn[] = [];
  readonly constOf = new Map<Array, IRTracer>();
  readonly constVals = new Map<Var, Array>();
  newInput(trace: Trace, aval: ShapedArray): IRTracer {
    return new IRTracer(trace, new Var(aval));
  }
  private readonly literals = new Map<string, IRTracer>();
  /**
   * Staged form of a value from outside (a concrete array or an outer-level tracer): a constVar,
   * or for a concrete CPU scalar a `literal` equation so compilers see its value.
   */
  constTracer(trace: Trace, x: Array): IRTracer {
    let t = this.constOf.get(x);
    if (t) return t;
    if (x instanceof ConcreteArray && x.ndim === 0 && x.backend.name === "cpu" && !x.disposed) {
      const value = exactValue(x);
      const key = `${x.dtype}:${x.aval.weak}:${Object.is(value, -0) ? "-0" : value}`;
      t = this.literals.get(key);
      if (!t) {
        t = new IRTracer(trace, new Var(x.aval));
        this.eqns.push({
          prim: literalP,
          inputs: [],
          params: { value, dtype: x.dtype, weak: x.aval.weak },
          outs: [t.v],
        });
        this.literals.set(key, t);
      }
      return t;
    }
    t = new IRTracer(trace, new Var(x.aval));
    this.constOf.set(x, t);
    this.constVals.set(t.v, x);
    return t;
  }
  /** Assemble the program computing `outs` from `ins`, dropping dead equations. */
  build(trace: Trace, ins: readonly IRTracer[], outs: readonly Array[]): ClosedIR {
    const outVars = outs.map((o) => (fullRaise(trace, o) as IRTracer).v);
    const live = new Set<Var>(outVars);
    const kept: Eqn[] = [];
    for (let i = this.eqns.length - 1; i >= 0; i--) {
      const e = this.eqns[i]!;
      if (e.prim.effect || e.outs.some((v) => live.has(v))) {
        kept.push(e);
        for (const v of e.inputs) live.add(v);
      }
    }
    kept.reverse();
    const constVars = [...this.constVals.keys()].filter((v) => live.has(v));
    const ir = new IR(
      ins.map((t) => t.v),
      constVars,
      kept,
      outVars,
    );
    return { ir, consts: constVars.map((v) => this.constVals.get(v)!) };
  }
}

export class IRTrace extends Trace {
  get builder(): IRBuilder {
    return this.main.globalData as IRBuilder;
  }
  pure(x: Array): Tracer {
    return this.builder.constTracer(this, x);
  }
  processPrimitive(prim: Primitive, tracers: Tracer[], params: unknown): Array[] {
    const avals = prim.shape(
      tracers.map((t) => t.aval),
      params,
    );
    const outs = avals.map((a) => new IRTracer(this, new Var(a)));
    this.builder.eqns.push({ prim, inputs: tracers.map((t) => (t as IRTracer).v), params, outs: outs.map((o) => o.v) });
    return outs;
  }
}

/**
 * Trace a flat function of arrays into an IR. With `dynamic`, every primitive applied while
 * tracing is staged, including ones on constants only (makeIR/jit); without it, only
 * computations that depend on the inputs are (linearize's tangent program).
 */
export function traceToIR(
  f: (...xs: Array[]) => Array[],
  inAvals: readonly ShapedArray[],
  name = "makeIR",
  dynamic = true,
): ClosedIR {
  const builder = new IRBuilder();
  return withMain(
    IRTrace,
    name,
    builder,
    (main: MainTrace) => {
      const trace = new IRTrace(main);
      const ins = inAvals.map((a) => builder.newInput(trace, a));
      const outs = f(...ins);
      return builder.build(trace, ins, outs);
    },
    dynamic,
  );
}

// ---------------------------------------------------------------- printing

export function printIR(ir: IR, consts?: readonly Array[]): string {
  const names = new Map<Var, string>();
  const name = (v: Var): string => {
    let n = names.get(v);
    if (!n) {
      let k = names.size,
        s = "";
      do {
        s = String.fromCharCode(97 + (k % 26)) + s;
        k = Math.floor(k / 26) - 1;
      } while (k >= 0);
      names.set(v, (n = s));
    }
    return n;
  };
  const decl = (v: Var) => `${name(v)}:${v.aval}`;
  const constStr = ir.constVars.map((v, i) => {
    const c = consts?.[i];
    const val = c instanceof ConcreteArray && c.size === 1 && c.backend.name === "cpu" ? `=${c.dataSync()[0]}` : "";
    return decl(v) + val;
  });
  const head = `{ lambda ${constStr.join(" ")}${constStr.length ? " " : ""}; ${ir.inVars.map(decl).join(" ")} .`;
  const lines = ir.eqns.map((e) => {
    const p = e.prim.printParams ? e.prim.printParams(e.params as never) : defaultParams(e.params);
    return `    ${e.outs.map(decl).join(" ")} = ${e.prim.name}${p ? `[${p}]` : ""} ${e.inputs.map(name).join(" ")}`;
  });
  return [head, "  let", ...lines, `  in ( ${ir.outs.map(name).join(" ")} ) }`].join("\n");
}

function defaultParams(p: unknown): string {
  if (!p || typeof p !== "object") return "";
  const entries = Object.entries(p as object).filter(([, v]) => typeof v !== "function" && !(v instanceof IR));
  return entries.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ");
}
