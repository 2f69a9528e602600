/** customVjp (user reverse rules) and checkpoint (recompute instead of storing residuals). */
import type { Array } from "../core/array.js";
import type { ShapedArray } from "../core/aval.js";
import { closeOverConsts, evalIR, traceToIR, type IR } from "../core/ir.js";
import { zerosLikeA } from "../core/prims/index.js";
import { definePrimitive, type BDim, type Primitive } from "../core/primitive.js";
import { vmapByLoop, moveAxis, broadcastInDim } from "../core/prims/index.js";
import { isZero, isUndef, Zero, type Tangent } from "../core/tangent.js";
import { bind } from "../core/trace.js";
import { flatten, treedefEqual, treedefString, unflatten, type TreeDef } from "../core/tree.js";
import { flattenArgs, flattenFun, leafToArray } from "./api-util.js";
import { jvpFlat } from "./jvp.js";
import { instantiate, linearizeFlat, transposeLinear, zerosOf } from "./vjp.js";
import { batchToFront, vmapFlat, vmapIR } from "./vmap.js";

const zerosLikeConst = (c: Array): Array => zerosLikeA(c);

/** Batch every operand at axis 0 (broadcasting unbatched ones) — the simple form higher-order rules use. */
export function batchAll(args: readonly Array[], dims: readonly BDim[], n: number): Array[] {
  return args.map((a, i) => {
    const d = dims[i];
    return d === null || d === undefined
      ? broadcastInDim(
          a,
          [n, ...a.shape],
          a.shape.map((_, k) => k + 1),
        )
      : moveAxis(a, d, 0);
  });
}

// ---------------------------------------------------------------- customVjp

interface CustomVjpParams {
  readonly ir: IR; // f, consts first
  readonly nConsts: number;
  readonly fwd: (...xs: Array[]) => [Array[], Array[]]; // → [outs, residuals]
  readonly bwd: (res: Array[], cts: Array[]) => Array[]; // → cotangents per input
}
interface CustomLinParams {
  readonly nRes: number;
  readonly bwd: (res: Array[], cts: Array[]) => Array[];
  readonly outAvals: readonly ShapedArray[];
}

export const customLinP: Primitive<CustomLinParams> = definePrimitive<CustomLinParams>({
  name: "custom_lin",
  shape: (_a, p) => [...p.outAvals],
  evaluate: () => {
    throw new Error(
      "customVjp: forward-mode differentiation (jvp/jacfwd/hessian) of a function " +
        "with a custom VJP is not supported; use reverse mode (grad/vjp/jacrev).",
    );
  },
  jvp: () => {
    throw new Error("customVjp: forward-mode differentiation of a custom VJP rule is not supported.");
  },
  transpose: (cts, args, p) => {
    const res = args.slice(0, p.nRes) as Array[];
    const tanArgs = args.slice(p.nRes);
    const ins = p.bwd(
      res,
      cts.map((c, i) => (isZero(c) ? zerosOf(p.outAvals[i]!.strong()) : c)),
    );
    return [...res.map(() => null), ...tanArgs.map((t, i) => (isUndef(t) ? ins[i]! : null))];
  },
  vmap: (args, dims, p, n) => vmapByLoop(customLinP, args, dims, p, n),
  printParams: (p) => `n_res=${p.nRes}`,
});

export const customVjpCallP: Primitive<CustomVjpParams> = definePrimitive<CustomVjpParams>({
  name: "custom_vjp_call",
  shape: (_a, p) => p.ir.outAvals,
  evaluate: (args, p) => evalIR(p.ir, [], args),
  jvp: (primals, tangents, p) => {
    if (tangents.slice(0, p.nConsts).some((t) => !isZero(t))) {
      throw new Error(
        "customVjp: the function closes over a value that is being " +
          "differentiated; pass that value as an argument instead.",
      );
    }
    const xs = primals.slice(p.nConsts);
    const [outs, res] = p.fwd(...xs);
    const ts = tangents.slice(p.nConsts);
    if (ts.every(isZero)) return [outs, outs.map((o) => new Zero(o.aval.strong()))];
    const tout = bind(customLinP, [...res, ...ts.map(instantiate)], {
      nRes: res.length,
      bwd: p.bwd,
      outAvals: outs.map((o) => o.aval.strong()),
    });
    return [outs, tout];
  },
  vmap: (args, dims, p, n) => {
    const batched = batchAll(args, dims, n);
    const fwd = (...xs: Array[]): [Array[], Array[]] => {
      let nOut = 0;
      const flat = vmapFlat(
        (...ys) => {
          const [o, r] = p.fwd(...ys);
          nOut = o.length;
          return [...o, ...r];
        },
        xs,
        xs.map(() => 0),
        (k) => new globalThis.Array(k).fill(0),
        n,
      );
      return [flat.slice(0, nOut), flat.slice(nOut)];
    };
    const bwd = (res: Array[], cts: Array[]): Array[] =>
      vmapFlat(
        (...ys) => p.bwd(ys.slice(0, res.length), ys.slice(res.length)),
        [...res, ...cts],
        [...res, ...cts].map(() => 0),
        (k) => new globalThis.Array(k).fill(0),
        n,
      );
    const v = vmapIR(
      p.ir,
      batched.map(() => true),
      n,
    );
    const outs = bind(customVjpCallP, [...v.consts, ...batched], {
      ir: v.ir,
      nConsts: v.consts.length + p.nConsts,
      fwd,
      bwd,
    });
    return [outs, outs.map(() => 0)];
  },
  printParams: () => "",
});

/**
 * customVjp(f, fwd, bwd): f(...args) with a user-defined reverse rule.
 * fwd(...args) → [out, residuals]; bwd(residuals, outCotangent) → one cotangent per argument
 * (null for none). fwd/bwd must not close over values being differentiated: pass them as arguments.
 */
export function customVjp<F extends (...args: any[]) => any, Res>(
  f: F,
  fwd: (...args: Parameters<F>) => [ReturnType<F>, Res],
  bwd: (residuals: Res, ct: ReturnType<F>) => unknown[],
): F {
  return ((...args: unknown[]) => {
    const [leaves, inDef] = flattenArgs(args, "customVjp");
    const flat = flattenFun(f, inDef, "customVjp");
    const closed = traceToIR(
      flat.f,
      leaves.map((l) => l.aval),
      "customVjp",
    );
    const outDef = flat.outDef();
    let resDef: TreeDef | null = null;
    const flatFwd = (...xs: Array[]): [Array[], Array[]] => {
      const r = fwd(...(unflatten(inDef, xs) as Parameters<F>));
      if (!globalThis.Array.isArray(r) || r.length !== 2)
        throw new Error("customVjp: fwd must return [output, residuals].");
      const [ol, od] = flatten(r[0]);
      if (!treedefEqual(od, outDef))
        throw new Error(
          `customVjp: fwd's output has structure ${treedefString(od)}, f's has ${treedefString(outDef)}.`,
        );
      const [rl, rd] = flatten(r[1]);
      resDef = rd;
      return [ol.map((l) => leafToArray(l, "customVjp fwd")), rl.map((l) => leafToArray(l, "customVjp residual"))];
    };
    const flatBwd = (res: Array[], cts: Array[]): Array[] => {
      const r = bwd(unflatten(resDef!, res), unflatten(outDef, cts));
      if (!globalThis.Array.isArray(r) || r.length !== args.length) {
        throw new Error(
          `customVjp: bwd must return an array with one cotangent per argument ` +
            `(${args.length}), got ${globalThis.Array.isArray(r) ? r.length : typeof r}.`,
        );
      }
      const out: Array[] = [];
      r.forEach((ct, i) => {
        const [al] = flatten(args[i]);
        if (ct === null || ct === undefined) {
          al.forEach((a) => out.push(zerosOf(leafToArray(a, "customVjp").aval.strong())));
          return;
        }
        const [cl] = flatten(ct);
        if (cl.length !== al.length)
          throw new Error(`customVjp: bwd's cotangent ${i} does not match argument ${i}'s structure.`);
        cl.forEach((c, k) => {
          const a = leafToArray(al[k], "customVjp"),
            cc = leafToArray(c, "customVjp cotangent");
          if (cc.shape.join() !== a.shape.join())
            throw new Error(
              `customVjp: bwd's cotangent for argument ${i} has shape [${cc.shape}], expected [${a.shape}].`,
            );
          out.push(cc.dtype === a.dtype ? cc : cc.astype(a.dtype));
        });
      });
      return out;
    };
    const outs = bind(customVjpCallP, [...closed.consts, ...leaves], {
      ir: closeOverConsts(closed.ir),
      nConsts: closed.consts.length,
      fwd: flatFwd,
      bwd: flatBwd,
    });
    return unflatten(outDef, outs);
  }) as F;
}

// ---------------------------------------------------------------- checkpoint (remat)

interface RematParams {
  readonly ir: IR;
}

/** Tangent of a checkpointed function: linear in the tangents; its transpose recomputes the forward pass. */
export const rematLinP: Primitive<RematParams> = definePrimitive<RematParams>({
  name: "remat_lin",
  shape: (_a, p) => p.ir.outAvals.map((a) => a.strong()),
  evaluate: (args, p) => {
    const n = p.ir.inVars.length;
    const [, touts] = jvpFlat((...xs) => evalIR(p.ir, [], xs), args.slice(0, n), args.slice(n));
    return touts.map(instantiate);
  },
  // remat_lin(x, t) = jvp(f)(x; t) is itself a function to checkpoint: differentiate it as checkpoint(jvp f), so any
  // order works (grad of grad).
  jvp: (args, tangents, p) => {
    const closed = traceToIR(
      (...xs) => rematLinP.evaluate!(xs, p),
      args.map((a) => a.aval),
      "checkpoint",
    );
    return rematP.jvp(
      [...closed.consts, ...args],
      [...closed.consts.map((c) => new Zero(c.aval.strong())), ...tangents],
      { ir: closeOverConsts(closed.ir) },
    );
  },
  transpose: (cts, args, p) => {
    const n = p.ir.inVars.length;
    const primals = args.slice(0, n) as Array[];
    const { lin } = linearizeFlat((...xs) => evalIR(p.ir, [], xs), primals);
    const ctIn: Tangent[] = transposeLinear(lin, cts);
    return [...primals.map(() => null), ...args.slice(n).map((a, i) => (isUndef(a) ? ctIn[i]! : null))];
  },
  vmap: (args, dims, p, n) => {
    // Batch every operand (primals and tangents) so the tangent operands line up with the batched IR.
    const b = batchAll(args, dims, n);
    const v = vmapIR(
      p.ir,
      p.ir.inVars.map(() => true),
      n,
    );
    const k = p.ir.inVars.length;
    const outs = bind(rematLinP, [...v.consts, ...b.slice(0, k), ...v.consts.map(zerosLikeConst), ...b.slice(k)], {
      ir: v.ir,
    });
    return [outs, outs.map(() => 0)];
  },
  printParams: () => "",
});

export const rematP: Primitive<RematParams> = definePrimitive<RematParams>({
  name: "checkpoint",
  shape: (_a, p) => p.ir.outAvals,
  evaluate: (args, p) => evalIR(p.ir, [], args),
  jvp: (primals, tangents, p) => {
    const outs = bind(rematP, primals, p);
    const tout = bind(rematLinP, [...primals, ...tangents.map(instantiate)], p);
    return [outs, tout];
  },
  vmap: (args, dims, p, n) => {
    const [moved, batched] = batchToFront(args, dims);
    const v = vmapIR(p.ir, batched, n);
    const outs = bind(rematP, [...v.consts, ...moved], { ir: v.ir });
    return [outs, outs.map(() => 0)];
  },
  printParams: () => "",
});

/** checkpoint(f): under reverse mode, store only f's inputs and recompute its internals on the backward pass. */
export function checkpoint<F extends (...args: any[]) => any>(f: F): F {
  return ((...args: unknown[]) => {
    const [leaves, inDef] = flattenArgs(args, "checkpoint");
    const flat = flattenFun(f, inDef, "checkpoint");
    const closed = traceToIR(
      flat.f,
      leaves.map((l) => l.aval),
      "checkpoint",
    );
    const outs = bind(rematP, [...closed.consts, ...leaves], { ir: closeOverConsts(closed.ir) });
    return unflatten(flat.outDef(), outs);
  }) as F;
}
