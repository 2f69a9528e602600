/**
 * Float32 in the CPU jit's kernels: a float32 node's value is its op computed in float64 and rounded
 * to float32, node by node. That is what the eager CPU backend computes (each op's result is stored in
 * a Float32Array), so a jitted float32 program gives the eager bits; and for + − × ÷ √ it is the
 * correctly rounded float32 result (float64 carries more than twice float32's digits), which is what
 * float32 arithmetic gives — on WebGPU, and in the WebAssembly kernels' four float32 lanes (wasmgen).
 * Reductions and scatter-adds still accumulate in float64 and round once, as the eager backend does; a sum or product
 * of at most 16 terms, unrolled into straight-line code (kernel/view.ts), adds term by term in float32, and so does the
 * eager backend (prims/reduce.ts).
 */
import type { KNode } from "../kernel/expr.js";

/** Ops whose result is one of their float32 operands' values, exactly. */
const EXACT = new Set(["const", "var", "load", "select", "neg", "abs", "min", "max", "floor", "ceil", "round", "sign"]);

/** Whether node n's float64 result must be rounded to float32 (consts are rounded where they are written). */
export const roundsToFloat32 = (n: KNode): boolean =>
  // A cast to float32 rounds by itself in every kernel form (Math.fround, a demote).
  n.dtype === "float32" && n.op !== "cast" && !(EXACT.has(n.op) && n.args.every((a) => a.dtype !== "float64"));

/** A float constant as its node's type holds it. */
export const constValue = (n: KNode): number => (n.dtype === "float32" ? Math.fround(n.value) : n.value);
