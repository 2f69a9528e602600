/**
 * lax.scan: a loop whose body is traced once into an IR. Reverse mode never unrolls: the jvp
 * rule splits the body into a primal scan (which also emits per-step residuals) and a linear
 * tangent scan, whose transpose is a reverse scan of the transposed body. With
 * `checkpoint: true` the loop is split into ~√T segments under `checkpoint`, so only segment
 * boundaries are stored and each segment is recomputed on the way back (memory O(√T)).
 */
import type { Array } from "../core/array.js";
import type { ShapedArray } from "../core/aval.js";
import { closeOverConsts, evalIR, IR, memoOnIR, traceToIR } from "../core/ir.js";
import { definePrimitive, type Primitive } from "../core/primitive.js";
import { add, broadcastInDim, concatenate, convert, moveAxis, reshape, rev, sliceAxis } from "../core/prims/index.js";
import { fmtShape, range } from "../core/shape.js";
import { isUndef, isZero, Zero, type Tangent } from "../core/tangent.js";
import { bind } from "../core/trace.js";
import { flatten, treedefEqual, treedefString, unflatten } from "../core/tree.js";
import { leafToArray } from "./api-util.js";
import { checkpoint } from "./custom.js";
import { jvpIR, partialEval, partialEvalRemat, permuteInputs } from "./partial-eval.js";
import { transposeIR } from "./transpose.js";
import { instantiate, zerosOf } from "./vjp.js";
import { vmapIR } from "./vmap.js";
import type { Carry } from "./types.js";
import { recomputeResiduals } from "./scan-remat.js";
import { cpuCompileEnabled, cpuProgramFor, runIR } from "../core/run-ir.js";
import { hasEffects } from "../core/effects.js";
import type { CpuProgram } from "../core/compile/cpu-program.js";
import { holdDuring } from "../core/compile/wasm-kernel.js";
import { ConcreteArray } from "../core/concrete.js";
import { cpuBackend } from "../core/backends/cpu/cpu.js";
import { promoteTypes, typedArrayFor, typedArraysFor, type TypedArray } from "../core/dtype.js";

export interface ScanParams {
  /** inputs [consts, carry, x]; outputs [carry, y] */
  readonly body: IR;
  readonly nConsts: number;
  readonly nCarry: number;
  readonly length: number;
  readonly reverse: boolean;
}

/** x[t] along axis 0. */
const step = (x: Array, t: number): Array => reshape(sliceAxis(x, 0, t, t + 1), x.shape.slice(1));
const stack = (items: readonly Array[], aval: ShapedArray, length: number): Array =>
  length === 0
    ? zerosOf(aval.withShape([0, ...aval.shape]))
    : concatenate(
        items.map((y) => reshape(y, [1, ...y.shape])),
        0,
      );

export const scanP: Primitive<ScanParams> = definePrimitive<ScanParams>({
  name: "scan",
  shape: (avals, p) => {
    const { body, nConsts: nc, nCarry: ncar, length } = p;
    const ins = body.inAvals;
    if (avals.length !== ins.length)
      throw new Error(`internal: scan got ${avals.length} operands for a body with ${ins.length} inputs.`);
    avals.forEach((a, i) => {
      const want = i < nc + ncar ? ins[i]! : ins[i]!.withShape([length, ...ins[i]!.shape]);
      if (a.dtype !== want.dtype || a.shape.join() !== want.shape.join())
        throw new Error(`internal: scan operand ${i} is ${a}, body expects ${want}.`);
    });
    const outs = body.outAvals;
    return [...outs.slice(0, ncar), ...outs.slice(ncar).map((y) => y.withShape([length, ...y.shape]))];
  },
  evaluate: (args, p) => {
    if (
      cpuCompileEnabled() &&
      !hasEffects(p.body) &&
      args.every((a) => a instanceof ConcreteArray && a.backend.name === "cpu")
    )
      return scanOnCpu(args as ConcreteArray[], p);
    return evalScanStepwise(args, p);
  },
  jvp: (primals, tangents, p) => scanJvp(primals, tangents, p),
  transpose: (cts, args, p) => scanTranspose(cts, args, p),
  vmap: (args, dims, p, n) => {
    const { body, nConsts: nc, nCarry: ncar } = p;
    const moved = args.map((a, i) => {
      const d = dims[i];
      if (i >= nc && i < nc + ncar)
        return d === null
          ? broadcastInDim(
              a,
              [n, ...a.shape],
              a.shape.map((_, k) => k + 1),
            )
          : moveAxis(a, d!, 0);
      if (d === null) return a;
      return i < nc ? moveAxis(a, d!, 0) : moveAxis(a, d!, 1);
    });
    const batched = args.map((_, i) => (i >= nc && i < nc + ncar) || dims[i] !== null);
    const v = memoOnIR(body, `scan:vmap:${n}:${batched.map(Number).join("")}`, () => vmapIR(body, batched, n));
    const outs = bind(scanP, [...v.consts, ...moved], { ...p, body: v.ir, nConsts: v.consts.length + nc });
    return [outs, outs.map((_, i) => (i < ncar ? 0 : 1))];
  },
  printParams: (p) => `length=${p.length} n_consts=${p.nConsts} n_carry=${p.nCarry}${p.reverse ? " reverse" : ""}`,
});

/** The reference loop: the body run once per step, op by op or by whichever backend runs IRs. */
function evalScanStepwise(args: readonly Array[], p: ScanParams): Array[] {
  const { body, nConsts: nc, nCarry: ncar, length, reverse } = p;
  const consts = args.slice(0, nc);
  let carry = args.slice(nc, nc + ncar);
  const xs = args.slice(nc + ncar);
  const ny = body.outs.length - ncar;
  const ys: Array[][] = [...globalThis.Array(ny)].map(() => new globalThis.Array<Array>(length));
  for (let i = 0; i < length; i++) {
    const t = reverse ? length - 1 - i : i;
    const outs = runIR(body, [...consts, ...carry, ...xs.map((x) => step(x, t))]);
    carry = outs.slice(0, ncar);
    outs.slice(ncar).forEach((y, k) => (ys[k]![t] = y));
  }
  return [...carry, ...ys.map((items, k) => stack(items, body.outAvals[ncar + k]!, length))];
}

/** A body program's two alternating sets of carry buffers, reused across scans. */
interface ScanScratch {
  readonly carries: TypedArray[][];
  busy: boolean;
}
const scratchOf = new WeakMap<CpuProgram, ScanScratch>();
function scanScratch(prog: CpuProgram, carryAvals: readonly ShapedArray[]): ScanScratch {
  const cached = scratchOf.get(prog);
  if (cached && !cached.busy) return cached;
  const fresh = { carries: [0, 1].map(() => carryAvals.map((a) => typedArrayFor(a.dtype, a.size))), busy: false };
  if (!cached) scratchOf.set(prog, fresh);
  return fresh;
}

/**
 * The CPU loop: the body is one compiled program run on raw buffers; step t reads its x[t] in
 * place in the stacked xs and writes y[t] in place into preallocated stacked outputs (offsets,
 * no copies or views).
 */
function scanOnCpu(args: readonly ConcreteArray[], p: ScanParams): Array[] {
  const { body, nConsts: nc, nCarry: ncar, length, reverse } = p;
  if (length === 0) return evalScanStepwise(args, p);
  const prog = cpuProgramFor(body);
  const nx = args.length - nc - ncar;
  const xSizes = body.inAvals.slice(nc + ncar).map((a) => a.size);
  const carryAvals = body.outAvals.slice(0, ncar),
    yAvals = body.outAvals.slice(ncar);
  const ySizes = yAvals.map((a) => a.size);
  const ys = typedArraysFor(
    yAvals.map((a) => a.dtype),
    ySizes.map((n) => n * length),
  );
  const scratch = scanScratch(prog, carryAvals);
  scratch.busy = true;
  try {
    const inputs = args.map((a) => a.buffer as TypedArray);
    const into: TypedArray[] = [...scratch.carries[0]!, ...ys];
    const inOffsets = new Int32Array(inputs.length),
      intoOffsets = new Int32Array(into.length);
    // The constant operands are the same at every step (kernels may keep their copies for the scan).
    holdDuring(inputs.slice(0, nc), () => {
      for (let i = 0; i < length; i++) {
        const t = reverse ? length - 1 - i : i;
        // Carries alternate between two sets of buffers: a step never writes the arrays it reads.
        const carryTo = scratch.carries[i % 2]!;
        for (let k = 0; k < ncar; k++) into[k] = carryTo[k]!;
        for (let k = 0; k < nx; k++) inOffsets[nc + ncar + k] = t * xSizes[k]!;
        for (let k = 0; k < ys.length; k++) intoOffsets[ncar + k] = t * ySizes[k]!;
        const outs = prog.runBuffers(inputs, into, inOffsets, intoOffsets);
        for (let k = 0; k < ncar; k++) inputs[nc + k] = outs[k]!;
      }
    });
    // The last carries live in the reused buffers: hand out copies.
    const carry = carryAvals.map((a, k) => new ConcreteArray(a, cpuBackend, inputs[nc + k]!.slice()));
    return [
      ...carry,
      ...ys.map((d, k) => new ConcreteArray(yAvals[k]!.withShape([length, ...yAvals[k]!.shape]), cpuBackend, d)),
    ];
  } finally {
    scratch.busy = false;
  }
}

function scanJvp(primals: readonly Array[], tangents: readonly Tangent[], p: ScanParams): [Array[], Tangent[]] {
  const { body, nConsts: nc, nCarry: ncar, length, reverse } = p;
  const nx = primals.length - nc - ncar;
  const ny = body.outs.length - ncar;
  if (tangents.every(isZero)) {
    const outs = bind(scanP, primals, p);
    return [outs, outs.map((o) => new Zero(o.aval.strong()))];
  }
  // Carry tangents are always instantiated (the loop may make a zero tangent non-zero).
  const nonzero = tangents.map((t, i) => (i >= nc && i < nc + ncar) || !isZero(t));
  // Residuals stored per step, or recomputed from the step's inputs by the tangent body (scan-remat.ts).
  const remat = recomputeResiduals(body);
  const mode = `${remat ? "r" : "s"}${nonzero.map(Number).join("")}`;
  const { j, split } = memoOnIR(body, `scan:jvp:${mode}`, () => {
    const jj = jvpIR(body, nonzero);
    return {
      j: jj,
      split: (remat ? partialEvalRemat : partialEval)(jj.ir, jj.consts.length + body.inVars.length, body.outs.length),
    };
  });
  const nj = j.consts.length;
  // Residual kinds: loop-invariant (a const input), a reused xs operand, or emitted per step by the primal scan.
  const kind = split.resFromInput.map((k) => (k >= 0 && k < nj + nc ? "const" : k >= nj + nc + ncar ? "xs" : "emit"));
  const idxOf = (kd: string) => kind.flatMap((k, r) => (k === kd ? [r] : []));
  const rConst = idxOf("const"),
    rXs = idxOf("xs"),
    rEmit = idxOf("emit");
  const knownBody = memoOnIR(body, `scan:jvpknown:${mode}`, () => {
    const k = split.known;
    const resVars = k.outs.slice(body.outs.length);
    return new IR(k.inVars, [], k.eqns, [...k.outs.slice(0, body.outs.length), ...rEmit.map((r) => resVars[r]!)]);
  });
  const primalOps = [...j.consts, ...primals];
  const pOut = bind(scanP, primalOps, { body: knownBody, nConsts: nj + nc, nCarry: ncar, length, reverse });
  const emitted = pOut.slice(ncar + ny);
  // Tangent scan: consts [invariant residuals, const tangents], carry [carry tangents], xs [emitted, reused xs, xs
  // tangents].
  const nzC = range(nc).filter((i) => nonzero[i]);
  const nzX = range(nx).filter((i) => nonzero[nc + ncar + i]);
  const nRes = split.resFromInput.length;
  const tBody = memoOnIR(body, `scan:jvptan:${mode}`, () => {
    const tIdx = (k: number) => nRes + k; // index into unknown inputs after residuals
    const order = [
      ...rConst,
      ...nzC.map((_, k) => tIdx(k)),
      ...range(ncar).map((k) => tIdx(nzC.length + k)),
      ...rEmit,
      ...rXs,
      ...nzX.map((_, k) => tIdx(nzC.length + ncar + k)),
    ];
    return permuteInputs(split.unknown, order);
  });
  const resVal = (r: number): Array => {
    const k = split.resFromInput[r]!;
    return primalOps[k]!;
  };
  const tOps = [
    ...rConst.map(resVal),
    ...nzC.map((i) => tangents[i] as Array),
    ...range(ncar).map((k) => instantiate(tangents[nc + k]!)),
    ...emitted,
    ...rXs.map(resVal),
    ...nzX.map((i) => tangents[nc + ncar + i] as Array),
  ];
  const tOut = bind(scanP, tOps, { body: tBody, nConsts: rConst.length + nzC.length, nCarry: ncar, length, reverse });
  return [pOut.slice(0, ncar + ny), tOut];
}

function scanTranspose(
  cts: readonly Tangent[],
  args: readonly (Array | { aval: ShapedArray })[],
  p: ScanParams,
): (Tangent | null)[] {
  const { body, nConsts: nc, nCarry: ncar, length, reverse } = p;
  // A carry that is known here is a tangent instantiated as zeros (an initial carry that does not
  // depend on the differentiated inputs). The body is linear in the carry, so it is transposed as
  // linear all the same; the known value's cotangent is simply dropped by the caller.
  const knownMask = args.map((a, i) => !isUndef(a) && !(i >= nc && i < nc + ncar));
  const t = memoOnIR(body, `scan:T:${knownMask.map(Number).join("")}`, () => transposeIR(body, knownMask));
  const nt = t.consts.length;
  const kc = range(nc).filter((i) => knownMask[i]);
  const uc = range(nc).filter((i) => !knownMask[i]);
  const nx = args.length - nc - ncar;
  const kx = range(nx).filter((i) => knownMask[nc + ncar + i]);
  const ux = range(nx).filter((i) => !knownMask[nc + ncar + i]);
  const avalOf = (i: number) => (args[i] as { aval: ShapedArray }).aval.strong();
  // Transposed loop: consts [transpose consts, known consts], carry [const-cotangent accumulators, carry cotangents],
  // xs [known xs, output cotangents of y].
  const tb = memoOnIR(body, `scan:Tbody:${knownMask.map(Number).join("")}`, () => {
    const inAvals = [
      ...t.ir.inAvals.slice(0, nt),
      ...kc.map((i) => body.inAvals[i]!),
      ...uc.map((i) => body.inAvals[i]!.strong()),
      ...body.outAvals.slice(0, ncar).map((a) => a.strong()),
      ...kx.map((i) => body.inAvals[nc + ncar + i]!),
      ...body.outAvals.slice(ncar).map((a) => a.strong()),
    ];
    const closed = traceToIR(
      (...xs: Array[]) => {
        let k = 0;
        const take = (n: number) => xs.slice(k, (k += n));
        const tcs = take(nt),
          kcv = take(kc.length),
          acc = take(uc.length),
          cc = take(ncar),
          kxv = take(kx.length),
          cy = take(body.outs.length - ncar);
        const res = evalIR(t.ir, [], [...tcs, ...kcv, ...kxv, ...cc, ...cy]);
        const ctC = res.slice(0, uc.length),
          ctCarry = res.slice(uc.length, uc.length + ncar),
          ctX = res.slice(uc.length + ncar);
        return [...acc.map((a, i) => add(a, ctC[i]!)), ...ctCarry, ...ctX];
      },
      inAvals,
      "scan transpose",
    );
    return { ir: closeOverConsts(closed.ir), consts: [...closed.consts] };
  });
  const ops = [
    ...tb.consts,
    ...t.consts,
    ...kc.map((i) => args[i] as Array),
    ...uc.map((i) => zerosOf(avalOf(i))),
    ...cts.slice(0, ncar).map(instantiate),
    ...kx.map((i) => args[nc + ncar + i] as Array),
    ...cts.slice(ncar).map(instantiate),
  ];
  const out = bind(scanP, ops, {
    body: tb.ir,
    nConsts: tb.consts.length + nt + kc.length,
    nCarry: uc.length + ncar,
    length,
    reverse: !reverse,
  });
  const res: (Tangent | null)[] = args.map(() => null);
  uc.forEach((i, k) => (res[i] = out[k]!));
  for (let k = 0; k < ncar; k++) res[nc + k] = out[uc.length + k]!;
  ux.forEach((i, k) => (res[nc + ncar + i] = out[uc.length + ncar + k]!));
  return res;
}

export interface ScanOptions {
  readonly length?: number;
  readonly reverse?: boolean;
  /** Store only ~√T carries for reverse mode and recompute the rest (memory O(√T)). */
  readonly checkpoint?: boolean;
}

/** scan(f, init, xs): f(carry, x) → [carry, y]; returns [final carry, stacked ys]. */
export function scan<C extends Carry, X, Y>(
  f: (carry: C, x: X) => readonly [C, Y],
  init: C,
  xs: X,
  opts: ScanOptions = {},
): [C, Y] {
  const [xLeaves, xDef] = flatten(xs);
  const xArr = xLeaves.map((l) => leafToArray(l, "lax.scan xs"));
  let length = opts.length;
  for (const x of xArr) {
    if (x.ndim === 0)
      throw new Error(`lax.scan: every leaf of xs needs a leading (time) axis; got a scalar ${x.aval}.`);
    if (length === undefined) length = x.shape[0];
    else if (x.shape[0] !== length) {
      throw new Error(
        `lax.scan: xs leaves have leading sizes ${xArr.map((a) => a.shape[0]).join(", ")}` +
          `${opts.length !== undefined ? ` and length is ${opts.length}` : ""}` +
          `; they must all equal the scan length.`,
      );
    }
  }
  if (length === undefined) throw new Error("lax.scan: give xs with a leading axis or { length } when xs is null.");
  if (!Number.isInteger(length) || length < 0)
    throw new Error(`lax.scan: length must be a non-negative integer, got ${length}.`);
  if (opts.checkpoint && length > 3) return checkpointedScan(f, init, xs, length, opts.reverse ?? false);
  const [cLeaves, cDef] = flatten(init);
  let cArr = cLeaves.map((l) => leafToArray(l, "lax.scan init")).map((c) => (c.aval.weak ? convert(c, c.dtype) : c));
  // Read while tracing the body below, so it must exist before traceToIR (it used to be declared after: a TDZ
  // ReferenceError).
  const cLeavesWeak = cLeaves.map((l) => typeof l === "number" || (l as Array).aval?.weak === true);
  // As in JAX, a weakly typed initial carry (a JS number) takes the dtype the body gives it when
  // that is its promotion (0 with float64 data carries float64, not a silently rounded float32):
  // the body is then traced once more with the promoted carry.
  let promoted: (ShapedArray["dtype"] | null)[] = cArr.map(() => null);
  let yDef: ReturnType<typeof flatten>[1] | null = null;
  const traceBody = () =>
    traceToIR(
      (...flat: Array[]) => {
        const c = unflatten(cDef, flat.slice(0, cArr.length)) as C;
        const x = unflatten(xDef, flat.slice(cArr.length)) as X;
        const r = f(c, x);
        if (!globalThis.Array.isArray(r) || r.length !== 2)
          throw new Error("lax.scan: the body must return [newCarry, y] (y may be null).");
        const [c2, d2] = flatten(r[0]);
        if (!treedefEqual(d2, cDef))
          throw new Error(
            `lax.scan: the body's new carry has structure ${treedefString(d2)}, ` +
              `but the initial carry has ${treedefString(cDef)}.`,
          );
        const c2a = c2.map((l, i) => {
          const a = leafToArray(l, "lax.scan carry");
          const want = cArr[i]!;
          if (a.shape.join() !== want.shape.join())
            throw new Error(
              `lax.scan: carry leaf ${i} enters the body as ${want.aval} but leaves ` +
                `it with shape ${fmtShape(a.shape)}; carries must keep their shape.`,
            );
          if (a.dtype !== want.dtype) {
            if (!a.aval.weak && !cLeavesWeak[i])
              throw new Error(
                `lax.scan: carry leaf ${i} enters as ${want.aval} but leaves ` +
                  `as ${a.aval}; cast it (or the initial value) so the dtypes match.`,
              );
            if (
              !a.aval.weak &&
              promoteTypes([
                { dtype: want.dtype, weak: true },
                { dtype: a.dtype, weak: false },
              ]).dtype === a.dtype
            )
              promoted[i] = a.dtype;
            return convert(a, want.dtype);
          }
          return a.aval.weak ? convert(a, a.dtype) : a;
        });
        const [yl, yd] = flatten(r[1]);
        yDef = yd;
        return [
          ...c2a,
          ...yl.map((l) => {
            const a = leafToArray(l, "lax.scan y");
            return a.aval.weak ? convert(a, a.dtype) : a;
          }),
        ];
      },
      [...cArr.map((c) => c.aval), ...xArr.map((x) => x.aval.withShape(x.shape.slice(1)).strong())],
      "lax.scan",
    );
  let closed = traceBody();
  if (promoted.some((d) => d !== null)) {
    cArr = cArr.map((c, i) => (promoted[i] ? convert(c, promoted[i]!) : c));
    promoted = cArr.map(() => null);
    closed = traceBody();
  }
  const outs = bind(scanP, [...closed.consts, ...cArr, ...xArr.map((x) => (x.aval.weak ? convert(x, x.dtype) : x))], {
    body: closeOverConsts(closed.ir),
    nConsts: closed.consts.length,
    nCarry: cArr.length,
    length,
    reverse: opts.reverse ?? false,
  });
  return [unflatten(cDef, outs.slice(0, cArr.length)) as C, unflatten(yDef!, outs.slice(cArr.length)) as Y];
}

/** Scan over ~√T segments, each a checkpointed inner scan (only segment boundaries are stored for reverse mode). */
function checkpointedScan<C extends Carry, X, Y>(
  f: (carry: C, x: X) => readonly [C, Y],
  init: C,
  xs: X,
  length: number,
  reverse: boolean,
): [C, Y] {
  const K = Math.ceil(Math.sqrt(length));
  const nSeg = Math.floor(length / K),
    rem = length - nSeg * K;
  const mapX = (g: (a: Array) => Array): X => (xs === null || xs === undefined ? xs : mapTree(xs, g));
  const xsF = reverse ? mapX((a) => rev(a, [0])) : xs;
  const split = (g: (a: Array) => Array): X => (xsF === null || xsF === undefined ? xsF : mapTree(xsF, g));
  const xsMain = split((a) => reshape(sliceAxis(a, 0, 0, nSeg * K), [nSeg, K, ...a.shape.slice(1)]));
  const segment = checkpoint((c: C, xseg: X) => scan(f, c, xseg, { length: K }));
  const [c1, ysMain] = scan((c: C, xseg: X) => segment(c, xseg), init, xsMain, { length: nSeg });
  let carry = c1;
  let ys = mapTree(ysMain, (y) => reshape(y, [nSeg * K, ...y.shape.slice(2)])) as Y;
  if (rem > 0) {
    const [c2, ysRem] = scan(
      f,
      c1,
      split((a) => sliceAxis(a, 0, nSeg * K, length)),
      { length: rem },
    );
    carry = c2;
    ys = mapTree2(ys, ysRem, (a, b) => concatenate([a, b], 0)) as Y;
  }
  if (reverse) ys = mapTree(ys, (y) => rev(y, [0])) as Y;
  return [carry, ys];
}
const mapTree = <T>(t: T, g: (a: Array) => Array): T => {
  const [l, d] = flatten(t);
  return unflatten(
    d,
    l.map((x) => g(leafToArray(x, "lax.scan"))),
  );
};
const mapTree2 = <T>(a: T, b: T, g: (x: Array, y: Array) => Array): T => {
  const [la, d] = flatten(a);
  const [lb] = flatten(b);
  return unflatten(
    d,
    la.map((x, i) => g(x as Array, lb[i] as Array)),
  );
};
