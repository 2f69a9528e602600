/** Elementwise primitives: unary math, binary arithmetic with numpy broadcasting, comparisons, logic, select, casts. */
import type { Array } from "../array.js";
import { ShapedArray } from "../aval.js";
import { scalar } from "../constants.js";
import { isFloat, type DType } from "../dtype.js";
import { definePrimitive, type BDim, type Primitive, type TransposeRule } from "../primitive.js";
import { broadcastShapes, shapeEq } from "../shape.js";
import { isUndef, isZero, Zero, type Tangent } from "../tangent.js";
import { bind1 } from "../trace.js";
import { binaryOp, UNARY_OPS, unaryOp, type BinaryOp, type UnaryOp } from "../kernel/scalar-ops.js";
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
      return rest.length === rank
        ? m
        : reshape(m, [m.shape[0]!, ...new globalThis.Array<number>(rank - rest.length).fill(1), ...rest]);
    });
    return [[bind1(prim, moved, params)], [0]];
  };
}

const c = (v: number, like: Array): Array => scalar(v, like.dtype);

// ---------------------------------------------------------------- unary

type UnaryJvp = (x: Array, out: Array, t: Array) => Tangent;
/**
 * A unary primitive's rules beyond its scalar op (kernel/scalar-ops.ts: value, JS and WGSL): operand kind, jvp,
 * transpose.
 */
interface UnaryRule {
  readonly kind: "float" | "numeric" | "bool";
  readonly jvp: UnaryJvp | "zero";
  readonly transpose?: TransposeRule<Record<string, never>>;
}

function unary(name: UnaryOp, { kind, jvp, transpose }: UnaryRule): Primitive<Record<string, never>> {
  const { eval: fn } = unaryOp(name);
  const outDType: DType | undefined = "boolOut" in UNARY_OPS[name] ? "bool" : undefined;
  const prim: Primitive<Record<string, never>> = definePrimitive<Record<string, never>>({
    name,
    shape: ([x]) => {
      if (kind === "float") requireFloat(name, x!);
      else if (kind === "numeric") requireNumeric(name, x!);
      else requireBool(name, x!);
      return [outDType ? new ShapedArray(x!.shape, outDType) : x!];
    },
    impl: ([x], _p, [out]) => [mapHost([x!], out!, (v) => fn(v, x!.dtype === "int32"))],
    jvp: ([x], [t], p) => {
      const out = bind1(prim, [x!], p);
      if (jvp === "zero" || isZero(t)) return [[out], [new Zero(out.aval.strong())]];
      return [[out], [jvp(x!, out, t as Array)]];
    },
    ...(transpose ? { transpose } : {}),
    vmap: (args, dims, p) => elementwiseVmap(prim)(args, dims, p),
    lower: ([x], _p, [out], g) => [viewOf(out!, (idx) => g.unary(name, x!.at(idx)))],
  });
  return prim;
}

const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

/** One entry per scalar unary op (the compiler checks that every op in UNARY_OPS has one). */
const UNARY_RULES = {
  neg: { kind: "numeric", jvp: (_x, _o, t) => neg(t), transpose: ([ct]) => [tneg(ct!)] },
  abs: { kind: "numeric", jvp: (x, _o, t) => mul(t, sign(x)) },
  sign: { kind: "numeric", jvp: "zero" },
  exp: { kind: "float", jvp: (_x, o, t) => mul(t, o) },
  log: { kind: "float", jvp: (x, _o, t) => div(t, x) },
  log1p: { kind: "float", jvp: (x, _o, t) => div(t, add(x, c(1, x))) },
  expm1: { kind: "float", jvp: (_x, o, t) => mul(t, add(o, c(1, o))) },
  sin: { kind: "float", jvp: (x, _o, t) => mul(t, cos(x)) },
  cos: { kind: "float", jvp: (x, _o, t) => mul(t, neg(sin(x))) },
  tan: { kind: "float", jvp: (_x, o, t) => mul(t, add(c(1, o), mul(o, o))) },
  tanh: { kind: "float", jvp: (_x, o, t) => mul(t, sub(c(1, o), mul(o, o))) },
  asin: { kind: "float", jvp: (x, _o, t) => mul(t, rsqrt(sub(c(1, x), mul(x, x)))) },
  acos: { kind: "float", jvp: (x, _o, t) => mul(t, neg(rsqrt(sub(c(1, x), mul(x, x))))) },
  atan: { kind: "float", jvp: (x, _o, t) => div(t, add(c(1, x), mul(x, x))) },
  sqrt: { kind: "float", jvp: (_x, o, t) => div(t, mul(c(2, o), o)) },
  rsqrt: { kind: "float", jvp: (x, o, t) => mul(t, div(mul(c(-0.5, o), o), x)) },
  floor: { kind: "float", jvp: "zero" },
  ceil: { kind: "float", jvp: "zero" },
  /** Round half to even, as numpy does. */
  round: { kind: "float", jvp: "zero" },
  isfinite: { kind: "float", jvp: "zero" },
  not: { kind: "bool", jvp: "zero" },
  // d erf(x) = 2/√π e^(−x²) dx;  d erfinv(y) = √π/2 e^(erfinv(y)²) dy
  erf: { kind: "float", jvp: (x, _o, t) => mul(t, mul(c(TWO_OVER_SQRT_PI, x), exp(neg(mul(x, x))))) },
  erfinv: { kind: "float", jvp: (_x, o, t) => mul(t, div(exp(mul(o, o)), c(TWO_OVER_SQRT_PI, o))) },
} satisfies Record<UnaryOp, UnaryRule>;

const unaryPrims = Object.fromEntries(
  Object.entries(UNARY_RULES).map(([name, rule]) => [name, unary(name as keyof typeof UNARY_RULES, rule)]),
) as { readonly [K in UnaryOp]: Primitive<Record<string, never>> };
const u =
  (p: Primitive) =>
  (x: Array): Array =>
    bind1(p, [x], {});

export const negP = unaryPrims.neg;
export const neg = u(negP);
export const absP = unaryPrims.abs;
export const abs = u(absP);
export const signP = unaryPrims.sign;
export const sign = u(signP);
export const expP = unaryPrims.exp;
export const exp = u(expP);
export const logP = unaryPrims.log;
export const log = u(logP);
export const log1pP = unaryPrims.log1p;
export const log1p = u(log1pP);
export const expm1P = unaryPrims.expm1;
export const expm1 = u(expm1P);
export const sinP = unaryPrims.sin;
export const sin = u(sinP);
export const cosP = unaryPrims.cos;
export const cos = u(cosP);
export const tanP = unaryPrims.tan;
export const tan = u(tanP);
export const tanhP = unaryPrims.tanh;
export const tanh = u(tanhP);
export const asinP = unaryPrims.asin;
export const asin = u(asinP);
export const acosP = unaryPrims.acos;
export const acos = u(acosP);
export const atanP = unaryPrims.atan;
export const atan = u(atanP);
export const sqrtP = unaryPrims.sqrt;
export const sqrt = u(sqrtP);
export const rsqrtP = unaryPrims.rsqrt;
export const rsqrt = u(rsqrtP);
export const floorP = unaryPrims.floor;
export const floor = u(floorP);
export const ceilP = unaryPrims.ceil;
export const ceil = u(ceilP);
export const roundP = unaryPrims.round;
export const round = u(roundP);
export const isfiniteP = unaryPrims.isfinite;
export const isfinite = u(isfiniteP);
export const notP = unaryPrims.not;
export const logicalNot = u(notP);
export const erfP = unaryPrims.erf;
export const erf = u(erfP);
export const erfinvP = unaryPrims.erfinv;
export const erfinv = u(erfinvP);

// ---------------------------------------------------------------- binary

type BinJvp = (a: Array, b: Array, out: Array, ta: Tangent, tb: Tangent) => Tangent;

function binary(
  name: BinaryOp,
  kind: "numeric" | "float" | "compare" | "bool",
  jvp: BinJvp | "zero",
  opts: { transpose?: TransposeRule<Record<string, never>> } = {},
): Primitive<Record<string, never>> {
  const { transpose } = opts;
  /** The scalar op for an operand dtype: int32 `div` truncates (x/0 = 0). */
  const opFor = (d: DType): BinaryOp => (name === "div" && d === "int32" ? "idiv" : name);
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
    impl: ([a, b], _p, [out]) => {
      const i32 = a!.dtype === "int32",
        { eval: fn } = binaryOp(opFor(a!.dtype));
      return [mapHost([a!, b!], out!, (x, y) => fn(x, y, i32))];
    },
    jvp: ([a, b], [ta, tb], p) => {
      const out = bind1(prim, [a!, b!], p);
      if (jvp === "zero") return [[out], [new Zero(out.aval.strong())]];
      return [[out], [jvp(a!, b!, out, ta!, tb!)]];
    },
    ...(transpose ? { transpose } : {}),
    vmap: (args, dims, p) => elementwiseVmap(prim)(args, dims, p),
    lower: ([a, b], _p, [out], g) => {
      const A = broadcastView(g, a!, out!.shape),
        B = broadcastView(g, b!, out!.shape);
      const kop = opFor(a!.dtype);
      return [viewOf(out!, (idx) => g.binary(kop, A.at(idx), B.at(idx)))];
    },
  });
  return prim;
}
const b2 =
  (p: Primitive) =>
  (a: Array, b: Array): Array =>
    bind1(p, [a, b], {});

/** Tangent helpers that keep symbolic zeros symbolic. */
export function tadd(a: Tangent, b: Tangent): Tangent {
  if (isZero(a)) return b;
  if (isZero(b)) return a;
  return add(a, b);
}
function tmul(t: Tangent, k: Array): Tangent {
  return isZero(t) ? t : mul(t, k);
}
function tneg(t: Tangent): Tangent {
  return isZero(t) ? t : neg(t);
}
/** Broadcast a tangent to the output's shape (a tangent of a broadcast operand must match the output). */
function fit(t: Tangent, out: Array): Tangent {
  if (isZero(t)) return new Zero(out.aval.strong());
  return shapeEq(t.shape, out.shape) ? t : broadcastTo(t, out.shape);
}

// Linear transposes sum cotangents back to each operand's (pre-broadcast) shape.
export const addP = binary("add", "numeric", (_a, _b, o, ta, tb) => fit(tadd(ta, tb), o), {
  transpose: ([ct], [a, b]) => [
    isUndef(a) ? unbroadcastT(ct!, a.aval) : null,
    isUndef(b) ? unbroadcastT(ct!, b.aval) : null,
  ],
});
export const add = b2(addP);
export const subP = binary("sub", "numeric", (_a, _b, o, ta, tb) => fit(tadd(ta, tneg(tb)), o), {
  transpose: ([ct], [a, b]) => [
    isUndef(a) ? unbroadcastT(ct!, a.aval) : null,
    isUndef(b) ? unbroadcastT(tneg(ct!), b.aval) : null,
  ],
});
export const sub = b2(subP);
export const mulP = binary("mul", "numeric", (a, b, o, ta, tb) => fit(tadd(tmul(ta, b), tmul(tb, a)), o), {
  transpose: ([ct], [a, b]) => {
    if (isUndef(a) && isUndef(b))
      throw new Error("internal: mul transpose with both operands linear (non-linear use of a tangent).");
    if (isUndef(a)) return [unbroadcastT(tmul(ct!, b as Array), a.aval), null];
    if (isUndef(b)) return [null, unbroadcastT(tmul(ct!, a as Array), b.aval)];
    return [null, null];
  },
});
export const mul = b2(mulP);
export const divP = binary(
  "div",
  "numeric",
  (_a, b, o, ta, tb) => fit(isZero(tb) ? tmul(ta, recip(b)) : div(tadd(ta, neg(mul(tb as Array, o))) as Array, b), o),
  {
    transpose: ([ct], [a, b]) => {
      if (isUndef(b)) throw new Error("internal: div transpose with a linear denominator.");
      if (!isUndef(a)) return [null, null];
      return [unbroadcastT(isZero(ct!) ? ct! : div(ct as Array, b as Array), a.aval), null];
    },
  },
);
export const div = b2(divP);
export const remP = binary("rem", "numeric", (a, b, o, ta, tb) => fit(tadd(ta, tneg(tmul(tb, trunc(div(a, b))))), o));
export const rem = b2(remP);
export const powP = binary("pow", "float", (a, b, o, ta, tb) => {
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
  const one = c(1, a),
    half = c(0.5, a),
    zero = c(0, a);
  return select(first(a, b), one, select(eq(a, b), half, zero));
};
export const maxP = binary("max", "numeric", (a, b, o, ta, tb) => {
  const w = weights(a, b, gt);
  return fit(tadd(tmul(ta, w), tmul(tb, sub(c(1, w), w))), o);
});
export const maximum = b2(maxP);
export const minP = binary("min", "numeric", (a, b, o, ta, tb) => {
  const w = weights(a, b, lt);
  return fit(tadd(tmul(ta, w), tmul(tb, sub(c(1, w), w))), o);
});
export const minimum = b2(minP);
export const atan2P = binary("atan2", "float", (y, x, o, ty, tx) => {
  const r2 = add(mul(x, x), mul(y, y));
  return fit(tadd(tmul(ty, div(x, r2)), tmul(tx, neg(div(y, r2)))), o);
});
export const atan2 = b2(atan2P);

export const eqP = binary("eq", "compare", "zero");
export const eq = b2(eqP);
export const neP = binary("ne", "compare", "zero");
export const ne = b2(neP);
export const ltP = binary("lt", "compare", "zero");
export const lt = b2(ltP);
export const leP = binary("le", "compare", "zero");
export const le = b2(leP);
export const gtP = binary("gt", "compare", "zero");
export const gt = b2(gtP);
export const geP = binary("ge", "compare", "zero");
export const ge = b2(geP);
export const andP = binary("and", "bool", "zero");
export const logicalAnd = b2(andP);
export const orP = binary("or", "bool", "zero");
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

const castValue =
  (to: DType) =>
  (x: number): number => {
    if (to === "bool") return x !== 0 ? 1 : 0;
    if (to === "int32") return Number.isFinite(x) ? Math.trunc(x) : 0;
    return x;
  };
export interface ConvertParams {
  readonly dtype: DType;
  readonly weak?: boolean;
}
export const convertP: Primitive<ConvertParams> = definePrimitive<ConvertParams>({
  name: "convert_element_type",
  shape: ([x], { dtype, weak }) => [new ShapedArray(x!.shape, dtype, weak ?? false)],
  impl: ([x], { dtype }, [out]) => [mapHost([x!], out!, castValue(dtype))],
  jvp: ([x], [t], p) => {
    const out = bind1(convertP, [x!], p);
    if (isZero(t) || !isFloat(p.dtype) || !isFloat(x!.dtype)) return [[out], [new Zero(out.aval.strong())]];
    return [[out], [convert(t as Array, p.dtype)]];
  },
  transpose: ([ct], [x]) => [
    isZero(ct)
      ? new Zero((x as { aval: ShapedArray }).aval)
      : convert(ct as Array, (x as { aval: ShapedArray }).aval.dtype),
  ],
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
