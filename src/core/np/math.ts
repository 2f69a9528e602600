/** Elementwise math with numpy broadcasting and dtype promotion. */
import type { Array, ArrayLike } from "../array.js";
import { checkDType, isFloat } from "../dtype.js";
import * as lax from "../prims/index.js";
import { asArray, asFloat, promote } from "./convert.js";

const bin =
  (name: string, f: (a: Array, b: Array) => Array) =>
  (a: ArrayLike, b: ArrayLike): Array => {
    const [x, y] = promote(name, [a, b]);
    return f(x!, y!);
  };
const unFloat =
  (name: string, f: (a: Array) => Array) =>
  (x: ArrayLike): Array =>
    f(asFloat(x, name));

export const add = bin("add", lax.add);
export const sub = bin("sub", lax.sub);
export const mul = bin("mul", lax.mul);
/** True division: integer operands give float32 (as numpy/JAX). */
export const div = (a: ArrayLike, b: ArrayLike): Array => {
  const [x, y] = promote("div", [a, b]);
  if (isFloat(x!.dtype)) return lax.div(x!, y!);
  const [fx, fy] = promote("div", [lax.convert(x!, "float32", x!.aval.weak), lax.convert(y!, "float32", y!.aval.weak)]);
  return lax.div(fx!, fy!);
};
/** Floor division (numpy //). */
export const floorDivide = (a: ArrayLike, b: ArrayLike): Array => {
  const [x, y] = promote("floorDivide", [a, b]);
  if (isFloat(x!.dtype)) return lax.floor(lax.div(x!, y!));
  const q = lax.div(x!, y!); // truncating
  const r = lax.rem(x!, y!);
  const fix = lax.logicalAnd(
    lax.ne(r, lax.zerosLikeA(r)),
    lax.ne(lax.lt(r, lax.zerosLikeA(r)), lax.lt(y!, lax.zerosLikeA(y!))),
  );
  return lax.select(fix, lax.sub(q, lax.convert(fix, q.dtype)), q);
};
/** fmod semantics (sign of the dividend), as C and JS `%`. */
export const remainder = bin("remainder", lax.rem);
/** Python/numpy mod: result has the sign of the divisor (useful for periodic boundaries). */
export const mod = (a: ArrayLike, b: ArrayLike): Array => {
  const [x, y] = promote("mod", [a, b]);
  const r = lax.rem(x!, y!);
  const z = lax.zerosLikeA(r);
  const fix = lax.logicalAnd(lax.ne(r, z), lax.ne(lax.lt(r, z), lax.lt(y!, lax.zerosLikeA(y!))));
  return lax.select(fix, lax.add(r, y!), r);
};
export const pow = (a: ArrayLike, b: ArrayLike): Array => {
  const [x, y] = promote("pow", [a, b]);
  if (isFloat(x!.dtype)) return lax.pow(x!, y!);
  const r = lax.pow(lax.convert(x!, "float32"), lax.convert(y!, "float32"));
  return lax.convert(lax.round(r), x!.dtype, x!.aval.weak && y!.aval.weak);
};
export const power = pow;
export const maximum = bin("maximum", lax.maximum);
export const minimum = bin("minimum", lax.minimum);
export const arctan2 = (a: ArrayLike, b: ArrayLike): Array => {
  const [x, y] = promote("arctan2", [asFloat(a, "arctan2"), asFloat(b, "arctan2")]);
  return lax.atan2(x!, y!);
};

export const neg = (x: ArrayLike): Array => lax.neg(asArray(x, "neg"));
export const negative = neg;
export const abs = (x: ArrayLike): Array => lax.abs(asArray(x, "abs"));
export const sign = (x: ArrayLike): Array => lax.sign(asArray(x, "sign"));
export const exp = unFloat("exp", lax.exp);
export const log = unFloat("log", lax.log);
export const log1p = unFloat("log1p", lax.log1p);
export const expm1 = unFloat("expm1", lax.expm1);
export const log2 = (x: ArrayLike): Array => {
  const a = asFloat(x, "log2");
  return lax.div(lax.log(a), lax.log(asFloat(2, "log2").astype(a.dtype)));
};
export const log10 = (x: ArrayLike): Array => {
  const a = asFloat(x, "log10");
  return lax.div(lax.log(a), lax.log(asFloat(10, "log10").astype(a.dtype)));
};
export const sin = unFloat("sin", lax.sin);
export const cos = unFloat("cos", lax.cos);
export const tan = unFloat("tan", lax.tan);
export const tanh = unFloat("tanh", lax.tanh);
/** The error function, 2/√π ∫₀ˣ e^(−t²) dt. */
export const erf = unFloat("erf", lax.erf);
/** Inverse of erf on (−1, 1): ±1 give ±Inf, |x| > 1 NaN. */
export const erfinv = unFloat("erfinv", lax.erfinv);
export const sinh = (x: ArrayLike): Array => {
  const a = asFloat(x, "sinh");
  return mul(0.5, sub(lax.exp(a), lax.exp(lax.neg(a))));
};
export const cosh = (x: ArrayLike): Array => {
  const a = asFloat(x, "cosh");
  return mul(0.5, add(lax.exp(a), lax.exp(lax.neg(a))));
};
export const arcsin = unFloat("arcsin", lax.asin);
export const arccos = unFloat("arccos", lax.acos);
export const arctan = unFloat("arctan", lax.atan);
export const sqrt = unFloat("sqrt", lax.sqrt);
export const rsqrt = unFloat("rsqrt", lax.rsqrt);
export const square = (x: ArrayLike): Array => {
  const a = asArray(x, "square");
  return lax.mul(a, a);
};
export const reciprocal = (x: ArrayLike): Array => div(1, x);
export const floor = (x: ArrayLike): Array => {
  const a = asArray(x, "floor");
  return isFloat(a.dtype) ? lax.floor(a) : a;
};
export const ceil = (x: ArrayLike): Array => {
  const a = asArray(x, "ceil");
  return isFloat(a.dtype) ? lax.ceil(a) : a;
};
export const round = (x: ArrayLike): Array => {
  const a = asArray(x, "round");
  return isFloat(a.dtype) ? lax.round(a) : a;
};
export const trunc = (x: ArrayLike): Array => {
  const a = asArray(x, "trunc");
  return isFloat(a.dtype) ? lax.trunc(a) : a;
};

const cmp = (name: string, f: (a: Array, b: Array) => Array) => bin(name, f);
export const equal = cmp("equal", lax.eq);
export const notEqual = cmp("notEqual", lax.ne);
export const less = cmp("less", lax.lt);
export const lessEqual = cmp("lessEqual", lax.le);
export const greater = cmp("greater", lax.gt);
export const greaterEqual = cmp("greaterEqual", lax.ge);

const toBool = (x: ArrayLike, op: string): Array => {
  const a = asArray(x, op);
  return a.dtype === "bool" ? a : lax.ne(a, lax.zerosLikeA(a));
};
export const logicalAnd = (a: ArrayLike, b: ArrayLike): Array =>
  lax.logicalAnd(toBool(a, "logicalAnd"), toBool(b, "logicalAnd"));
export const logicalOr = (a: ArrayLike, b: ArrayLike): Array =>
  lax.logicalOr(toBool(a, "logicalOr"), toBool(b, "logicalOr"));
export const logicalNot = (a: ArrayLike): Array => lax.logicalNot(toBool(a, "logicalNot"));
export const logicalXor = (a: ArrayLike, b: ArrayLike): Array =>
  lax.ne(toBool(a, "logicalXor"), toBool(b, "logicalXor"));

export const isfinite = (x: ArrayLike): Array => {
  const a = asArray(x, "isfinite");
  return isFloat(a.dtype) ? lax.isfinite(a) : lax.eq(a, a);
};
export const isnan = (x: ArrayLike): Array => {
  const a = asArray(x, "isnan");
  return lax.ne(a, a);
};
export const isinf = (x: ArrayLike): Array => logicalAnd(logicalNot(isfinite(x)), logicalNot(isnan(x)));

/** where(cond, a, b): cond is made bool (nonzero), a and b are promoted; all three broadcast. */
export function where(cond: ArrayLike, a: ArrayLike, b: ArrayLike): Array {
  const [x, y] = promote("where", [a, b]);
  return lax.select(toBool(cond, "where"), x!, y!);
}

/** clip(x, lo, hi); either bound may be null. */
export function clip(x: ArrayLike, lo: ArrayLike | null | undefined, hi: ArrayLike | null | undefined): Array {
  let r = asArray(x, "clip");
  if (lo !== null && lo !== undefined) r = maximum(r, lo);
  if (hi !== null && hi !== undefined) r = minimum(r, hi);
  return r;
}
export const clamp = (lo: ArrayLike, x: ArrayLike, hi: ArrayLike): Array => clip(x, lo, hi);

/** Cast to a dtype (numpy astype); an unknown dtype is a clear error (it used to crash in the cast loop). */
export const astype = (x: ArrayLike, dtype: Parameters<typeof lax.convert>[1]): Array =>
  lax.convert(asArray(x, "astype"), checkDType(dtype, "astype"));
export const stopGradient = (x: ArrayLike): Array => lax.stopGradient(asArray(x, "stopGradient"));
