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

export class CpuProgram {
  private readonly fns: (KernelFn | null)[];
  constructor(readonly spec: ProgramSpec, readonly outAvals: readonly ShapedArray[]) {
    this.fns = spec.steps.map((s) => {
      if (s.kind !== "kernel") return null;
      const src = kernelToJs(s);
      try {
        return new Function("H", `"use strict"; return function kernel(B) {\n${src}\n};`)(JS_HELPERS) as KernelFn;
      } catch (e) {
        throw new Error(`internal: generated kernel does not compile (${(e as Error).message}):\n${src}`);
      }
    });
  }
  /** Source of every kernel, for inspection and tests. */
  kernelSources(): string[] { return this.spec.steps.flatMap((s) => (s.kind === "kernel" ? [kernelToJs(s)] : [])); }

  run(args: readonly ConcreteArray[]): ConcreteArray[] {
    const { buffers, steps } = this.spec;
    const B: TypedArray[] = new globalThis.Array(buffers.length);
    this.spec.inputs.forEach((id, i) => (B[id] = args[i]!.buffer as TypedArray));
    for (const [id, c] of this.spec.consts) B[id] = (c as ConcreteArray).buffer as TypedArray;
    // Buffers may be shared by reshapes (aliases), so arrays take the shape of the value read.
    const wrap = (id: number, aval: ShapedArray) => new ConcreteArray(aval.strong(), cpuBackend, B[id]!);
    steps.forEach((s, i) => {
      if (s.kind === "kernel") {
        for (const o of s.outputs) if (!o.dest) B[o.buf] = typedArrayFor(buffers[o.buf]!.dtype, buffers[o.buf]!.size);
        for (const a of s.accumulators) B[a.acc] = Float64Array.from(B[a.target]!);
        this.fns[i]!(B);
        for (const a of s.accumulators) {
          const out = typedArrayFor(buffers[a.out]!.dtype, buffers[a.out]!.size);
          out.set(B[a.acc]!);
          B[a.out] = out;
        }
      } else {
        const outs = bind(s.eqn.prim, s.inputs.map((id, k) => wrap(id, s.eqn.inputs[k]!.aval)), s.eqn.params) as ConcreteArray[];
        s.outputs.forEach((id, k) => (B[id] = toCpu(outs[k]!)));
      }
    });
    return this.spec.outputs.map((id, i) => new ConcreteArray(this.outAvals[i]!, cpuBackend, B[id]!));
  }
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
  return new CpuProgram(plan(prog, consts, { fuseScatter: true }), ir.outs.map((v) => v.aval));
}

