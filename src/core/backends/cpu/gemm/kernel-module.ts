/**
 * Builds the bytes of the WebAssembly SIMD GEMM "macro-kernel" module.
 *
 * Exports `mem` (the single growable Memory) — or, built for threads, imports it (`h.mem`, shared)
 * and exports `run` and `apply` as a threaded kernel (compile/threads.ts) — and
 *   gemm(ap, bp, cp, mStrips, nStrips, kc, ldcBytes, first)
 * which computes C[tile] (+)= Apack · Bpack for an mStrips·MR × nStrips·NR block of C:
 *  - Apack: mStrips micro-panels, each kc × MR stored k-major ([k][MR]), so one row's value at
 *    step k is a single `v128.load32_splat`;
 *  - Bpack: nStrips micro-panels, each kc × NR stored k-major ([k][NR]), NR = 4·NV lanes;
 *  - C: row-major with a row stride of ldcBytes; `first` = 1 starts the accumulators at zero
 *    (first K block), otherwise they start from C, so every C element is the plain sequential
 *    float32 sum over k in order: the result is independent of the blocking and bit-identical
 *    to the JS fallback (which rounds each product and each add to float32 the same way).
 * No FMA (relaxed SIMD's fma may or may not fuse depending on the host, which would break
 * determinism across machines); a product is rounded, then added.
 *
 * The loop nest is: B micro-panel (stays in L1) outer, A micro-panels (the packed A block
 * stays in L2) inner, as in GotoBLAS.
 */
import {
  EXPORT,
  LIMITS,
  memarg,
  name,
  OP,
  SEC,
  section,
  simd,
  SIMD,
  sleb,
  T,
  uleb,
  vec,
  type Bytes,
} from "./wasm-encoder.js";

export interface MicroTile {
  /** Rows of C per micro-tile. */
  readonly mr: number;
  /** v128 vectors (4 float32 lanes) per micro-tile row; NR = 4·nv columns. */
  readonly nv: number;
}

/**
 * The i32 arguments `run(start, end, staged)` reads from the memory's first GEMM_PARAMS_BYTES bytes, by byte offset:
 * one gemm call but its strips (ap, bp, cp, mStrips, kc, ldcBytes, first), and whether to pack B's strips first from a
 * gathered matrix (pack, then where its images, row offsets, padded column offsets and per-strip contiguous bases
 * lie). `run` computes strips [start, end) of that call: on one thread the whole call, on threads
 * a piece (C's columns are split, so each element is one thread's sequential sum: the same bits).
 */
export const GEMM_PARAM = {
  ap: 0,
  bp: 4,
  cp: 8,
  mStrips: 12,
  kc: 16,
  ldc: 20,
  first: 24,
  pack: 28,
  images: 32,
  rows: 36,
  cols: 40,
  bases: 44,
} as const;
export const GEMM_PARAMS_BYTES = 64;

export function buildGemmModule({ mr, nv }: MicroTile, threads?: { maxPages: number }): Uint8Array<ArrayBuffer> {
  const nr = 4 * nv;
  // Parameters 0..7, then the declared locals in order.
  const [ap, bp, cp, ms, ns, kc, ldc, first] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [t, s, pa, pb, k, cCol, cTile, aStrip, bStrip, cr] = [8, 9, 10, 11, 12, 13, 14, 15, 16, 17];
  const I32_LOCALS = 10;
  const accBase = 8 + I32_LOCALS,
    bvBase = accBase + mr * nv,
    av = bvBase + nv;
  const nV128 = mr * nv + nv + 1;
  const acc = (r: number, v: number) => accBase + r * nv + v;

  const get = (l: number): Bytes => [OP.local_get, ...uleb(l)];
  const set = (l: number): Bytes => [OP.local_set, ...uleb(l)];
  const i32 = (n: number): Bytes => [OP.i32_const, ...sleb(n)];
  const addTo = (l: number, n: number): Bytes => [...get(l), ...i32(n), OP.i32_add, ...set(l)];
  const addLocal = (l: number, by: number): Bytes => [...get(l), ...get(by), OP.i32_add, ...set(l)];
  /** l -= 1; continue the enclosing loop while l != 0. */
  const countDown = (l: number): Bytes => [...get(l), ...i32(1), OP.i32_sub, OP.local_tee, ...uleb(l), OP.br_if, 0];
  const loop = (body: Bytes): Bytes => [OP.loop, T.void, ...body, OP.end];
  const rows = (f: (r: number) => Bytes): Bytes => Array.from({ length: mr }, (_, r) => f(r)).flat();
  const lanes = (f: (v: number) => Bytes): Bytes => Array.from({ length: nv }, (_, v) => f(v)).flat();

  const zeroAcc = rows((r) =>
    lanes((v) => [...simd(SIMD.v128_const), ...new globalThis.Array<number>(16).fill(0), ...set(acc(r, v))]),
  );
  const loadAcc = rows((r) => [
    ...lanes((v) => [...get(cr), ...simd(SIMD.v128_load), ...memarg(4, v * 16), ...set(acc(r, v))]),
    ...addLocal(cr, ldc),
  ]);
  const storeAcc = rows((r) => [
    ...lanes((v) => [...get(cr), ...get(acc(r, v)), ...simd(SIMD.v128_store), ...memarg(4, v * 16)]),
    ...addLocal(cr, ldc),
  ]);
  /** One k step: NV B vectors, then per row a broadcast A value times each. */
  const kStep: Bytes = [
    ...lanes((v) => [...get(pb), ...simd(SIMD.v128_load), ...memarg(4, v * 16), ...set(bvBase + v)]),
    ...rows((r) => [
      ...get(pa),
      ...simd(SIMD.v128_load32_splat),
      ...memarg(2, r * 4),
      ...set(av),
      ...lanes((v) => [
        ...get(acc(r, v)),
        ...get(av),
        ...get(bvBase + v),
        ...simd(SIMD.f32x4_mul),
        ...simd(SIMD.f32x4_add),
        ...set(acc(r, v)),
      ]),
    ]),
    ...addTo(pa, mr * 4),
    ...addTo(pb, nr * 4),
  ];
  const microTile: Bytes = [
    ...get(cTile),
    ...set(cr),
    ...get(first),
    OP.if,
    T.void,
    ...zeroAcc,
    OP.else,
    ...loadAcc,
    OP.end,
    ...get(aStrip),
    ...set(pa),
    ...get(bStrip),
    ...set(pb),
    ...get(kc),
    ...set(k),
    // kc >= 1 (the driver never passes an empty K block), so a do-while loop is enough.
    ...loop([...kStep, ...countDown(k)]),
    ...get(cTile),
    ...set(cr),
    ...storeAcc,
    // After the tile, cr is the next tile's first row and pa the next A micro-panel.
    ...get(cr),
    ...set(cTile),
    ...get(pa),
    ...set(aStrip),
  ];
  const body: Bytes = [
    ...get(bp),
    ...set(bStrip),
    ...get(cp),
    ...set(cCol),
    ...get(ns),
    ...set(t),
    ...loop([
      ...get(ap),
      ...set(aStrip),
      ...get(cCol),
      ...set(cTile),
      ...get(ms),
      ...set(s),
      ...loop([...microTile, ...countDown(s)]),
      // pb now points one micro-panel past bStrip: the next B micro-panel.
      ...get(pb),
      ...set(bStrip),
      ...addTo(cCol, nr * 4),
      ...countDown(t),
    ]),
    OP.end,
  ];
  const func = [
    ...vec([
      [...uleb(I32_LOCALS), T.i32],
      [...uleb(nV128), T.v128],
    ]),
    ...body,
  ];

  const header = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]; // "\0asm", version 1
  const i32s = (n: number): Bytes => [T.func, ...vec(new globalThis.Array<Bytes>(n).fill([T.i32])), ...vec([])];
  const code = (f: Bytes): Bytes => [...uleb(f.length), ...f];
  const param = (at: number): Bytes => [...i32(0), OP.i32_load, ...memarg(2, at)];
  const P = GEMM_PARAM;

  // packStrips(start, end): B's strips [start, end) of K rows packed from a gathered matrix — element (k, j) at
  // images[rows[k] + cols[j]] — into Bpack, [k][NR] each (a padded column, j ≥ n, reads the place of offset 0: its
  // column of C is dropped on copy-out). A strip whose NR columns are consecutive (its base ≥ 0) moves as NV vectors
  // a row.
  const [st, en] = [0, 1];
  const [strip, dst, base, kk, rowp, colp, addr] = [2, 3, 4, 5, 6, 7, 8];
  const stripBytes = (): Bytes => [...param(P.kc), OP.i32_mul, ...i32(nr * 4), OP.i32_mul];
  const rowStep: Bytes = [...addTo(dst, nr * 4), ...addTo(rowp, 4)];
  // addr = images + 4·(base + rows[k]): the row's first element (the scalar path's base is 0, its columns added).
  const rowAddress: Bytes = [
    ...param(P.images),
    ...get(base),
    ...get(rowp),
    OP.i32_load,
    ...memarg(2, 0),
    OP.i32_add,
    ...i32(4),
    OP.i32_mul,
    OP.i32_add,
    ...set(addr),
  ];
  const vectorRows = loop([
    ...rowAddress,
    ...lanes((v) => [
      ...get(dst),
      ...get(addr),
      ...simd(SIMD.v128_load),
      ...memarg(0, v * 16),
      ...simd(SIMD.v128_store),
      ...memarg(4, v * 16),
    ]),
    ...rowStep,
    ...countDown(kk),
  ]);
  const scalarRows = loop([
    ...rowAddress,
    ...Array.from({ length: nr }, (_, c) => [
      ...get(dst),
      ...get(addr),
      ...get(colp),
      OP.i32_load,
      ...memarg(2, c * 4),
      ...i32(4),
      OP.i32_mul,
      OP.i32_add,
      OP.f32_load,
      ...memarg(2, 0),
      OP.f32_store,
      ...memarg(2, c * 4),
    ]).flat(),
    ...rowStep,
    ...countDown(kk),
  ]);
  const packStrips: Bytes = [
    ...vec([[...uleb(7), T.i32]]),
    ...get(st),
    ...set(strip),
    ...loop([
      ...param(P.bp),
      ...get(strip),
      ...stripBytes(),
      OP.i32_add,
      ...set(dst),
      ...param(P.rows),
      ...set(rowp),
      ...param(P.kc),
      ...set(kk),
      ...param(P.bases),
      ...get(strip),
      ...i32(4),
      OP.i32_mul,
      OP.i32_add,
      OP.i32_load,
      ...memarg(2, 0),
      OP.local_tee,
      ...uleb(base),
      ...i32(0),
      OP.i32_ge_s,
      OP.if,
      T.void,
      ...vectorRows,
      OP.else,
      ...i32(0),
      ...set(base),
      ...param(P.cols),
      ...get(strip),
      ...i32(nr * 4),
      OP.i32_mul,
      OP.i32_add,
      ...set(colp),
      ...scalarRows,
      OP.end,
      ...addTo(strip, 1),
      ...get(strip),
      ...get(en),
      OP.i32_lt_s,
      OP.br_if,
      0,
    ]),
    OP.end,
  ];
  // run(start, end, staged): packStrips(start, end) when asked, then gemm with the stored arguments, bp and cp moved
  // to strip `start`, nStrips = end − start.
  const PACK_STRIPS = 3;
  const run: Bytes = [
    ...vec([]),
    ...param(P.pack),
    OP.if,
    T.void,
    ...get(0),
    ...get(1),
    OP.call,
    ...uleb(PACK_STRIPS),
    OP.end,
    ...param(P.ap),
    ...param(P.bp),
    ...get(0),
    ...stripBytes(),
    OP.i32_add,
    ...param(P.cp),
    ...get(0),
    ...i32(nr * 4),
    OP.i32_mul,
    OP.i32_add,
    ...param(P.mStrips),
    ...get(1),
    ...get(0),
    OP.i32_sub,
    ...param(P.kc),
    ...param(P.ldc),
    ...param(P.first),
    OP.call,
    ...uleb(0),
    OP.end,
  ];
  const apply: Bytes = [...vec([]), OP.end]; // nothing staged: a GEMM only stores
  const memory: Bytes = threads
    ? section(
        SEC.import,
        vec([
          [...name("h"), ...name("mem"), EXPORT.memory, LIMITS.sharedMinMax, ...uleb(1), ...uleb(threads.maxPages)],
        ]),
      )
    : section(SEC.memory, vec([[LIMITS.min, ...uleb(1)]])); // min 1 page, no maximum: grown from JS
  return new Uint8Array([
    ...header,
    ...section(SEC.type, vec([i32s(8), i32s(3), i32s(2)])),
    ...(threads ? memory : []),
    ...section(SEC.func, vec([uleb(0), uleb(1), uleb(2), uleb(2)])),
    ...(threads ? [] : memory),
    ...section(
      SEC.export,
      vec([
        ...(threads ? [] : [[...name("mem"), EXPORT.memory, ...uleb(0)]]),
        [...name("gemm"), EXPORT.func, ...uleb(0)],
        [...name("run"), EXPORT.func, ...uleb(1)],
        [...name("apply"), EXPORT.func, ...uleb(2)],
      ]),
    ),
    ...section(SEC.code, vec([code(func), code(run), code(apply), code(packStrips)])),
  ]);
}
