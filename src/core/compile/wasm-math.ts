/**
 * exp, expm1, tanh, sin and cos on two f64 lanes inside a generated kernel: fdlibm's algorithms (e_exp.c, s_expm1.c,
 * s_tanh.c, k_sin.c, k_cos.c and e_rem_pio2.c's medium range), which V8 runs for `Math.exp` … `Math.cos`, so the lanes
 * get the bits the JavaScript kernel gets without a call out per lane (W1: tanh·exp + sin). fdlibm's branches become
 * selects; where two branches' formulas agree exactly they are one (exp's k = 0 form is its general form with
 * 2^k = 1; a sine's reduction for |x| < 3π/4 is the medium range's with n = ±1). A pair with a lane outside the range
 * the lanes handle — exp beyond ±708, expm1 beyond [−38, 700], the trigonometric functions beyond |x| < 49 or within
 * 2^-20 of a multiple of π/2 (fdlibm's cancellation check, which then reduces further), NaN — calls the `Math`
 * function for both. Each function is checked once against this engine's (`inlineMathExact`).
 */
import { name, section, uleb, vec, type Bytes } from "../backends/cpu/gemm/wasm-encoder.js";
import { f64c, get, i32c, O, S, set, simd, V } from "./wasm-ops.js";

/** A double from its high and low 32-bit words (fdlibm states its constants so). */
export const fromWords = (hi: number, lo: number): number => {
  const d = new DataView(new ArrayBuffer(8));
  d.setUint32(0, hi >>> 0);
  d.setUint32(4, lo >>> 0);
  return d.getFloat64(0);
};

/** A v128 constant of two equal i64 lanes (fdlibm's high words shifted up by 32, masks). */
export const i64x2 = (value: bigint | number): Bytes => {
  const v = BigInt(value);
  const b = new Uint8Array(16),
    d = new DataView(b.buffer);
  d.setBigInt64(0, BigInt.asIntN(64, v), true);
  d.setBigInt64(8, BigInt.asIntN(64, v), true);
  return simd(S.v128_const, ...b);
};
export const f64x2 = (v: number): Bytes => [...f64c(v), ...simd(S.f64x2_splat)];
/** Lanes whose fdlibm high word (|x|'s, as an i64 of x's bits without the sign) compares so against `hw`. */
const HW = (hw: number): bigint => BigInt(hw) << 32n;
const ABS = 0x7fffffffffffffffn,
  SIGN = -0x8000000000000000n,
  HIGH = -0x100000000n;

const vop =
  (code: number) =>
  (...args: Bytes[]): Bytes => [...args.flat(), ...simd(code)];
const add = vop(S.f64x2_add),
  sub = vop(S.f64x2_sub),
  mul = vop(S.f64x2_mul),
  div = vop(S.f64x2_div),
  and = vop(S.v128_and),
  andnot = vop(S.v128_andnot),
  or = vop(S.v128_or),
  xor = vop(S.v128_xor),
  lt = vop(S.f64x2_lt),
  le = vop(S.f64x2_le),
  ge = vop(S.f64x2_ge),
  eq = vop(S.f64x2_eq),
  ilt = vop(S.i64x2_lt_s),
  igt = vop(S.i64x2_gt_s),
  ieq = vop(S.i64x2_eq),
  iadd = vop(S.i64x2_add),
  isub = vop(S.i64x2_sub),
  trunc = vop(S.f64x2_trunc),
  abs = vop(S.f64x2_abs),
  neg = vop(S.f64x2_neg);
/** a where mask, else b. */
const sel = (a: Bytes, b: Bytes, mask: Bytes): Bytes => [...a, ...b, ...mask, ...simd(S.bitselect)];
/** A polynomial c0 + t (c1 + t (c2 + …)) in Horner's form, as fdlibm writes it. */
const horner = (t: Bytes, cs: readonly number[]): Bytes =>
  cs.length === 1 ? f64x2(cs[0]!) : add(f64x2(cs[0]!), mul(t, horner(t, cs.slice(1))));
/** Whole-number f64 lanes (|k| < 2^31) as i64 lanes. */
const toI64 = (k: Bytes): Bytes => [...k, ...simd(S.i32x4_trunc_sat_f64x2_s_zero), ...simd(S.i64x2_extend_low_i32x4_s)];
/** 2^k for whole-number f64 lanes k in [−1022, 1023]. */
const pow2 = (k: Bytes): Bytes => [...iadd(toI64(k), i64x2(1023n)), ...i32c(52), ...simd(S.i64x2_shl)];

/** Statements that bind values to fresh v128 locals; `done(result)` is the code: the statements, then the result. */
function block(local: (type: number) => number) {
  const code: Bytes = [];
  return {
    let(e: Bytes): Bytes {
      const l = local(V.v128);
      code.push(...e, ...set(l));
      return get(l);
    },
    done: (result: Bytes): Bytes => [...code, ...result],
  };
}

const LN2_HI = fromWords(0x3fe62e42, 0xfee00000),
  LN2_LO = fromWords(0x3dea39ef, 0x35793c76),
  INV_LN2 = fromWords(0x3ff71547, 0x652b82fe);

/**
 * fdlibm's argument reduction of exp and expm1: k (as f64) = 0 for |x| ≤ ln2/2, ±1 for |x| < 1.5 ln2, else the nearest
 * whole number to x/ln2 (rounding half away), with hi = x − k ln2_hi (exact) and lo = k ln2_lo.
 */
function reduceLn2(b: ReturnType<typeof block>, x: Bytes, bits: Bytes) {
  const sign = b.let(and(x, i64x2(SIGN)));
  const general = trunc(add(mul(f64x2(INV_LN2), x), or(sign, f64x2(0.5))));
  const k = b.let(
    sel(
      sel(or(sign, f64x2(1)), general, ilt(bits, i64x2(HW(0x3ff0a2b2)))),
      f64x2(0),
      igt(bits, i64x2(HW(0x3fd62e42) + 0xffffffffn)),
    ),
  );
  const hi = b.let(sub(x, mul(k, f64x2(LN2_HI))));
  const lo = b.let(mul(k, f64x2(LN2_LO)));
  return { k, hi, lo };
}

const EXP_P = [
  fromWords(0x3fc55555, 0x5555553e),
  fromWords(0xbf66c16c, 0x16bebd93),
  fromWords(0x3f11566a, 0xaf25de2c),
  fromWords(0xbebbbd41, 0xc5d26bf1),
  fromWords(0x3e663769, 0x72bea4d0),
];

/** e^x for lanes with |x| < 708 (k in [−1021, 1021]). */
function expCore(local: (type: number) => number, x: Bytes): Bytes {
  const b = block(local);
  const bits = b.let(and(x, i64x2(ABS)));
  const { k, hi, lo } = reduceLn2(b, x, bits);
  const r = b.let(sub(hi, lo));
  const t = b.let(mul(r, r));
  const c = b.let(sub(r, mul(t, horner(t, EXP_P))));
  // k = 0: 1 − (rc/(c − 2) − r) is this with lo = 0, hi = r and 2^k = 1 (a/(−b) = −(a/b) exactly)
  const y = mul(sub(f64x2(1), sub(sub(lo, div(mul(r, c), sub(f64x2(2), c))), hi)), pow2(k));
  // |x| < 2^-28: 1 + x; exp(1) is special-cased to e (the general form's last bit is off)
  return b.done(sel(f64x2(Math.E), sel(add(f64x2(1), x), y, ilt(bits, i64x2(HW(0x3e300000)))), eq(x, f64x2(1))));
}

const EXPM1_Q = [
  1,
  -fromWords(0x3fa11111, 0x111110f4),
  fromWords(0x3f5a01a0, 0x19fe5585),
  -fromWords(0x3f14ce19, 0x9eaadbb7),
  fromWords(0x3ed0cfca, 0x86e65239),
  -fromWords(0x3e8afdb7, 0x6e09c32d),
];

/** e^x − 1 for lanes with x in (−56 ln2, 700) and |x| ≥ 2^-54 (tanh's arguments are). */
function expm1Core(local: (type: number) => number, x0: Bytes): Bytes {
  const b = block(local);
  const bits = b.let(and(x0, i64x2(ABS)));
  const { k, hi, lo } = reduceLn2(b, x0, bits);
  const x = b.let(sub(hi, lo));
  const c = b.let(sub(sub(hi, x), lo)); // 0 where k = 0
  const hfx = b.let(mul(f64x2(0.5), x));
  const hxs = b.let(mul(x, hfx));
  const r1 = b.let(horner(hxs, EXPM1_Q));
  const t = b.let(sub(f64x2(3), mul(r1, hfx)));
  const e0 = b.let(mul(hxs, div(sub(r1, t), sub(f64x2(6), mul(x, t)))));
  const e = b.let(sub(sub(mul(x, sub(e0, c)), c), hxs));
  const twopk = b.let(pow2(k));
  const p = b.let(pow2(neg(k))); // 2^-k
  const kIs = (v: number) => eq(k, f64x2(v));
  let y = mul(add(sub(x, add(e, p)), f64x2(1)), twopk); // 20 ≤ k ≤ 56
  y = sel(mul(sub(sub(f64x2(1), p), sub(e, x)), twopk), y, lt(k, f64x2(20))); // 2 ≤ k < 20
  y = sel(sub(mul(sub(f64x2(1), sub(e, x)), twopk), f64x2(1)), y, or(le(k, f64x2(-2)), lt(f64x2(56), k)));
  const kOne = sel(
    mul(f64x2(-2), sub(e, add(x, f64x2(0.5)))),
    add(f64x2(1), mul(f64x2(2), sub(x, e))),
    lt(x, f64x2(-0.25)),
  );
  y = sel(kOne, y, kIs(1));
  y = sel(sub(mul(f64x2(0.5), sub(x, e)), f64x2(0.5)), y, kIs(-1));
  return b.done(sel(sub(x, sub(mul(x, e0), hxs)), y, kIs(0)));
}

/** tanh x for lanes that are not NaN. */
function tanhCore(local: (type: number) => number, x: Bytes): Bytes {
  const b = block(local);
  const ax = b.let(abs(x));
  const big = b.let(ge(ax, f64x2(1)));
  const twice = b.let(add(ax, ax));
  // Lanes at or beyond 22 end ±1; their argument is capped so the reduction stays in range.
  const t = b.let(expm1Core(local, sel(twice, neg(twice), big).concat(f64x2(44), simd(S.f64x2_pmin))));
  const z = sel(sub(f64x2(1), div(f64x2(2), add(t, f64x2(2)))), div(neg(t), add(t, f64x2(2))), big);
  const signed = xor(sel(f64x2(1), z, ge(ax, f64x2(22))), and(x, i64x2(SIGN)));
  // |x|'s bits are x's without the sign
  return b.done(sel(x, signed, ilt(ax, i64x2(HW(0x3e300000)))));
}

const INV_PIO2 = fromWords(0x3fe45f30, 0x6dc9c883),
  PIO2_1 = fromWords(0x3ff921fb, 0x54400000),
  PIO2_1T = fromWords(0x3dd0b461, 0x1a626331);
const SIN_S = [
  -fromWords(0x3fc55555, 0x55555549),
  fromWords(0x3f811111, 0x1110f8a6),
  -fromWords(0x3f2a01a0, 0x19c161d5),
  fromWords(0x3ec71de3, 0x57b1fe7d),
  -fromWords(0x3e5ae5e6, 0x8a2b9ceb),
  fromWords(0x3de5d93a, 0x5acfd57c),
];
const COS_C = [
  fromWords(0x3fa55555, 0x5555554c),
  -fromWords(0x3f56c16c, 0x16c15177),
  fromWords(0x3efa01a0, 0x19cb1590),
  -fromWords(0x3e927e4f, 0x809c52ad),
  fromWords(0x3e21ee9e, 0xbdb4b1c4),
  -fromWords(0x3da8fae9, 0xbe8838d4),
];

/**
 * sin x or cos x, and the mask of lanes the inline form covers: |x| < 49 (n < 32 quarter turns, fdlibm's first
 * reduction round) and not within 2^-20 of n·π/2 (where fdlibm checks for cancellation and may reduce further: the
 * high word of n·pio2_1 is npio2_hw[n − 1] for every n < 32).
 */
function trigCore(local: (type: number) => number, x: Bytes, which: "sin" | "cos"): { value: Bytes; ok: Bytes } {
  const b = block(local);
  const ax = b.let(abs(x));
  const bits = b.let(and(x, i64x2(ABS)));
  const small = b.let(ilt(bits, i64x2(HW(0x3fe921fc)))); // |x| ≤ π/4: no reduction
  const fn = b.let(trunc(add(mul(ax, f64x2(INV_PIO2)), f64x2(0.5))));
  const r = b.let(sub(ax, mul(fn, f64x2(PIO2_1))));
  const w = b.let(mul(fn, f64x2(PIO2_1T)));
  const y0m = b.let(sub(r, w));
  const y1m = sub(sub(r, y0m), w);
  const negative = b.let(lt(x, f64x2(0)));
  const y0 = b.let(sel(x, sel(neg(y0m), y0m, negative), small));
  const y1 = b.let(andnot(sel(neg(y1m), y1m, negative), small));
  const nAbs = b.let(toI64(fn));
  const n = b.let(andnot(sel([...nAbs, ...simd(S.i64x2_neg)], nAbs, negative), small));
  const cancel = andnot(ieq(and(mul(fn, f64x2(PIO2_1)), i64x2(HIGH)), and(bits, i64x2(HIGH))), small);
  const ok = andnot(lt(ax, f64x2(49)), cancel);
  // __kernel_sin(y0, y1, iy): iy = 0 for the unreduced lanes; |y0| < 2^-27 gives y0
  const y0bits = b.let(and(y0, i64x2(ABS)));
  const z = b.let(mul(y0, y0));
  const v = b.let(mul(z, y0));
  const rs = b.let(horner(z, SIN_S.slice(1)));
  const sinIy1 = sub(y0, sub(sub(mul(z, sub(mul(f64x2(0.5), y1), mul(v, rs))), y1), mul(v, f64x2(SIN_S[0]!))));
  const sinIy0 = add(y0, mul(v, add(f64x2(SIN_S[0]!), mul(z, rs))));
  const ks = b.let(sel(y0, sel(sinIy0, sinIy1, small), ilt(y0bits, i64x2(HW(0x3e400000)))));
  // __kernel_cos(y0, y1): qx = 0 for |y0| < 0.3 (its first form is the second with qx = 0), 0.28125 beyond 0.78125,
  // else |y0|/4 to its high word
  const qx = b.let(
    andnot(
      sel(
        f64x2(0.28125),
        and(isub(y0bits, i64x2(HW(0x00200000))), i64x2(HIGH)),
        igt(y0bits, i64x2(HW(0x3fe90000) + 0xffffffffn)),
      ),
      ilt(y0bits, i64x2(HW(0x3fd33333))),
    ),
  );
  const rc = mul(z, horner(z, COS_C));
  const kc = b.let(sub(sub(f64x2(1), qx), sub(sub(mul(f64x2(0.5), z), qx), sub(mul(z, rc), mul(y0, y1)))));
  // n mod 4 picks ±kernel_sin or ±kernel_cos
  const q = b.let(and(n, i64x2(3n)));
  const odd = ieq(and(q, i64x2(1n)), i64x2(1n));
  const flip = (m: Bytes): Bytes => [...and(m, i64x2(2n)), ...i32c(62), ...simd(S.i64x2_shl)];
  const value = which === "sin" ? xor(sel(kc, ks, odd), flip(q)) : xor(sel(ks, kc, odd), flip(iadd(q, i64x2(1n))));
  return { value: b.done(value), ok };
}

/** Lanes l of x through `Math.<op>` (the import `fn`), as a v128. */
const callBoth = (x: number, fn: number): Bytes => {
  const lane = (l: number): Bytes => [...get(x), ...simd(S.f64x2_extract, l), O.call, ...uleb(fn)];
  return [...lane(0), ...simd(S.f64x2_splat), ...lane(1), ...simd(S.f64x2_replace, 1)];
};

/** The ops computed inline, each as code that pops a v128 (two f64 lanes) and pushes the results. */
export type InlineOp = "exp" | "expm1" | "tanh" | "sin" | "cos";
export const INLINE_OPS: readonly InlineOp[] = ["exp", "expm1", "tanh", "sin", "cos"];
/** Every function the kernels compute in their lanes: these and the logarithm (wasm-log.ts). */
export const LANE_FUNCTIONS: ReadonlySet<string> = new Set(["log", ...INLINE_OPS]);

/** Code that pops two f64 lanes and pushes `Math.<op>` of each; `fn` is the import that calls it (the fallback). */
export function inlineF64x2(op: InlineOp, local: (type: number) => number, fn: number): Bytes {
  const x = local(V.v128),
    result = local(V.v128);
  const { value, ok } =
    op === "sin" || op === "cos"
      ? trigCore(local, get(x), op)
      : op === "exp"
        ? { value: expCore(local, get(x)), ok: lt(abs(get(x)), f64x2(708)) }
        : op === "expm1"
          ? {
              value: sel(get(x), expm1Core(local, get(x)), ilt(and(get(x), i64x2(ABS)), i64x2(HW(0x3c900000)))),
              ok: and(lt(f64x2(-38), get(x)), lt(get(x), f64x2(700))),
            }
          : { value: tanhCore(local, get(x)), ok: eq(get(x), get(x)) };
  return [
    ...set(x),
    ...value,
    ...set(result),
    ...ok,
    ...simd(S.i64x2_all_true),
    ...[O.if, V.v128, ...get(result), O.else, ...callBoth(x, fn), O.end],
  ];
}

/** A module exporting `pair(a, b)`: `emit`'s two lanes for a and b, stored at bytes 0–15 (import 0 is the fallback). */
function probeModule(emit: (local: (type: number) => number, fn: number) => Bytes): Uint8Array<ArrayBuffer> {
  const types = [
    [0x60, ...vec([[V.f64]]), ...vec([[V.f64]])],
    [0x60, ...vec([[V.f64], [V.f64]]), ...vec([])],
  ];
  const localTypes: number[] = [];
  const local = (t: number): number => 2 + localTypes.push(t) - 1;
  const body = [
    ...i32c(0),
    ...[O.get, 0, ...simd(S.f64x2_splat), O.get, 1, ...simd(S.f64x2_replace, 1)],
    ...emit(local, 0),
    ...simd(S.v128_store, 4, 0),
    O.end,
  ];
  const func = [...vec(localTypes.map((t) => [1, t])), ...body];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(types)),
    ...section(2, vec([[...name("h"), ...name("fn"), 0x00, 0]])),
    ...section(3, vec([[1]])),
    ...section(5, vec([[0x00, 1]])),
    ...section(
      7,
      vec([
        [...name("mem"), 0x02, 0],
        [...name("pair"), 0x00, 1],
      ]),
    ),
    ...section(10, vec([[...uleb(func.length), ...func]])),
  ]);
}

/** `emit` on a pair of lanes, as a function (a, b) → [f(a), f(b)]; null without WebAssembly SIMD. */
function lanePairs(
  emit: (local: (type: number) => number, fn: number) => Bytes,
  fallback: (x: number) => number,
): ((a: number, b: number) => readonly [number, number]) | null {
  try {
    const inst = new WebAssembly.Instance(new WebAssembly.Module(probeModule(emit)), { h: { fn: fallback } });
    const pair = inst.exports.pair as (a: number, b: number) => void;
    const out = new Float64Array((inst.exports.mem as WebAssembly.Memory).buffer, 0, 2);
    return (a, b) => {
      pair(a, b);
      return [out[0]!, out[1]!];
    };
  } catch {
    return null;
  }
}

/** Whether `emit` gives `reference`'s bits on every argument of `xs` (in pairs; a lone last one paired with itself). */
export function sameAsEngine(
  emit: (local: (type: number) => number, fn: number) => Bytes,
  reference: (x: number) => number,
  xs: Float64Array,
): boolean {
  const pair = lanePairs(emit, reference);
  if (!pair) return false;
  for (let i = 0; i < xs.length; i += 2) {
    const a = xs[i]!,
      b = xs[Math.min(i + 1, xs.length - 1)]!;
    const [ra, rb] = pair(a, b);
    if (!Object.is(ra, reference(a)) || !Object.is(rb, reference(b))) return false;
  }
  return true;
}

/** The high words (of |x|) where the forms' branches change. */
const BRANCH_WORDS = [
  0x3fe921fb, 0x3fd62e42, 0x3ff0a2b2, 0x3e300000, 0x3e400000, 0x3fd33333, 0x3fe90000, 0x3c900000, 0x4002d97c,
  0x3ff921fb, 0x40360000, 0x3ff00000,
];

/**
 * Arguments across the inline forms' branches and their fallbacks: each range of the reductions (|x| up to 4, 60,
 * 100, 1,400 and 2·10^6), tiny ones (down to 10^-17), float32 values, near multiples of π/2 and ln 2 / 2, and the
 * special values (zeros, ±1, the range limits, infinities, NaN, the subnormal minimum).
 */
export function mathProbeArguments(count = 4096): Float64Array {
  const out: number[] = [0, -0, 1, -1, Infinity, -Infinity, NaN, 5e-324, 1e300, -1e300, 0.25, -0.25, 0.3, 0.78125];
  for (const v of [22, 49, 708, 700, 38]) out.push(v, -v, v * (1 - 2 ** -40), -v * (1 - 2 ** -40));
  for (let k = 1; k < 40; k++) out.push((k * Math.PI) / 2, (-k * Math.PI) / 2, (k * Math.PI) / 4, (k * Math.LN2) / 2);
  for (const k of [20, 56]) out.push(k * Math.LN2, (k - 0.5) * Math.LN2, -k * Math.LN2);
  let seed = 0x2545f491;
  const next = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  // Both sides of every high-word threshold the forms branch on (of x, and of the reduced argument near n·π/2)
  for (const hw of BRANCH_WORDS)
    for (const d of [-1, 0, 1])
      for (const sign of [0, 0x80000000]) out.push(fromWords((hw + d) | sign, next() * 2 ** 32));
  for (let n = 0; n < 8; n++)
    for (const d of [0.3, 0.78125, Math.PI / 4])
      for (const e of [-1e-9, 0, 1e-9]) out.push((n * Math.PI) / 2 + d + e, (n * Math.PI) / 2 - d + e);
  const scales = [4, 60, 100, 1400, 2e6, 1e-6, 1e-9, 1e-17];
  while (out.length < count) {
    const u = next();
    const x = (next() - 0.5) * scales[Math.floor(u * scales.length)]!;
    out.push(u < 0.1 ? Math.fround(x) : x);
  }
  return Float64Array.from(out);
}

const exactOps = new Map<InlineOp, boolean>();
/** Whether the inline `op` gives this engine's `Math.<op>` bits (checked once, on `mathProbeArguments()`). */
export function inlineMathExact(op: InlineOp): boolean {
  let exact = exactOps.get(op);
  if (exact === undefined) {
    exact = sameAsEngine((local, fn) => inlineF64x2(op, local, fn), Math[op], mathProbeArguments());
    exactOps.set(op, exact);
  }
  return exact;
}
