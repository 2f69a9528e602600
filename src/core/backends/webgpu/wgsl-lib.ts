/**
 * WGSL scalar building blocks shared by the kernel generator and routines: types, literals and
 * helper functions with the exact semantics of the JS emitter (i32 wraparound, truncating
 * division with x/0 = 0, floor division, NaN-propagating max/min, JS-style float→int casts,
 * threefry2x32 in u32 arithmetic).
 *
 * WGSL lets implementations assume no NaN/Inf in const-expressions (it is a shader-creation
 * error to produce one), so special values are made at run time from bit patterns held in a
 * `var`, and NaN/Inf tests look at the bits.
 */
import type { DType } from "../../dtype.js";

export function wgslType(d: DType): string {
  switch (d) {
    case "float32":
      return "f32";
    case "int32":
      return "i32";
    case "bool":
      return "bool";
    case "float64":
      throw float64Error();
  }
}
/** Element type of a storage buffer holding dtype d (bools are u32 words). */
export const storageType = (d: DType): string => (d === "bool" ? "u32" : wgslType(d));

export function float64Error(): Error {
  return new Error(
    "float64 exists on the CPU backend only: the webgpu backend computes in float32. " +
      'Use float32 arrays on webgpu, or move the computation to the CPU with np.array(x, { backend: "cpu" }).',
  );
}

/** Reads a storage element as a value of dtype d. */
export const fromStorage = (d: DType, e: string): string => (d === "bool" ? `(${e} != 0u)` : e);
/** Converts a value of dtype d to its storage word. */
export const toStorage = (d: DType, e: string): string => (d === "bool" ? `select(0u, 1u, ${e})` : e);

/** A literal of dtype d (finite, representable values inline; special values through helpers). */
export function literal(v: number, d: DType, need: (h: HelperName) => void): string {
  if (d === "bool") return v ? "true" : "false";
  if (d === "int32") {
    const i = v | 0;
    if (i === -2147483648) return "i32(-2147483648)";
    return i < 0 ? `(${i}i)` : `${i}i`;
  }
  if (Number.isNaN(v)) {
    need("special");
    return "nan_f32()";
  }
  if (v === Infinity) {
    need("special");
    return "inf_f32()";
  }
  if (v === -Infinity) {
    need("special");
    return "(-inf_f32())";
  }
  if (Object.is(v, -0)) return "(-0.0f)";
  const f = Math.fround(v);
  if (f !== 0 && Math.abs(f) < 1.1754943508222875e-38) {
    // Subnormal: exact bits (literal parsing may flush them).
    const u = new Uint32Array(new Float32Array([f]).buffer)[0]!;
    return `bitcast<f32>(0x${u.toString(16)}u)`;
  }
  const s = String(f);
  return f < 0 ? `(${s}f)` : `${s}f`;
}

export const u32Literal = (v: number): string => `${v >>> 0}u`;

export type HelperName =
  | "special"
  | "fmax"
  | "fmin"
  | "f2i"
  | "idiv"
  | "irem"
  | "ifloordiv"
  | "ifloormod"
  | "powf"
  | "signf"
  | "log1pf"
  | "expm1f"
  | "tanhf"
  | "threefry"
  | "asinf"
  | "acosf";

/** A WGSL function an op brings along (kernel/scalar-ops.ts): declared once per shader, after its deps. */
export interface WgslFn {
  readonly name: string;
  readonly deps: readonly HelperName[];
  readonly code: string;
}
/** Asks for a helper (by name, or one an op brings along) in the shader being generated. */
export type WgslNeed = (h: HelperName | WgslFn) => void;

const HELPERS: Record<HelperName, { deps: HelperName[]; code: string }> = {
  special: {
    deps: [],
    code: `
fn nan_f32() -> f32 { var bits = 0x7fc00000u; return bitcast<f32>(bits); }
fn inf_f32() -> f32 { var bits = 0x7f800000u; return bitcast<f32>(bits); }
fn is_nan(x: f32) -> bool {
  let b = bitcast<u32>(x);
  return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0u;
}
fn is_finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }`,
  },
  fmax: {
    deps: ["special"],
    code: `
fn fmax(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return nan_f32(); } return max(a, b); }`,
  },
  fmin: {
    deps: ["special"],
    code: `
fn fmin(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return nan_f32(); } return min(a, b); }`,
  },
  // JS ToInt32: truncate, wrap modulo 2^32; NaN and ±Inf give 0.
  f2i: {
    deps: ["special"],
    code: `
fn f2i(x: f32) -> i32 {
  if (!is_finite(x)) { return 0; }
  if (abs(x) < 2147483648.0f) { return i32(x); }
  let t = trunc(x);
  let m = t - 4294967296.0f * floor(t / 4294967296.0f);
  return bitcast<i32>(u32(m));
}`,
  },
  idiv: {
    deps: [],
    code: `
fn idiv(a: i32, b: i32) -> i32 { if (b == 0) { return 0; } if (b == -1) { return -a; } return a / b; }`,
  },
  irem: {
    deps: [],
    code: `
fn irem(a: i32, b: i32) -> i32 { if (b == 0 || b == -1) { return 0; } return a % b; }`,
  },
  ifloordiv: {
    deps: ["idiv", "irem"],
    code: `
fn ifloordiv(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let q = idiv(a, b);
  let r = irem(a, b);
  return select(q, q - 1, r != 0 && ((r < 0) != (b < 0)));
}`,
  },
  ifloormod: {
    deps: ["irem"],
    code: `
fn ifloormod(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let r = irem(a, b);
  return select(r, r + b, r != 0 && ((r < 0) != (b < 0)));
}`,
  },
  // Math.pow semantics for negative bases with integer exponents (WGSL pow is undefined for x < 0).
  powf: {
    deps: ["special"],
    code: `
fn powf_nonneg(a: f32, b: f32) -> f32 {
  if (a == 0.0f) { return select(inf_f32(), 0.0f, b > 0.0f); }
  if (a == 1.0f) { return select(nan_f32(), 1.0f, is_finite(b)); }
  if (!is_finite(b)) {
    if (b > 0.0f) { return select(0.0f, inf_f32(), a > 1.0f); }
    return select(inf_f32(), 0.0f, a > 1.0f);
  }
  if (!is_finite(a)) { return select(0.0f, inf_f32(), b > 0.0f); }
  return pow(a, b);
}
fn powf(a: f32, b: f32) -> f32 {
  if (b == 0.0f) { return 1.0f; }
  if (is_nan(a) || is_nan(b)) { return nan_f32(); }
  let ab = abs(b);
  let isInt = is_finite(b) && floor(b) == b;
  let odd = isInt && ab < 16777216.0f && (u32(ab) & 1u) == 1u;
  let negative = (bitcast<u32>(a) & 0x80000000u) != 0u;
  if (!negative) { return powf_nonneg(a, b); }
  if (a != 0.0f && is_finite(b) && !isInt) { return nan_f32(); }
  let m = powf_nonneg(-a, b);
  return select(m, -m, odd);
}`,
  },
  // asin/acos through atan2 (the built-ins are only accurate to ~1e-4 on some drivers).
  asinf: {
    deps: [],
    code: `
fn asinf(x: f32) -> f32 { return atan2(x, sqrt((1.0f - x) * (1.0f + x))); }`,
  },
  acosf: {
    deps: [],
    code: `
fn acosf(x: f32) -> f32 { return atan2(sqrt((1.0f - x) * (1.0f + x)), x); }`,
  },
  signf: {
    deps: [],
    code: `
fn signf(x: f32) -> f32 { if (x > 0.0f) { return 1.0f; } if (x < 0.0f) { return -1.0f; } return x; }`,
  },
  // Accurate near 0 (the difference trick); exact for ±Inf.
  log1pf: {
    deps: ["special"],
    code: `
fn log1pf(x: f32) -> f32 {
  let u = 1.0f + x;
  if (u == 1.0f) { return x; }
  if (!is_finite(u)) { return u; }
  return log(u) * (x / (u - 1.0f));
}`,
  },
  expm1f: {
    deps: ["special"],
    code: `
fn expm1f(x: f32) -> f32 {
  if (abs(x) < 1e-5f) { return x + 0.5f * x * x; }
  let u = exp(x);
  if (u == 1.0f) { return x; }
  if (!is_finite(u)) { return u; }
  let um1 = u - 1.0f;
  if (um1 == -1.0f) { return -1.0f; }
  return um1 * (x / log(u));
}`,
  },
  // tanh(±15) is ±1 in float32; clamping avoids exp overflow inside some tanh implementations.
  tanhf: {
    deps: ["special"],
    code: `
fn tanhf(x: f32) -> f32 { if (is_nan(x)) { return x; } return tanh(clamp(x, -15.0f, 15.0f)); }`,
  },
  threefry: {
    deps: [],
    code: `
fn rotl32(x: u32, r: u32) -> u32 { return (x << r) | (x >> (32u - r)); }
// Threefry-2x32, 20 rounds (as threefry2x32 in prims/indexing.ts): counter (c, 0) under key (k0, k1).
fn threefry2x32(k0: u32, k1: u32, c: u32) -> vec2<u32> {
  let k2 = k0 ^ k1 ^ 0x1bd11bdau;
  var ks = array<u32, 3>(k0, k1, k2);
  var x0 = c + k0;
  var x1 = k1;
  for (var i = 0u; i < 5u; i++) {
    if ((i & 1u) == 0u) {
      x0 += x1; x1 = rotl32(x1, 13u) ^ x0;
      x0 += x1; x1 = rotl32(x1, 15u) ^ x0;
      x0 += x1; x1 = rotl32(x1, 26u) ^ x0;
      x0 += x1; x1 = rotl32(x1, 6u) ^ x0;
    } else {
      x0 += x1; x1 = rotl32(x1, 17u) ^ x0;
      x0 += x1; x1 = rotl32(x1, 29u) ^ x0;
      x0 += x1; x1 = rotl32(x1, 16u) ^ x0;
      x0 += x1; x1 = rotl32(x1, 24u) ^ x0;
    }
    x0 += ks[(i + 1u) % 3u];
    x1 += ks[(i + 2u) % 3u] + i + 1u;
  }
  return vec2<u32>(x0, x1);
}`,
  },
};

/** Collects the helpers a shader uses and renders them (dependencies first, each once). */
export class HelperSet {
  private readonly codes = new Map<string, string>();
  need: WgslNeed = (h) => {
    const name = typeof h === "string" ? h : h.name;
    if (this.codes.has(name)) return;
    const { deps, code } = typeof h === "string" ? HELPERS[h] : h;
    for (const d of deps) this.need(d);
    this.codes.set(name, code);
  };
  render(): string {
    return [...this.codes.values()].join("\n");
  }
}
