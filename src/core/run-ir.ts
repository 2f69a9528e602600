/** Evaluate a closed-over IR on concrete values: compiled (CPU JS codegen, WebGPU kernels) where possible. */
import type { Array } from "./array.js";
import { ConcreteArray } from "./concrete.js";
import { evalIR, type IR } from "./ir.js";
import { compileCpu, type CpuProgram } from "./compile/cpu-program.js";
import { hasEffects } from "./effects.js";

/** Runs an IR on concrete inputs; compilers register one. Returns null to decline. */
export type IRRunner = (ir: IR, args: readonly Array[]) => Array[] | null;
const runners: IRRunner[] = [];
export function registerIRRunner(r: IRRunner): void {
  runners.push(r);
}

const cpuPrograms = new WeakMap<IR, CpuProgram>();
/** Compiled CPU programs, cached per IR. */
export function cpuProgramFor(ir: IR): CpuProgram {
  let p = cpuPrograms.get(ir);
  if (!p) cpuPrograms.set(ir, (p = compileCpu(ir)));
  return p;
}

let compileEnabled = true;
/** Turn the CPU compiler off (every IR is then interpreted op by op); returns the previous setting. */
export function setCpuCompile(on: boolean): boolean {
  const prev = compileEnabled;
  compileEnabled = on;
  return prev;
}
export const cpuCompileEnabled = (): boolean => compileEnabled;

export function runIR(ir: IR, args: readonly Array[]): Array[] {
  // A program with effects (debug.print) runs op by op, so they happen in order at run time.
  if (hasEffects(ir)) return evalIR(ir, [], args);
  for (const r of runners) {
    const out = r(ir, args);
    if (out) return out;
  }
  if (compileEnabled && args.every((a) => a instanceof ConcreteArray && a.backend.name === "cpu")) {
    return cpuProgramFor(ir).run(args as ConcreteArray[]);
  }
  return evalIR(ir, [], args);
}
