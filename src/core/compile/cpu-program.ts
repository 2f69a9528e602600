/**
 * The CPU jit: an IR is planned into kernels and routines once, kernels become JavaScript
 * functions, and running the program walks the steps over typed arrays. Intermediates are
 * allocated once per program and reused by each run; they never leave one.
 */
import type { Array } from "../array.js";
import type { ShapedArray } from "../aval.js";
import { ConcreteArray } from "../concrete.js";
import { typedArrayFor, type TypedArray } from "../dtype.js";
import type { IR, Var } from "../ir.js";
import { bind } from "../trace.js";
import { cpuBackend } from "../backends/cpu/cpu.js";
import { cse, foldConstants, inlineCalls } from "./inline.js";
import { JS_HELPERS, kernelToJs } from "./jsgen.js";
import { plan, type KernelStep, type PlanOptions, type ProgramSpec } from "./plan.js";
import { dce } from "./dce.js";
import { isolateScatterUpdates } from "./scatter-updates.js";
import { nodeBuiltin } from "../node-builtin.js";
import { threadWorthIt } from "./threads.js";
import {
  cpuKernels,
  kernelRunWork,
  markImmutable,
  wasmKernelFor,
  type CpuKernels,
  type WasmKernel,
} from "./wasm-kernel.js";

type KernelFn = (B: TypedArray[], O: Int32Array) => void;
interface Layout {
  readonly outIndex: Int32Array;
  readonly released: readonly number[];
  readonly writtenBy: readonly (readonly number[])[];
  readonly outputsOf: readonly (readonly number[])[];
}

/**
 * V8 never optimizes functions above ~60 KB of bytecode, and fused kernels (rasterizer
 * backward passes) can be larger; interpreted they run 5–10× slower. Raise the limit once, in
 * Node, before compiling the first big kernel (browsers have no such switch; nothing happens there).
 */
let v8LimitRaised = false;
function allowBigKernels(): void {
  if (v8LimitRaised) return;
  v8LimitRaised = true;
  const v8 = nodeBuiltin<{ setFlagsFromString?: (f: string) => void }>("node:v8");
  v8?.setFlagsFromString?.("--max-optimized-bytecode-size=16000000");
}

/** How many program runs are under way (nested: a routine of one runs another). */
let programDepth = 0;

/** A function of the kernels' sources run one after the other (each in a block of its own). */
function compileKernels(sources: readonly string[]): KernelFn {
  const src = sources.length === 1 ? sources[0]! : sources.map((k) => `{\n${k}\n}`).join("\n");
  if (src.length > 30_000) allowBigKernels();
  try {
    return new Function("H", `"use strict"; return function kernel(B, O) {\n${src}\n};`)(JS_HELPERS) as KernelFn;
  } catch (e) {
    throw new Error(`internal: generated kernel does not compile (${(e as Error).message}):\n${src}`);
  }
}

/** The lanes of a kernel mode's WebAssembly kernels. */
const lanesOf = (form: CpuKernels): 1 | 2 | 4 => (form === "wasm" ? 4 : form === "wasm-f64x2" ? 2 : 1);

/** Consecutive JavaScript kernels run as one function up to this much source (V8 still optimises it quickly). */
const GROUP_SOURCE_MAX = 60_000;

/** Per step, the end of the run of JavaScript kernels it starts (or its own end), and that run's function. */
interface KernelRuns {
  readonly end: Int32Array;
  readonly fn: (KernelFn | null)[];
}

export class CpuProgram {
  private readonly fns: (KernelFn | null)[];
  private readonly sources: (string | null)[];
  constructor(
    readonly spec: ProgramSpec,
    readonly outAvals: readonly ShapedArray[],
  ) {
    const constIds = new Set(spec.consts.map(([id]) => id));
    this.offsetBufs = new Set([...spec.inputs, ...spec.outputs].filter((id) => !constIds.has(id)));
    this.sources = spec.steps.map((s) => (s.kind === "kernel" ? kernelToJs(s, this.offsetBufs) : null));
    this.fns = this.sources.map((src) => (src === null ? null : compileKernels([src])));
  }

  /**
   * Runs of consecutive kernels that stay JavaScript in this kernel mode (no WebAssembly form, no accumulators), each
   * compiled as one function: a scan's step of a rigid body runs ~160 small kernels, and calling each on its own
   * (the step loop, the call, the buffer lookups) cost as much as their work.
   */
  private kernelRuns(form: CpuKernels): KernelRuns {
    let r = this.runsByForm.get(form);
    if (r) return r;
    const { steps } = this.spec;
    const lanes = lanesOf(form);
    const plainJs = (i: number): boolean => {
      const s = steps[i]!;
      return (
        s.kind === "kernel" && s.accumulators.length === 0 && (form === "js" || this.wasmKernel(i, lanes) === null)
      );
    };
    const end = new Int32Array(steps.length);
    const fn: (KernelFn | null)[] = new globalThis.Array(steps.length).fill(null);
    for (let i = 0; i < steps.length; ) {
      let j = i + 1;
      if (plainJs(i)) {
        let size = this.sources[i]!.length;
        while (j < steps.length && plainJs(j) && size + this.sources[j]!.length <= GROUP_SOURCE_MAX)
          size += this.sources[j++]!.length;
      }
      end[i] = j;
      if (j > i + 1) fn[i] = compileKernels(this.sources.slice(i, j) as string[]);
      i = j;
    }
    r = { end, fn };
    this.runsByForm.set(form, r);
    return r;
  }
  private readonly runsByForm = new Map<CpuKernels, KernelRuns>();
  /**
   * Per kernel step, its WebAssembly forms by lanes (1, 2, 4) and threading (lanes + 4 when threaded), made at
   * first use; null: stays JavaScript (or on one thread).
   */
  private readonly wasm: (WasmKernel | null | undefined)[][] = [];
  /** Per kernel step, its float operations per run. */
  private readonly work: number[] = [];
  // Called once per kernel step of every run: no closures here (a scan's step runs hundreds of small kernels, and
  // under tsx each closure made costs a defineProperty of its name).
  private wasmKernel(i: number, lanes: 1 | 2 | 4): WasmKernel | null {
    const forms = (this.wasm[i] ??= []);
    if (threadWorthIt((this.work[i] ??= kernelRunWork(this.spec.steps[i] as KernelStep)))) {
      const t = forms[lanes + 4] === undefined ? (forms[lanes + 4] = this.makeWasm(i, lanes, true)) : forms[lanes + 4]!;
      if (t) return t;
    }
    return forms[lanes] === undefined ? (forms[lanes] = this.makeWasm(i, lanes, false)) : forms[lanes]!;
  }
  private makeWasm(i: number, lanes: 1 | 2 | 4, threaded: boolean): WasmKernel | null {
    const { buffers, graph } = this.spec;
    return wasmKernelFor(
      this.spec.steps[i] as KernelStep,
      (id) => buffers[id]!,
      lanes,
      this.offsetBufs,
      graph,
      threaded,
    );
  }
  /** Source of every kernel, for inspection and tests. */
  kernelSources(): string[] {
    return this.sources.filter((s) => s !== null);
  }
  /** The buffers a caller may pass at an offset into a bigger array: inputs and outputs. */
  private readonly offsetBufs: ReadonlySet<number>;

  /**
   * The buffer table of a non-reentrant run, reused: it holds the consts and the intermediates
   * (allocated once; they never escape a run), and every other slot is written before it is read.
   */
  private table: TypedArray[] | undefined;
  /** Where each buffer's data starts in its array (non-zero only for a caller's inputs and outputs). */
  private offsets: Int32Array | undefined;
  private running = false;

  /**
   * Run on CPU arrays. `into[i]`, when given, receives output i (written in place by the kernel
   * that computes it, or copied): scan loops use it to write straight into stacked outputs.
   */
  run(args: readonly ConcreteArray[], into?: readonly (TypedArray | undefined)[]): ConcreteArray[] {
    // A top-level run's operands are arrays, which never change: a WebAssembly kernel may keep its
    // copy of one from run to run. (Inside another program's run, a routine's operands may be that
    // program's reused buffers.)
    const inputs = args.map((a) => a.buffer as TypedArray);
    if (programDepth === 0) for (const b of inputs) markImmutable(b);
    const outs = this.runBuffers(inputs, into);
    return outs.map((data, i) => new ConcreteArray(this.outAvals[i]!, cpuBackend, data));
  }

  /**
   * `run` on raw buffers (the scan loop's per-step path: no array objects are made). Input i is
   * read from element `inOffsets[i]` of `inputs[i]` on, and output i written from element
   * `intoOffsets[i]` of `into[i]` on (a scan step's slices of its stacked xs and ys, used in
   * place). Outputs without an `into` target are fresh buffers owned by the caller; with one, the
   * result is that whole array.
   */
  runBuffers(
    inputs: readonly TypedArray[],
    into?: readonly (TypedArray | undefined)[],
    inOffsets?: ArrayLike<number>,
    intoOffsets?: ArrayLike<number>,
  ): TypedArray[] {
    const { buffers, steps, outputs } = this.spec;
    const reentrant = this.running;
    this.running = true;
    const topLevel = programDepth++ === 0;
    try {
      const B = reentrant ? this.freshTable(false, topLevel) : (this.table ??= this.freshTable(true, topLevel));
      const O = reentrant ? new Int32Array(buffers.length) : (this.offsets ??= new Int32Array(buffers.length));
      const ins = this.spec.inputs;
      for (let i = 0; i < ins.length; i++) {
        B[ins[i]!] = inputs[i]!;
        O[ins[i]!] = inOffsets ? inOffsets[i]! : 0;
      }
      const { outIndex, released, outputsOf, writtenBy } = this.layout;
      const perRun = reentrant ? writtenBy : outputsOf;
      const form = cpuKernels();
      const runs = this.kernelRuns(form);
      for (let i = 0; i < steps.length; i++) {
        const s = steps[i]!;
        if (s.kind === "kernel") {
          const end = runs.end[i]!;
          for (let j = i; j < end; j++)
            for (const id of perRun[j]!) {
              const oi = outIndex[id]!;
              const t = oi >= 0 ? into?.[oi] : undefined;
              B[id] = t ?? typedArrayFor(buffers[id]!.dtype, buffers[id]!.size);
              O[id] = t && intoOffsets ? intoOffsets[oi]! : 0;
            }
          if (end > i + 1) {
            runs.fn[i]!(B, O);
            i = end - 1;
            continue;
          }
          for (const a of s.accumulators)
            (B[a.acc] ??= new Float64Array(buffers[a.target]!.size)).set(
              exactView(B, O, a.target, buffers[a.target]!.size),
            );
          const w = form === "js" ? null : this.wasmKernel(i, lanesOf(form));
          if (!w?.run(B, O)) this.fns[i]!(B, O);
          for (const a of s.accumulators) B[a.out]!.set(B[a.acc]!, O[a.out]!);
        } else {
          // Buffers may be shared by reshapes (aliases), so arrays take the shape of the value read.
          const args: ConcreteArray[] = new globalThis.Array(s.inputs.length);
          for (let k = 0; k < s.inputs.length; k++) {
            const id = s.inputs[k]!;
            args[k] = new ConcreteArray(
              s.eqn.inputs[k]!.aval.strong(),
              cpuBackend,
              exactView(B, O, id, buffers[id]!.size),
            );
          }
          const outs = bind(s.eqn.prim, args, s.eqn.params) as ConcreteArray[];
          for (let k = 0; k < s.outputs.length; k++) {
            B[s.outputs[k]!] = toCpu(outs[k]!);
            O[s.outputs[k]!] = 0;
          }
        }
      }
      const result: TypedArray[] = new globalThis.Array(outputs.length);
      for (let i = 0; i < outputs.length; i++) {
        const t = into?.[i],
          id = outputs[i]!;
        const at = t && intoOffsets ? intoOffsets[i]! : 0;
        if (t && !(t === B[id] && at === O[id])) t.set(exactView(B, O, id, buffers[id]!.size) as never, at);
        result[i] = t ?? exactView(B, O, id, buffers[id]!.size);
      }
      // The reused table must not keep the caller's arrays alive.
      for (const id of released) B[id] = undefined as never;
      return result;
    } finally {
      this.running = reentrant;
      programDepth--;
    }
  }

  /** A buffer table with the consts, and with the intermediates when they are to be reused. */
  private freshTable(withIntermediates: boolean, topLevel: boolean): TypedArray[] {
    const { buffers, consts } = this.spec;
    const B: TypedArray[] = new globalThis.Array(buffers.length);
    for (const [id, c] of consts) {
      B[id] = (c as ConcreteArray).buffer as TypedArray;
      if (topLevel) markImmutable(B[id]);
    }
    if (withIntermediates) {
      const { writtenBy, outputsOf } = this.layout;
      writtenBy.forEach((ids, i) =>
        ids.forEach((id) => {
          if (!outputsOf[i]!.includes(id)) B[id] = typedArrayFor(buffers[id]!.dtype, buffers[id]!.size);
        }),
      );
    }
    return B;
  }

  /**
   * Per buffer, which output a kernel may write it into directly (-1: none — inputs, consts and
   * buffers returned twice are copied instead); per step, the buffers its kernel writes, and of
   * those the ones that leave the program (allocated per run); the slots that hold arrays the
   * table does not own after a run (inputs, outputs and routines' results, other than consts).
   */
  private get layout(): Layout {
    if (!this.layoutCache) {
      const { buffers, outputs, inputs, consts, steps } = this.spec;
      const outIndex = new Int32Array(buffers.length).fill(-1);
      const counts = new Map<number, number>();
      outputs.forEach((id) => counts.set(id, (counts.get(id) ?? 0) + 1));
      const constIds = new Set(consts.map(([id]) => id));
      const writtenBy = steps.map((s) =>
        s.kind === "kernel"
          ? [...s.outputs.filter((o) => !o.dest).map((o) => o.buf), ...s.accumulators.map((a) => a.out)]
          : [],
      );
      const outputsOf = writtenBy.map((ids) => ids.filter((id) => counts.has(id)));
      const kernelWritten = new Set(writtenBy.flat());
      const notDirect = new Set([...inputs, ...constIds]);
      outputs.forEach((id, i) => {
        if (kernelWritten.has(id) && !notDirect.has(id) && counts.get(id) === 1) outIndex[id] = i;
      });
      const routineOuts = steps.flatMap((s) => (s.kind === "routine" ? s.outputs : []));
      const released = [...new Set([...inputs, ...outputs, ...routineOuts])].filter((id) => !constIds.has(id));
      this.layoutCache = { outIndex, released, writtenBy, outputsOf };
    }
    return this.layoutCache;
  }
  private layoutCache: Layout | undefined;
}

/** Buffer id's data as an array of its own size n (a view only when it sits inside a bigger one). */
function exactView(B: readonly TypedArray[], O: Int32Array, id: number, n: number): TypedArray {
  const d = B[id]!,
    o = O[id]!;
  return o === 0 && d.length === n ? d : d.subarray(o, o + n);
}

function toCpu(x: ConcreteArray): TypedArray {
  if (x.backend.name === "cpu") return x.buffer as TypedArray;
  throw new Error("internal: a CPU program routine produced a non-CPU array.");
}

const CPU_PLAN: PlanOptions = {
  fuseScatter: true,
  fuseReductions: true,
  convGemm: true,
  bufferHeavyReduceOperands: true,
};

/** Compile an IR (no constVars; consts are passed as the leading inputs by callers) for the CPU. */
export function compileCpu(ir: IR, constInputs?: ReadonlyMap<number, Array>): CpuProgram {
  const consts = new Map<Var, Array>();
  if (constInputs) for (const [i, c] of constInputs) consts.set(ir.inVars[i]!, c);
  let prog = dce(cse(inlineCalls(ir)));
  prog = isolateScatterUpdates(dce(foldConstants(prog, consts)), CPU_PLAN);
  return new CpuProgram(
    plan(prog, consts, CPU_PLAN),
    ir.outs.map((v) => v.aval),
  );
}
