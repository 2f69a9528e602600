/**
 * jit: trace once per input signature into an IR, cache it, and run it as one `jit_call`
 * equation. The equation's rules (jvp via partial evaluation, transpose, vmap) produce new
 * jit_calls, so jit composes with every other transform.
 */
import type { Array } from "../core/array.js";
import { closeOverConsts, memoOnIR, printIR, traceToIR, type ClosedIR, type IR } from "../core/ir.js";
import { runIR } from "../core/run-ir.js";
import { checkFiniteSync } from "../core/check-finite.js";
import { definePrimitive, type Primitive } from "../core/primitive.js";
import { isUndef, isZero, Zero, type Tangent } from "../core/tangent.js";
import { bind, Tracer } from "../core/trace.js";
import { treedefString, unflatten, type TreeDef } from "../core/tree.js";
import { flattenArgs, flattenFun } from "./api-util.js";
import { instantiate } from "./vjp.js";
import { jvpIR, partialEval } from "./partial-eval.js";
import { splitStatics, staticSpec, type StaticSplit } from "./static-args.js";
import { transposeIR } from "./transpose.js";
import { batchToFront, vmapIR } from "./vmap.js";

export interface JitParams {
  readonly ir: IR;
  readonly name: string;
}

export const jitCallP: Primitive<JitParams> = definePrimitive<JitParams>({
  name: "jit_call",
  shape: (_a, p) => p.ir.outAvals,
  evaluate: (args, p) => runIR(p.ir, args),
  jvp: (primals, tangents, p) => {
    const nonzero = tangents.map((t) => !isZero(t));
    if (!nonzero.some(Boolean)) {
      const outs = bind(jitCallP, primals, p);
      return [outs, outs.map((o) => new Zero(o.aval.strong()))];
    }
    const key = `jvp:${nonzero.map(Number).join("")}`;
    const { split, consts } = memoOnIR(p.ir, `jit:${key}`, () => {
      const j = jvpIR(p.ir, nonzero);
      return { consts: j.consts, split: partialEval(j.ir, j.consts.length + primals.length, p.ir.outs.length) };
    });
    const knownOut = bind(jitCallP, [...consts, ...primals], { ir: split.known, name: `jvp_known(${p.name})` });
    const m = p.ir.outs.length;
    const res = knownOut.slice(m);
    const touts = bind(jitCallP, [...res, ...(tangents.filter((_, i) => nonzero[i]) as Array[])], {
      ir: split.unknown,
      name: `jvp_tangent(${p.name})`,
    });
    return [knownOut.slice(0, m), touts];
  },
  transpose: (cts, args, p) => {
    const knownMask = args.map((a) => !isUndef(a));
    const t = memoOnIR(p.ir, `jit:T:${knownMask.map(Number).join("")}`, () => transposeIR(p.ir, knownMask));
    const ctIn = bind(
      jitCallP,
      [...t.consts, ...(args.filter((a) => !isUndef(a)) as Array[]), ...cts.map((c) => instantiate(c))],
      { ir: t.ir, name: `transpose(${p.name})` },
    );
    let k = 0;
    return args.map((a) => (isUndef(a) ? ctIn[k++]! : null)) as (Tangent | null)[];
  },
  vmap: (args, dims, p, n) => {
    const [moved, batched] = batchToFront(args, dims);
    const v = memoOnIR(p.ir, `jit:vmap:${n}:${batched.map(Number).join("")}`, () => vmapIR(p.ir, batched, n));
    const outs = bind(jitCallP, [...v.consts, ...moved], { ir: v.ir, name: `vmap(${p.name})` });
    return [outs, outs.map(() => 0)];
  },
  printParams: (p) => `name=${p.name}`,
});

export interface JitOptions {
  /**
   * Positions of arguments that are not traced: any JS value, part of the cache key (primitives by value, objects by
   * identity).
   */
  readonly staticArgnums?: readonly number[];
  /**
   * Static arguments by name (JAX's static_argnames): a parameter of f (read from its source,
   * `(x, steps) => …`), or else a key of a plain-object argument — `f(x, { steps: 10 })` keeps
   * `steps` static and traces the rest of the object. A name the call does not carry is an error.
   */
  readonly staticArgnames?: readonly string[];
  /**
   * Check the outputs after each call and throw a NonFiniteError naming the first NaN or
   * infinity (core/check-finite.ts). Cheap: one read of the results, no re-run. CPU arrays only
   * (GPU reads are asynchronous: use `await assertFinite(out)`); skipped inside other transforms.
   */
  readonly checkFinite?: boolean;
}
export interface Jitted<F> {
  (
    ...args: Parameters<F extends (...a: any[]) => any ? F : never>
  ): ReturnType<F extends (...a: any[]) => any ? F : never>;
  /** How many times the function has been traced (once per new input signature). */
  readonly traceCount: number;
  /** The cached program for these arguments, printable. */
  lower(...args: unknown[]): { ir: IR; consts: readonly Array[]; toString(): string };
}

/** Compile f once per input signature (shapes, dtypes, structure, static args) and reuse the program. */
export function jit<F extends (...args: any[]) => any>(f: F, opts: JitOptions = {}): Jitted<F> {
  const spec = staticSpec(f, opts.staticArgnums, opts.staticArgnames, "jit");
  const cache = new Map<string, { ir: IR; consts: readonly Array[]; outDef: TreeDef }>();
  let traces = 0;
  const entryFor = (args: unknown[]) => {
    const split = splitStatics(spec, args, f.name || "fn", "jit");
    const [leaves, inDef] = flattenArgs(split.dynamic, "jit");
    const avals = leaves.map((l) => `${l.aval}${l.aval.weak ? "w" : ""}`).join(",");
    const key = `${treedefString(inDef)}|${avals}|${split.key}`;
    let entry = cache.get(key);
    if (!entry) {
      traces++;
      const { closed, outDef } = traceWithStatics(f, split, inDef, leaves, "jit");
      entry = { ir: closeOverConsts(closed.ir), consts: closed.consts, outDef };
      // Constants that are tracers belong to an enclosing transform: never reuse them on a later call.
      if (!closed.consts.some((c) => c instanceof Tracer)) cache.set(key, entry);
    }
    return { entry, leaves };
  };
  const jf = ((...args: unknown[]) => {
    const { entry, leaves } = entryFor(args);
    const outs = bind(jitCallP, [...entry.consts, ...leaves], { ir: entry.ir, name: f.name || "fn" });
    if (opts.checkFinite) checkFiniteSync(outs, `jit(${f.name || "fn"}) with checkFinite`);
    return unflatten(entry.outDef, outs);
  }) as unknown as Jitted<F>;
  Object.defineProperty(jf, "traceCount", { get: () => traces });
  (jf as { lower: unknown }).lower = (...args: unknown[]) => {
    const { entry } = entryFor(args);
    return { ir: entry.ir, consts: entry.consts, toString: () => printIR(entry.ir) };
  };
  return jf;
}

/** Trace f with the static arguments fixed and the dynamic leaves abstract. */
function traceWithStatics(
  f: (...args: any[]) => any,
  split: StaticSplit,
  inDef: TreeDef,
  leaves: readonly Array[],
  what: string,
): { closed: ClosedIR; outDef: TreeDef } {
  const withStatics = (...d: unknown[]) => f(...split.rebuild(d));
  const flat = flattenFun(withStatics, inDef, what);
  const closed = traceToIR(
    flat.f,
    leaves.map((l) => l.aval),
    what,
  );
  return { closed, outDef: flat.outDef() };
}

/** makeIR(f)(...args): the traced program (printable with String()). */
export function makeIR(f: (...args: any[]) => any, opts: JitOptions = {}) {
  const spec = staticSpec(f, opts.staticArgnums, opts.staticArgnames, "makeIR");
  return (...args: unknown[]) => {
    const split = splitStatics(spec, args, f.name || "fn", "makeIR");
    const [leaves, inDef] = flattenArgs(split.dynamic, "makeIR");
    const { closed, outDef } = traceWithStatics(f, split, inDef, leaves, "makeIR");
    return { ir: closed.ir, consts: closed.consts, outTree: outDef, toString: () => printIR(closed.ir, closed.consts) };
  };
}
