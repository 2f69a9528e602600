/** Batching: BatchTrace carries (value, batch dim) pairs and applies each primitive's vmap rule. */
import { range } from "../core/shape.js";
import type { Array } from "../core/array.js";
import { ShapedArray } from "../core/aval.js";
import type { BDim, Primitive } from "../core/primitive.js";
import { broadcastInDim, moveAxis } from "../core/prims/index.js";
import { normAxis } from "../core/shape.js";
import { broadcastPrefix, numLeaves, unflatten } from "../core/tree.js";
import { bind, fullRaise, Trace, Tracer, withMain, type MainTrace } from "../core/trace.js";
import { closeOverConsts, evalIR, traceToIR, type IR } from "../core/ir.js";
import { flattenArgs, flattenFun } from "./api-util.js";

export class BatchTracer extends Tracer {
  constructor(
    trace: Trace,
    readonly val: Array,
    readonly bdim: BDim,
  ) {
    super(trace);
  }
  get aval(): ShapedArray {
    const a = this.val.aval;
    return this.bdim === null
      ? a
      : new ShapedArray(
          a.shape.filter((_, i) => i !== this.bdim),
          a.dtype,
          a.weak,
        );
  }
}

interface BatchData {
  readonly axisSize: number;
}

export class BatchTrace extends Trace {
  get axisSize(): number {
    return (this.main.globalData as BatchData).axisSize;
  }
  pure(x: Array): Tracer {
    return new BatchTracer(this, x, null);
  }
  processPrimitive(prim: Primitive, tracers: Tracer[], params: unknown): Array[] {
    const ts = tracers as BatchTracer[];
    const vals = ts.map((t) => t.val);
    const dims = ts.map((t) => t.bdim);
    if (dims.every((d) => d === null)) return bind(prim, vals, params).map((o) => new BatchTracer(this, o, null));
    const [outs, odims] = prim.vmap(vals, dims, params, this.axisSize);
    return outs.map((o, i) => new BatchTracer(this, o, odims[i]!));
  }
}

/** Move a batch dim to `to`, materialising a broadcast for unbatched values. */
export function moveBatchAxis(x: Array, from: BDim, to: BDim, n: number): Array {
  if (to === null) {
    if (from === null) return x;
    throw new Error(`vmap: an output is batched but its outAxes entry is null; give it an axis (e.g. 0).`);
  }
  if (from === null) {
    const shape = [...x.shape];
    shape.splice(to, 0, n);
    return broadcastInDim(
      x,
      shape,
      x.shape.map((_, i) => (i < to ? i : i + 1)),
    );
  }
  return moveAxis(x, from, to);
}

/** vmap on flat arrays: inAxes/outAxes per leaf, already normalised. */
export function vmapFlat(
  f: (...xs: Array[]) => Array[],
  args: readonly Array[],
  inAxes: readonly BDim[],
  outAxes: (nOut: number) => readonly BDim[],
  axisSize?: number,
): Array[] {
  let n = axisSize;
  args.forEach((a, i) => {
    const d = inAxes[i];
    if (d === null || d === undefined) return;
    const s = a.shape[d]!;
    if (n === undefined) n = s;
    else if (n !== s) {
      const sizes = args.map((x, k) => (inAxes[k] === null ? null : `${x.aval}@${inAxes[k]}`)).filter(Boolean);
      throw new Error(
        `vmap: batched arguments have different sizes along their ` +
          `mapped axes (${n} vs ${s}); inputs: ${sizes.join(", ")}.`,
      );
    }
  });
  if (n === undefined)
    throw new Error(
      "vmap: no argument is mapped (every inAxes entry is null); " +
        "map at least one argument or call the function directly.",
    );
  const size = n;
  return withMain(BatchTrace, "vmap", { axisSize: size } satisfies BatchData, (main: MainTrace) => {
    const trace = new BatchTrace(main);
    const ins = args.map((a, i) => new BatchTracer(trace, a, inAxes[i] ?? null));
    const outs = f(...ins).map((o) => fullRaise(trace, o) as BatchTracer);
    const oa = outAxes(outs.length);
    return outs.map((o, i) => {
      const to = oa[i] ?? null;
      const rank = o.val.ndim + (o.bdim === null ? 1 : 0);
      return moveBatchAxis(o.val, o.bdim, to === null ? null : normAxis("vmap outAxes", to, rank), size);
    });
  });
}

export interface VmapOptions {
  /** Per argument (a prefix pytree): the mapped axis, or null to broadcast. Default 0. */
  readonly inAxes?: unknown;
  /** Per output (a prefix pytree): where the mapped axis goes. Default 0. */
  readonly outAxes?: unknown;
  /** Batch size when no input is mapped. */
  readonly axisSize?: number;
}

/** Vectorise f over a mapped axis of its arguments. */
export function vmap<F extends (...args: any[]) => any>(f: F, opts: VmapOptions = {}): F {
  return ((...args: unknown[]) => {
    const [leaves, inDef] = flattenArgs(args, "vmap");
    const perLeaf = broadcastPrefix(opts.inAxes === undefined ? 0 : opts.inAxes, args, "vmap inAxes") as (
      | number
      | null
    )[];
    const inAxes = perLeaf.map((d, i) => {
      if (d === null) return null;
      if (typeof d !== "number")
        throw new Error(`vmap: inAxes entries must be numbers or null, got ${JSON.stringify(d)}.`);
      const a = leaves[i]!;
      if (a.ndim === 0)
        throw new Error(`vmap: cannot map axis ${d} of a scalar argument (${a.aval}); use inAxes null for it.`);
      return normAxis("vmap inAxes", d, a.ndim);
    });
    const flat = flattenFun(f, inDef, "vmap");
    const outs = vmapFlat(
      flat.f,
      leaves,
      inAxes,
      () => {
        const def = flat.outDef();
        const outTemplate = unflatten(def, range(numLeaves(def)));
        const oRaw = opts.outAxes === undefined ? 0 : opts.outAxes;
        return broadcastPrefix(oRaw, outTemplate, "vmap outAxes") as (number | null)[];
      },
      opts.axisSize,
    );
    return unflatten(flat.outDef(), outs);
  }) as F;
}

/**
 * f batched as an IR: inputs [consts..., ir inputs with a leading batch axis where `batched`],
 * all outputs batched at axis 0.
 */
export function vmapIR(ir: IR, batched: readonly boolean[], n: number): { ir: IR; consts: Array[] } {
  const avals = ir.inAvals.map((a, i) => (batched[i] ? a.withShape([n, ...a.shape]) : a));
  const closed = traceToIR(
    (...xs: Array[]) =>
      vmapFlat(
        (...ys) => evalIR(ir, [], ys),
        xs,
        batched.map((b) => (b ? 0 : null)),
        (k) => new globalThis.Array(k).fill(0),
        n,
      ),
    avals,
    "vmap",
  );
  return { ir: closeOverConsts(closed.ir), consts: [...closed.consts] };
}

/** Operands moved so batched ones have their batch axis at 0; returns the batched mask. */
export function batchToFront(args: readonly Array[], dims: readonly BDim[]): [Array[], boolean[]] {
  return [args.map((a, i) => (dims[i] === null ? a : moveAxis(a, dims[i]!, 0))), dims.map((d) => d !== null)];
}
