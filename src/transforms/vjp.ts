/**
 * Reverse mode as JAX does it: linearize (jvp with staged tangents → a linear IR whose
 * constants are the residuals), then transpose that IR. Forward and reverse mode share
 * every primitive's jvp rule, so they agree by construction.
 */
import { Array } from "../core/array.js";
import type { ShapedArray } from "../core/aval.js";
import { isFloat } from "../core/dtype.js";
import { evalIR, IRBuilder, IRTrace, type ClosedIR } from "../core/ir.js";
import { fromTyped } from "../core/create.js";
import { broadcastTo, convert, reshape } from "../core/prims/index.js";
import { scalar } from "../core/constants.js";
import { fmtShape } from "../core/shape.js";
import { isZero, Zero, type Tangent } from "../core/tangent.js";
import { withMain, type MainTrace } from "../core/trace.js";
import { flatten, treedefEqual, treedefString, unflatten } from "../core/tree.js";
import { flattenArgs, flattenFun, leafToArray, normArgnums } from "./api-util.js";
import { jvpFlat, tangentAval } from "./jvp.js";
import { backwardPass } from "./transpose.js";
import { vmapFlat } from "./vmap.js";
import type {
  ArgnumsOf,
  Arrayed,
  ArrayedArgs,
  GradOf,
  GradOptions,
  ScalarOut,
  TreeLike,
  TreeLikeArgs,
} from "./types.js";

export const zerosOf = (aval: ShapedArray): Array => broadcastTo(scalar(0, aval.dtype), aval.shape);
export const instantiate = (t: Tangent): Array => (isZero(t) ? zerosOf(t.aval) : t);

/** Primal outputs and the linear map (as IR) from input tangents to output tangents. */
export function linearizeFlat(
  f: (...xs: Array[]) => Array[],
  primals: readonly Array[],
): { outs: Array[]; lin: ClosedIR } {
  const builder = new IRBuilder();
  return withMain(IRTrace, "linearize", builder, (main: MainTrace) => {
    const trace = new IRTrace(main);
    const tin = primals.map((p) => builder.newInput(trace, tangentAval(p.aval)));
    const [outs, touts] = jvpFlat(
      f,
      primals,
      primals.map((p, i) => (isFloat(p.dtype) ? tin[i]! : new Zero(tangentAval(p.aval)))),
    );
    return { outs, lin: builder.build(trace, tin, touts.map(instantiate)) };
  });
}

/** Apply the transpose of a linear IR to output cotangents. */
export function transposeLinear(lin: ClosedIR, cts: readonly Tangent[]): Tangent[] {
  return backwardPass(
    lin.ir,
    lin.consts,
    lin.ir.inVars.map(() => null),
    cts,
  );
}

function checkCotangent(ct: Array, out: Array, i: number): Array {
  if (ct.shape.join() !== out.shape.join()) {
    throw new Error(
      `vjp: cotangent ${i} has shape ${fmtShape(ct.shape)} but the output has shape ${fmtShape(out.shape)}.`,
    );
  }
  return ct.dtype === out.dtype ? ct : convert(ct, out.dtype);
}

/**
 * Reverse mode: `vjp(f, ...primals)` → `[out, vjpFn]`; `vjpFn(cotangent)` (shaped like `out`)
 * returns one cotangent per primal, each shaped like its primal.
 *
 * @example
 * const [y, back] = vjp((x: Array) => np.sin(x), x);
 * const [dx] = back(np.onesLike(y));   // cos(x)
 */
export function vjp<A extends unknown[], R>(
  f: (...args: A) => R,
  ...primals: A
): [Arrayed<R>, (ct: TreeLike<R>) => ArrayedArgs<A>];
export function vjp(f: (...args: any[]) => unknown, ...primals: unknown[]): [unknown, (ct: unknown) => unknown[]] {
  const [leaves, inDef] = flattenArgs(primals, "vjp");
  const flat = flattenFun(f, inDef, "vjp");
  const { outs, lin } = linearizeFlat(flat.f, leaves);
  const outDef = flat.outDef();
  const vjpFn = (ct: unknown): unknown[] => {
    const [cl, cd] = flatten(ct);
    if (!treedefEqual(cd, outDef)) {
      throw new Error(
        `vjp: the cotangent has structure ${treedefString(cd)} but the output has ${treedefString(outDef)}.`,
      );
    }
    const cts = cl.map((c, i) => checkCotangent(leafToArray(c, "vjp cotangent"), outs[i]!, i));
    return unflatten(
      inDef,
      transposeLinear(lin, cts).map((t, i) => castLike(instantiate(t), leaves[i]!, "vjp")),
    ) as unknown[];
  };
  return [unflatten(outDef, outs), vjpFn];
}

/**
 * `linearize(f, ...primals)` → `[out, jvpFn]` with `jvpFn(...tangents)` → the output tangent (evaluates the stored
 * linear map; f runs once).
 */
export function linearize<A extends unknown[], R>(
  f: (...args: A) => R,
  ...primals: A
): [Arrayed<R>, (...tangents: TreeLikeArgs<A>) => Arrayed<R>];
export function linearize(
  f: (...args: any[]) => unknown,
  ...primals: unknown[]
): [unknown, (...tangents: unknown[]) => unknown] {
  const [leaves, inDef] = flattenArgs(primals, "linearize");
  const flat = flattenFun(f, inDef, "linearize");
  const { outs, lin } = linearizeFlat(flat.f, leaves);
  const jvpFn = (...tangents: unknown[]) => {
    const [tl, td] = flattenArgs(tangents, "linearize tangents");
    if (!treedefEqual(td, inDef))
      throw new Error(`linearize: tangents have structure ${treedefString(td)}, primals ${treedefString(inDef)}.`);
    const res = evalLinear(
      lin,
      tl.map((t, i) => castLike(t, leaves[i]!, "linearize")),
    );
    return unflatten(flat.outDef(), res);
  };
  return [unflatten(flat.outDef(), outs), jvpFn];
}
const evalLinear = (lin: ClosedIR, xs: Array[]): Array[] => evalIR(lin.ir, lin.consts, xs);

// `what` names the transform in the error (the message used to lack the operation).
function castLike(x: Array, like: Array, what: string): Array {
  if (x.shape.join() !== like.shape.join())
    throw new Error(
      `${what}: tangent shape ${fmtShape(x.shape)} does not match ` +
        `primal ${like.aval}; give one tangent per primal with the same shape.`,
    );
  return isFloat(like.dtype) && x.dtype !== like.dtype ? convert(x, like.dtype) : x;
}

/**
 * Forward mode: `jvp(f, primals, tangents)` → `[f(...primals), J·tangents]`, with one tangent
 * per primal (same structure and shapes).
 *
 * @example
 * const [y, dy] = jvp((x: Array) => np.sin(x), [x], [np.onesLike(x)]);   // dy = cos(x)
 */
export function jvp<A extends unknown[], R>(
  f: (...args: A) => R,
  primals: readonly [...A],
  tangents: readonly [...TreeLikeArgs<A>],
): [Arrayed<R>, Arrayed<R>];
export function jvp(
  f: (...args: any[]) => unknown,
  primals: readonly unknown[],
  tangents: readonly unknown[],
): [unknown, unknown] {
  if (!globalThis.Array.isArray(primals) || !globalThis.Array.isArray(tangents)) {
    throw new Error("jvp: primals and tangents must be JS arrays with one entry per argument: jvp(f, [x], [t]).");
  }
  const [pl, pd] = flattenArgs(primals, "jvp");
  const [tl, td] = flattenArgs(tangents, "jvp tangents");
  if (!treedefEqual(pd, td))
    throw new Error(`jvp: tangents have structure ${treedefString(td)} but primals have ${treedefString(pd)}.`);
  const flat = flattenFun(f, pd, "jvp");
  const [outs, touts] = jvpFlat(
    flat.f,
    pl,
    pl.map((p, i) => (isFloat(p.dtype) ? castLike(tl[i]!, p, "jvp") : new Zero(tangentAval(p.aval)))),
  );
  const def = flat.outDef();
  return [unflatten(def, outs), unflatten(def, touts.map(instantiate))];
}

export type { GradOptions };

function checkDiffLeaves(args: readonly unknown[], argnums: readonly number[], what: string): void {
  argnums.forEach((a) => {
    const [leaves] = flatten(args[a]);
    leaves.forEach((l) => {
      const x = leafToArray(l, what);
      if (!isFloat(x.dtype)) {
        throw new Error(
          `${what}: argument ${a} contains a ${x.aval} array; gradients are only defined for float32/float64 inputs. ` +
            `Pass integer data through another argument (not in argnums) or convert it with .astype("float32").`,
        );
      }
    });
  });
}

/**
 * `valueAndGrad(f, { argnums, hasAux })(...args)` → `[value, grads]` (or `[[value, aux], grads]`
 * with `hasAux`). f returns a float scalar; the gradient has the structure of the argument(s).
 *
 * @example
 * const loss = (p: { w: Array; b: Array }) => np.sum(np.square(np.add(np.mul(p.w, 2), p.b)));
 * const [l, g] = valueAndGrad(loss)({ w: np.array([1, 2]), b: np.array([0, 1]) });   // g: { w, b }
 */
export function valueAndGrad<A extends unknown[], Aux, const O extends GradOptions & { readonly hasAux: true }>(
  f: (...args: A) => readonly [ScalarOut, Aux],
  opts: O,
): (...args: A) => [[Array, Arrayed<Aux>], GradOf<A, ArgnumsOf<O>>];
// biome-ignore lint/complexity/noBannedTypes: `{}` is the options literal a caller passes no keys in.
export function valueAndGrad<A extends unknown[], const O extends GradOptions & { readonly hasAux?: false } = {}>(
  f: (...args: A) => ScalarOut,
  opts?: O,
): (...args: A) => [Array, GradOf<A, ArgnumsOf<O>>];
export function valueAndGrad(
  f: (...args: any[]) => unknown,
  opts: GradOptions = {},
): (...args: any[]) => [unknown, unknown] {
  return (...args: unknown[]) => {
    const argnums = normArgnums(opts.argnums, args.length, "grad");
    checkDiffLeaves(args, argnums, "grad");
    let aux: unknown;
    const g = (...dargs: unknown[]) => {
      const full = [...args];
      argnums.forEach((a, k) => (full[a] = dargs[k]));
      let r: unknown = f(...full);
      if (opts.hasAux) {
        if (!globalThis.Array.isArray(r) || r.length !== 2)
          throw new Error("grad with hasAux: the function must return [value, aux].");
        aux = r[1];
        r = r[0];
      }
      const v = leafToArray(r, "grad");
      if (v.ndim !== 0 || !isFloat(v.dtype)) {
        throw new Error(
          `grad: the function must return a float scalar, got ${v.aval}. ` +
            `Reduce it (e.g. np.sum) or use vjp/jacrev for non-scalar outputs.`,
        );
      }
      return [v, aux];
    };
    const [[value, auxOut], vjpFn] = vjp(g as (...xs: unknown[]) => [Array, unknown], ...argnums.map((a) => args[a]));
    const grads = vjpFn([scalar(1, value.dtype), zerosAux(auxOut)] as never);
    const res = typeof opts.argnums === "number" || opts.argnums === undefined ? grads[0] : grads;
    return [opts.hasAux ? [value, auxOut] : value, res];
  };
}
/** Cotangents for aux outputs are zeros (aux is not differentiated). */
const zerosAux = (aux: unknown): unknown => {
  const [leaves, def] = flatten(aux);
  return unflatten(
    def,
    leaves.map((l) => zerosOf(leafToArray(l, "grad aux").aval.strong())),
  );
};

/**
 * `grad(f)` is the gradient of a scalar function with respect to its first argument (or the
 * arguments `argnums` names), with that argument's structure: `grad` of `(p: P) => Array` is
 * `(p: P) => P`. With `hasAux`, f returns `[value, aux]` and the result is `[grads, aux]`.
 *
 * @example
 * const f = (x: Array) => np.sum(np.mul(np.sin(x), x));
 * grad(f)(np.array([1, 2, 3]));   // sin x + x cos x
 */
export function grad<A extends unknown[], Aux, const O extends GradOptions & { readonly hasAux: true }>(
  f: (...args: A) => readonly [ScalarOut, Aux],
  opts: O,
): (...args: A) => [GradOf<A, ArgnumsOf<O>>, Arrayed<Aux>];
// biome-ignore lint/complexity/noBannedTypes: `{}` is the options literal a caller passes no keys in.
export function grad<A extends unknown[], const O extends GradOptions & { readonly hasAux?: false } = {}>(
  f: (...args: A) => ScalarOut,
  opts?: O,
): (...args: A) => GradOf<A, ArgnumsOf<O>>;
export function grad(f: (...args: any[]) => any, opts: GradOptions = {}): (...args: any[]) => unknown {
  const vg = valueAndGrad(f, opts as GradOptions & { hasAux?: false }) as (...args: unknown[]) => [unknown, unknown];
  return (...args: unknown[]) => {
    const [v, g] = vg(...args);
    return opts.hasAux ? [g, (v as unknown[])[1]] : g;
  };
}

// ---------------------------------------------------------------- Jacobians

function jacobianArg(args: readonly unknown[], argnums: number | undefined, what: string): [number, Array] {
  const a = normArgnums(argnums, args.length, what)[0]!;
  const x = args[a];
  if (!(x instanceof Array) && typeof x !== "number") {
    throw new Error(
      `${what}: the differentiated argument must be a single ` +
        `Array (got a pytree); flatten it with np.concatenate first.`,
    );
  }
  const arr = leafToArray(x, what);
  if (!isFloat(arr.dtype)) throw new Error(`${what}: argument ${a} is ${arr.aval}; Jacobians need float inputs.`);
  return [a, arr];
}

/** The options of `jacfwd`, `jacrev` and `hessian`: which (single Array) argument to differentiate, default 0. */
export interface JacobianOptions {
  readonly argnums?: number;
}

/**
 * Forward-mode Jacobian: one jvp per input basis vector, batched with vmap. Output leaves have shape out.shape +
 * x.shape.
 */
export function jacfwd<A extends unknown[], R>(
  f: (...args: A) => R,
  opts?: JacobianOptions,
): (...args: A) => Arrayed<R>;
export function jacfwd(f: (...args: any[]) => unknown, opts: JacobianOptions = {}): (...args: any[]) => unknown {
  return (...args: unknown[]) => {
    const [a, x] = jacobianArg(args, opts.argnums, "jacfwd");
    const n = x.size;
    const fx = (xi: Array) => {
      const full = [...args];
      full[a] = xi;
      return f(...full);
    };
    const basis = reshape(eyeOf(n, x.dtype), [n, ...x.shape]);
    let outDef: ReturnType<typeof flatten>[1] | null = null;
    const cols = vmapFlat(
      (t: Array) => {
        const [, tout] = jvp(fx, [x], [t]);
        const [leaves, def] = flatten(tout);
        outDef = def;
        return leaves.map((l) => leafToArray(l, "jacfwd"));
      },
      [basis],
      [0],
      (k) => new globalThis.Array(k).fill(-1),
    );
    return unflatten(
      outDef!,
      cols.map((c) => reshape(c, [...c.shape.slice(0, -1), ...x.shape])),
    );
  };
}

/**
 * Reverse-mode Jacobian: one vjp per output basis vector, batched with vmap. Output leaves have shape out.shape +
 * x.shape.
 */
export function jacrev<A extends unknown[], R>(
  f: (...args: A) => R,
  opts?: JacobianOptions,
): (...args: A) => Arrayed<R>;
export function jacrev(f: (...args: any[]) => unknown, opts: JacobianOptions = {}): (...args: any[]) => unknown {
  return (...args: unknown[]) => {
    const [a, x] = jacobianArg(args, opts.argnums, "jacrev");
    const fx = (xi: Array) => {
      const full = [...args];
      full[a] = xi;
      return f(...full);
    };
    const [out, vjpFn] = vjp(fx, x);
    const [outLeaves, outDef] = flatten(out);
    const outs = outLeaves.map((l) => leafToArray(l, "jacrev"));
    const rows = outs.map((o, k) => {
      const m = o.size;
      const basis = reshape(eyeOf(m, o.dtype), [m, ...o.shape]);
      const [r] = vmapFlat(
        (ct: Array) => {
          const cts = outs.map((oo, j) => (j === k ? ct : zerosOf(oo.aval.strong())));
          return [vjpFn(unflatten(outDef, cts) as never)[0] as Array];
        },
        [basis],
        [0],
        () => [0],
      );
      return reshape(r!, [...o.shape, ...x.shape]);
    });
    return unflatten(outDef, rows);
  };
}

/** The Hessian of a scalar function (jacfwd of jacrev): shape x.shape + x.shape. */
export function hessian<A extends unknown[], R>(
  f: (...args: A) => R,
  opts?: JacobianOptions,
): (...args: A) => Arrayed<R>;
export function hessian(f: (...args: any[]) => unknown, opts: JacobianOptions = {}): (...args: any[]) => unknown {
  return jacfwd(jacrev(f, opts), opts);
}

function eyeOf(n: number, dtype: ShapedArray["dtype"]): Array {
  const d = new (dtype === "float64" ? Float64Array : Float32Array)(n * n);
  for (let i = 0; i < n; i++) d[i * n + i] = 1;
  return fromTyped(d, [n, n], dtype);
}
