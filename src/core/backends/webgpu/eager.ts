/**
 * Eager execution: a primitive applied outside jit becomes a one-equation program (planned and
 * compiled like any jitted program), cached by (primitive, params, input avals), so repeated
 * eager ops reuse their pipelines.
 */
import type { ShapedArray } from "../../aval.js";
import type { ConcreteArray } from "../../concrete.js";
import { IR, Var } from "../../ir.js";
import type { Primitive } from "../../primitive.js";
import { deviceBufferFor, wrapBuffer, strongAval } from "./arrays.js";
import { gpu } from "./context.js";
import { compileGpuProgram, type GpuProgram } from "./program.js";
import { float64Error } from "./wgsl-lib.js";

const cache = new Map<string, GpuProgram>();
const CACHE_MAX = 2048;

function keyOf(prim: Primitive, params: unknown, avals: readonly ShapedArray[]): string | null {
  let p: string;
  try {
    p = JSON.stringify(params) ?? "";
  } catch {
    return null;
  }
  return `${prim.name}|${p}|${avals.map((a) => `${a.dtype}[${a.shape.join(",")}]`).join(";")}`;
}

function programFor(
  prim: Primitive,
  params: unknown,
  inAvals: readonly ShapedArray[],
  outAvals: readonly ShapedArray[],
): GpuProgram {
  const key = keyOf(prim, params, inAvals);
  let prog = key === null ? undefined : cache.get(key);
  if (prog) return prog;
  const ins = inAvals.map((a) => new Var(strongAval(a)));
  const outs = outAvals.map((a) => new Var(strongAval(a)));
  const ir = new IR(ins, [], [{ prim, inputs: ins, params, outs }], outs);
  prog = compileGpuProgram(ir);
  if (key !== null) {
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, prog);
  }
  return prog;
}

export function executeEager(
  prim: Primitive,
  inputs: readonly ConcreteArray[],
  params: unknown,
  outAvals: readonly ShapedArray[],
): ConcreteArray[] {
  for (const a of [...inputs.map((x) => x.aval), ...outAvals]) if (a.dtype === "float64") throw float64Error();
  const prog = programFor(
    prim,
    params,
    inputs.map((x) => x.aval),
    outAvals,
  );
  const outs = prog.encode(inputs.map(deviceBufferFor));
  gpu().stream.endOfOperation();
  return outs.map((b, i) => wrapBuffer(outAvals[i]!, b));
}

export const eagerCacheSize = (): number => cache.size;
