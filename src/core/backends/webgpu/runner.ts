/**
 * The runIR hook: a jitted IR (and scan/cond bodies) whose arguments live on webgpu runs as one
 * compiled program: all kernels recorded into one command buffer, intermediates released
 * after the call. CPU arguments (scalars from JS numbers, captured constants) are uploaded
 * once and cached.
 */
import type { Array } from "../../array.js";
import { ConcreteArray } from "../../concrete.js";
import type { IR } from "../../ir.js";
import { deviceBufferFor, wrapBuffer } from "./arrays.js";
import { gpu } from "./context.js";
import { compileGpuProgram, type GpuProgram } from "./program.js";
import { setProgramCompiler } from "./routines/index.js";

const programs = new WeakMap<IR, GpuProgram>();
let compiledCount = 0;

/** The compiled program of an IR (cached per IR object: jit caches its IRs per signature). */
export function programForIR(ir: IR): GpuProgram {
  let p = programs.get(ir);
  if (!p) {
    p = compileGpuProgram(ir);
    programs.set(ir, p);
    compiledCount++;
  }
  return p;
}
setProgramCompiler(programForIR);

/** Runs `ir` on webgpu when an argument lives there; null (decline) otherwise. */
export function webgpuRunner(ir: IR, args: readonly Array[]): Array[] | null {
  if (!args.some((a) => a instanceof ConcreteArray && a.backend.name === "webgpu")) return null;
  if (!args.every((a) => a instanceof ConcreteArray)) return null;
  const prog = programForIR(ir);
  const outs = prog.encode((args as ConcreteArray[]).map(deviceBufferFor));
  gpu().stream.flush();
  return outs.map((b, i) => wrapBuffer(ir.outs[i]!.aval, b));
}

export const compiledProgramCount = (): number => compiledCount;
