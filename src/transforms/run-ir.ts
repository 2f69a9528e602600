/** Evaluate a closed-over IR on concrete values, through a compiled runner when a backend offers one. */
import type { Array } from "../core/array.js";
import { evalIR, type IR } from "../core/ir.js";

/** Runs an IR on concrete inputs; compilers (CPU JS codegen, WebGPU) register one. Returns null to decline. */
export type IRRunner = (ir: IR, args: readonly Array[]) => Array[] | null;
const runners: IRRunner[] = [];
export function registerIRRunner(r: IRRunner): void { runners.push(r); }

export function runIR(ir: IR, args: readonly Array[]): Array[] {
  for (const r of runners) {
    const out = r(ir, args);
    if (out) return out;
  }
  return evalIR(ir, [], args);
}
