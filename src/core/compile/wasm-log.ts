/**
 * The natural logarithm on two f64 lanes inside a generated kernel: fdlibm's `__ieee754_log` (e_log.c), the
 * algorithm V8 (and SpiderMonkey) run for `Math.log`, so the lanes get the bits the JavaScript kernel gets, without a
 * call out per lane (W4's energy gradient, one log per tet: 5–8% faster at 100,000 tets). fdlibm's branches on the
 * reduced argument become selects (its `k == 0` forms equal the general ones exactly: `0 - (a - f)` is `f - a` in
 * round-to-nearest); its |f| < 2^-20 form runs only when a lane needs it, and a pair with a lane outside
 * [2^-1022, ∞) (subnormal, zero, negative, infinite, NaN) calls `Math.log` for both. Whether this engine's
 * `Math.log` is fdlibm's is checked once, on arguments across every branch (`inlineLogExact`); where it is not,
 * kernels keep calling it.
 */
import { uleb, type Bytes } from "../backends/cpu/gemm/wasm-encoder.js";
import { fromWords, f64x2, i64x2, sameAsEngine } from "./wasm-math.js";
import { get, i32c, O, S, set, simd, V } from "./wasm-ops.js";

const LN2_HI = fromWords(0x3fe62e42, 0xfee00000);
const LN2_LO = fromWords(0x3dea39ef, 0x35793c76);
/** Lg1 … Lg7. */
const LG = [
  fromWords(0x3fe55555, 0x55555593),
  fromWords(0x3fd99999, 0x9997fa04),
  fromWords(0x3fd24924, 0x94229359),
  fromWords(0x3fcc71c5, 0x1d8e78af),
  fromWords(0x3fc74664, 0x96cb03de),
  fromWords(0x3fc39a09, 0xd078c69f),
  fromWords(0x3fc2f112, 0xdf3e5244),
] as const;

/** The low 32-bit halves of two i64 lanes as i32 lanes 0 and 1 (for f64x2.convert_low_i32x4_s). */
const LOW_HALVES = [0, 1, 2, 3, 8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11];

/** Code that pops a v128 (two f64 lanes) and pushes their logarithms; `local` allocates a local of a type. */
export function logF64x2(local: (type: number) => number, logImport: number): Bytes {
  const [x, hm, ib, dk, f, s, z, w, r, h, t, tiny] = Array.from({ length: 12 }, () => local(V.v128));
  const op = (...codes: number[]): Bytes => codes.flatMap((c) => simd(c));
  const add = (a: Bytes, b: Bytes): Bytes => [...a, ...b, ...op(S.f64x2_add)];
  const sub = (a: Bytes, b: Bytes): Bytes => [...a, ...b, ...op(S.f64x2_sub)];
  const mul = (a: Bytes, b: Bytes): Bytes => [...a, ...b, ...op(S.f64x2_mul)];
  const and = (a: Bytes, b: Bytes): Bytes => [...a, ...b, ...op(S.v128_and)];
  const laneLog = (l: number): Bytes => [...get(x), ...simd(S.f64x2_extract, l), O.call, ...uleb(logImport)];
  // fdlibm's 32-bit high-word quantities, kept in place in the 64-bit lanes (shifted up by 32)
  const HI = 2 ** 32;
  return [
    ...set(x),
    // both lanes in [2^-1022, ∞) (else, rarely: Math.log on each)
    ...[...get(x), ...f64x2(2 ** -1022), ...op(S.f64x2_ge), ...get(x), ...f64x2(Infinity)],
    ...op(S.f64x2_lt, S.v128_and, S.i64x2_all_true),
    ...[O.if, V.v128],
    // hm: the mantissa's high 20 bits; ib: whether it is normalised to x (0) or x/2 (2^20)
    ...and(get(x), i64x2(0xfffff * HI)),
    ...set(hm),
    ...and([...get(hm), ...i64x2(0x95f64 * HI), ...op(S.i64x2_add)], i64x2(0x100000 * HI)),
    ...set(ib),
    // k = exponent - 1023 + (ib ? 1 : 0), as f64
    ...[...get(x), ...i32c(52), ...op(S.i64x2_shr_u), ...i64x2(1023), ...op(S.i64x2_sub)],
    ...[...get(ib), ...i32c(52), ...op(S.i64x2_shr_u), ...op(S.i64x2_add)],
    ...[O.tee, ...uleb(dk), ...get(dk), ...simd(S.i8x16_shuffle, ...LOW_HALVES), ...op(S.f64x2_convert_low_i32x4_s)],
    ...set(dk),
    // f = (mantissa with exponent 0 or -1) - 1
    ...and(get(x), i64x2(0xfffff * HI + 0xffffffff)),
    ...[...get(ib), ...i64x2(0x3ff00000 * HI), ...op(S.v128_xor, S.v128_or)],
    ...sub([], f64x2(1)),
    ...set(f),
    // s = f / (2 + f), z = s², w = z², r = z (Lg1 + w (Lg3 + w (Lg5 + w Lg7))) + w (Lg2 + w (Lg4 + w Lg6))
    ...[...get(f), ...add(f64x2(2), get(f)), ...op(S.f64x2_div)],
    ...set(s),
    ...mul(get(s), get(s)),
    ...set(z),
    ...mul(get(z), get(z)),
    ...set(w),
    ...add(
      mul(
        get(z),
        add(f64x2(LG[0]), mul(get(w), add(f64x2(LG[2]), mul(get(w), add(f64x2(LG[4]), mul(get(w), f64x2(LG[6]))))))),
      ),
      mul(get(w), add(f64x2(LG[1]), mul(get(w), add(f64x2(LG[3]), mul(get(w), f64x2(LG[5])))))),
    ),
    ...set(r),
    ...mul(mul(f64x2(0.5), get(f)), get(f)),
    ...set(h),
    // t = h - (s (h + r) + dk ln2_lo) where 0x6147a ≤ hm ≤ 0x6b851, else s (f - r) - dk ln2_lo
    ...mul(get(dk), f64x2(LN2_LO)),
    ...set(t),
    ...sub(get(h), add(mul(get(s), add(get(h), get(r))), get(t))),
    ...sub(mul(get(s), sub(get(f), get(r))), get(t)),
    ...[...get(hm), ...i64x2(0x6147a * HI - 1), ...op(S.i64x2_gt_s)],
    ...[...i64x2(0x6b852 * HI), ...get(hm), ...op(S.i64x2_gt_s, S.v128_and, S.bitselect)],
    // log = dk ln2_hi - (t - f)
    ...sub([], get(f)),
    ...set(r),
    ...sub(mul(get(dk), f64x2(LN2_HI)), get(r)),
    ...set(r),
    // lanes with |f| < 2^-20 (within about 2^-20 of a power of two): dk ln2_hi - ((f² (0.5 - f/3) - dk ln2_lo) - f)
    ...and([...get(hm), ...i64x2(2 * HI), ...op(S.i64x2_add)], i64x2(0xfffff * HI)),
    ...[...i64x2(3 * HI), ...op(S.i64x2_lt_s)],
    ...[O.tee, ...uleb(tiny), ...op(S.any_true), O.if, V.v128],
    ...sub(
      mul(get(dk), f64x2(LN2_HI)),
      sub(sub(mul(mul(get(f), get(f)), sub(f64x2(0.5), mul(f64x2(1 / 3), get(f)))), get(t)), get(f)),
    ),
    ...[...get(r), ...get(tiny), ...op(S.bitselect), O.else, ...get(r), O.end],
    O.else,
    ...[...laneLog(0), ...simd(S.f64x2_splat), ...laneLog(1), ...simd(S.f64x2_replace, 1)],
    O.end,
  ];
}

/**
 * Arguments across every branch of the algorithm: each binade's mantissas (seeded), both sides of the x / x/2
 * normalisation and of the two polynomial forms' boundary, the |f| < 2^-20 band around 1 and its exact powers of
 * two, subnormals, zeros, negatives, infinities and NaN.
 */
export function logProbeArguments(count = 4096): Float64Array {
  const out: number[] = [0, -0, -1, Infinity, -Infinity, NaN, 5e-324, 2.2250738585072014e-308, Number.MAX_VALUE];
  let seed = 0x9e3779b9;
  const next = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  for (let e = -1074; e <= 1023; e += 7) out.push(2 ** e, 2 ** e * (1 + next()));
  for (let e = -1030; e <= -1020; e++) out.push(2 ** e * (1 + next()));
  for (let e = -60; e <= 60; e++) out.push(2 ** e * (1 + (next() - 0.5) * 2 ** -18));
  for (const hm of [0x6147a, 0x6b851, 0x95f64 ^ 0xfffff, 0x6a09e]) {
    for (const d of [-2, -1, 0, 1, 2])
      out.push(new Float64Array(new Uint32Array([next() * 2 ** 32, 0x3ff00000 | (hm + d)]).buffer)[0]!);
  }
  while (out.length < count) {
    const u = next();
    out.push(u < 0.3 ? 1 + (next() - 0.5) * 2 ** -18 : u < 0.6 ? next() * 16 : Math.exp((next() - 0.5) * 1400));
  }
  return Float64Array.from(out);
}

let exact: boolean | undefined;
/** Whether the inline logarithm gives `Math.log`'s bits here (checked once, on `logProbeArguments()`). */
export function inlineLogExact(): boolean {
  exact ??= sameAsEngine(logF64x2, Math.log, logProbeArguments());
  return exact;
}
