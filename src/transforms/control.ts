/**
 * Control flow: lax.cond (differentiable; under vmap with a batched predicate it becomes a
 * select), lax.whileLoop (forward and jvp; reverse mode errors and points to scan) and
 * lax.foriLoop (a scan when the bounds are JS numbers, so it is reverse-differentiable).
 */
import type { Carry } from "./types.js";
import type { Array } from "../core/array.js";
import { closeOverConsts, evalIR, IR, traceToIR, Var, type ClosedIR } from "../core/ir.js";
import { definePrimitive, type Primitive } from "../core/primitive.js";
import { add, broadcastInDim, convert, gt, lt, moveAxis, reduceMax, reshape, select } from "../core/prims/index.js";
import { scalar } from "../core/constants.js";
import { isUndef, isZero, Zero, type Tangent } from "../core/tangent.js";
import { bind } from "../core/trace.js";
import { flatten, treedefEqual, treedefString, unflatten, type TreeDef } from "../core/tree.js";
import { flattenArgs, flattenFun, leafToArray } from "./api-util.js";
import { jvpIR, partialEval } from "./partial-eval.js";
import { runIR } from "../core/run-ir.js";
import { scan } from "./scan.js";
import { transposeIR } from "./transpose.js";
import { instantiate, zerosOf } from "./vjp.js";
import { batchToFront, vmapIR } from "./vmap.js";
import { ConcreteArray } from "../core/concrete.js";
import { fromTyped } from "../core/create.js";

// ---------------------------------------------------------------- cond

export interface CondParams {
  /** branches[i] runs when the index operand equals i; every branch has the same inputs and output types. */
  readonly branches: readonly IR[];
}

/** Read a concrete branch index (CPU); null where the value cannot be read synchronously. */
function concreteIndex(x: Array): number | null {
  if (!(x instanceof ConcreteArray) || x.backend.name !== "cpu") return null;
  return x.dataSync()[0]!;
}

const selectBranches = (index: Array, outs: readonly Array[][]): Array[] => {
  // outs[b][k]; pick by index (clamped), broadcasting the scalar index.
  return outs[0]!.map((_, k) => {
    let r = outs[outs.length - 1]![k]!;
    for (let b = outs.length - 2; b >= 0; b--) {
      const isB = lt(index, scalar(b + 1, "int32"));
      r = select(isB, outs[b]![k]!, r);
    }
    return r;
  });
};

export const condP: Primitive<CondParams> = definePrimitive<CondParams>({
  name: "cond",
  shape: ([idx], p) => {
    if (idx!.ndim !== 0 || idx!.dtype !== "int32")
      throw new Error(`internal: cond index must be an int32 scalar, got ${idx}.`);
    return p.branches[0]!.outAvals;
  },
  evaluate: ([idx, ...ops], p) => {
    const i = concreteIndex(idx!);
    if (i !== null) return runIR(p.branches[Math.min(Math.max(i, 0), p.branches.length - 1)]!, ops);
    // Devices without synchronous reads: evaluate every branch and select (branches are pure).
    return selectBranches(
      idx!,
      p.branches.map((b) => runIR(b, ops)),
    );
  },
  jvp: ([idx, ...primals], [, ...tangents], p) => {
    const nonzero = tangents.map((t) => !isZero(t));
    if (!nonzero.some(Boolean)) {
      const outs = bind(condP, [idx!, ...primals], p);
      return [outs, outs.map((o) => new Zero(o.aval.strong()))];
    }
    const m = p.branches[0]!.outs.length;
    const parts = p.branches.map((b) => {
      const j = jvpIR(b, nonzero);
      return { j, split: partialEval(j.ir, j.consts.length + primals.length, m) };
    });
    const jConsts = parts.flatMap((q) => q.j.consts);
    const resAvals = parts.map((q) => q.split.unknown.inAvals.slice(0, q.split.resFromInput.length));
    // Primal cond: every branch returns [outs, its residuals, zeros for the other branches' residuals].
    const known = branchIR(
      [...jConsts.map((c) => c.aval), ...primals.map((x) => x.aval)],
      null,
      parts.map((q, b) => (xs: Array[]) => {
        const off = parts.slice(0, b).reduce((s, r) => s + r.j.consts.length, 0);
        const own = [...xs.slice(off, off + q.j.consts.length), ...xs.slice(jConsts.length)];
        const o = evalIR(q.split.known, [], own);
        return [...o.slice(0, m), ...resAvals.flatMap((ra, k) => (k === b ? o.slice(m) : ra.map((a) => zerosOf(a))))];
      }),
    );
    const pOut = bind(condP, [idx!, ...known.consts, ...jConsts, ...primals], { branches: known.irs });
    const res = pOut.slice(m);
    const tans = tangents.filter((_, i) => nonzero[i]) as Array[];
    const unknown = branchIR(
      [...res.map((r) => r.aval), ...tans.map((t) => t.aval)],
      null,
      parts.map((q, b) => (xs: Array[]) => {
        const off = resAvals.slice(0, b).reduce((s, r) => s + r.length, 0);
        return evalIR(q.split.unknown, [], [...xs.slice(off, off + resAvals[b]!.length), ...xs.slice(res.length)]);
      }),
    );
    const tOut = bind(condP, [idx!, ...unknown.consts, ...res, ...tans], { branches: unknown.irs });
    return [pOut.slice(0, m), tOut];
  },
  transpose: (cts, [idx, ...args], p) => {
    if (isUndef(idx)) throw new Error("internal: cond index cannot be linear.");
    const knownMask = args.map((a) => !isUndef(a));
    const ts = p.branches.map((b) => transposeIR(b, knownMask));
    const knownVals = args.filter((a) => !isUndef(a)) as Array[];
    const ctv = cts.map(instantiate);
    const tConsts = ts.flatMap((t) => t.consts);
    const br = branchIR(
      [...tConsts.map((c) => c.aval), ...knownVals.map((k) => k.aval), ...ctv.map((c) => c.aval)],
      null,
      ts.map((t, b) => (xs: Array[]) => {
        const off = ts.slice(0, b).reduce((s, r) => s + r.consts.length, 0);
        return evalIR(t.ir, [], [...xs.slice(off, off + t.consts.length), ...xs.slice(tConsts.length)]);
      }),
    );
    const out = bind(condP, [idx as Array, ...br.consts, ...tConsts, ...knownVals, ...ctv], { branches: br.irs });
    let k = 0;
    return [null, ...args.map((a) => (isUndef(a) ? out[k++]! : null))] as (Tangent | null)[];
  },
  vmap: ([idx, ...args], [di, ...dims], p, n) => {
    const [moved, batched] = batchToFront(args, dims);
    const vs = p.branches.map((b) => vmapIR(b, batched, n));
    if (di === null) {
      const br = branchIR(
        [...vs.flatMap((v) => v.consts.map((c) => c.aval)), ...moved.map((x) => x.aval)],
        null,
        vs.map((v, b) => (xs: Array[]) => {
          const all = vs.flatMap((w) => w.consts);
          const off = vs.slice(0, b).reduce((s, w) => s + w.consts.length, 0);
          return evalIR(v.ir, [], [...xs.slice(off, off + v.consts.length), ...xs.slice(all.length)]);
        }),
      );
      const outs = bind(condP, [idx!, ...br.consts, ...vs.flatMap((v) => v.consts), ...moved], { branches: br.irs });
      return [outs, outs.map(() => 0)];
    }
    // Batched predicate: run every branch and select per example.
    const outs = vs.map((v) => evalIR(v.ir, [], [...v.consts, ...moved]));
    const ib = moveAxis(idx!, di!, 0);
    const sel = outs[0]!.map((_, k) => {
      const rank = outs[0]![k]!.ndim;
      const ix = reshape(ib, [n, ...new globalThis.Array<number>(rank - 1).fill(1)]);
      return selectBranches(
        ix,
        outs.map((o) => [o[k]!]),
      )[0]!;
    });
    return [sel, sel.map(() => 0)];
  },
  printParams: (p) => `branches=${p.branches.length}`,
});

/** Build one IR per branch over common inputs (any constants the tracing creates become leading operands). */
function branchIR(
  avals: readonly Array["aval"][],
  fn: ((xs: Array[]) => Array[]) | null,
  fns?: ((xs: Array[]) => Array[])[],
): { irs: IR[]; consts: Array[] } {
  const makers = fns ?? [fn!];
  const closed = makers.map((g) => traceToIR((...xs: Array[]) => g(xs), avals, "cond"));
  return unifyConsts(closed);
}
/** Branch IRs with inputs [all branches' consts..., shared inputs...]. */
function unifyConsts(closed: readonly ClosedIR[]): { irs: IR[]; consts: Array[] } {
  const consts = closed.flatMap((c) => c.consts);
  const irs = closed.map((c, b) => {
    const before = closed.slice(0, b).flatMap((d) => d.ir.constVars.map((v) => new Var(v.aval)));
    const after = closed.slice(b + 1).flatMap((d) => d.ir.constVars.map((v) => new Var(v.aval)));
    return new IR([...before, ...c.ir.constVars, ...after, ...c.ir.inVars], [], c.ir.eqns, c.ir.outs);
  });
  return { irs, consts };
}

/**
 * cond(pred, trueFn, falseFn, ...operands). A JS boolean picks a branch directly; an Array
 * predicate is staged (both branches traced; outputs must match in structure, shape and dtype).
 */
export function cond<Ops extends unknown[], R>(
  pred: Array | boolean | number,
  trueFn: (...ops: Ops) => R,
  falseFn: (...ops: Ops) => R,
  ...operands: Ops
): R;
export function cond(
  pred: unknown,
  trueFn: (...ops: any[]) => unknown,
  falseFn: (...ops: any[]) => unknown,
  ...operands: unknown[]
): unknown {
  if (typeof pred === "boolean") return pred ? trueFn(...operands) : falseFn(...operands);
  const p = leafToArray(pred, "lax.cond predicate");
  if (p.ndim !== 0)
    throw new Error(`lax.cond: the predicate must be a scalar, got ${p.aval}. Use np.where for elementwise choices.`);
  const idx = p.dtype === "bool" ? convert(p, "int32") : convert(gt(p, scalar(0, p.dtype)), "int32");
  return switchBranches(idx, [falseFn, trueFn], operands, "lax.cond");
}

/**
 * `lax.switch(index, branches, ...operands)` is `branches[clamp(index, 0, n - 1)](...operands)`, as in
 * JAX. The operands are variadic like lax.cond's (they used to be one array argument, so
 * `lax.switch(i, fs, x)` iterated over x); a JS integer index picks the branch directly.
 */
export function switchIndex<Ops extends unknown[], R>(
  index: Array | number,
  fns: readonly ((...ops: Ops) => R)[],
  ...operands: Ops
): R;
export function switchIndex(
  index: unknown,
  fns: readonly ((...ops: any[]) => unknown)[],
  ...operands: unknown[]
): unknown {
  if (!globalThis.Array.isArray(fns) || fns.length === 0)
    throw new Error("lax.switch: give a non-empty array of branch functions.");
  if (typeof index === "number") {
    if (!Number.isInteger(index)) throw new Error(`lax.switch: the index must be an integer, got ${index}.`);
    return fns[Math.min(Math.max(index, 0), fns.length - 1)]!(...operands);
  }
  const i = leafToArray(index, "lax.switch index");
  if (i.ndim !== 0 || i.dtype !== "int32")
    throw new Error(`lax.switch: the index must be an int32 scalar, got ${i.aval}; convert it with .astype("int32").`);
  return switchBranches(i, fns, operands, "lax.switch");
}

/** Stage branches[clamp(index)](...operands) as one cond equation (index: int32 scalar Array). */
function switchBranches(
  index: Array,
  fns: readonly ((...ops: any[]) => unknown)[],
  operands: unknown[],
  what: string,
): unknown {
  const [leaves, inDef] = flattenArgs(operands, what);
  let outDef: TreeDef | null = null;
  const traced = fns.map((fn, b) => {
    const flat = flattenFun(fn, inDef, what);
    const closed = traceToIR(
      flat.f,
      leaves.map((l) => l.aval),
      what,
    );
    const d = flat.outDef();
    if (outDef && !treedefEqual(outDef, d))
      throw new Error(
        `${what}: branch ${b} returns structure ${treedefString(d)}, branch 0 returns ${treedefString(outDef)}.`,
      );
    outDef = d;
    return closed;
  });
  const outAvals = traced[0]!.ir.outAvals;
  traced.forEach((c, b) =>
    c.ir.outAvals.forEach((a, k) => {
      if (a.dtype !== outAvals[k]!.dtype || a.shape.join() !== outAvals[k]!.shape.join()) {
        throw new Error(
          `${what}: output ${k} is ${outAvals[k]} in branch 0 but ${a} in ` +
            `branch ${b}; branches must return the same shapes and dtypes.`,
        );
      }
    }),
  );
  const { irs, consts } = unifyConsts(traced.map((c) => ({ ir: strongOuts(c.ir), consts: c.consts })));
  const outs = bind(condP, [index, ...consts, ...leaves], { branches: irs });
  return unflatten(outDef!, outs);
}
/** Weak-typed outputs (from JS numbers) are made strong so branches agree on types. */
function strongOuts(ir: IR): IR {
  if (!ir.outs.some((v) => v.aval.weak)) return ir;
  const closed = traceToIR(
    (...xs) => evalIR(ir, [], xs).map((o) => (o.aval.weak ? convert(o, o.dtype) : o)),
    [...ir.constVars, ...ir.inVars].map((v) => v.aval),
    "cond",
  );
  const c = closeOverConsts(closed.ir);
  if (closed.consts.length) throw new Error("internal: strongOuts captured constants.");
  return new IR(c.inVars.slice(ir.constVars.length), c.inVars.slice(0, ir.constVars.length), c.eqns, c.outs);
}

// ---------------------------------------------------------------- whileLoop

export interface WhileParams {
  readonly cond: IR; // [condConsts, carry] → bool scalar
  readonly body: IR; // [bodyConsts, carry] → carry
  readonly nCondConsts: number;
  readonly nBodyConsts: number;
}

export const whileP: Primitive<WhileParams> = definePrimitive<WhileParams>({
  name: "while",
  shape: (_a, p) => p.body.outAvals,
  evaluate: (args, p) => {
    const cc = args.slice(0, p.nCondConsts),
      bc = args.slice(p.nCondConsts, p.nCondConsts + p.nBodyConsts);
    let carry = args.slice(p.nCondConsts + p.nBodyConsts);
    for (;;) {
      const c = runIR(p.cond, [...cc, ...carry])[0]!;
      const v = concreteIndex(convert(c, "int32"));
      if (v === null)
        throw new Error(
          "lax.whileLoop: the loop predicate must be readable on the " +
            "host; on webgpu use lax.foriLoop/scan with a fixed length.",
        );
      if (!v) return carry;
      carry = runIR(p.body, [...bc, ...carry]);
    }
  },
  jvp: (primals, tangents, p) => {
    const nc = p.nCondConsts,
      nb = p.nBodyConsts;
    const outs = bind(whileP, primals, p);
    const bt = tangents.slice(nc, nc + nb),
      ct = tangents.slice(nc + nb);
    if ([...bt, ...ct].every(isZero)) return [outs, outs.map((o) => new Zero(o.aval.strong()))];
    // Tangent loop: carries (x, dx); recomputes the primal (forward mode only; reverse mode errors at transpose).
    const ncar = primals.length - nc - nb;
    const nzB = bt.map((t) => !isZero(t));
    const j = jvpIR(p.body, [...nzB, ...new globalThis.Array<boolean>(ncar).fill(true)]);
    const nzBT = bt.filter((t) => !isZero(t)) as Array[];
    const condIR = closeOverConsts(
      traceToIR(
        (...xs: Array[]) => evalIR(p.cond, [], xs.slice(0, nc + ncar)),
        [...p.cond.inAvals, ...primals.slice(nc + nb).map((x) => x.aval.strong())],
        "while",
      ).ir,
    );
    // body inputs: [jconsts, bodyConsts, bodyConstTangents, x, dx] → [x', dx']
    const nj = j.consts.length;
    const bodyIR = closeOverConsts(
      traceToIR(
        (...xs: Array[]) => {
          const jc = xs.slice(0, nj),
            bcv = xs.slice(nj, nj + nb),
            bct = xs.slice(nj + nb, nj + nb + nzBT.length);
          const rest = xs.slice(nj + nb + nzBT.length);
          return evalIR(j.ir, [], [...jc, ...bcv, ...rest.slice(0, ncar), ...bct, ...rest.slice(ncar)]);
        },
        [
          ...j.consts.map((c) => c.aval),
          ...p.body.inAvals.slice(0, nb),
          ...nzBT.map((t) => t.aval),
          ...primals.slice(nc + nb).map((x) => x.aval),
          ...primals.slice(nc + nb).map((x) => x.aval.strong()),
        ],
        "while",
      ).ir,
    );
    const both = bind(
      whileP,
      [
        ...primals.slice(0, nc),
        ...j.consts,
        ...primals.slice(nc, nc + nb),
        ...nzBT,
        ...primals.slice(nc + nb),
        ...ct.map(instantiate),
      ],
      { cond: condIR, body: bodyIR, nCondConsts: nc, nBodyConsts: nj + nb + nzBT.length },
    );
    return [outs, both.slice(ncar)];
  },
  vmap: (args, dims, p, n) => {
    const nc = p.nCondConsts,
      nb = p.nBodyConsts;
    const [moved0, batched0] = batchToFront(args, dims);
    // Carries are always batched; the loop runs while any example's predicate holds, updating only those.
    const moved = moved0.map((a, i) =>
      i >= nc + nb && !batched0[i]
        ? broadcastInDim(
            a,
            [n, ...a.shape],
            a.shape.map((_, k) => k + 1),
          )
        : a,
    );
    const batched = batched0.map((b, i) => b || i >= nc + nb);
    const vc = vmapIR(p.cond, batched.slice(0, nc).concat(batched.slice(nc + nb)), n);
    const vb = vmapIR(p.body, batched.slice(nc), n);
    const ncv = vc.consts.length,
      nbv = vb.consts.length;
    const carryAvals = moved.slice(nc + nb).map((x) => x.aval);
    const condIR = closeOverConsts(
      traceToIR(
        (...xs: Array[]) => {
          const c = evalIR(vc.ir, [], xs)[0]!;
          // "any example still running", built without literals: a captured constant would become an
          // extra leading input of this IR (closeOverConsts) that the while operands do not supply.
          return [convert(reduceMax(convert(c, "int32"), [0]), "bool")];
        },
        [...vc.consts.map((c) => c.aval), ...moved.slice(0, nc).map((x) => x.aval), ...carryAvals],
        "while",
      ).ir,
    );
    const bodyIR = closeOverConsts(
      traceToIR(
        (...xs: Array[]) => {
          const cconsts = xs.slice(0, ncv + nc),
            bconsts = xs.slice(ncv + nc, ncv + nc + nbv + nb),
            carry = xs.slice(ncv + nc + nbv + nb);
          const go = evalIR(vc.ir, [], [...cconsts, ...carry])[0]!;
          const next = evalIR(vb.ir, [], [...bconsts, ...carry]);
          return next.map((x, k) =>
            select(reshape(go, [n, ...new globalThis.Array<number>(x.ndim - 1).fill(1)]), x, carry[k]!),
          );
          // Body operands are [cond consts (the predicate is re-evaluated per step), body consts, carry]: each once.
        },
        [
          ...vc.consts.map((c) => c.aval),
          ...moved.slice(0, nc).map((x) => x.aval),
          ...vb.consts.map((c) => c.aval),
          ...moved.slice(nc, nc + nb).map((x) => x.aval),
          ...carryAvals,
        ],
        "while",
      ).ir,
    );
    const cops = [...vc.consts, ...moved.slice(0, nc)];
    const outs = bind(whileP, [...cops, ...cops, ...vb.consts, ...moved.slice(nc, nc + nb), ...moved.slice(nc + nb)], {
      cond: condIR,
      body: bodyIR,
      nCondConsts: cops.length,
      nBodyConsts: cops.length + nbv + nb,
    });
    return [outs, outs.map(() => 0)];
  },
  printParams: (p) => `n_cond_consts=${p.nCondConsts} n_body_consts=${p.nBodyConsts}`,
});

/**
 * whileLoop(cond, body, init): repeat body while cond(carry). Forward-mode differentiable; reverse mode errors (use
 * scan).
 */
export function whileLoop<C extends Carry>(condFn: (c: C) => unknown, bodyFn: (c: C) => C, init: C): C {
  const [cl, cDef] = flatten(init);
  const cArr = cl.map((l) => leafToArray(l, "lax.whileLoop init")).map((c) => (c.aval.weak ? convert(c, c.dtype) : c));
  const avals = cArr.map((c) => c.aval);
  const condC = traceToIR(
    (...xs: Array[]) => {
      const r = leafToArray(condFn(unflatten(cDef, xs) as C), "lax.whileLoop cond");
      if (r.ndim !== 0) throw new Error(`lax.whileLoop: cond must return a scalar, got ${r.aval}.`);
      return [r.dtype === "bool" ? r : r.notEqual(0)];
    },
    avals,
    "lax.whileLoop",
  );
  const bodyC = traceToIR(
    (...xs: Array[]) => {
      const out = bodyFn(unflatten(cDef, xs) as C);
      const [ol, od] = flatten(out);
      if (!treedefEqual(od, cDef))
        throw new Error(
          `lax.whileLoop: body returns structure ${treedefString(od)}, the carry is ${treedefString(cDef)}.`,
        );
      return ol.map((l, i) => {
        const a = leafToArray(l, "lax.whileLoop body");
        if (a.shape.join() !== avals[i]!.shape.join())
          throw new Error(`lax.whileLoop: carry leaf ${i} changes from ${avals[i]} to ${a.aval}.`);
        return a.dtype === avals[i]!.dtype && !a.aval.weak ? a : convert(a, avals[i]!.dtype);
      });
    },
    avals,
    "lax.whileLoop",
  );
  const outs = bind(whileP, [...condC.consts, ...bodyC.consts, ...cArr], {
    cond: closeOverConsts(condC.ir),
    body: closeOverConsts(bodyC.ir),
    nCondConsts: condC.consts.length,
    nBodyConsts: bodyC.consts.length,
  });
  return unflatten(cDef, outs) as C;
}

/** foriLoop(lower, upper, body, init): body(i, carry) for i in [lower, upper). A scan for JS-number bounds. */
export function foriLoop<C extends Carry>(
  lower: number | Array,
  upper: number | Array,
  body: (i: Array, carry: C) => C,
  init: C,
): C {
  if (typeof lower === "number" && typeof upper === "number") {
    if (!Number.isInteger(lower) || !Number.isInteger(upper))
      throw new Error(`lax.foriLoop: bounds must be integers, got ${lower} and ${upper}.`);
    if (upper <= lower) return init;
    const iters = fromRange(lower, upper);
    return scan((c: C, i: Array) => [body(i, c), null], init, iters)[0];
  }
  const lo = convert(leafToArray(lower, "lax.foriLoop"), "int32"),
    hi = convert(leafToArray(upper, "lax.foriLoop"), "int32");
  const [, c] = whileLoop(
    ([i]: [Array, C]) => lt(i, hi),
    ([i, c]: [Array, C]) => [add(i, scalar(1, "int32")), body(i, c)] as [Array, C],
    [lo, init] as [Array, C],
  );
  return c;
}
const fromRange = (a: number, b: number): Array =>
  fromTyped(
    Int32Array.from({ length: b - a }, (_, i) => a + i),
    [b - a],
    "int32",
  );
