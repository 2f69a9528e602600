/**
 * The CPU jit: an IR is planned into kernels and routines once, kernels become JavaScript
 * functions, and running the program walks the steps over typed arrays. Intermediates live
 * only inside a run.
 */
import type { Array } from "../array.js";
import { ShapedArray } from "../aval.js";
import { ConcreteArray } from "../concrete.js";
import { typedArrayFor, type TypedArray } from "../dtype.js";
import type { IR, Var } from "../ir.js";
import { bind } from "../trace.js";
import { cpuBackend } from "../backends/cpu/cpu.js";
import { cse, foldConstants, inlineCalls } from "./inline.js";
import { JS_HELPERS, kernelToJs } from "./jsgen.js";
import { plan, type ProgramSpec } from "./plan.js";
import { dce } from "./dce.js";

type KernelFn = (B: TypedArray[]) => void;

/**
 * V8 never optimizes functions above ~60 KB of bytecode, and fused kernels (rasterizer
 * backward passes) can be larger; interpreted they run 5–10× slower. Raise the limit once, in
 * Node, before compiling the first big kernel (browsers have no such switch; nothing happens there).
 */
let v8LimitRaised = false;
function allowBigKernels(): void {
  if (v8LimitRaised) return;
  v8LimitRaised = true;
  const proc = (globalThis as { process?: { getBuiltinModule?: (m: string) => unknown } }).process;
  const v8 = proc?.getBuiltinModule?.("node:v8") as { setFlagsFromString?: (f: string) => void } | undefined;
  v8?.setFlagsFromString?.("--max-optimized-bytecode-size=16000000");
}

export class CpuProgram {
  private readonly fns: (KernelFn | null)[];
  constructor(readonly spec: ProgramSpec, readonly outAvals: readonly ShapedArray[]) {
    this.fns = spec.steps.map((s) => {
      if (s.kind !== "kernel") return null;
      const src = kernelToJs(s);
      if (src.length > 30_000) allowBigKernels();
      try {
        return new Function("H", `"use strict"; return function kernel(B) {\n${src}\n};`)(JS_HELPERS) as KernelFn;
      } catch (e) {
        throw new Error(`internal: generated kernel does not compile (${(e as Error).message}):\n${src}`);
      }
    });
  }
  /** Source of every kernel, for inspection and tests. */
  kernelSources(): string[] { return this.spec.steps.flatMap((s) => (s.kind === "kernel" ? [kernelToJs(s)] : [])); }

  /** Intermediate buffers reused across calls (they never escape a run). */
  private pool: (TypedArray | undefined)[] = [];
  /** Float64 accumulators of fused scatters, likewise reused. */
  private accPool: (Float64Array | undefined)[] = [];
  private running = false;

  /**
   * Run on CPU arrays. `into[i]`, when given, receives output i (written in place by the kernel
   * that computes it, or copied): scan loops use it to write straight into stacked outputs.
   */
  run(args: readonly ConcreteArray[], into?: readonly (TypedArray | undefined)[]): ConcreteArray[] {
    const { buffers, steps, outputs } = this.spec;
    const reentrant = this.running;
    this.running = true;
    try {
      const B: TypedArray[] = new globalThis.Array(buffers.length);
      this.spec.inputs.forEach((id, i) => (B[id] = args[i]!.buffer as TypedArray));
      for (const [id, c] of this.spec.consts) B[id] = (c as ConcreteArray).buffer as TypedArray;
      const fresh = this.outputIds;
      const target = new Map<number, TypedArray>();
      if (into) outputs.forEach((id, i) => { const t = into[i]; if (t && this.directOut.has(id) && !target.has(id)) target.set(id, t); });
      const alloc = (id: number): TypedArray => {
        const t = target.get(id);
        if (t) return t;
        const spec = buffers[id]!;
        if (fresh.has(id) || reentrant) return typedArrayFor(spec.dtype, spec.size);
        return (this.pool[id] ??= typedArrayFor(spec.dtype, spec.size));
      };
      // Buffers may be shared by reshapes (aliases), so arrays take the shape of the value read.
      const wrap = (id: number, aval: ShapedArray) => new ConcreteArray(aval.strong(), cpuBackend, B[id]!);
      for (let i = 0; i < steps.length; i++) {
        const s = steps[i]!;
        if (s.kind === "kernel") {
          for (const o of s.outputs) if (!o.dest) B[o.buf] = alloc(o.buf);
          for (const a of s.accumulators) {
            const init = B[a.target]!;
            const acc = reentrant ? new Float64Array(init.length) : (this.accPool[a.acc] ??= new Float64Array(init.length));
            acc.set(init);
            B[a.acc] = acc;
          }
          this.fns[i]!(B);
          for (const a of s.accumulators) {
            const out = alloc(a.out);
            out.set(B[a.acc]!);
            B[a.out] = out;
          }
        } else {
          const outs = bind(s.eqn.prim, s.inputs.map((id, k) => wrap(id, s.eqn.inputs[k]!.aval)), s.eqn.params) as ConcreteArray[];
          s.outputs.forEach((id, k) => (B[id] = toCpu(outs[k]!)));
        }
      }
      return outputs.map((id, i) => {
        const t = into?.[i];
        let data = B[id]!;
        if (t && t !== data) { t.set(data as never); data = t; }
        return new ConcreteArray(this.outAvals[i]!, cpuBackend, data);
      });
    } finally {
      this.running = reentrant;
    }
  }

  /** Buffers that leave the program (never pooled). */
  private get outputIds(): Set<number> {
    return (this.outIdsCache ??= new Set(this.spec.outputs));
  }
  private outIdsCache: Set<number> | undefined;
  /** Output buffers written by a kernel (not inputs/consts), which may be written straight into a caller's array. */
  private get directOut(): Set<number> {
    if (!this.directOutCache) {
      const ins = new Set([...this.spec.inputs, ...this.spec.consts.map(([id]) => id)]);
      const counts = new Map<number, number>();
      this.spec.outputs.forEach((id) => counts.set(id, (counts.get(id) ?? 0) + 1));
      const kernelWritten = new Set(this.spec.steps.flatMap((s) => (s.kind === "kernel" ? [...s.outputs.filter((o) => !o.dest).map((o) => o.buf), ...s.accumulators.map((a) => a.out)] : [])));
      this.directOutCache = new Set([...kernelWritten].filter((id) => !ins.has(id) && counts.get(id) === 1));
    }
    return this.directOutCache;
  }
  private directOutCache: Set<number> | undefined;
}

function toCpu(x: ConcreteArray): TypedArray {
  if (x.backend.name === "cpu") return x.buffer as TypedArray;
  throw new Error("internal: a CPU program routine produced a non-CPU array.");
}

/** Compile an IR (no constVars; consts are passed as the leading inputs by callers) for the CPU. */
export function compileCpu(ir: IR, constInputs?: ReadonlyMap<number, Array>): CpuProgram {
  const consts = new Map<Var, Array>();
  if (constInputs) for (const [i, c] of constInputs) consts.set(ir.inVars[i]!, c);
  let prog = dce(cse(inlineCalls(ir)));
  prog = dce(foldConstants(prog, consts));
  return new CpuProgram(plan(prog, consts, { fuseScatter: true, fuseReductions: true }), ir.outs.map((v) => v.aval));
}

