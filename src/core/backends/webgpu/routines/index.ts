/** Routine selection: GPU implementations for the primitives the planner does not fuse. */
import type { BufferSpec, RoutineStep } from "../../../compile/plan.js";
import type { IR } from "../../../ir.js";
import type { GpuProgram, ProgramIRInfo } from "../program.js";
import { cumsumRoutine } from "./cumsum.js";
import { genericRoutine } from "./generic.js";
import { matmulRoutine } from "./matmul.js";
import { scanRoutine } from "./scan.js";
import { scatterRoutine } from "./scatter.js";
import type { Routine } from "./types.js";

export type { Routine, RoutineEnv } from "./types.js";

let programForIR: ((ir: IR) => GpuProgram) | null = null;
/** Set by the program module (compiling scan bodies needs it; a direct import would be a cycle). */
export function setProgramCompiler(f: (ir: IR) => GpuProgram): void {
  programForIR = f;
}

export function compileRoutine(step: RoutineStep, buffers: readonly BufferSpec[], info: ProgramIRInfo): Routine {
  switch (step.eqn.prim.name) {
    case "dot_general":
      return matmulRoutine(step, buffers);
    case "scatter_add":
      return scatterRoutine(step, buffers, info);
    case "cumsum":
      return cumsumRoutine(step, buffers);
    case "scan":
      return scanRoutine(step, buffers, (ir) => {
        if (!programForIR) throw new Error("internal: webgpu program compiler not registered.");
        return programForIR(ir);
      });
  }
  const { prim, params, inputs, outs } = step.eqn;
  if (prim.gpu)
    return prim.gpu(
      params,
      inputs.map((v) => v.aval),
      outs.map((v) => v.aval),
    );
  if (step.eqn.prim.evaluate) return genericRoutine(step.eqn);
  throw new Error(
    `webgpu: primitive ${step.eqn.prim.name} has no WebGPU ` +
      `implementation (it has no kernel lowering and no GPU routine).`,
  );
}
