/**
 * Kernel → WebAssembly (the CPU jit's SIMD path): a kernel with one parallel loop and no inner
 * reductions becomes a module whose loop runs four iterations at once in f32x4 lanes (`lanes: 4`,
 * for a kernel whose float values are all float32), two in f64x2 lanes (`lanes: 2`, or 4 with
 * float64 values) or one (`lanes: 1`, the scalar form the tests compare against). Values keep the JS
 * kernel's semantics bit for bit: float math in float64, a float32 node's result rounded to float32
 * (float32.ts: so four float32 lanes compute the same values), int32 math wrapping, the ops without a WebAssembly
 * instruction (pow, atan2, asin, …) calling the same JS functions the JS kernel calls (log, exp, expm1, tanh, sin
 * and cos in two lanes computed in them, as `Math` computes them: wasm-log.ts, wasm-math.ts), and
 * scatter-adds applied lane by lane in order (the JS loop's order). Kernels it cannot express
 * (several loop variables, inner reduction loops, random bits, a buffer both read and written)
 * get `null` and stay JavaScript.
 */
import type { DType } from "../dtype.js";
import type { KGraph, KNode } from "../kernel/expr.js";
import { isBinaryOp, isUnaryOp, UNARY_OPS } from "../kernel/scalar-ops.js";
import { EXPORT, name, section, uleb, vec, type Bytes } from "../backends/cpu/gemm/wasm-encoder.js";
import { constValue, roundsToFloat32 } from "./float32.js";
import { inlineLogExact, logF64x2 } from "./wasm-log.js";
import { inlineF64x2, inlineMathExact, LANE_FUNCTIONS, type InlineOp } from "./wasm-math.js";
import { f64c, get, i32c, mem, O, S, set, simd, V } from "./wasm-ops.js";
import type { KernelStep } from "./plan.js";
import { topoOrder } from "./scopes.js";

/** Where a buffer lives in the module's memory, and what it holds. */
export interface WasmRegion {
  readonly buf: number;
  readonly dtype: DType;
  readonly size: number;
  readonly byteOffset: number;
}
export interface WasmKernelModule {
  readonly bytes: Uint8Array<ArrayBuffer>;
  /** JS functions the module imports (module "h"), by field name. */
  readonly imports: Record<string, (...a: number[]) => number>;
  /** Buffers copied in before a run (loaded or accumulated into) and out after it (stored or accumulated into). */
  readonly reads: readonly WasmRegion[];
  readonly writes: readonly WasmRegion[];
  readonly memoryBytes: number;
  /** The kernel scatter-adds. */
  readonly scatters: boolean;
  /** Iterations its loop runs at once: 4 (f32x4), 2 (f64x2) or 1. */
  readonly lanes: 1 | 2 | 4;
}

/** A kernel whose buffers need more memory than this stays JavaScript (32-bit addresses; one copy per kernel). */
export const WASM_MAX_BYTES = 2 ** 30;
const BYTES: Record<DType, number> = { float32: 4, float64: 8, int32: 4, bool: 1 };
const isFloat = (d: DType): boolean => d === "float32" || d === "float64";

const F64_BIN: Partial<Record<string, [scalar: number, vector: number]>> = {
  add: [O.f64_add, S.f64x2_add],
  sub: [O.f64_sub, S.f64x2_sub],
  mul: [O.f64_mul, S.f64x2_mul],
  div: [O.f64_div, S.f64x2_div],
  min: [O.f64_min, S.f64x2_min],
  max: [O.f64_max, S.f64x2_max],
  eq: [O.f64_eq, S.f64x2_eq],
  ne: [O.f64_ne, S.f64x2_ne],
  lt: [O.f64_lt, S.f64x2_lt],
  gt: [O.f64_gt, S.f64x2_gt],
  le: [O.f64_le, S.f64x2_le],
  ge: [O.f64_ge, S.f64x2_ge],
};
/** The f32x4 forms of the float ops whose float32 result is exact or correctly rounded (float32.ts). */
const F32X4: Partial<Record<string, number>> = {
  add: S.f32x4_add,
  sub: S.f32x4_sub,
  mul: S.f32x4_mul,
  div: S.f32x4_div,
  min: S.f32x4_min,
  max: S.f32x4_max,
  eq: S.f32x4_eq,
  ne: S.f32x4_ne,
  lt: S.f32x4_lt,
  gt: S.f32x4_gt,
  le: S.f32x4_le,
  ge: S.f32x4_ge,
  neg: S.f32x4_neg,
  abs: S.f32x4_abs,
  sqrt: S.f32x4_sqrt,
  floor: S.f32x4_floor,
  ceil: S.f32x4_ceil,
};
const F64_UN: Partial<Record<string, [scalar: number, vector: number]>> = {
  neg: [O.f64_neg, S.f64x2_neg],
  abs: [O.f64_abs, S.f64x2_abs],
  sqrt: [O.f64_sqrt, S.f64x2_sqrt],
  floor: [O.f64_floor, S.f64x2_floor],
  ceil: [O.f64_ceil, S.f64x2_ceil],
};
const I32_BIN: Partial<Record<string, number>> = {
  add: O.i32_add,
  sub: O.i32_sub,
  mul: O.i32_mul,
  and: O.i32_and,
  or: O.i32_or,
  eq: O.i32_eq,
  ne: O.i32_ne,
  lt: O.i32_lt,
  gt: O.i32_gt,
  le: O.i32_le,
  ge: O.i32_ge,
};
/** Ops computed by calling JS (exactly what the JS kernel computes): float unary / binary, int binary. */
const JS_F64_BIN: Record<string, (a: number, b: number) => number> = {
  pow: Math.pow,
  atan2: Math.atan2,
  rem: (a, b) => a % b,
  floormod: (a, b) => ((a % b) + b) % b,
};
const JS_I32_BIN: Record<string, (a: number, b: number) => number> = {
  idiv: (a, b) => (b === 0 ? 0 : (a / b) | 0),
  rem: (a, b) => (b === 0 ? 0 : a % b) | 0,
  floordiv: (a, b) => Math.floor(a / b) | 0,
  floormod: (a, b) => (((a % b) + b) % b) | 0,
};
const toInt32 = (x: number): number => x | 0;
/** i8x16.shuffle lanes: a vector's high 8 bytes moved to its low half; two vectors' low halves joined. */
const HIGH_TO_LOW = [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7];
const JOIN_LOW_HALVES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];

type Rep = { kind: "v"; local: number } | { kind: "l"; locals: number[] } | { kind: "u"; local: number };

/** Whether node x is computed by calling JS (an op without a WebAssembly instruction: exp, sin, pow, …). */
function callsJs(x: KNode): boolean {
  const op = x.op,
    a0 = x.args[0];
  if (!a0) return false;
  if (isUnaryOp(op)) return isFloat(a0.dtype) && !F64_UN[op] && op !== "rsqrt" && op !== "isfinite";
  if (op === "cast") return x.dtype === "int32" && isFloat(a0.dtype);
  if (isFloat(a0.dtype)) return JS_F64_BIN[op] !== undefined;
  return (
    JS_I32_BIN[op] !== undefined &&
    !((op === "floordiv" || op === "floormod") && x.args[1]!.op === "const" && x.args[1]!.value > 0)
  );
}

/** Float operations of one function computed in the lanes (LANE_FUNCTIONS; about, for `kernelWork`). */
const INLINE_COST: Record<string, number> = { log: 30, exp: 30, expm1: 45, tanh: 55, sin: 65, cos: 65 };
/**
 * Whether x is a float log, exp, expm1, tanh, sin or cos computed in the lanes (wasm-log.ts, wasm-math.ts) as this
 * engine's `Math` computes it, not by calling it.
 */
const inlineMath = (x: KNode): boolean =>
  LANE_FUNCTIONS.has(x.op) &&
  isFloat(x.args[0]!.dtype) &&
  (x.op === "log" ? inlineLogExact() : inlineMathExact(x.op as InlineOp));
/** The code of an inline function on two f64 lanes; `fn` is its `Math` import, for lanes outside its range. */
const inlineCode = (x: KNode, local: (type: number) => number, fn: number): Bytes =>
  x.op === "log" ? logF64x2(local, fn) : inlineF64x2(x.op as InlineOp, local, fn);

/**
 * Per loop iteration: float-valued nodes (the work the lanes share) and nodes that call JS (one call per lane each).
 */
export function kernelWork(k: KernelStep): { floatOps: number; calls: number } {
  let floatOps = 0,
    calls = 0;
  for (const x of topoOrder(k.outputs.flatMap((o) => [...o.nodes, ...(o.dest ?? [])]))) {
    if (x.op !== "const" && x.op !== "load" && isFloat(x.dtype)) floatOps += inlineMath(x) ? INLINE_COST[x.op]! : 1;
    if (callsJs(x) && !inlineMath(x)) calls++;
  }
  return { floatOps, calls };
}

/** Why a kernel stays JavaScript, or null when it can be compiled. */
export function wasmUnsupported(k: KernelStep): string | null {
  if (k.loopVars.length === 0) return "no loop";
  const stores = k.outputs.flatMap((o) => [...o.nodes, ...(o.dest ?? [])]);
  const order = topoOrder(stores);
  const loaded = new Set<string>();
  for (const n of order) {
    if (n.op === "reduce" || n.op === "threefry") return `a ${n.op} node`;
    if (n.op === "load") loaded.add(n.tag);
    if (n.op === "select" && n.args[0]!.dtype !== "bool") return "a select on a non-bool condition";
    if (n.op === "cast" && n.dtype === "bool" && n.args[0]!.dtype === "bool") return "a bool cast";
    if (n.op === "div" && !isFloat(n.args[0]!.dtype)) return "an int32 true division";
    if (
      isBinaryOp(n.op) &&
      !(isFloat(n.args[0]!.dtype)
        ? F64_BIN[n.op] || JS_F64_BIN[n.op] || n.op === "floordiv"
        : I32_BIN[n.op] !== undefined || JS_I32_BIN[n.op] || n.op === "max" || n.op === "min")
    ) {
      return `${n.args[0]!.dtype} ${n.op} (no WebAssembly form)`;
    }
    if (isUnaryOp(n.op) && !isFloat(n.args[0]!.dtype) && !["neg", "abs", "not"].includes(n.op)) return `int ${n.op}`;
  }
  const written = new Set<number>();
  for (const o of k.outputs) {
    if (loaded.has(String(o.buf))) return "a buffer both read and written";
    written.add(o.buf);
  }
  if (written.size !== k.outputs.length) return "two outputs to one buffer";
  if (k.loopVars.some((v) => v.value < 1)) return "an empty loop";
  if (k.loop.reduce((a, b) => a * b, 1) > 2 ** 27) return "a loop beyond 2^27 iterations";
  return null;
}

/**
 * Compile a kernel (see `wasmUnsupported`) for buffers of the given dtypes and sizes. Regions
 * sit back to back, 16-byte aligned; addresses are the element index shifted, with the region's
 * start as the memory-access offset.
 *
 * `threaded`: the memory is imported (module "h", field "mem", shared, `memoryBytes` long) and
 * `run(start, end, staged)` runs iterations [start, end) (start a multiple of 4). With `staged` ≠ 0 its
 * scatter-adds are not applied but staged per iteration, and `apply(start, end)` adds those of
 * iterations [start, end) later: a loop split over threads gives the one-thread bits when each
 * piece's scatter-adds are applied in the loop's order (threads.ts).
 */
export function kernelToWasm(
  kernel: KernelStep,
  buffer: (id: number) => { dtype: DType; size: number },
  lanes: 1 | 2 | 4,
  graph: KGraph,
  threaded = false,
): WasmKernelModule {
  const k = flattenLoops(kernel, graph);
  const v = k.loopVars[0]!,
    n = v.value;
  const stores = k.outputs.flatMap((o) => [...o.nodes, ...(o.dest ?? [])]);
  const order = topoOrder(stores);
  // Four float32 lanes: every float value is float32 (constants aside: a constant is written as its use's type).
  const wide = lanes === 4 && order.every((x) => x.op === "const" || !isFloat(x.dtype) || x.dtype === "float32");
  const L: 1 | 2 | 4 = wide ? 4 : lanes === 1 ? 1 : 2;

  // ---- memory layout
  const regions = new Map<number, WasmRegion>();
  let top = 0;
  const region = (id: number): WasmRegion => {
    let r = regions.get(id);
    if (!r) {
      const b = buffer(id);
      r = { buf: id, dtype: b.dtype, size: b.size, byteOffset: top };
      top += Math.ceil((b.size * BYTES[b.dtype]) / 16) * 16 + 16;
      regions.set(id, r);
    }
    return r;
  };
  const reads = new Map<number, WasmRegion>(),
    writes = new Map<number, WasmRegion>();
  for (const x of order) if (x.op === "load") reads.set(Number(x.tag), region(Number(x.tag)));
  for (const o of k.outputs) {
    writes.set(o.buf, region(o.buf));
    if (o.dest) reads.set(o.buf, region(o.buf));
  }

  // ---- imports (JS functions for ops without an instruction)
  const importNames: string[] = [];
  const importFns: Record<string, (...a: number[]) => number> = {};
  const importType: number[] = []; // type index per import
  const TYPES: Bytes[] = [
    [0x60, ...vec([]), ...vec([])], // 0: main () → ()
    [0x60, ...vec([[V.f64]]), ...vec([[V.f64]])], // 1: f64 → f64
    [0x60, ...vec([[V.f64], [V.f64]]), ...vec([[V.f64]])], // 2: f64 f64 → f64
    [0x60, ...vec([[V.f64]]), ...vec([[V.i32]])], // 3: f64 → i32
    [0x60, ...vec([[V.i32], [V.i32]]), ...vec([[V.i32]])], // 4: i32 i32 → i32
    [0x60, ...vec([[V.i32], [V.i32], [V.i32]]), ...vec([])], // 5: threaded main (start, end, staged) → ()
    [0x60, ...vec([[V.i32], [V.i32]]), ...vec([])], // 6: threaded apply (start, end) → ()
  ];
  const imp = (key: string, fn: (...a: number[]) => number, type: number): number => {
    let i = importNames.indexOf(key);
    if (i < 0) {
      i = importNames.length;
      importNames.push(key);
      importFns[key] = fn;
      importType.push(type);
    }
    return i;
  };
  // Import indices must be known before function indices: collect them first.
  const callOf = new Map<KNode, number>();
  for (const x of order) {
    if (!callsJs(x)) continue;
    const op = x.op,
      a0 = x.args[0]!;
    if (isUnaryOp(op))
      callOf.set(x, imp(`u_${op}`, UNARY_OPS[op].eval as (x: number) => number, isFloat(x.dtype) ? 1 : 3));
    else if (op === "cast") callOf.set(x, imp("toInt32", toInt32, 3));
    else if (isFloat(a0.dtype)) callOf.set(x, imp(`f_${op}`, JS_F64_BIN[op]!, 2));
    else callOf.set(x, imp(`i_${op}`, JS_I32_BIN[op]!, 4));
  }
  const nImports = importNames.length;

  // ---- locals
  // The threaded main's parameters (start, end, staged) are locals 0, 1 and 2.
  const params = threaded ? 3 : 0;
  const localTypes: number[] = [];
  const local = (t: number): number => {
    localTypes.push(t);
    return params + localTypes.length - 1;
  };
  // Lane l's iteration: i + l, or the last one where that is past the loop (stores repeat it, scatter-adds skip it).
  const laneLoc = Array.from({ length: L }, () => local(V.i32));
  const iLoc = laneLoc[0]!;

  const uses = new Set<KNode>();
  const depends = new Map<KNode, boolean>();
  for (const x of order) depends.set(x, x === v || x.args.some((a) => depends.get(a)));
  const rep = new Map<KNode, Rep>();
  const splats = new Map<KNode, number>(); // v128 forms of uniform / lane-wise values
  const prologue: Bytes = [];
  const body: Bytes = [];
  const scalarType = (d: DType): number => (isFloat(d) ? V.f64 : V.i32);

  /** Push lane `l` of x (a scalar: f64 for floats, i32 otherwise). */
  const lane = (x: KNode, l: number): Bytes => {
    if (x.op === "const") return isFloat(x.dtype) ? f64c(constValue(x)) : i32c(x.value);
    if (x === v) return get(laneLoc[l]!);
    const r = rep.get(x)!;
    if (r.kind === "u") return get(r.local);
    if (r.kind === "l") return get(r.locals[l]!);
    if (wide)
      return isFloat(x.dtype)
        ? [...get(r.local), ...simd(S.f32x4_extract, l), O.f64_promote]
        : [...get(r.local), ...simd(S.i32x4_extract, l), ...i32c(1), O.i32_and];
    if (isFloat(x.dtype)) return [...get(r.local), ...simd(S.f64x2_extract, l)];
    return [...get(r.local), ...simd(S.i64x2_extract, l), O.i32_wrap_i64, ...i32c(1), O.i32_and];
  };
  /** Push x as a v128 (f32x4 or f64x2 for floats; for bools an all-ones/zeros i32x4 or i64x2 mask). */
  const vector = (x: KNode, out: Bytes): Bytes => {
    const r = rep.get(x);
    if (r?.kind === "v") return get(r.local);
    let s = splats.get(x);
    if (s === undefined) {
      s = local(V.v128);
      splats.set(x, s);
      const uniform = x.op === "const" || r?.kind === "u";
      const target = uniform ? prologue : out;
      const float = isFloat(x.dtype);
      // A lane's scalar in the vector's element type (a float32 lane holds a float32 value: demoting is exact).
      const element = (l: number): Bytes =>
        float
          ? [...lane(x, l), ...(wide ? [O.f32_demote] : [])]
          : wide
            ? [...i32c(0), ...lane(x, l), O.i32_sub]
            : [O.i64_const, 0, ...lane(x, l), O.i64_extend_i32_u, O.i64_sub];
      const [splat, replace] = float
        ? wide
          ? [S.f32x4_splat, S.f32x4_replace]
          : [S.f64x2_splat, S.f64x2_replace]
        : wide
          ? [S.i32x4_splat, S.i32x4_replace]
          : [S.i64x2_splat, S.i64x2_replace];
      target.push(...element(0), ...simd(splat));
      if (!uniform) for (let l = 1; l < L; l++) target.push(...element(l), ...simd(replace, l));
      target.push(...set(s));
    }
    return get(s);
  };

  const addr = (buf: number, idx: Bytes): Bytes => {
    const sh = Math.log2(BYTES[regions.get(buf)!.dtype]);
    return sh ? [...idx, ...i32c(sh), O.i32_shl] : idx;
  };
  /**
   * A load's index, made safe: the JS kernel evaluates both sides of a select (a concatenation's
   * loads of the part it is not in), reading undefined out of range where WebAssembly would trap;
   * indices not provably in range read element 0 instead (a value the select discards).
   */
  const safeIndex = (x: KNode, l: number): Bytes => {
    const ix = x.args[0]!,
      size = regions.get(Number(x.tag))!.size,
      r = graph.range(ix);
    if (r && r[0] >= 0 && r[1] < size) return lane(ix, l);
    return [...lane(ix, l), ...i32c(0), ...lane(ix, l), ...i32c(size), O.i32_lt_u, O.select];
  };
  const loadScalar = (x: KNode, idx: Bytes): Bytes => {
    const r = regions.get(Number(x.tag))!;
    if (isFloat(r.dtype) !== isFloat(x.dtype)) throw new Error(`internal: a ${x.dtype} load from a ${r.dtype} buffer`);
    const a = addr(r.buf, idx),
      off = r.byteOffset;
    switch (r.dtype) {
      case "float32":
        return [...a, O.f32_load, ...mem(2, off), O.f64_promote];
      case "float64":
        return [...a, O.f64_load, ...mem(3, off)];
      case "int32":
        return [...a, O.i32_load, ...mem(2, off)];
      case "bool":
        return [...a, O.i32_load8_u, ...mem(0, off)];
    }
  };

  /** The scalar op of x on lane-l operands (pushes one scalar). */
  const scalarOp = (x: KNode, l: number): Bytes => {
    const a = (i: number) => lane(x.args[i]!, l);
    const op = x.op,
      a0 = x.args[0]!;
    const call = callOf.get(x);
    if (call !== undefined) return [...a(0), ...(x.args.length > 1 ? a(1) : []), O.call, ...uleb(call)];
    switch (op) {
      case "load":
        return loadScalar(x, safeIndex(x, l));
      case "select":
        return [...a(1), ...a(2), ...a(0), O.select];
      case "cast": {
        const d = x.dtype,
          from = a0.dtype;
        if (isFloat(d)) {
          const wide = isFloat(from) ? a(0) : [...a(0), from === "bool" ? O.f64_convert_i32_u : O.f64_convert_i32_s];
          return d === "float32" ? [...wide, O.f32_demote, O.f64_promote] : wide;
        }
        if (d === "bool") return isFloat(from) ? [...a(0), ...f64c(0), O.f64_ne] : [...a(0), ...i32c(0), O.i32_ne];
        return a(0); // bool → int32
      }
    }
    if (isFloat(a0.dtype)) {
      const u = F64_UN[op],
        b = F64_BIN[op];
      if (u) return [...a(0), u[0]];
      if (b) return [...a(0), ...a(1), b[0]];
      if (op === "rsqrt") return [...f64c(1), ...a(0), O.f64_sqrt, O.f64_div];
      if (op === "isfinite") return [...a(0), ...a(0), O.f64_sub, ...f64c(0), O.f64_eq];
      if (op === "floordiv") return [...a(0), ...a(1), O.f64_div, O.f64_floor];
      throw new Error(`internal: no wasm form for float ${op}`);
    }
    const ib = I32_BIN[op];
    if (ib !== undefined) return [...a(0), ...a(1), ib];
    switch (op) {
      case "max":
      case "min":
        return [...a(0), ...a(1), ...a(0), ...a(1), op === "max" ? O.i32_gt : O.i32_lt, O.select];
      case "neg":
        return [...i32c(0), ...a(0), O.i32_sub];
      case "abs":
        return [...i32c(0), ...a(0), O.i32_sub, ...a(0), ...a(0), ...i32c(0), O.i32_lt, O.select];
      case "not":
        return [...a(0), O.i32_eqz];
      case "floordiv": {
        // by a positive constant (else a call): truncation, one less when the remainder is negative
        const d = x.args[1]!.value;
        return [...a(0), ...i32c(d), O.i32_div_s, ...a(0), ...i32c(d), O.i32_rem_s, ...i32c(0), O.i32_lt, O.i32_sub];
      }
      case "floormod": {
        const d = x.args[1]!.value,
          r = local(V.i32);
        return [
          ...a(0),
          ...i32c(d),
          O.i32_rem_s,
          ...set(r),
          ...get(r),
          ...i32c(d),
          O.i32_add,
          ...get(r),
          ...get(r),
          ...i32c(0),
          O.i32_lt,
          O.select,
        ];
      }
    }
    throw new Error(`internal: no wasm form for int ${op}`);
  };

  /** A vector instruction sequence for x (f32x4 when wide, else f64x2), or null when it is computed lane by lane. */
  const vectorOp = (x: KNode, out: Bytes): Bytes | null => (wide ? vectorOpF32x4(x, out) : vectorOpF64x2(x, out));
  /** The f32x4 form: float ops whose float32 result is exact or correctly rounded; the others lane by lane, in f64. */
  const vectorOpF32x4 = (x: KNode, out: Bytes): Bytes | null => {
    const op = x.op,
      a0 = x.args[0];
    if (inlineMath(x)) {
      // Each half in f64x2 (the function's float64 result, rounded once), the two halves joined.
      const half = (high: boolean): Bytes => [
        ...vector(a0!, out),
        ...(high ? [...vector(a0!, out), ...simd(S.i8x16_shuffle, ...HIGH_TO_LOW)] : []),
        ...simd(S.promote_low),
        ...inlineCode(x, local, callOf.get(x)!),
        ...simd(S.demote_zero),
      ];
      return [...half(false), ...half(true), ...simd(S.i8x16_shuffle, ...JOIN_LOW_HALVES)];
    }
    if (callOf.has(x)) return null;
    if (op === "load" && x.dtype === "float32") {
      const r = regions.get(Number(x.tag))!;
      if (r.dtype !== "float32") return null;
      const tmp = local(V.v128);
      const code: Bytes = [
        ...addr(r.buf, safeIndex(x, 0)),
        ...simd(S.load32_zero, ...mem(2, r.byteOffset)),
        ...set(tmp),
      ];
      for (let l = 1; l < 4; l++)
        code.push(
          ...addr(r.buf, safeIndex(x, l)),
          ...get(tmp),
          ...simd(S.load32_lane, ...mem(2, r.byteOffset), l),
          ...set(tmp),
        );
      return [...code, ...get(tmp)];
    }
    if (op === "select" && isFloat(x.dtype))
      return [...vector(x.args[1]!, out), ...vector(x.args[2]!, out), ...vector(a0!, out), ...simd(S.bitselect)];
    if (op === "cast" && isFloat(x.dtype) && a0!.dtype === "float32") return vector(a0!, out);
    if (op === "cast" && x.dtype === "bool" && a0!.dtype === "float32")
      return [...vector(a0!, out), ...vector(constZero, out), ...simd(S.f32x4_ne)];
    if (a0?.dtype !== "float32" || (isFloat(x.dtype) && x.dtype !== "float32")) return null;
    const f = F32X4[op];
    if (f === undefined) return null;
    return [...vector(a0, out), ...(x.args.length > 1 ? vector(x.args[1]!, out) : []), ...simd(f)];
  };
  /** The f64x2 form. */
  const vectorOpF64x2 = (x: KNode, out: Bytes): Bytes | null => {
    const op = x.op,
      a0 = x.args[0];
    if (inlineMath(x)) return [...vector(a0!, out), ...inlineCode(x, local, callOf.get(x)!)];
    if (callOf.has(x)) return null;
    if (op === "load" && isFloat(x.dtype)) {
      const r = regions.get(Number(x.tag))!,
        f32 = r.dtype === "float32";
      if (!isFloat(r.dtype)) return null;
      const tmp = local(V.v128);
      const lo = addr(r.buf, safeIndex(x, 0)),
        hi = addr(r.buf, safeIndex(x, 1));
      return [
        ...lo,
        ...simd(f32 ? S.load32_zero : S.load64_zero, ...mem(f32 ? 2 : 3, r.byteOffset)),
        ...set(tmp),
        ...hi,
        ...get(tmp),
        ...simd(f32 ? S.load32_lane : S.load64_lane, ...mem(f32 ? 2 : 3, r.byteOffset), 1),
        ...(f32 ? simd(S.promote_low) : []),
      ];
    }
    if (op === "select" && isFloat(x.dtype))
      return [...vector(x.args[1]!, out), ...vector(x.args[2]!, out), ...vector(a0!, out), ...simd(S.bitselect)];
    if (op === "cast" && isFloat(x.dtype) && isFloat(a0!.dtype)) {
      return x.dtype === "float32"
        ? [...vector(a0!, out), ...simd(S.demote_zero), ...simd(S.promote_low)]
        : vector(a0!, out);
    }
    if (op === "cast" && x.dtype === "bool" && isFloat(a0!.dtype))
      return [...vector(a0!, out), ...vector(constZero, out), ...simd(S.f64x2_ne)];
    if (!a0 || !isFloat(a0.dtype)) return null;
    const u = F64_UN[op],
      b = F64_BIN[op];
    if (u) return [...vector(a0, out), ...simd(u[1])];
    if (b) return [...vector(a0, out), ...vector(x.args[1]!, out), ...simd(b[1])];
    if (op === "rsqrt")
      return [...vector(constOne, out), ...vector(a0, out), ...simd(S.f64x2_sqrt), ...simd(S.f64x2_div)];
    if (op === "floordiv")
      return [...vector(a0, out), ...vector(x.args[1]!, out), ...simd(S.f64x2_div), ...simd(S.f64x2_floor)];
    return null;
  };
  const constZero: KNode = { id: -1, op: "const", dtype: wide ? "float32" : "float64", args: [], value: 0, tag: "" };
  const constOne: KNode = { id: -2, op: "const", dtype: "float64", args: [], value: 1, tag: "" };

  /** A scalar float32 node's float64 result rounded to float32 (and widened again), where that is not exact already. */
  const roundScalar = (x: KNode): Bytes => (roundsToFloat32(x) ? [O.f32_demote, O.f64_promote] : []);
  for (const x of order) {
    if (x.op !== "const" && x !== v) uses.add(x);
  }
  for (const x of order) {
    if (!uses.has(x)) continue;
    if (!depends.get(x)) {
      const l = local(scalarType(x.dtype));
      prologue.push(...scalarOp(x, 0), ...roundScalar(x), ...set(l));
      rep.set(x, { kind: "u", local: l });
      continue;
    }
    if (L > 1) {
      const vec = vectorOp(x, body);
      if (vec) {
        const l = local(V.v128);
        // f32x4 ops round by themselves; an f64x2 lane is rounded to float32 and widened again.
        body.push(...vec, ...(!wide && roundsToFloat32(x) ? [...simd(S.demote_zero), ...simd(S.promote_low)] : []));
        body.push(...set(l));
        rep.set(x, { kind: "v", local: l });
        continue;
      }
    }
    const ls: number[] = [];
    for (let l = 0; l < L; l++) {
      const t = local(scalarType(x.dtype));
      body.push(...scalarOp(x, l), ...roundScalar(x), ...set(t));
      ls.push(t);
    }
    rep.set(x, { kind: "l", locals: ls });
  }

  // ---- stores: plain outputs at (i·inner + u), then scatter-adds lane by lane
  const storeScalar = (buf: number, idx: Bytes, val: Bytes, accumulate: boolean): Bytes => {
    const r = regions.get(buf)!,
      off = r.byteOffset;
    const a = addr(buf, idx);
    switch (r.dtype) {
      case "float32": {
        const cur = accumulate ? [...a, O.f32_load, ...mem(2, off), O.f64_promote, ...val, O.f64_add] : val;
        return [...a, ...cur, O.f32_demote, O.f32_store, ...mem(2, off)];
      }
      case "float64":
        return [
          ...a,
          ...(accumulate ? [...a, O.f64_load, ...mem(3, off), ...val, O.f64_add] : val),
          O.f64_store,
          ...mem(3, off),
        ];
      case "int32":
        return [
          ...a,
          ...(accumulate ? [...a, O.i32_load, ...mem(2, off), ...val, O.i32_add] : val),
          O.i32_store,
          ...mem(2, off),
        ];
      case "bool":
        if (accumulate) throw new Error("internal: a scatter-add into a bool buffer");
        return [...a, ...val, O.i32_store8, ...mem(0, off)];
    }
  };
  /** The stored value as the buffer's type: floats into int buffers do not occur (the plan casts first). */
  const valueFor = (buf: number, x: KNode, l: number): Bytes => {
    const d = regions.get(buf)!.dtype;
    if (isFloat(d) === isFloat(x.dtype)) return lane(x, l);
    if (isFloat(d)) return [...lane(x, l), x.dtype === "bool" ? O.f64_convert_i32_u : O.f64_convert_i32_s];
    throw new Error(`internal: a ${x.dtype} value stored into a ${d} buffer`);
  };
  for (const o of k.outputs) {
    if (o.dest) continue;
    const r = regions.get(o.buf)!;
    o.nodes.forEach((x, u) => {
      const pos = (l: number): Bytes => {
        const i = get(laneLoc[l]!);
        return o.inner === 1 ? i : [...i, ...i32c(o.inner), O.i32_mul, ...i32c(u), O.i32_add];
      };
      const xr = rep.get(x);
      const consecutive = o.inner === 1 && r.size === n && xr?.kind === "v";
      if (wide && consecutive && r.dtype === "float32" && x.dtype === "float32") {
        // Four consecutive elements at once (a last, short group repeats its last element past the end: slack).
        body.push(...addr(o.buf, get(iLoc)), ...get(xr.local), ...simd(S.v128_store, ...mem(4, r.byteOffset)));
        return;
      }
      if (L === 2 && consecutive && isFloat(r.dtype) && isFloat(x.dtype)) {
        // Two consecutive elements at once (the last odd iteration writes its one element twice).
        const f32 = r.dtype === "float32";
        body.push(
          ...addr(o.buf, get(iLoc)),
          ...get(xr.local),
          ...(f32 ? simd(S.demote_zero) : []),
          ...simd(f32 ? S.store64_lane : S.v128_store, ...mem(f32 ? 3 : 4, r.byteOffset), ...(f32 ? [0] : [])),
        );
        return;
      }
      for (let l = 0; l < L; l++) body.push(...storeScalar(o.buf, pos(l), valueFor(o.buf, x, l), false));
    });
  }
  // Scatter-adds, in the loop's order: one slot per (output, element) of an iteration.
  const slots = k.outputs.flatMap((o) => (o.dest ? o.nodes.map((x, u) => ({ o, x, u })) : []));
  // Threaded: each iteration writes its slots' indices and values to the stage (one region of
  // 8-byte values, one of int32 indices, iteration-major); `apply` adds them in that order.
  const stageValues = top,
    stageIndices = stageValues + n * slots.length * 8;
  if (threaded) top = stageIndices + n * slots.length * 4 + 16;
  const stageAt = (iter: Bytes, s: number, shift: number): Bytes => [
    ...iter,
    ...i32c(slots.length),
    O.i32_mul,
    ...i32c(s),
    O.i32_add,
    ...i32c(shift),
    O.i32_shl,
  ];
  for (let l = 0; l < L; l++) {
    const direct: Bytes = [],
      staged: Bytes = [];
    const iter = get(laneLoc[l]!);
    slots.forEach(({ o, x, u }, s) => {
      direct.push(...storeScalar(o.buf, lane(o.dest![u]!, l), valueFor(o.buf, x, l), true));
      const float = isFloat(regions.get(o.buf)!.dtype);
      staged.push(
        ...stageAt(iter, s, 3),
        ...valueFor(o.buf, x, l),
        ...(float ? [O.f64_store, ...mem(3, stageValues)] : [O.i32_store, ...mem(2, stageValues)]),
        ...stageAt(iter, s, 2),
        ...lane(o.dest![u]!, l),
        O.i32_store,
        ...mem(2, stageIndices),
      );
    });
    const adds: Bytes =
      threaded && slots.length ? [...get(2), O.if, V.void, ...staged, O.else, ...direct, O.end] : direct;
    if (l === 0 || adds.length === 0) body.push(...adds);
    // A lane past the loop's end repeats the last iteration: its scatter-adds are skipped.
    else body.push(...get(laneLoc[l]!), ...get(laneLoc[l - 1]!), O.i32_ne, O.if, V.void, ...adds, O.end);
  }

  // Plain stores of a group use v128.store, which writes 16 bytes: regions keep 16 bytes of slack.
  const laneIterations: Bytes = [];
  for (let l = 1; l < L; l++) {
    const next = [...get(iLoc), ...i32c(l), O.i32_add];
    laneIterations.push(...next, ...i32c(n - 1), ...next, ...i32c(n), O.i32_lt, O.select, ...set(laneLoc[l]!));
  }
  const loopBody: Bytes = [
    ...laneIterations,
    ...body,
    ...get(iLoc),
    ...i32c(L),
    O.i32_add,
    O.tee,
    ...uleb(iLoc),
    ...(threaded ? get(1) : i32c(n)),
    O.i32_lt,
    O.br_if,
    0,
  ];
  const code: Bytes = [
    ...prologue,
    ...(threaded ? get(0) : i32c(0)),
    ...set(iLoc),
    O.loop,
    V.void,
    ...loopBody,
    O.end,
    O.end,
  ];
  // Locals, run-length encoded by type.
  const groups: Bytes[] = [];
  for (let i = 0; i < localTypes.length; ) {
    let j = i;
    while (j < localTypes.length && localTypes[j] === localTypes[i]) j++;
    groups.push([...uleb(j - i), localTypes[i]!]);
    i = j;
  }
  const func = [...vec(groups), ...code];
  // Threaded: apply(start, end) adds the staged scatter-adds of those iterations, iteration by iteration, slot by
  // slot.
  const applyFunc: Bytes = [];
  if (threaded) {
    const it = 0,
      at = 2;
    const adds = slots.flatMap(({ o }, s) => {
      const float = isFloat(regions.get(o.buf)!.dtype);
      const staged = [
        ...stageAt(get(it), s, 3),
        ...(float ? [O.f64_load, ...mem(3, stageValues)] : [O.i32_load, ...mem(2, stageValues)]),
      ];
      return [
        ...stageAt(get(it), s, 2),
        O.i32_load,
        ...mem(2, stageIndices),
        ...set(at),
        ...storeScalar(o.buf, get(at), staged, true),
      ];
    });
    const end = 1;
    const loop: Bytes = [
      ...[O.block, V.void, ...get(it), ...get(end), O.i32_ge, O.br_if, 0],
      ...[O.loop, V.void, ...adds, ...get(it), ...i32c(1), O.i32_add, O.tee, ...uleb(it), ...get(end), O.i32_lt],
      ...[O.br_if, 0, O.end, O.end],
    ];
    applyFunc.push(...vec([[...uleb(1), V.i32]]), ...(slots.length ? loop : []), O.end);
  }
  if (top > WASM_MAX_BYTES)
    throw new RangeError(`kernel buffers of ${top} bytes exceed the WebAssembly kernels' ${WASM_MAX_BYTES}`);
  const pages = Math.max(1, Math.ceil(top / 65536));
  const bytes = new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, vec(TYPES)),
    ...section(
      2,
      vec([
        ...importNames.map((nm, i) => [...name("h"), ...name(nm), 0x00, ...uleb(importType[i]!)]),
        // Threaded: a shared memory (limits flag 3: minimum and maximum, shared).
        ...(threaded ? [[...name("h"), ...name("mem"), 0x02, 0x03, ...uleb(pages), ...uleb(pages)]] : []),
      ]),
    ),
    ...section(3, vec(threaded ? [uleb(5), uleb(6)] : [uleb(0)])),
    ...(threaded ? [] : section(5, vec([[0x00, ...uleb(pages)]]))),
    ...section(
      7,
      vec([
        [...name("mem"), EXPORT.memory, ...uleb(0)],
        [...name("run"), EXPORT.func, ...uleb(nImports)],
        ...(threaded ? [[...name("apply"), EXPORT.func, ...uleb(nImports + 1)]] : []),
      ]),
    ),
    ...section(
      10,
      vec([[...uleb(func.length), ...func], ...(threaded ? [[...uleb(applyFunc.length), ...applyFunc]] : [])]),
    ),
  ]);
  return {
    bytes,
    imports: importFns,
    reads: [...reads.values()],
    writes: [...writes.values()],
    memoryBytes: pages * 65536,
    scatters: slots.length > 0,
    lanes: L,
  };
}

/**
 * Nested loops as one flat loop (the lanes run along it): each loop variable becomes
 * (flat // stride) % extent, and the flat index is the row-major position the stores use.
 */
function flattenLoops(k: KernelStep, g: KGraph): KernelStep {
  if (k.loopVars.length === 1) return k;
  const total = k.loop.reduce((a, b) => a * b, 1);
  const flat = g.var(`flat${k.loopVars.map((x) => x.tag).join("_")}`, total);
  let stride = total;
  const subs = k.loopVars.map((x) => {
    stride /= x.value;
    const q = stride === 1 ? flat : g.binary("floordiv", flat, g.const(stride, "int32"));
    return [x, x === k.loopVars[0] ? q : g.binary("floormod", q, g.const(x.value, "int32"))] as const;
  });
  const memo = new Map<KNode, KNode>();
  const rewrite = (x: KNode): KNode => {
    let r = memo.get(x);
    if (!r) {
      r = x;
      for (const [from, to] of subs) r = g.substitute(r, from, to);
      memo.set(x, r);
    }
    return r;
  };
  return {
    ...k,
    loop: [total],
    loopVars: [flat],
    outputs: k.outputs.map((o) => ({
      ...o,
      nodes: o.nodes.map(rewrite),
      ...(o.dest ? { dest: o.dest.map(rewrite) } : {}),
    })),
  };
}
