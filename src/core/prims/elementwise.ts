/** Elementwise primitives: unary math, binary arithmetic with numpy broadcasting, comparisons, logic, select, casts. */
import type { Array } from "../array.js";
import { ShapedArray } from "../aval.js";
import { scalar } from "../constants.js";
import { isFloat, type DType } from "../dtype.js";
import { definePrimitive, type BDim, type Primitive, type TransposeRule } from "../primitive.js";
import { broadcastShapes, shapeEq } from "../shape.js";
import { isUndef, isZero, Zero, type Tangent } from "../tangent.js";
import { bind1 } from "../trace.js";
import type { BinaryOp, UnaryOp } from "../kernel/expr.js";
import { broadcastView, viewOf, type View } from "../kernel/view.js";
import { broadcastingShape, mapHost, requireBool, requireFloat, requireNumeric, requireSameDType } from "./_helpers.js";
import { broadcastTo, moveAxis, reshape } from "./movement.js";
import { unbroadcast } from "./reduce.js";

// ---------------------------------------------------------------- batching

/** Batching rule shared by all broadcasting elementwise ops: batch dims go to the front, padded to full rank. */
export function elementwiseVmap(prim: Primitive) {
  return (args: readonly Array[], dims: readonly BDim[], params: unknown): [Array[], BDim[]] => {
    const rank = Math.max(...args.map((a, i) => a.ndim - (dims[i] === null ? 0 : 1)));
    const moved = args.map((a, i) => {
      const d = dims[i];
      if (d === null || d === undefined) return a;
      const m = moveAxis(a, d, 0);
      const rest = m.shape.slice(1);
      return rest.length === rank ? m : reshape(m, [m.shape[0]!, ...new globalThis.Array<number>(rank - rest.length).fill(1), ...rest]);
    });
    return [[bind1(prim, moved, params)], [0]];
  };
}

const c = (v: number, like: Array): Array => scalar(v, like.dtype);

// ---------------------------------------------------------------- unary

type UnaryJvp = (x: Array, out: Array, t: Array) => Tangent;

function unary(name: string, kind: "float" | "numeric" | "bool", fn: (x: number) => number, jvp: UnaryJvp | "zero",
  opts: { outDType?: DType; transpose?: TransposeRule<Record<string, never>> } = {}): Primitive<Record<string, never>> {
  const { outDType, transpose } = opts;
  const prim: Primitive<Record<string, never>> = definePrimitive<Record<string, never>>({
    name,
    shape: ([x]) => {
      if (kind === "float") requireFloat(name, x!);
      else if (kind === "numeric") requireNumeric(name, x!);
      else requireBool(name, x!);
      return [outDType ? new ShapedArray(x!.shape, outDType) : x!];
    },
    impl: ([x], _p, [out]) => [mapHost([x!], out!, fn)],
    jvp: ([x], [t], p) => {
      const out = bind1(prim, [x!], p);
      if (jvp === "zero" || isZero(t)) return [[out], [new Zero(out.aval.strong())]];
      return [[out], [jvp(x!, out, t as Array)]];
    },
    ...(transpose ? { transpose } : {}),
    vmap: (args, dims, p) => elementwiseVmap(prim)(args, dims, p),
    lower: ([x], _p, [out], g) => [viewOf(out!, (idx) => g.unary(name as UnaryOp, x!.at(idx)))],
  });
  return prim;
}

const u = (p: Primitive) => (x: Array): Array => bind1(p, [x], {});

export const negP = unary("neg", "numeric", (x) => -x, (_x, _o, t) => neg(t), { transpose: ([ct]) => [tneg(ct!)] });
export const neg = u(negP);
export const absP = unary("abs", "numeric", Math.abs, (x, _o, t) => mul(t, sign(x)));
export const abs = u(absP);
export const signP = unary("sign", "numeric", (x) => (x > 0 ? 1 : x < 0 ? -1 : x), "zero");
export const sign = u(signP);
export const expP = unary("exp", "float", Math.exp, (_x, o, t) => mul(t, o));
export const exp = u(expP);
export const logP = unary("log", "float", Math.log, (x, _o, t) => div(t, x));
export const log = u(logP);
export const log1pP = unary("log1p", "float", Math.log1p, (x, _o, t) => div(t, add(x, c(1, x))));
export const log1p = u(log1pP);
export const expm1P = unary("expm1", "float", Math.expm1, (_x, o, t) => mul(t, add(o, c(1, o))));
export const expm1 = u(expm1P);
export const sinP = unary("sin", "float", Math.sin, (x, _o, t) => mul(t, cos(x)));
export const sin = u(sinP);
export const cosP = unary("cos", "float", Math.cos, (x, _o, t) => mul(t, neg(sin(x))));
export const cos = u(cosP);
export const tanP = unary("tan", "float", Math.tan, (_x, o, t) => mul(t, add(c(1, o), mul(o, o))));
export const tan = u(tanP);
export const tanhP = unary("tanh", "float", Math.tanh, (_x, o, t) => mul(t, sub(c(1, o), mul(o, o))));
export const tanh = u(tanhP);
export const asinP = unary("asin", "float", Math.asin, (x, _o, t) => mul(t, rsqrt(sub(c(1, x), mul(x, x)))));
export const asin = u(asinP);
export const acosP = unary("acos", "float", Math.acos, (x, _o, t) => mul(t, neg(rsqrt(sub(c(1, x), mul(x, x))))));
export const acos = u(acosP);
export const atanP = unary("atan", "float", Math.atan, (x, _o, t) => div(t, add(c(1, x), mul(x, x))));
export const atan = u(atanP);
export const sqrtP = unary("sqrt", "float", Math.sqrt, (_x, o, t) => div(t, mul(c(2, o), o)));
export const sqrt = u(sqrtP);
export const rsqrtP = unary("rsqrt", "float", (x) => 1 / Math.sqrt(x), (x, o, t) => mul(t, div(mul(c(-0.5, o), o), x)));
export const rsqrt = u(rsqrtP);
export const floorP = unary("floor", "float", Math.floor, "zero");
export const floor = u(floorP);
export const ceilP = unary("ceil", "float", Math.ceil, "zero");
export const ceil = u(ceilP);
/** Round half to even, as numpy does. */
const roundHalfEven = (x: number): number => {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
};
export const roundP = unary("round", "float", roundHalfEven, "zero");
export const round = u(roundP);
export const isfiniteP = unary("isfinite", "float", (x) => (Number.isFinite(x) ? 1 : 0), "zero", { outDType: "bool" });
export const isfinite = u(isfiniteP);
export const notP = unary("not", "bool", (x) => (x ? 0 : 1), "zero");
export const logicalNot = u(notP);

// ---------------------------------------------------------------- binary

type BinJvp = (a: Array, b: Array, out: Array, ta: Tangent, tb: Tangent) => Tangent;

function binary(name: string, kind: "numeric" | "float" | "compare" | "bool", fn: (a: number, b: number) => number,
  jvp: BinJvp | "zero",
  opts: { intFn?: (a: number, b: number) => number; transpose?: TransposeRule<Record<string, never>> } = {}): Primitive<Record<string, never>> {
  const { intFn, transpose } = opts;
  const prim: Primitive<Record<string, never>> = definePrimitive<Record<string, never>>({
    name,
    shape: (avals) => {
      const d = requireSameDType(name, avals);
      if (kind === "float") requireFloat(name, avals[0]!);
      if (kind === "numeric") requireNumeric(name, avals[0]!);
      if (kind === "bool") requireBool(name, avals[0]!);
      if (kind === "compare" && d === "bool" && name !== "eq" && name !== "ne") requireNumeric(name, avals[0]!);
      return [broadcastingShape(name, avals, kind === "compare" ? "bool" : undefined)];
    },
    impl: ([a, b], _p, [out]) => [mapHost([a!, b!], out!, intFn && a!.dtype === "int32" ? intFn : fn)],
    jvp: ([a, b], [ta, tb], p) => {
      const out = bind1(prim, [a!, b!], p);
      if (jvp === "zero") return [[out], [new Zero(out.aval.strong())]];
      return [[out], [jvp(a!, b!, out, ta!, tb!)]];
    },
    ...(transpose ? { transpose } : {}),
    vmap: (args, dims, p) => elementwiseVmap(prim)(args, dims, p),
    lower: ([a, b], _p, [out], g) => {
      const A = broadcastView(g, a!, out!.shape), B = broadcastView(g, b!, out!.shape);
      const kop = (name === "div" && a!.dtype === "int32" ? "idiv" : name) as BinaryOp;
      return [viewOf(out!, (idx) => g.binary(kop, A.at(idx), B.at(idx)))];
    },
  });
  return prim;
}
const b2 = (p: Primitive) => (a: Array, b: Array): Array => bind1(p, [a, b], {});

/** Tangent helpers that keep symbolic zeros symbolic. */
export function tadd(a: Tangent, b: Tangent): Tangent {
  if (isZero(a)) return b;
  if (isZero(b)) return a;
  return add(a, b);
}
function tmul(t: Tangent, k: Array): Tangent { return isZero(t) ? t : mul(t, k); }
function tneg(t: Tangent): Tangent { return isZero(t) ? t : neg(t); }
/** Broadcast a tangent to the output's shape (a tangent of a broadcast operand must match the output). */
function fit(t: Tangent, out: Array): Tangent {
  if (isZero(t)) return new Zero(out.aval.strong());
  return shapeEq(t.shape, out.shape) ? t : broadcastTo(t, out.shape);
}

// Linear transposes sum cotangents back to each operand's (pre-broadcast) shape.
export const addP = binary("add", "numeric", (a, b) => a + b, (_a, _b, o, ta, tb) => fit(tadd(ta, tb), o), {
  transpose: ([ct], [a, b]) => [
    isUndef(a) ? unbroadcastT(ct!, a.aval) : null,
    isUndef(b) ? unbroadcastT(ct!, b.aval) : null,
  ],
});
export const add = b2(addP);
export const subP = binary("sub", "numeric", (a, b) => a - b, (_a, _b, o, ta, tb) => fit(tadd(ta, tneg(tb)), o), {
  transpose: ([ct], [a, b]) => [
    isUndef(a) ? unbroadcastT(ct!, a.aval) : null,
    isUndef(b) ? unbroadcastT(tneg(ct!), b.aval) : null,
  ],
});
export const sub = b2(subP);
export const mulP = binary("mul", "numeric", (a, b) => a * b, (a, b, o, ta, tb) => fit(tadd(tmul(ta, b), tmul(tb, a)), o), {
  intFn: Math.imul,
  transpose: ([ct], [a, b]) => {
    if (isUndef(a) && isUndef(b)) throw new Error("internal: mul transpose with both operands linear (non-linear use of a tangent).");
    if (isUndef(a)) return [unbroadcastT(tmul(ct!, b as Array), a.aval), null];
    if (isUndef(b)) return [null, unbroadcastT(tmul(ct!, a as Array), b.aval)];
    return [null, null];
  },
});
export const mul = b2(mulP);
export const divP = binary("div", "numeric", (a, b) => a / b,
  (_a, b, o, ta, tb) => fit(isZero(tb) ? tmul(ta, recip(b)) : div(tadd(ta, neg(mul(tb as Array, o))) as Array, b), o),
  {
    intFn: (a, b) => (b === 0 ? 0 : Math.trunc(a / b)),
    transpose: ([ct], [a, b]) => {
      if (isUndef(b)) throw new Error("internal: div transpose with a linear denominator.");
      if (!isUndef(a)) return [null, null];
      return [unbroadcastT(isZero(ct!) ? ct! : div(ct as Array, b as Array), a.aval), null];
    },
  });
export const div = b2(divP);
export const remP = binary("rem", "numeric", (a, b) => a % b,
  (a, b, o, ta, tb) => fit(tadd(ta, tneg(tmul(tb, trunc(div(a, b))))), o), { intFn: (a, b) => (b === 0 ? 0 : a % b) });
export const rem = b2(remP);
export const powP = binary("pow", "float", Math.pow, (a, b, o, ta, tb) => {
  // d(a^b) = b a^(b-1) da + log(a) a^b db; at a == 0 the db term is 0 (not 0·-inf).
  const da = isZero(ta) ? ta : mul(ta, mul(b, pow(a, sub(b, c(1, b)))));
  if (isZero(tb)) return fit(da, o);
  const isZ = eq(a, c(0, a));
  const safeA = select(isZ, broadcastTo(c(1, a), a.shape), a);
  const db = mul(tb, select(isZ, zerosLikeA(o), mul(o, log(safeA))));
  return fit(tadd(da, db), o);
});
export const pow = b2(powP);
const weights = (a: Array, b: Array, first: (a: Array, b: Array) => Array): Array => {
  // 1 where `a` wins, 0.5 on ties (JAX convention), 0 elsewhere; a known (primal) factor.
  const one = c(1, a), half = c(0.5, a), zero = c(0, a);
  return select(first(a, b), one, select(eq(a, b), half, zero));
};
export const maxP = binary("max", "numeric", (a, b) => (a !== a || b !== b ? NaN : Math.max(a, b)), (a, b, o, ta, tb) => {
  const w = weights(a, b, gt);
  return fit(tadd(tmul(ta, w), tmul(tb, sub(c(1, w), w))), o);
});
export const maximum = b2(maxP);
export const minP = binary("min", "numeric", (a, b) => (a !== a || b !== b ? NaN : Math.min(a, b)), (a, b, o, ta, tb) => {
  const w = weights(a, b, lt);
  return fit(tadd(tmul(ta, w), tmul(tb, sub(c(1, w), w))), o);
});
export const minimum = b2(minP);
export const atan2P = binary("atan2", "float", Math.atan2, (y, x, o, ty, tx) => {
  const r2 = add(mul(x, x), mul(y, y));
  return fit(tadd(tmul(ty, div(x, r2)), tmul(tx, neg(div(y, r2)))), o);
});
export const atan2 = b2(atan2P);

export const eqP = binary("eq", "compare", (a, b) => (a === b ? 1 : 0), "zero");
export const eq = b2(eqP);
export const neP = binary("ne", "compare", (a, b) => (a !== b ? 1 : 0), "zero");
export const ne = b2(neP);
export const ltP = binary("lt", "compare", (a, b) => (a < b ? 1 : 0), "zero");
export const lt = b2(ltP);
export const leP = binary("le", "compare", (a, b) => (a <= b ? 1 : 0), "zero");
export const le = b2(leP);
export const gtP = binary("gt", "compare", (a, b) => (a > b ? 1 : 0), "zero");
export const gt = b2(gtP);
export const geP = binary("ge", "compare", (a, b) => (a >= b ? 1 : 0), "zero");
export const ge = b2(geP);
export const andP = binary("and", "bool", (a, b) => a & b, "zero");
export const logicalAnd = b2(andP);
export const orP = binary("or", "bool", (a, b) => a | b, "zero");
export const logicalOr = b2(orP);

function unbroadcastT(ct: Tangent, aval: ShapedArray): Tangent {
  return isZero(ct) ? new Zero(aval) : unbroadcast(ct, aval.shape);
}

// ---------------------------------------------------------------- select, casts, stop_gradient

export const selectP: Primitive<Record<string, never>> = definePrimitive<Record<string, never>>({
  name: "select",
  shape: ([p, a, b]) => {
    requireBool("select (np.where)", p!);
    const d = requireSameDType("select (np.where)", [a!, b!]);
    return [new ShapedArray(broadcastShapes("select (np.where)", p!.shape, a!.shape, b!.shape), d, a!.weak && b!.weak)];
  },
  impl: ([p, a, b], _pr, [out]) => [mapHost([p!, a!, b!], out!, (q, x, y) => (q ? x : y))],
  jvp: ([p, a, b], [, ta, tb], pr) => {
    const out = bind1(selectP, [p!, a!, b!], pr);
    if (isZero(ta) && isZero(tb)) return [[out], [new Zero(out.aval.strong())]];
    const z = (t: Tangent, like: Array) => (isZero(t) ? zerosLikeA(like) : t);
    return [[out], [select(p!, z(ta!, a!), z(tb!, b!))]];
  },
  transpose: ([ct], [p, a, b]) => {
    if (isUndef(p)) throw new Error("internal: select predicate cannot be linear.");
    if (isZero(ct)) return [null, isUndef(a) ? new Zero(a.aval) : null, isUndef(b) ? new Zero(b.aval) : null];
    const zero = zerosLikeA(ct as Array);
    return [
      null,
      isUndef(a) ? unbroadcast(select(p as Array, ct as Array, zero), a.aval.shape) : null,
      isUndef(b) ? unbroadcast(select(p as Array, zero, ct as Array), b.aval.shape) : null,
    ];
  },
  vmap: (args, dims, p) => elementwiseVmap(selectP)(args, dims, p),
  lower: ([c, a, b], _p, [out], g) => {
    const [C, A, B] = [c!, a!, b!].map((v) => broadcastView(g, v, out!.shape)) as [View, View, View];
    return [viewOf(out!, (idx) => g.select(C.at(idx), A.at(idx), B.at(idx)))];
  },
});
/** where(p, a, b) with broadcasting; a and b share a dtype. */
export const select = (p: Array, a: Array, b: Array): Array => bind1(selectP, [p, a, b], {});

const castValue = (to: DType) => (x: number): number => {
  if (to === "bool") return x !== 0 ? 1 : 0;
  if (to === "int32") return Number.isFinite(x) ? Math.trunc(x) : 0;
  return x;
};
export interface ConvertParams { readonly dtype: DType; readonly weak?: boolean }
export const convertP: Primitive<ConvertParams> = definePrimitive<ConvertParams>({
  name: "convert_element_type",
  shape: ([x], { dtype, weak }) => [new ShapedArray(x!.shape, dtype, weak ?? false)],
  impl: ([x], { dtype }, [out]) => [mapHost([x!], out!, castValue(dtype))],
  jvp: ([x], [t], p) => {
    const out = bind1(convertP, [x!], p);
    if (isZero(t) || !isFloat(p.dtype) || !isFloat(x!.dtype)) return [[out], [new Zero(out.aval.strong())]];
    return [[out], [convert(t as Array, p.dtype)]];
  },
  transpose: ([ct], [x]) => [isZero(ct) ? new Zero((x as { aval: ShapedArray }).aval) : convert(ct as Array, (x as { aval: ShapedArray }).aval.dtype)],
  vmap: ([x], [d], p) => [[bind1(convertP, [x!], p)], [d!]],
  lower: ([x], { dtype }, [out], g) => [viewOf(out!, (idx) => g.cast(x!.at(idx), dtype))],
  printParams: (p) => `dtype=${p.dtype}`,
});
export const convert = (x: Array, dtype: DType, weak = false): Array =>
  x.dtype === dtype && x.aval.weak === weak ? x : bind1(convertP, [x], { dtype, weak });

export const stopGradientP: Primitive<Record<string, never>> = definePrimitive<Record<string, never>>({
  name: "stop_gradient",
  shape: ([x]) => [x!],
  impl: ([x]) => [x!],
  jvp: ([x]) => [[bind1(stopGradientP, [x!], {})], [new Zero(x!.aval.strong())]],
  vmap: ([x], [d]) => [[bind1(stopGradientP, [x!], {})], [d!]],
  lower: ([x]) => [x!],
});
export const stopGradient = (x: Array): Array => bind1(stopGradientP, [x], {});

// ---------------------------------------------------------------- small composites used by rules

export const recip = (x: Array): Array => div(c(1, x), x);
export const trunc = (x: Array): Array => select(lt(x, c(0, x)), ceil(x), floor(x));
/** Zeros with x's shape and dtype, independent of x's value (never staged as a function of x). */
export const zerosLikeA = (x: Array): Array => broadcastTo(scalar(0, x.dtype), x.shape);
