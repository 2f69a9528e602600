/** Contractions: dot_general (batched matmul / tensordot) and conv2d (NCHW / OIHW, strides, padding, dilations). */
import type { Array } from "../array.js";
import { ShapedArray } from "../aval.js";
import { typedArrayFor } from "../dtype.js";
import { definePrimitive, type Primitive } from "../primitive.js";
import { range as iotaList, sizeOf } from "../shape.js";
import { isUndef, isZero, Zero, type UndefPrimal } from "../tangent.js";
import { bind1 } from "../trace.js";
import type { KNode } from "../kernel/expr.js";
import { clampIndex, reduceOver, viewOf } from "../kernel/view.js";
import type { HostArray } from "../backends/backend.js";
import { convHost } from "../backends/cpu/conv.js";
import { gemmF32, type StridedMatrices } from "../backends/cpu/gemm/index.js";
import { stridedView } from "../backends/cpu/gemm/operand-view.js";
import { host, requireNumeric, requireSameDType, transposeHost } from "./_helpers.js";
import { tadd } from "./elementwise.js";
import { moveAxis, reshape, rev, slice, transpose, vmapByLoop } from "./movement.js";

// ---------------------------------------------------------------- dot_general

export interface DotParams {
  /** [lhs contracting dims, rhs contracting dims] */
  readonly contract: readonly [readonly number[], readonly number[]];
  /** [lhs batch dims, rhs batch dims] */
  readonly batch: readonly [readonly number[], readonly number[]];
}
const range = (a: number, b: number): number[] => iotaList(b - a).map((i) => i + a);
const remaining = (n: number, ...used: (readonly number[])[]): number[] =>
  range(0, n).filter((d) => !used.some((u) => u.includes(d)));

function dotShape(l: ShapedArray, r: ShapedArray, { contract: [lc, rc], batch: [lb, rb] }: DotParams): number[] {
  const bad = (m: string) =>
    new Error(`dot_general: ${m} (lhs ${l}, rhs ${r}, contract [${lc}]/[${rc}], batch [${lb}]/[${rb}]).`);
  if (lc.length !== rc.length || lb.length !== rb.length)
    throw bad("contracting/batch dimension lists differ in length");
  for (const [ls, rs, what] of [
    [lc, rc, "contracting"],
    [lb, rb, "batch"],
  ] as const) {
    ls.forEach((d, i) => {
      const e = rs[i]!;
      if (d < 0 || d >= l.ndim || e < 0 || e >= r.ndim) throw bad(`${what} dimension out of range`);
      if (l.shape[d] !== r.shape[e]) throw bad(`${what} sizes ${l.shape[d]} and ${r.shape[e]} differ`);
    });
  }
  return [
    ...lb.map((d) => l.shape[d]!),
    ...remaining(l.ndim, lc, lb).map((d) => l.shape[d]!),
    ...remaining(r.ndim, rc, rb).map((d) => r.shape[d]!),
  ];
}

export const dotGeneralP: Primitive<DotParams> = definePrimitive<DotParams>({
  name: "dot_general",
  lower: ([l, r], { contract: [lc, rc], batch: [lb, rb] }, [out], g) => [
    viewOf(out!, (idx) => {
      const lf = remaining(l!.shape.length, lc, lb),
        rf = remaining(r!.shape.length, rc, rb);
      return reduceOver(
        g,
        "add",
        lc.map((d) => l!.shape[d]!),
        (rv) => {
          const li = new globalThis.Array<KNode>(l!.shape.length),
            ri = new globalThis.Array<KNode>(r!.shape.length);
          lb.forEach((d, i) => {
            li[d] = idx[i]!;
            ri[rb[i]!] = idx[i]!;
          });
          lf.forEach((d, i) => (li[d] = idx[lb.length + i]!));
          rf.forEach((d, i) => (ri[d] = idx[lb.length + lf.length + i]!));
          lc.forEach((d, i) => {
            li[d] = rv[i]!;
            ri[rc[i]!] = rv[i]!;
          });
          return g.binary("mul", l!.at(li), r!.at(ri));
        },
      );
    }),
  ],
  shape: ([l, r], p) => {
    requireSameDType("dot_general (matmul)", [l!, r!]);
    requireNumeric("dot_general (matmul)", l!);
    return [new ShapedArray(dotShape(l!, r!, p), l!.dtype, l!.weak && r!.weak)];
  },
  impl: ([l, r], { contract: [lc, rc], batch: [lb, rb] }, [out]) => {
    const lf = remaining(l!.shape.length, lc, lb),
      rf = remaining(r!.shape.length, rc, rb);
    const B = sizeOf(lb.map((d) => l!.shape[d]!)),
      M = sizeOf(lf.map((d) => l!.shape[d]!));
    const K = sizeOf(lc.map((d) => l!.shape[d]!)),
      N = sizeOf(rf.map((d) => r!.shape[d]!));
    if (out!.dtype === "float32") {
      // Float32 GEMM (wasm SIMD or JS; deterministic, no zero-skipping so 0·Inf stays NaN).
      const a = gemmOperand(l!, lb, lf, lc),
        b = gemmOperand(r!, rb, rc, rf);
      return [host(gemmF32(a, b, { batch: B, m: M, k: K, n: N }), out!.shape, out!.dtype)];
    }
    // int32 and float64: exact float64 accumulation.
    const a = transposeHost(l!, [...lb, ...lf, ...lc]).data; // [B, M, K]
    const b = transposeHost(r!, [...rb, ...rc, ...rf]).data; // [B, K, N]
    const acc = new Float64Array(B * M * N);
    for (let bb = 0; bb < B; bb++) {
      for (let i = 0; i < M; i++) {
        const orow = (bb * M + i) * N;
        for (let k = 0; k < K; k++) {
          const av = a[(bb * M + i) * K + k]!;
          if (av === 0) continue;
          const brow = (bb * K + k) * N;
          for (let j = 0; j < N; j++) acc[orow + j]! += av * b[brow + j]!;
        }
      }
    }
    const o = typedArrayFor(out!.dtype, out!.size);
    if (out!.dtype === "int32") for (let i = 0; i < o.length; i++) o[i] = acc[i]! | 0;
    else o.set(acc);
    // NaN/Inf in skipped zero rows: 0·inf must stay NaN as in IEEE; redo rows with non-finite rhs exactly.
    let rhsFinite = true;
    for (let i = 0; i < b.length; i++)
      if (!Number.isFinite(b[i]!)) {
        rhsFinite = false;
        break;
      }
    if (!rhsFinite) {
      for (let bb = 0; bb < B; bb++)
        for (let i = 0; i < M; i++)
          for (let j = 0; j < N; j++) {
            let s = 0;
            for (let k = 0; k < K; k++) s += a[(bb * M + i) * K + k]! * b[(bb * K + k) * N + j]!;
            o[(bb * M + i) * N + j] = s;
          }
    }
    return [host(o, out!.shape, out!.dtype)];
  },
  jvp: ([l, r], [tl, tr], p) => {
    const out = dotGeneral(l!, r!, p);
    const a = isZero(tl) ? tl : dotGeneral(tl, r!, p);
    const b = isZero(tr) ? tr : dotGeneral(l!, tr, p);
    return [[out], [tadd(a, b)]];
  },
  transpose: ([ct], [l, r], p) => {
    if (isUndef(l) && isUndef(r)) throw new Error("internal: dot_general transpose with both operands linear.");
    if (isZero(ct)) return [isUndef(l) ? new Zero(l.aval) : null, isUndef(r) ? new Zero(r.aval) : null];
    if (isUndef(l)) return [dotTransposeLhs(ct as Array, l, r as Array, p), null];
    if (isUndef(r)) return [null, dotTransposeRhs(ct as Array, l as Array, r, p)];
    return [null, null];
  },
  vmap: ([l, r], [dl, dr], p) => {
    const [lc, rc] = p.contract,
      [lb, rb] = p.batch;
    const sh = (ds: readonly number[]) => ds.map((d) => d + 1);
    if (dl !== null && dr !== null) {
      const L = moveAxis(l!, dl, 0),
        R = moveAxis(r!, dr, 0);
      return [
        [
          dotGeneral(L, R, {
            contract: [sh(lc), sh(rc)],
            batch: [
              [0, ...sh(lb)],
              [0, ...sh(rb)],
            ],
          }),
        ],
        [0],
      ];
    }
    if (dl !== null) {
      // Batch dim becomes the first free lhs dim: output position = #batch dims.
      const L = moveAxis(l!, dl, 0);
      return [[dotGeneral(L, r!, { contract: [sh(lc), rc], batch: [sh(lb), rb] })], [lb.length]];
    }
    const R = moveAxis(r!, dr!, 0);
    const nLhsFree = l!.ndim - lc.length - lb.length;
    return [[dotGeneral(l!, R, { contract: [lc, sh(rc)], batch: [lb, sh(rb)] })], [lb.length + nLhsFree]];
  },
  printParams: (p) =>
    `contract=[${p.contract[0]}]/[${p.contract[1]}]` +
    `${p.batch[0].length ? ` batch=[${p.batch[0]}]/[${p.batch[1]}]` : ""}`,
});
export const dotGeneral = (l: Array, r: Array, p: DotParams): Array => bind1(dotGeneralP, [l, r], p);

/** A float32 operand as [batch][rows][cols] matrices: read in place when its axes allow, else transposed once. */
function gemmOperand(
  x: HostArray,
  batch: readonly number[],
  rows: readonly number[],
  cols: readonly number[],
): StridedMatrices {
  // float32 host data is a Float32Array; convert defensively rather than misread another view type.
  const data = x.data instanceof Float32Array ? x.data : Float32Array.from(x.data);
  const view = stridedView(data, x.shape, batch, rows, cols);
  if (view) return view;
  const t = transposeHost({ ...x, data }, [...batch, ...rows, ...cols]);
  const at = (n: number, from: number) => range(from, from + n);
  return stridedView(
    t.data as Float32Array,
    t.shape,
    at(batch.length, 0),
    at(rows.length, batch.length),
    at(cols.length, batch.length + rows.length),
  )!;
}

const argsort = (xs: readonly number[]): number[] => range(0, xs.length).sort((a, b) => xs[a]! - xs[b]!);

/** JAX's _dot_general_transpose_lhs. */
function dotTransposeLhs(g: Array, x: UndefPrimal | Array, y: Array, p: DotParams, swapAns = false): Array {
  const [xc, yc] = p.contract,
    [xb, yb] = p.batch;
  const xNdim = x.aval.ndim;
  const xKept = remaining(xNdim, xc, xb);
  const yKept = remaining(y.ndim, yc, yb);
  const nb = xb.length;
  const ansBatch = range(0, nb);
  const ansY = swapAns ? range(nb, nb + yKept.length) : range(nb + xKept.length, nb + xKept.length + yKept.length);
  const dims: DotParams = { contract: [ansY, yKept], batch: [ansBatch, yb] };
  const xContractSortedByY = argsort(yc).map((i) => xc[i]!);
  const outAxes = argsort([...xb, ...xKept, ...xContractSortedByY]);
  return transpose(dotGeneral(g, y, dims), outAxes);
}
function dotTransposeRhs(g: Array, x: Array, y: UndefPrimal | Array, p: DotParams): Array {
  const swapped: DotParams = { contract: [p.contract[1], p.contract[0]], batch: [p.batch[1], p.batch[0]] };
  return dotTransposeLhs(g, y, x, swapped, true);
}

// ---------------------------------------------------------------- conv2d

export interface ConvParams {
  readonly stride: readonly [number, number];
  /** [[top, bottom], [left, right]] */
  readonly padding: readonly [readonly [number, number], readonly [number, number]];
  readonly lhsDilation: readonly [number, number];
  readonly rhsDilation: readonly [number, number];
}
const dilateDim = (n: number, d: number): number => (n === 0 ? 0 : 1 + d * (n - 1));
function convOutDim(n: number, k: number, s: number, lo: number, hi: number, ld: number, rd: number): number {
  return Math.floor((dilateDim(n, ld) + lo + hi - dilateDim(k, rd)) / s) + 1;
}

export const conv2dP: Primitive<ConvParams> = definePrimitive<ConvParams>({
  name: "conv2d",
  lower: ([x, w], p, [out], g) => [
    viewOf(out!, ([n, o, oy, ox]) => {
      const [, C, H, W] = x!.shape as [number, number, number, number];
      const [, , KH, KW] = w!.shape as [number, number, number, number];
      const c = (v: number) => g.const(v, "int32");
      return reduceOver(g, "add", [C, KH, KW], ([ci, ky, kx]) => {
        // Position in the (lhs-dilated, padded) input; valid when it lands on a real element.
        const py = g.binary(
          "sub",
          g.binary("add", g.binary("mul", oy!, c(p.stride[0])), g.binary("mul", ky!, c(p.rhsDilation[0]))),
          c(p.padding[0][0]),
        );
        const px = g.binary(
          "sub",
          g.binary("add", g.binary("mul", ox!, c(p.stride[1])), g.binary("mul", kx!, c(p.rhsDilation[1]))),
          c(p.padding[1][0]),
        );
        const iy = p.lhsDilation[0] === 1 ? py : g.binary("floordiv", py, c(p.lhsDilation[0]));
        const ix = p.lhsDilation[1] === 1 ? px : g.binary("floordiv", px, c(p.lhsDilation[1]));
        let ok = g.binary(
          "and",
          g.binary("and", g.binary("ge", py, c(0)), g.binary("ge", px, c(0))),
          g.binary("and", g.binary("lt", iy, c(H)), g.binary("lt", ix, c(W))),
        );
        if (p.lhsDilation[0] !== 1)
          ok = g.binary("and", ok, g.binary("eq", g.binary("floormod", py, c(p.lhsDilation[0])), c(0)));
        if (p.lhsDilation[1] !== 1)
          ok = g.binary("and", ok, g.binary("eq", g.binary("floormod", px, c(p.lhsDilation[1])), c(0)));
        const xv = x!.at([n!, ci!, clampIndex(g, iy, H), clampIndex(g, ix, W)]);
        return g.select(ok, g.binary("mul", xv, w!.at([o!, ci!, ky!, kx!])), g.const(0, x!.dtype));
      });
    }),
  ],
  shape: ([x, w], p) => {
    requireSameDType("conv2d", [x!, w!]);
    if (x!.ndim !== 4 || w!.ndim !== 4)
      throw new Error(`conv2d: expected x [N,C,H,W] and w [O,C,kh,kw], got ${x} and ${w}.`);
    if (x!.shape[1] !== w!.shape[1])
      throw new Error(`conv2d: input channels differ: x ${x} has C=${x!.shape[1]}, w ${w} has C=${w!.shape[1]}.`);
    const oh = convOutDim(
      x!.shape[2]!,
      w!.shape[2]!,
      p.stride[0],
      p.padding[0][0],
      p.padding[0][1],
      p.lhsDilation[0],
      p.rhsDilation[0],
    );
    const ow = convOutDim(
      x!.shape[3]!,
      w!.shape[3]!,
      p.stride[1],
      p.padding[1][0],
      p.padding[1][1],
      p.lhsDilation[1],
      p.rhsDilation[1],
    );
    if (oh <= 0 || ow <= 0)
      throw new Error(
        `conv2d: kernel ${w} does not fit input ${x} with padding ${JSON.stringify(p.padding)} (output ${oh}x${ow}).`,
      );
    return [new ShapedArray([x!.shape[0]!, w!.shape[0]!, oh, ow], x!.dtype, x!.weak && w!.weak)];
  },
  impl: ([x, w], p, [out]) => {
    const [N, C, H, W] = x!.shape as [number, number, number, number];
    const [O, , KH, KW] = w!.shape as [number, number, number, number];
    const [, , OH, OW] = out!.shape as [number, number, number, number];
    return [
      host(convHost(x!.data, w!.data, { N, C, H, W, O, KH, KW, OH, OW, ...p }, out!.dtype), out!.shape, out!.dtype),
    ];
  },
  jvp: ([x, w], [tx, tw], p) => {
    const out = conv2dGeneral(x!, w!, p);
    return [[out], [tadd(isZero(tx) ? tx : conv2dGeneral(tx, w!, p), isZero(tw) ? tw : conv2dGeneral(x!, tw, p))]];
  },
  transpose: ([ct], [x, w], p) => {
    if (isUndef(x) && isUndef(w)) throw new Error("internal: conv2d transpose with both operands linear.");
    if (isZero(ct)) return [isUndef(x) ? new Zero(x.aval) : null, isUndef(w) ? new Zero(w.aval) : null];
    const g = ct as Array;
    if (isUndef(x)) return [convTransposeLhs(g, x.aval, w as Array, p), null];
    if (isUndef(w)) return [null, convTransposeRhs(g, x as Array, w.aval, p)];
    return [null, null];
  },
  vmap: ([x, w], [dx, dw], p, n) => {
    if (dw !== null) return vmapByLoop(conv2dP, [x!, w!], [dx!, dw], p, n);
    const xb = moveAxis(x!, dx!, 0);
    const [B, N, ...rest] = xb.shape;
    const y = conv2dGeneral(reshape(xb, [B! * N!, ...rest]), w!, p);
    return [[reshape(y, [B!, N!, ...y.shape.slice(1)])], [0]];
  },
  printParams: (p) =>
    `stride=[${p.stride}] padding=${JSON.stringify(p.padding)}` +
    (p.lhsDilation.some((d) => d !== 1) ? ` lhs_dilation=[${p.lhsDilation}]` : "") +
    (p.rhsDilation.some((d) => d !== 1) ? ` rhs_dilation=[${p.rhsDilation}]` : ""),
});
export const conv2dGeneral = (x: Array, w: Array, p: ConvParams): Array => bind1(conv2dP, [x, w], p);

/**
 * Gradient w.r.t. the input: a conv of the cotangent with the flipped, channel-swapped kernel (JAX's
 * _conv_general_dilated_transpose_lhs).
 */
function convTransposeLhs(g: Array, x: ShapedArray, w: Array, p: ConvParams): Array {
  const pads = [0, 1].map((i) => {
    const ld = dilateDim(x.shape[2 + i]!, p.lhsDilation[i]!);
    const kd = dilateDim(w.shape[2 + i]!, p.rhsDilation[i]!);
    const od = dilateDim(g.shape[2 + i]!, p.stride[i]!);
    const before = kd - p.padding[i]![0] - 1;
    const after = ld + kd - 1 - od - before;
    return [before, after] as [number, number];
  });
  const wt = rev(transpose(w, [1, 0, 2, 3]), [2, 3]); // [C, O, kh, kw] flipped
  const y = conv2dGeneral(g, wt, {
    stride: p.lhsDilation,
    padding: [pads[0]!, pads[1]!],
    lhsDilation: p.stride,
    rhsDilation: p.rhsDilation,
  });
  return fitSpatial(y, x.shape);
}
/** Gradient w.r.t. the kernel: a conv of the input with the cotangent (JAX's _conv_general_dilated_transpose_rhs). */
function convTransposeRhs(g: Array, x: Array, w: ShapedArray, p: ConvParams): Array {
  const pads = [0, 1].map((i) => {
    const ld = dilateDim(x.shape[2 + i]!, p.lhsDilation[i]!);
    const kd = dilateDim(w.shape[2 + i]!, p.rhsDilation[i]!);
    const od = dilateDim(g.shape[2 + i]!, p.stride[i]!);
    const lo = p.padding[i]![0];
    return [lo, od - ld + kd - lo - 1] as [number, number];
  });
  const xt = transpose(x, [1, 0, 2, 3]); // [C, N, H, W]
  const gt = transpose(g, [1, 0, 2, 3]); // [O, N, OH, OW]
  const y = conv2dGeneral(xt, gt, {
    stride: p.rhsDilation,
    padding: [pads[0]!, pads[1]!],
    lhsDilation: p.lhsDilation,
    rhsDilation: p.stride,
  });
  return fitSpatial(transpose(y, [1, 0, 2, 3]), w.shape); // [O, C, kh, kw]
}
/** Output sizes of the transposed convs can exceed the target by strides' remainders; crop (never pad) to it. */
function fitSpatial(y: Array, shape: readonly number[]): Array {
  if (y.shape[2] === shape[2] && y.shape[3] === shape[3]) return y;
  if (y.shape[2]! < shape[2]! || y.shape[3]! < shape[3]!)
    throw new Error(`internal: conv transpose produced ${y.aval}, expected [${shape}].`);
  return sliceSpatial(y, shape);
}
const sliceSpatial = (y: Array, shape: readonly number[]): Array =>
  slice(y, [0, 0, 0, 0], [y.shape[0]!, y.shape[1]!, shape[2]!, shape[3]!]);
