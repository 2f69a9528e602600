/**
 * The scalar ALU ops of the kernel IR, one table entry each: their JS semantics (constant
 * folding, the CPU reference `impl` of the elementwise primitives), their JavaScript source for
 * the CPU jit and their WGSL source for the webgpu kernels. `UnaryOp` and `BinaryOp` are the
 * keys of these tables, so a new op is one entry here (the compiler asks for every field) and
 * the code generators need no change. See src/core/README.md, "Recipe: add an elementwise
 * primitive".
 */
import type { DType } from "../dtype.js";
import type { WgslNeed } from "../backends/webgpu/wgsl-lib.js";
import type { KGraph, KNode } from "./expr.js";

/** What a WGSL renderer sees besides its operands' expressions. */
export interface WgslOpContext {
  /** The operand dtype (the first operand's). */
  readonly argType: DType;
  readonly need: WgslNeed;
  /** The operand nodes (value ranges let integer floor division by a positive constant become plain `/`). */
  readonly args: readonly KNode[];
  readonly graph: KGraph;
}

export interface UnaryScalarOp {
  /** The JS value of the op at x (`i32`: the operand is int32, results wrap to 32 bits). */
  readonly eval: (x: number, i32: boolean) => number;
  /** JS source for the CPU jit; omitted, the generated code calls `eval` (H.unary[op]). */
  readonly js?: (a: string, i32: boolean) => string;
  readonly wgsl: (a: string, c: WgslOpContext) => string;
  /** The result is bool whatever the operand (isfinite). */
  readonly boolOut?: true;
}

export interface BinaryScalarOp {
  readonly eval: (a: number, b: number, i32: boolean) => number;
  readonly js: (a: string, b: string, i32: boolean) => string;
  readonly wgsl: (a: string, b: string, c: WgslOpContext) => string;
  /** A comparison: bool result. */
  readonly compare?: true;
}

const roundHalfEven = (x: number): number => {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
};

/** `Math.<name>(a)` in JS and `<name>(a)` (a WGSL built-in) in WGSL. */
const builtin = (name: "exp" | "log" | "sin" | "cos" | "tan" | "atan" | "sqrt" | "floor" | "ceil"): UnaryScalarOp => ({
  eval: Math[name],
  js: (a) => `Math.${name}(${a})`,
  wgsl: (a) => `${name}(${a})`,
});
/** `Math.<name>(a)` in JS and a WGSL helper function (wgsl-lib's HELPERS) in WGSL. */
const withHelper = (name: "log1p" | "expm1" | "tanh" | "asin" | "acos"): UnaryScalarOp => ({
  eval: Math[name],
  js: (a) => `Math.${name}(${a})`,
  wgsl: (a, c) => {
    c.need(`${name}f`);
    return `${name}f(${a})`;
  },
});

export const UNARY_OPS = {
  neg: {
    eval: (x, i32) => (i32 ? -x | 0 : -x),
    js: (a, i32) => (i32 ? `(-${a} | 0)` : `(-${a})`),
    wgsl: (a) => `(-${a})`,
  },
  abs: {
    eval: (x, i32) => (i32 ? Math.abs(x) | 0 : Math.abs(x)),
    js: (a, i32) => (i32 ? `(Math.abs(${a}) | 0)` : `Math.abs(${a})`),
    wgsl: (a) => `abs(${a})`,
  },
  sign: {
    eval: (x) => (x > 0 ? 1 : x < 0 ? -1 : x),
    js: (a) => `(${a} > 0 ? 1 : ${a} < 0 ? -1 : ${a})`,
    wgsl: (a, c) => {
      if (c.argType !== "float32") return `sign(${a})`;
      c.need("signf");
      return `signf(${a})`;
    },
  },
  exp: builtin("exp"),
  log: builtin("log"),
  log1p: withHelper("log1p"),
  expm1: withHelper("expm1"),
  sin: builtin("sin"),
  cos: builtin("cos"),
  tan: builtin("tan"),
  tanh: withHelper("tanh"),
  asin: withHelper("asin"),
  acos: withHelper("acos"),
  atan: builtin("atan"),
  sqrt: builtin("sqrt"),
  rsqrt: { eval: (x) => 1 / Math.sqrt(x), js: (a) => `(1 / Math.sqrt(${a}))`, wgsl: (a) => `(1.0f / sqrt(${a}))` },
  floor: builtin("floor"),
  ceil: builtin("ceil"),
  // WGSL rounds half to even, as numpy does.
  round: { eval: roundHalfEven, wgsl: (a) => `round(${a})` },
  isfinite: {
    eval: (x) => (Number.isFinite(x) ? 1 : 0),
    js: (a) => `(Number.isFinite(${a}) ? 1 : 0)`,
    wgsl: (a, c) => {
      c.need("special");
      return `is_finite(${a})`;
    },
    boolOut: true,
  },
  not: {
    eval: (x) => (x ? 0 : 1),
    js: (a) => `(${a} ? 0 : 1)`,
    wgsl: (a, c) => (c.argType === "bool" ? `(!${a})` : `(${a} == 0i)`),
  },
  erf: {
    eval: (x) => erf64(x),
    wgsl: (a, c) => {
      c.need(ERF_F32);
      return `erf_f32(${a})`;
    },
  },
  erfinv: {
    eval: (x) => erfinv64(x),
    wgsl: (a, c) => {
      c.need(ERFINV_F32);
      return `erfinv_f32(${a})`;
    },
  },
} satisfies Record<string, UnaryScalarOp>;

export type UnaryOp = keyof typeof UNARY_OPS;

const nonNegative = (g: KGraph, n: KNode): boolean => {
  const r = g.range(n);
  return r !== null && r[0] >= 0;
};
const positiveConst = (n: KNode): boolean => n.op === "const" && n.value > 0;
/** Float comparisons test NaN explicitly: drivers may compile comparisons assuming no NaNs. */
const comparison = (
  js: "===" | "!==" | "<" | "<=" | ">" | ">=",
  eval_: (a: number, b: number) => boolean,
): BinaryScalarOp => {
  const w = js === "===" ? "==" : js === "!==" ? "!=" : js;
  return {
    eval: (a, b) => (eval_(a, b) ? 1 : 0),
    js: (a, b) => `(${a} ${js} ${b} ? 1 : 0)`,
    wgsl: (a, b, c) => {
      if (c.argType !== "float32") return `(${a} ${w} ${b})`;
      c.need("special");
      if (js === "!==") return `((${a} != ${b}) || is_nan(${a}) || is_nan(${b}))`;
      if (js === "===") return `((${a} == ${b}) && !is_nan(${a}))`;
      return `((${a} ${w} ${b}) && !is_nan(${a}) && !is_nan(${b}))`;
    },
    compare: true,
  };
};
const idivWgsl = (a: string, b: string, c: WgslOpContext): string => {
  c.need("idiv");
  return `idiv(${a}, ${b})`;
};

export const BINARY_OPS = {
  add: {
    eval: (a, b, i32) => (i32 ? (a + b) | 0 : a + b),
    js: (a, b, i32) => (i32 ? `((${a} + ${b}) | 0)` : `(${a} + ${b})`),
    wgsl: (a, b) => `(${a} + ${b})`,
  },
  sub: {
    eval: (a, b, i32) => (i32 ? (a - b) | 0 : a - b),
    js: (a, b, i32) => (i32 ? `((${a} - ${b}) | 0)` : `(${a} - ${b})`),
    wgsl: (a, b) => `(${a} - ${b})`,
  },
  mul: {
    eval: (a, b, i32) => (i32 ? Math.imul(a, b) : a * b),
    js: (a, b, i32) => (i32 ? `Math.imul(${a}, ${b})` : `(${a} * ${b})`),
    wgsl: (a, b) => `(${a} * ${b})`,
  },
  div: {
    eval: (a, b) => a / b,
    js: (a, b) => `(${a} / ${b})`,
    wgsl: (a, b, c) => (c.argType === "int32" ? idivWgsl(a, b, c) : `(${a} / ${b})`),
  },
  /** Truncating integer division with x/0 = 0 (int32 `div`). */
  idiv: {
    eval: (a, b) => (b === 0 ? 0 : (a / b) | 0),
    js: (a, b) => `(${b} === 0 ? 0 : (${a} / ${b}) | 0)`,
    wgsl: idivWgsl,
  },
  rem: {
    eval: (a, b, i32) => (i32 ? (b === 0 ? 0 : a % b) : a % b),
    js: (a, b, i32) => (i32 ? `(${b} === 0 ? 0 : ${a} % ${b})` : `(${a} % ${b})`),
    wgsl: (a, b, c) => {
      if (c.argType !== "int32") return `(${a} % ${b})`;
      c.need("irem");
      return `irem(${a}, ${b})`;
    },
  },
  floordiv: {
    eval: (a, b) => Math.floor(a / b),
    js: (a, b) => `Math.floor(${a} / ${b})`,
    wgsl: (a, b, c) => {
      if (c.argType !== "int32") return `floor(${a} / ${b})`;
      if (positiveConst(c.args[1]!) && nonNegative(c.graph, c.args[0]!)) return `(${a} / ${b})`;
      c.need("ifloordiv");
      return `ifloordiv(${a}, ${b})`;
    },
  },
  floormod: {
    eval: (a, b) => ((a % b) + b) % b,
    js: (a, b) => `(((${a} % ${b}) + ${b}) % ${b})`,
    wgsl: (a, b, c) => {
      if (c.argType !== "int32") return `(((${a} % ${b}) + ${b}) % ${b})`;
      if (positiveConst(c.args[1]!) && nonNegative(c.graph, c.args[0]!)) return `(${a} % ${b})`;
      c.need("ifloormod");
      return `ifloormod(${a}, ${b})`;
    },
  },
  pow: {
    eval: Math.pow,
    js: (a, b) => `Math.pow(${a}, ${b})`,
    wgsl: (a, b, c) => {
      c.need("powf");
      return `powf(${a}, ${b})`;
    },
  },
  max: {
    eval: (a, b) => Math.max(a, b),
    js: (a, b) => `Math.max(${a}, ${b})`,
    wgsl: (a, b, c) => {
      if (c.argType === "float32") {
        c.need("fmax");
        return `fmax(${a}, ${b})`;
      }
      return c.argType === "bool" ? `(${a} || ${b})` : `max(${a}, ${b})`;
    },
  },
  min: {
    eval: (a, b) => Math.min(a, b),
    js: (a, b) => `Math.min(${a}, ${b})`,
    wgsl: (a, b, c) => {
      if (c.argType === "float32") {
        c.need("fmin");
        return `fmin(${a}, ${b})`;
      }
      return c.argType === "bool" ? `(${a} && ${b})` : `min(${a}, ${b})`;
    },
  },
  atan2: { eval: Math.atan2, js: (a, b) => `Math.atan2(${a}, ${b})`, wgsl: (a, b) => `atan2(${a}, ${b})` },
  eq: comparison("===", (a, b) => a === b),
  ne: comparison("!==", (a, b) => a !== b),
  lt: comparison("<", (a, b) => a < b),
  le: comparison("<=", (a, b) => a <= b),
  gt: comparison(">", (a, b) => a > b),
  ge: comparison(">=", (a, b) => a >= b),
  and: {
    eval: (a, b) => a & b,
    js: (a, b) => `(${a} & ${b})`,
    wgsl: (a, b, c) => (c.argType === "bool" ? `(${a} && ${b})` : `(${a} & ${b})`),
  },
  or: {
    eval: (a, b) => a | b,
    js: (a, b) => `(${a} | ${b})`,
    wgsl: (a, b, c) => (c.argType === "bool" ? `(${a} || ${b})` : `(${a} | ${b})`),
  },
} satisfies Record<string, BinaryScalarOp>;

export type BinaryOp = keyof typeof BINARY_OPS;

export const isUnaryOp = (op: string): op is UnaryOp => Object.hasOwn(UNARY_OPS, op);
export const isBinaryOp = (op: string): op is BinaryOp => Object.hasOwn(BINARY_OPS, op);
export const unaryOp = (op: UnaryOp): UnaryScalarOp => UNARY_OPS[op];
export const binaryOp = (op: BinaryOp): BinaryScalarOp => BINARY_OPS[op];

// ---------------------------------------------------------------- erf, erfinv

const TWO_OVER_SQRT_PI = 1.1283791670955126;

/**
 * erf in float64 to a few ulps: for |x| < 2.5 the series 2/√π·e^(−x²)·Σ 2ⁿx^(2n+1)/(2n+1)!!
 * (positive terms, no cancellation); beyond, 1 − erfc from erfc's continued fraction.
 */
export function erf64(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  if (ax >= 2.5) return Math.sign(x) * (1 - erfcLarge(ax));
  const x2 = x * x;
  let term = x,
    sum = x;
  for (let n = 1; n < 200 && Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
    term *= (2 * x2) / (2 * n + 1);
    sum += term;
  }
  return TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
}

/** erfc(x) for x ≥ 2.5: e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))) (modified Lentz). */
function erfcLarge(x: number): number {
  if (x === Infinity) return 0;
  const tiny = 1e-300;
  let f = x,
    C = x,
    D = 0;
  for (let k = 1; k < 500; k++) {
    const a = k / 2;
    D = x + a * D;
    D = D === 0 ? tiny : D;
    D = 1 / D;
    C = x + a / C;
    C = C === 0 ? tiny : C;
    const delta = C * D;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / (Math.sqrt(Math.PI) * f);
}

const erfc64 = (x: number): number => (x >= 2.5 ? erfcLarge(x) : 1 - erf64(x));

/** Giles' single-precision erfinv ("Approximating the erfinv function", GPU Computing Gems, 2011). */
function erfinvGiles(y: number): number {
  let w = -Math.log((1 - y) * (1 + y)),
    p: number;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-8;
    for (const k of [
      3.43273939e-7, -3.5233877e-6, -4.39150654e-6, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
      1.50140941,
    ])
      p = k + p * w;
  } else {
    w = Math.sqrt(w) - 3;
    p = -0.000200214257;
    for (const k of [
      0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
      2.83297682,
    ])
      p = k + p * w;
  }
  return p * y;
}

/** erfinv in float64: Giles' approximation polished by two Halley steps on erf (erfc near ±1). */
export function erfinv64(y: number): number {
  if (Number.isNaN(y) || y < -1 || y > 1) return NaN;
  if (y === 1) return Infinity;
  if (y === -1) return -Infinity;
  if (y === 0) return y;
  const ay = Math.abs(y);
  let x = erfinvGiles(ay);
  for (let i = 0; i < 2; i++) {
    // f = erf(x) − y, through erfc when y is near 1 (1 − y is exact there).
    const f = ay > 0.5 ? 1 - ay - erfc64(x) : erf64(x) - ay;
    const d = TWO_OVER_SQRT_PI * Math.exp(-x * x);
    x -= f / (d * (1 + (x * f) / d));
  }
  return Math.sign(y) * x;
}

/**
 * erf in float32: the Taylor series for |x| < 0.5 (relative accuracy near 0), Numerical
 * Recipes' Chebyshev erfc (fractional error < 1.2e-7) beyond.
 */
const ERF_F32 = {
  name: "erf_f32",
  deps: ["special"],
  code: `
fn erf_f32(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  let z = abs(x);
  if (z < 0.5f) {
    let x2 = x * x;
    let s = 1.0f + x2 * (-0.33333334f + x2 * (0.1f + x2 * (-0.023809524f + x2 * (0.0046296297f
      + x2 * (-0.00075757576f + x2 * 0.00010683761f)))));
    return 1.1283791f * x * s;
  }
  if (z > 9.0f) { return sign(x); }
  let t = 1.0f / (1.0f + 0.5f * z);
  let p = -1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f + t * (-0.18628806f + t * (0.27886807f
    + t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
  let erfc = t * exp(-z * z + p);
  return sign(x) * (1.0f - erfc);
}`,
} as const;

/** erfinv in float32: Giles' approximation; ±1 give ±Inf, |x| > 1 NaN (as the CPU). */
const ERFINV_F32 = {
  name: "erfinv_f32",
  deps: ["special"],
  code: `
fn erfinv_f32(x: f32) -> f32 {
  if (is_nan(x) || abs(x) > 1.0f) { return nan_f32(); }
  if (abs(x) == 1.0f) { return x * inf_f32(); }
  var w = -log((1.0f - x) * (1.0f + x));
  var p: f32;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-8f;
    p = 3.43273939e-7f + p * w; p = -3.5233877e-6f + p * w; p = -4.39150654e-6f + p * w;
    p = 0.00021858087f + p * w; p = -0.00125372503f + p * w; p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w; p = 1.50140941f + p * w;
  } else {
    w = sqrt(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w; p = 0.00134934322f + p * w; p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w; p = -0.0076224613f + p * w; p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w; p = 2.83297682f + p * w;
  }
  return p * x;
}`,
} as const;
