/**
 * A minimal WebAssembly binary encoder: just enough to hand-assemble the GEMM kernel module
 * without a toolchain (no wat2wasm/wabt is available at build or run time).
 * Only the opcodes the kernel uses are listed; see the WebAssembly core spec §5 (binary format)
 * and the fixed-width SIMD proposal for the 0xfd-prefixed encodings.
 */

export type Bytes = number[];

/** Unsigned LEB128 (section sizes, indices, counts, memarg fields). */
export function uleb(n: number): Bytes {
  const out: Bytes = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 (i32.const immediates). */
export function sleb(n: number): Bytes {
  const out: Bytes = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    const done = (n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

/** A length-prefixed vector of already-encoded items. */
export const vec = (items: readonly Bytes[]): Bytes => [...uleb(items.length), ...items.flat()];
export const name = (s: string): Bytes => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
export const section = (id: number, body: Bytes): Bytes => [id, ...uleb(body.length), ...body];

export const SEC = { type: 1, import: 2, func: 3, memory: 5, export: 7, code: 10 } as const;
export const T = { i32: 0x7f, v128: 0x7b, func: 0x60, void: 0x40 } as const;
export const EXPORT = { func: 0x00, memory: 0x02 } as const;
/** Memory limits: a minimum only, or a shared memory's minimum and maximum (threads). */
export const LIMITS = { min: 0x00, sharedMinMax: 0x03 } as const;

/** Core opcodes (single byte). */
export const OP = {
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br_if: 0x0d,
  call: 0x10,
  local_get: 0x20,
  local_set: 0x21,
  local_tee: 0x22,
  i32_load: 0x28,
  f32_load: 0x2a,
  f32_store: 0x38,
  i32_const: 0x41,
  i32_lt_s: 0x48,
  i32_ge_s: 0x4e,
  i32_add: 0x6a,
  i32_sub: 0x6b,
  i32_mul: 0x6c,
} as const;

/** SIMD opcodes: emitted as 0xfd followed by the ULEB128 sub-opcode. */
export const SIMD = {
  v128_load: 0x00,
  v128_load32_splat: 0x09,
  v128_store: 0x0b,
  v128_const: 0x0c,
  f32x4_add: 0xe4,
  f32x4_mul: 0xe6,
} as const;

export const simd = (op: number): Bytes => [0xfd, ...uleb(op)];
/** memarg: alignment exponent (a hint) and constant byte offset added to the address operand. */
export const memarg = (alignLog2: number, offset: number): Bytes => [...uleb(alignLog2), ...uleb(offset)];
