import { Array } from "./array.js";
import type { ShapedArray } from "./aval.js";
import type { TypedArray } from "./dtype.js";
import { ConcreteArray } from "./concrete.js";
import type { Primitive } from "./primitive.js";
import { getBackend } from "./backends/backend.js";
import { ConstantArray } from "./constants.js";

/**
 * The interpreter stack (the JAX/autodidax design): each active transform is a
 * MainTrace at some level; a primitive application is handled by the highest
 * trace among its arguments (or the dynamic trace of an enclosing makeIR/jit).
 */
export interface MainTrace {
  readonly level: number;
  readonly traceType: new (main: MainTrace) => Trace;
  readonly globalData: unknown;
  readonly name: string;
  active: boolean;
}

export abstract class Trace {
  constructor(readonly main: MainTrace) {}
  /** Wrap a value from the eval level (a concrete array). */
  abstract pure(x: Array): Tracer;
  /** Wrap a tracer of a lower-level trace. */
  lift(x: Tracer): Tracer {
    return this.pure(x);
  }
  abstract processPrimitive(prim: Primitive, tracers: Tracer[], params: unknown): Array[];
}

export abstract class Tracer extends Array {
  constructor(readonly trace: Trace) {
    super();
  }
  /** The concrete value behind this tracer, if there is one (forward-mode and linearize primals are concrete). */
  concrete(): ConcreteArray | null {
    return null;
  }
  async data(): Promise<TypedArray> {
    return this.dataSync();
  }
  dataSync(): TypedArray {
    if (!this.trace.main.active) throw leakedError(this, "dataSync");
    const c = this.concrete();
    if (c) return c.dataSync();
    throw new Error(
      `cannot read the values of a traced ${this.aval} array inside ${this.trace.main.name}: its value is not known ` +
        `while the function is being traced. Move value-dependent ` +
        `logic outside the transform, or use np.where / lax.cond.`,
    );
  }
  toString(): string {
    return `Tracer<${this.trace.main.name}>(${this.aval})`;
  }
}

class EvalTrace extends Trace {
  pure(): Tracer {
    throw new Error("internal: EvalTrace.pure");
  }
  processPrimitive(): Array[] {
    throw new Error("internal: EvalTrace.processPrimitive");
  }
}

const evalMain: MainTrace = { level: 0, traceType: EvalTrace, globalData: null, name: "eval", active: true };
const stack: MainTrace[] = [evalMain];
let dynamicMain: MainTrace | null = null;

/** Runs `body` with a new main trace pushed on the stack; `dynamic` makes it catch every primitive (makeIR/jit). */
export function withMain<T>(
  traceType: new (main: MainTrace) => Trace,
  name: string,
  globalData: unknown,
  body: (main: MainTrace) => T,
  dynamic = false,
): T {
  const main: MainTrace = { level: stack.length, traceType, globalData, name, active: true };
  stack.push(main);
  const prevDynamic = dynamicMain;
  if (dynamic) dynamicMain = main;
  try {
    return body(main);
  } finally {
    main.active = false;
    stack.pop();
    dynamicMain = prevDynamic;
  }
}

/** Temporarily hide the dynamic trace (used when evaluating concrete subcomputations under makeIR). */
export function currentDynamic(): MainTrace | null {
  return dynamicMain;
}

function leakedError(t: Tracer, op?: string): Error {
  return new Error(
    `${op ? `${op}: ` : ""}a tracer of ${t.aval} created inside ${t.trace.main.name} ` +
      `was used after that transform finished (a leaked tracer). ` +
      `Return values from the transformed function instead of storing them in outer variables.`,
  );
}

function topMain(args: readonly Array[], op: string): MainTrace {
  let top: MainTrace = dynamicMain ?? evalMain;
  for (const a of args) {
    if (a instanceof Tracer) {
      const m = a.trace.main;
      if (!m.active) throw leakedError(a, op);
      if (m.level > top.level) top = m;
    }
  }
  return top;
}

export function fullRaise(trace: Trace, x: Array): Tracer {
  if (!(x instanceof Tracer)) return trace.pure(x);
  const m = x.trace.main;
  if (m === trace.main) return x;
  if (!m.active) throw leakedError(x);
  if (m.level < trace.main.level) return trace.lift(x);
  throw new Error(`internal: tracer from a higher level (${m.name}) reached ${trace.main.name}.`);
}

/** Apply a primitive: the single entry point from wrappers and rules into the interpreters. */
export function bind(prim: Primitive, args: readonly Array[], params: unknown): Array[] {
  for (const a of args)
    if (!(a instanceof Array)) throw new Error(`internal: ${prim.name} received a non-Array argument ${String(a)}.`);
  const main = topMain(args, prim.name);
  if (main === evalMain) return evalPrimitive(prim, args as ConcreteArray[], params);
  const trace = new main.traceType(main);
  const tracers = args.map((a) => fullRaise(trace, a));
  return trace.processPrimitive(prim, tracers, params);
}

export const bind1 = (prim: Primitive, args: readonly Array[], params: unknown): Array => bind(prim, args, params)[0]!;

/** Checks every eagerly evaluated primitive's outputs (debug-NaN mode installs one; see debug-nans.ts). */
type PrimitiveChecker = (prim: Primitive, args: readonly Array[], outs: readonly Array[], params: unknown) => void;
let checker: PrimitiveChecker | null = null;
export function setPrimitiveChecker(c: PrimitiveChecker | null): void {
  checker = c;
}

function evalPrimitive(prim: Primitive, args: ConcreteArray[], params: unknown): Array[] {
  if (!checker) return evaluateOn(prim, args, params);
  const outs = evaluateOn(prim, args, params);
  checker(prim, args, outs, params);
  return outs;
}

function evaluateOn(prim: Primitive, args: ConcreteArray[], params: unknown): Array[] {
  if (prim.evaluate) return prim.evaluate(args, params);
  const outAvals = prim.shape(
    args.map((a) => a.aval),
    params,
  );
  // Run where the data lives; CPU operands (scalar constants, np.zeros & co., which are made on the
  // CPU) are copied to the other device.
  // Scalar literals have no home: an op on literals only (np.zeros, np.full) runs on the default
  // backend, unless it needs float64 (CPU only).
  const onlyLiterals = args.every((a) => a instanceof ConstantArray) && !outAvals.some((a) => a.dtype === "float64");
  const backend =
    args.find((a) => a.backend.name !== "cpu")?.backend ??
    (onlyLiterals ? getBackend() : (args[0]?.backend ?? getBackend()));
  const moved = args.map((a) => {
    if (a.backend === backend) return a;
    if (a.backend.name === "cpu") return new ConcreteArray(a.aval, backend, backend.upload(a.dataSync(), a.aval));
    throw new Error(
      `${prim.name}: inputs live on different backends (${backend.name} and ${a.backend.name}, ${a.aval}). ` +
        `Move one with np.array(x, { backend: "${backend.name}" }).`,
    );
  });
  return backend.execute(prim, moved, params, outAvals);
}

export const traceDepth = (): number => stack.length;
export type { ShapedArray };
