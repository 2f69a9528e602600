/** One KNode → one WGSL expression (the WGSL twin of jsgen's `expr`). */
import type { DType } from "../../dtype.js";
import type { KGraph, KNode } from "../../kernel/expr.js";
import { binaryOp, isUnaryOp, unaryOp } from "../../kernel/scalar-ops.js";
import { float64Error, type HelperName, type WgslNeed } from "./wgsl-lib.js";

export interface ExprContext {
  /** The name (or literal) of an argument node. */
  readonly name: (n: KNode) => string;
  /** Reads element `index` (an i32 expression) of buffer `slot` as a value of dtype d. */
  readonly load: (slot: number, d: DType, index: string) => string;
  readonly need: WgslNeed;
  /** For index arithmetic: value ranges let floor division by a positive constant become plain `/`. */
  readonly graph: KGraph;
}

export function castExpr(x: string, from: DType, to: DType, need: (h: HelperName) => void): string {
  if (from === "float64" || to === "float64") throw float64Error();
  if (from === to) return x;
  switch (to) {
    case "float32":
      return from === "bool" ? `select(0.0f, 1.0f, ${x})` : `f32(${x})`;
    case "int32":
      if (from === "bool") return `select(0i, 1i, ${x})`;
      need("f2i");
      return `f2i(${x})`;
    case "bool":
      if (from === "float32") {
        need("special");
        return `((${x} != 0.0f) || is_nan(${x}))`;
      }
      return `(${x} != 0i)`;
  }
}

export function wgslExpr(n: KNode, c: ExprContext): string {
  const a = (i: number) => c.name(n.args[i]!);
  const argType = n.args[0]?.dtype;
  if (argType === "float64" || n.dtype === "float64") throw float64Error();
  const op = n.op;
  switch (op) {
    case "load":
      return c.load(Number(n.tag), n.dtype, a(0));
    case "cast":
      return castExpr(a(0), argType!, n.dtype, c.need);
    case "select":
      return `select(${a(2)}, ${a(1)}, ${a(0)})`;
    case "threefry": {
      c.need("threefry");
      const bits = `threefry2x32(bitcast<u32>(${a(0)}), bitcast<u32>(${a(1)}), bitcast<u32>(${a(2)})).x`;
      if (n.value === 0) return `bitcast<i32>(${bits})`;
      if (n.value === 1) return `(f32(${bits} >> 9u) * 1.1920928955078125e-7f)`;
      throw float64Error();
    }
    case "const":
    case "var":
    case "reduce":
      throw new Error(`internal: a ${op} node is named by the kernel emitter, not rendered as an expression.`);
  }
  const ctx = { argType: argType!, need: c.need, args: n.args, graph: c.graph };
  return isUnaryOp(op) ? unaryOp(op).wgsl(a(0), ctx) : binaryOp(op).wgsl(a(0), a(1), ctx);
}

/** Reduction combiner `acc ⊕ v` for dtype d. */
export function combine(op: string, d: DType, acc: string, v: string, need: (h: HelperName) => void): string {
  switch (op) {
    case "add":
      return `(${acc} + ${v})`;
    case "mul":
      return `(${acc} * ${v})`;
    case "max":
      if (d === "float32") {
        need("fmax");
        return `fmax(${acc}, ${v})`;
      }
      return `max(${acc}, ${v})`;
    case "min":
      if (d === "float32") {
        need("fmin");
        return `fmin(${acc}, ${v})`;
      }
      return `min(${acc}, ${v})`;
    default:
      throw new Error(`internal: no combiner for reduction ${op}.`);
  }
}

/** Identity of a reduction for dtype d. */
export function reduceInit(op: string, d: DType, need: (h: HelperName) => void): string {
  const f = d === "float32";
  switch (op) {
    case "add":
      return f ? "0.0f" : "0i";
    case "mul":
      return f ? "1.0f" : "1i";
    case "max":
      if (f) {
        need("special");
        return "(-inf_f32())";
      }
      return "i32(-2147483648)";
    case "min":
      if (f) {
        need("special");
        return "inf_f32()";
      }
      return "2147483647i";
    default:
      throw new Error(`internal: no identity for reduction ${op}.`);
  }
}

/**
 * `fn argbetter_<op>_<t>(ma, ia, mb, ib) -> bool`: does candidate (mb, ib) replace (ma, ia)?
 * Same order as the CPU: the first NaN wins, otherwise the extreme value, ties to the lower index.
 * Index -1 marks "no candidate yet". Used for serial loops and workgroup trees alike.
 */
export function argBetterFn(
  op: "argmax" | "argmin",
  d: DType,
  need: (h: HelperName) => void,
): { name: string; code: string } {
  const t = d === "float32" ? "f32" : "i32";
  const name = `argbetter_${op}_${t}`;
  const cmp = op === "argmax" ? ">" : "<";
  const nanPart =
    d === "float32"
      ? "  let na = is_nan(ma); let nb = is_nan(mb);\n  if (na || nb) { return nb && (!na || ib < ia); }\n"
      : "";
  if (d === "float32") need("special");
  const code = `
fn ${name}(ma: ${t}, ia: i32, mb: ${t}, ib: i32) -> bool {
  if (ib < 0) { return false; }
  if (ia < 0) { return true; }
${nanPart}  if (mb ${cmp} ma) { return true; }
  if (mb == ma) { return ib < ia; }
  return false;
}`;
  return { name, code };
}
