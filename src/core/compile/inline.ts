/**
 * Before compiling, nested calls whose bodies are plain IR (jit_call, checkpoint,
 * custom_vjp_call, custom_jvp_call) are inlined so fusion sees through them, and IR-level CSE, constant
 * folding and DCE run. Pure IR → IR.
 */
import type { Array } from "../array.js";
import { ConcreteArray } from "../concrete.js";
import { IR, Var, type Eqn } from "../ir.js";
import { cpuBackend } from "../backends/cpu/cpu.js";
import { literalP, type LiteralParams } from "../prims/literal.js";
import { scalar } from "../constants.js";

const INLINE = new Set(["jit_call", "checkpoint", "custom_vjp_call", "custom_jvp_call"]);

/** Replace calls of inlinable primitives by their bodies (recursively). */
export function inlineCalls(ir: IR): IR {
  if (!ir.eqns.some((e) => INLINE.has(e.prim.name))) return ir;
  const eqns: Eqn[] = [];
  const emit = (body: IR, inputs: readonly Var[]): Var[] => {
    const sub = new Map<Var, Var>();
    body.inVars.forEach((v, i) => sub.set(v, inputs[i]!));
    const get = (v: Var) => sub.get(v) ?? v;
    for (const e of body.eqns) {
      const ins = e.inputs.map(get);
      if (INLINE.has(e.prim.name)) {
        const inner = (e.params as { ir: IR }).ir;
        const outs = emit(inner, ins);
        e.outs.forEach((v, i) => sub.set(v, outs[i]!));
      } else {
        const outs = e.outs.map((v) => new Var(v.aval));
        e.outs.forEach((v, i) => sub.set(v, outs[i]!));
        eqns.push({ prim: e.prim, inputs: ins, params: e.params, outs });
      }
    }
    return body.outs.map(get);
  };
  const outs = emit(ir, ir.inVars);
  return new IR(ir.inVars, ir.constVars, eqns, outs);
}

/** Common subexpression elimination: equal primitive, params and inputs → one equation. */
export function cse(ir: IR): IR {
  const sub = new Map<Var, Var>();
  const get = (v: Var) => sub.get(v) ?? v;
  const seen = new Map<string, Eqn>();
  const eqns: Eqn[] = [];
  for (const e of ir.eqns) {
    const ins = e.inputs.map(get);
    const key =
      hashable(e.params) === null ? null : `${e.prim.name}|${ins.map((v) => v.id).join(",")}|${hashable(e.params)}`;
    const prev = key === null ? undefined : seen.get(key);
    if (prev) {
      e.outs.forEach((v, i) => sub.set(v, prev.outs[i]!));
      continue;
    }
    const ne: Eqn = { prim: e.prim, inputs: ins, params: e.params, outs: e.outs };
    if (key !== null) seen.set(key, ne);
    eqns.push(ne);
  }
  return new IR(ir.inVars, ir.constVars, eqns, ir.outs.map(get));
}
function hashable(p: unknown): string | null {
  try {
    return JSON.stringify(p, (_k, v) => {
      if (typeof v === "function" || v instanceof IR) throw new Error("unhashable");
      return v;
    });
  } catch {
    return null;
  }
}

/**
 * Constant folding: equations whose inputs are all compile-time constants are evaluated now
 * (outputs up to `maxSize` elements, so folding never materialises big broadcasts). Scalar
 * results become `literal` equations, so code generators keep seeing their values.
 */
export function foldConstants(ir: IR, consts: Map<Var, Array>, maxSize = 64): IR {
  const known = new Map<Var, ConcreteArray>();
  for (const [v, c] of consts) if (c instanceof ConcreteArray && c.backend.name === "cpu") known.set(v, c);
  const eqns: Eqn[] = [];
  for (const e of ir.eqns) {
    if (e.prim === literalP) {
      // On the CPU whatever the default backend is: folding reads values back synchronously.
      const p = e.params as LiteralParams;
      known.set(e.outs[0]!, scalar(p.value, p.dtype, p.weak));
      eqns.push(e);
      continue;
    }
    const vals = e.inputs.map((v) => known.get(v));
    const foldable =
      e.prim.impl &&
      e.inputs.length > 0 &&
      vals.every((v) => v !== undefined) &&
      e.outs.every((o) => o.aval.size <= maxSize);
    if (!foldable) {
      eqns.push(e);
      continue;
    }
    // Folded on the CPU whatever the default backend is (the values are read back right away).
    const outs = cpuBackend.execute(
      e.prim,
      vals as ConcreteArray[],
      e.params,
      e.outs.map((o) => o.aval),
    );
    e.outs.forEach((v, i) => {
      const o = outs[i]!;
      known.set(v, o);
      if (v.aval.ndim === 0)
        eqns.push({
          prim: literalP,
          inputs: [],
          params: { value: o.dataSync()[0]!, dtype: v.aval.dtype, weak: v.aval.weak },
          outs: [v],
        });
      else consts.set(v, o);
    });
  }
  return new IR(ir.inVars, ir.constVars, eqns, ir.outs);
}
