/**
 * A planned program on the GPU: kernels become WGSL pipelines, routines become GPU routines.
 * `encode` records every step into the command stream (one command buffer per call unless it
 * is very long), allocating intermediates from the pool and releasing each right after its
 * last use, so nothing but the outputs outlives a call.
 */
import type { Array } from "../../array.js";
import type { ConcreteArray } from "../../concrete.js";
import { cse, foldConstants, inlineCalls } from "../../compile/inline.js";
import { dce } from "../../compile/dce.js";
import { plan, type KernelStep, type ProgramSpec, type RoutineStep } from "../../compile/plan.js";
import type { Eqn, IR, Var } from "../../ir.js";
import { BufferHandle, type DeviceBuffer } from "./buffers.js";
import { deviceBufferFor } from "./arrays.js";
import { gpu, type GpuContext } from "./context.js";
import { grid, type BindingResource, type Pipeline } from "./pipelines.js";
import { compileRoutine, type Routine } from "./routines/index.js";
import { float64Error } from "./wgsl-lib.js";
import { GPU_TUNING, kernelToWgsl, SOFTWARE_TUNING, type WgslKernel } from "./wgsl-kernel.js";

interface KernelExec {
  readonly kind: "kernel";
  readonly step: KernelStep;
  readonly kernel: WgslKernel;
  readonly pipelines: readonly Pipeline[];
}
interface RoutineExec {
  readonly kind: "routine";
  readonly step: RoutineStep;
  readonly run: Routine;
}
type StepExec = KernelExec | RoutineExec;

/** How IR values are produced, for routines that look through their operands (scatter_add's host indices). */
export interface ProgramIRInfo {
  readonly producer: ReadonlyMap<Var, Eqn>;
  readonly inputIndex: ReadonlyMap<Var, number>;
}

export class GpuProgram {
  private readonly execs: StepExec[];
  /** Buffer id → index of the last step reading it (-1: never read). */
  private readonly lastUse: Int32Array;
  private readonly isOutput: Uint8Array;
  private readonly constBufs = new Map<number, BufferHandle>();
  private readonly stepIns: readonly number[][];
  private readonly stepOuts: readonly number[][];
  private readonly grids: readonly (readonly [number, number])[][];

  constructor(
    readonly spec: ProgramSpec,
    info: ProgramIRInfo,
    readonly ctx: GpuContext = gpu(),
  ) {
    for (const b of spec.buffers) if (b.dtype === "float64") throw float64Error();
    for (const [id, c] of spec.consts) {
      // Folded constants live on the CPU; upload once for the program's lifetime.
      const buf = deviceBufferFor(c as ConcreteArray).retain();
      this.constBufs.set(id, new BufferHandle(buf));
    }
    this.execs = spec.steps.map((s): StepExec => {
      if (s.kind === "kernel") {
        const kernel = kernelToWgsl(
          s,
          spec.buffers,
          spec.graph,
          ctx.limits,
          ctx.software ? SOFTWARE_TUNING : GPU_TUNING,
        );
        return { kind: "kernel", step: s, kernel, pipelines: kernel.passes.map((p) => ctx.pipelines.get(p.source)) };
      }
      return { kind: "routine", step: s, run: compileRoutine(s, spec.buffers, info) };
    });
    this.lastUse = new Int32Array(spec.buffers.length).fill(-1);
    this.stepIns = this.execs.map(stepInputs);
    this.stepOuts = this.execs.map(stepOutputs);
    this.stepIns.forEach((ins, i) => {
      for (const b of ins) this.lastUse[b] = i;
    });
    this.grids = this.execs.map((e) =>
      e.kind === "kernel"
        ? e.kernel.passes.map((p) => grid(p.groups, ctx.limits.maxComputeWorkgroupsPerDimension))
        : [],
    );
    this.isOutput = new Uint8Array(spec.buffers.length);
    for (const o of spec.outputs) this.isOutput[o] = 1;
  }

  /** WGSL of every kernel (inspection and tests). */
  kernelSources(): string[] {
    return this.execs.flatMap((e) => (e.kind === "kernel" ? e.kernel.passes.map((p) => p.source) : []));
  }
  get kernelCount(): number {
    return this.execs.filter((e) => e.kind === "kernel").length;
  }

  /** Records the program; returns one new reference per output (an output may repeat an input buffer). */
  encode(inputs: readonly DeviceBuffer[]): DeviceBuffer[] {
    const { spec } = this;
    const n = spec.buffers.length;
    const B: (DeviceBuffer | undefined)[] = new globalThis.Array(n);
    const owned = new Uint8Array(n);
    spec.inputs.forEach((id, i) => (B[id] = inputs[i]!));
    for (const [id, h] of this.constBufs) B[id] = h.buffer;
    const env = { programInputs: inputs };
    try {
      this.execs.forEach((e, i) => {
        if (e.kind === "kernel") this.runKernel(e, this.grids[i]!, B, owned);
        else {
          const outs = e.run(
            e.step.inputs.map((id) => B[id]!),
            env,
          );
          e.step.outputs.forEach((id, k) => {
            if (owned[id]) B[id]!.release();
            B[id] = outs[k]!;
            owned[id] = 1;
          });
        }
        // Free what no later step reads (stream order makes reuse by later steps safe).
        for (const id of this.stepOuts[i]!)
          if (this.lastUse[id] < i && !this.isOutput[id] && owned[id]) {
            B[id]!.release();
            owned[id] = 0;
          }
        for (const id of this.stepIns[i]!)
          if (this.lastUse[id] === i && !this.isOutput[id] && owned[id]) {
            B[id]!.release();
            owned[id] = 0;
          }
      });
      const outs = spec.outputs.map((id) => {
        const b = B[id]!;
        if (owned[id]) {
          owned[id] = 0;
          return b;
        } // hand over the program's reference
        return b.retain();
      });
      return outs;
    } finally {
      for (let id = 0; id < n; id++) if (owned[id]) B[id]!.release();
    }
  }

  private runKernel(
    e: KernelExec,
    grids: readonly (readonly [number, number])[],
    B: (DeviceBuffer | undefined)[],
    owned: Uint8Array,
  ): void {
    const { ctx, spec } = this;
    const { kernel } = e;
    for (const o of e.step.outputs) {
      if (owned[o.buf]) B[o.buf]!.release();
      B[o.buf] = ctx.pool.allocate(spec.buffers[o.buf]!.size);
      owned[o.buf] = 1;
    }
    const scratch = kernel.scratchWords ? ctx.pool.allocate(kernel.scratchWords) : null;
    kernel.passes.forEach((pass, i) => {
      if (pass.groups === 0) return;
      const res: BindingResource[] = pass.bindings.direct.map((d) => B[d.buf]!);
      const { packIn, packOut } = pass.bindings;
      let pin: DeviceBuffer | null = null,
        pout: DeviceBuffer | null = null;
      if (packIn.length) {
        pin = ctx.pool.allocate(packIn.reduce((s, p) => s + p.words, 0));
        for (const p of packIn)
          ctx.stream.copy(B[p.buf]!, 0, pin, p.offset, Math.min(p.words, spec.buffers[p.buf]!.size));
        res.push(pin);
      }
      if (packOut.length) {
        pout = ctx.pool.allocate(packOut.reduce((s, p) => s + p.words, 0));
        res.push(pout);
      }
      if (pass.bindings.scratch) res.push(scratch!);
      const pipe = e.pipelines[i]!;
      ctx.stream.dispatch(pipe.pipeline, ctx.pipelines.bindGroup(pipe, res), grids[i]!);
      if (pout) for (const p of packOut) ctx.stream.copy(pout, p.offset, B[p.buf]!, 0, spec.buffers[p.buf]!.size);
      pin?.release();
      pout?.release();
    });
    scratch?.release();
  }
}

function stepInputs(e: StepExec): number[] {
  if (e.kind === "routine") return [...e.step.inputs];
  return e.kernel.passes.flatMap((p) => [
    ...p.bindings.direct.filter((d) => !d.write).map((d) => d.buf),
    ...p.bindings.packIn.map((q) => q.buf),
  ]);
}
const stepOutputs = (e: StepExec): number[] =>
  e.kind === "routine" ? [...e.step.outputs] : e.step.outputs.map((o) => o.buf);

/**
 * The passes the CPU compiler runs too (inline calls, CSE, folding, DCE), then the fusion plan without CPU-only scatter
 * fusion.
 */
export function compileGpuProgram(ir: IR): GpuProgram {
  for (const v of ir.inVars) if (v.aval.dtype === "float64") throw float64Error();
  let prog = dce(cse(inlineCalls(ir)));
  const consts = new Map<Var, Array>();
  prog = dce(foldConstants(prog, consts));
  const producer = new Map<Var, Eqn>();
  for (const e of prog.eqns) for (const o of e.outs) producer.set(o, e);
  const inputIndex = new Map(prog.inVars.map((v, i) => [v, i] as const));
  return new GpuProgram(plan(prog, consts, { fuseScatter: false, unrollBigReductions: false }), {
    producer,
    inputIndex,
  });
}
