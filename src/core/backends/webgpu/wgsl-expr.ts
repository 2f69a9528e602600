/** One KNode → one WGSL expression (the WGSL twin of jsgen's `expr`). */
import type { DType } from "../../dtype.js";
import type { KGraph, KNode } from "../../kernel/expr.js";
import { float64Error, type HelperName } from "./wgsl-lib.js";

export interface ExprContext {
  /** The name (or literal) of an argument node. */
  readonly name: (n: KNode) => string;
  /** Reads element `index` (an i32 expression) of buffer `slot` as a value of dtype d. */
  readonly load: (slot: number, d: DType, index: string) => string;
  readonly need: (h: HelperName) => void;
  /** For index arithmetic: value ranges let floor division by a positive constant become plain `/`. */
  readonly graph: KGraph;
}

export function castExpr(x: string, from: DType, to: DType, need: (h: HelperName) => void): string {
  if (from === "float64" || to === "float64") throw float64Error();
  if (from === to) return x;
  switch (to) {
    case "float32": return from === "bool" ? `select(0.0f, 1.0f, ${x})` : `f32(${x})`;
    case "int32": if (from === "bool") return `select(0i, 1i, ${x})`; need("f2i"); return `f2i(${x})`;
    case "bool": if (from === "float32") { need("special"); return `((${x} != 0.0f) || is_nan(${x}))`; } return `(${x} != 0i)`;
  }
}

const nonNegative = (g: KGraph, n: KNode): boolean => {
  const r = g.range(n);
  return r !== null && r[0] >= 0;
};
const positiveConst = (n: KNode): boolean => n.op === "const" && n.value > 0;

export function wgslExpr(n: KNode, c: ExprContext): string {
  const a = (i: number) => c.name(n.args[i]!);
  const argType = n.args[0]?.dtype;
  const f32 = argType === "float32", i32 = argType === "int32", bool = argType === "bool";
  if (argType === "float64" || n.dtype === "float64") throw float64Error();
  switch (n.op) {
    case "load": return c.load(Number(n.tag), n.dtype, a(0));
    case "cast": return castExpr(a(0), argType!, n.dtype, c.need);
    case "select": return `select(${a(2)}, ${a(1)}, ${a(0)})`;
    case "threefry": {
      c.need("threefry");
      const bits = `threefry2x32(bitcast<u32>(${a(0)}), bitcast<u32>(${a(1)}), bitcast<u32>(${a(2)})).x`;
      if (n.value === 0) return `bitcast<i32>(${bits})`;
      if (n.value === 1) return `(f32(${bits} >> 9u) * 1.1920928955078125e-7f)`;
      throw float64Error();
    }
    case "neg": return `(-${a(0)})`;
    case "abs": return `abs(${a(0)})`;
    case "sign": if (f32) { c.need("signf"); return `signf(${a(0)})`; } return `sign(${a(0)})`;
    case "asin": c.need("asinf"); return `asinf(${a(0)})`;
    case "acos": c.need("acosf"); return `acosf(${a(0)})`;
    case "exp": case "log": case "sin": case "cos": case "tan": case "atan":
    case "sqrt": case "floor": case "ceil":
      return `${n.op}(${a(0)})`;
    case "round": return `round(${a(0)})`; // WGSL rounds half to even, as numpy does
    case "tanh": c.need("tanhf"); return `tanhf(${a(0)})`;
    case "log1p": c.need("log1pf"); return `log1pf(${a(0)})`;
    case "expm1": c.need("expm1f"); return `expm1f(${a(0)})`;
    case "rsqrt": return `(1.0f / sqrt(${a(0)}))`;
    case "isfinite": c.need("special"); return `is_finite(${a(0)})`;
    case "not": return bool ? `(!${a(0)})` : `(${a(0)} == 0i)`;
    case "add": return `(${a(0)} + ${a(1)})`;
    case "sub": return `(${a(0)} - ${a(1)})`;
    case "mul": return `(${a(0)} * ${a(1)})`;
    case "div":
      if (i32) { c.need("idiv"); return `idiv(${a(0)}, ${a(1)})`; }
      return `(${a(0)} / ${a(1)})`;
    case "idiv": c.need("idiv"); return `idiv(${a(0)}, ${a(1)})`;
    case "rem":
      if (i32) { c.need("irem"); return `irem(${a(0)}, ${a(1)})`; }
      return `(${a(0)} % ${a(1)})`;
    case "floordiv":
      if (i32) {
        if (positiveConst(n.args[1]!) && nonNegative(c.graph, n.args[0]!)) return `(${a(0)} / ${a(1)})`;
        c.need("ifloordiv");
        return `ifloordiv(${a(0)}, ${a(1)})`;
      }
      return `floor(${a(0)} / ${a(1)})`;
    case "floormod":
      if (i32) {
        if (positiveConst(n.args[1]!) && nonNegative(c.graph, n.args[0]!)) return `(${a(0)} % ${a(1)})`;
        c.need("ifloormod");
        return `ifloormod(${a(0)}, ${a(1)})`;
      }
      return `(((${a(0)} % ${a(1)}) + ${a(1)}) % ${a(1)})`;
    case "pow": c.need("powf"); return `powf(${a(0)}, ${a(1)})`;
    case "max":
      if (f32) { c.need("fmax"); return `fmax(${a(0)}, ${a(1)})`; }
      return bool ? `(${a(0)} || ${a(1)})` : `max(${a(0)}, ${a(1)})`;
    case "min":
      if (f32) { c.need("fmin"); return `fmin(${a(0)}, ${a(1)})`; }
      return bool ? `(${a(0)} && ${a(1)})` : `min(${a(0)}, ${a(1)})`;
    case "atan2": return `atan2(${a(0)}, ${a(1)})`;
    // Float comparisons test NaN explicitly: drivers may compile comparisons assuming no NaNs.
    case "eq": if (f32) { c.need("special"); return `((${a(0)} == ${a(1)}) && !is_nan(${a(0)}))`; } return `(${a(0)} == ${a(1)})`;
    case "ne": if (f32) { c.need("special"); return `((${a(0)} != ${a(1)}) || is_nan(${a(0)}) || is_nan(${a(1)}))`; } return `(${a(0)} != ${a(1)})`;
    case "lt": case "le": case "gt": case "ge": {
      const op = { lt: "<", le: "<=", gt: ">", ge: ">=" }[n.op];
      if (f32) { c.need("special"); return `((${a(0)} ${op} ${a(1)}) && !is_nan(${a(0)}) && !is_nan(${a(1)}))`; }
      return `(${a(0)} ${op} ${a(1)})`;
    }
    case "and": return bool ? `(${a(0)} && ${a(1)})` : `(${a(0)} & ${a(1)})`;
    case "or": return bool ? `(${a(0)} || ${a(1)})` : `(${a(0)} | ${a(1)})`;
    default: throw new Error(`internal: the WGSL generator cannot render ${n.op}.`);
  }
}

/** Reduction combiner `acc ⊕ v` for dtype d. */
export function combine(op: string, d: DType, acc: string, v: string, need: (h: HelperName) => void): string {
  switch (op) {
    case "add": return `(${acc} + ${v})`;
    case "mul": return `(${acc} * ${v})`;
    case "max": if (d === "float32") { need("fmax"); return `fmax(${acc}, ${v})`; } return `max(${acc}, ${v})`;
    case "min": if (d === "float32") { need("fmin"); return `fmin(${acc}, ${v})`; } return `min(${acc}, ${v})`;
    default: throw new Error(`internal: no combiner for reduction ${op}.`);
  }
}

/** Identity of a reduction for dtype d. */
export function reduceInit(op: string, d: DType, need: (h: HelperName) => void): string {
  const f = d === "float32";
  switch (op) {
    case "add": return f ? "0.0f" : "0i";
    case "mul": return f ? "1.0f" : "1i";
    case "max": if (f) { need("special"); return "(-inf_f32())"; } return "i32(-2147483648)";
    case "min": if (f) { need("special"); return "inf_f32()"; } return "2147483647i";
    default: throw new Error(`internal: no identity for reduction ${op}.`);
  }
}

/**
 * `fn argbetter_<op>_<t>(ma, ia, mb, ib) -> bool`: does candidate (mb, ib) replace (ma, ia)?
 * Same order as the CPU: the first NaN wins, otherwise the extreme value, ties to the lower index.
 * Index -1 marks "no candidate yet". Used for serial loops and workgroup trees alike.
 */
export function argBetterFn(op: "argmax" | "argmin", d: DType, need: (h: HelperName) => void): { name: string; code: string } {
  const t = d === "float32" ? "f32" : "i32";
  const name = `argbetter_${op}_${t}`;
  const cmp = op === "argmax" ? ">" : "<";
  const nanPart = d === "float32"
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
