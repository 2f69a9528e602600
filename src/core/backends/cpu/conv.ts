/**
 * conv2d on the host as a GEMM: the images' windows, a [C·kh·kw, N·OH·OW] matrix read in place
 * from the padded images (`windowsOf`), multiplied by the kernel [O, C·kh·kw] — float32 through
 * the GEMM routine (wasm SIMD), other dtypes summed in float64. A direct loop over the windows, reading the input
 * a whole channel plane apart per multiply-add, ran at ~0.25 GFLOP/s on a predictor's 16-channel
 * 3×3 convolutions, the GEMM at ~14 on a 256² product (8–9× faster convolutions, measured).
 */
import { typedArrayFor, type DType, type TypedArray } from "../../dtype.js";
import { gemmF32 } from "./gemm/index.js";

/** The conv's geometry (ConvParams of prims/linalg.ts, with the operands' and output's sizes). */
export interface ConvGeometry {
  readonly N: number;
  readonly C: number;
  readonly H: number;
  readonly W: number;
  readonly O: number;
  readonly KH: number;
  readonly KW: number;
  readonly OH: number;
  readonly OW: number;
  readonly stride: readonly [number, number];
  /** [[top, bottom], [left, right]] */
  readonly padding: readonly [readonly [number, number], readonly [number, number]];
  readonly lhsDilation: readonly [number, number];
  readonly rhsDilation: readonly [number, number];
}

/**
 * The places along one axis of a strided, dilated, padded input that hold an input value: place p = o0 + j·oStep
 * holds input i0 + j·iStep, j < count (the congruence on p makes them an arithmetic progression); the others are
 * padding or lie between dilated inputs (zeros).
 */
interface Holders {
  readonly o0: number;
  readonly oStep: number;
  readonly i0: number;
  readonly iStep: number;
  readonly count: number;
}

function holdersOf(places: number, inSize: number, padBefore: number, dilation: number): Holders {
  const held: number[] = [];
  for (let p = 0; p < places; p++) {
    const q = p - padBefore;
    if (q >= 0 && q % dilation === 0 && q / dilation < inSize) held.push(p);
  }
  const o0 = held[0] ?? 0,
    oStep = held.length > 1 ? held[1]! - o0 : 1;
  return { o0, oStep, i0: (o0 - padBefore) / dilation, iStep: oStep / dilation, count: held.length };
}

/**
 * A chunk of images as the convolution's windows read them: `images` holds images [n0, n0 + count) padded and
 * dilated ([count][C][Hv][Wv], the rows and columns the windows reach; the padding's places are the same in every
 * chunk, so they keep the zeros the buffer was allocated with), and the unfolded windows' matrix — row k a
 * kernel tap (c, ky, kx), column j an output place (n, oy, ox) of the images side by side — is element
 * images[rowOffsets[k] + colOffsets[j]]. The GEMM packs that matrix straight from the images: no unfolded copy (an
 * im2col buffer, written then packed again, took as long as the GEMM on the ConvLSTM's training step).
 */
interface Windows {
  readonly rowOffsets: Int32Array;
  readonly colOffsets: Int32Array;
}

/** The rows and columns of the padded, dilated input that the windows reach. */
const reachOf = (g: ConvGeometry): { Hv: number; Wv: number } => ({
  Hv: (g.OH - 1) * g.stride[0] + (g.KH - 1) * g.rhsDilation[0] + 1,
  Wv: (g.OW - 1) * g.stride[1] + (g.KW - 1) * g.rhsDilation[1] + 1,
});

function windowsOf(
  x: ArrayLike<number>,
  g: ConvGeometry,
  n0: number,
  count: number,
  images: Float32Array | Float64Array,
): Windows {
  const { C, H, W, KH, KW, OH, OW } = g,
    [sh, sw] = g.stride,
    [rdh, rdw] = g.rhsDilation;
  const { Hv, Wv } = reachOf(g),
    plane = Hv * Wv;
  const rows = holdersOf(Hv, H, g.padding[0][0], g.lhsDilation[0]),
    cols = holdersOf(Wv, W, g.padding[1][0], g.lhsDilation[1]);
  for (let n = 0; n < count; n++)
    for (let c = 0; c < C; c++) {
      const from = ((n0 + n) * C + c) * H * W,
        to = (n * C + c) * plane;
      for (let j = 0, py = rows.o0, iy = rows.i0; j < rows.count; j++, py += rows.oStep, iy += rows.iStep)
        for (let k = 0, at = to + py * Wv + cols.o0, ix = from + iy * W + cols.i0; k < cols.count; k++) {
          images[at] = x[ix]!;
          at += cols.oStep;
          ix += cols.iStep;
        }
    }
  const rowOffsets = new Int32Array(C * KH * KW);
  for (let c = 0, k = 0; c < C; c++)
    for (let ky = 0; ky < KH; ky++)
      for (let kx = 0; kx < KW; kx++) rowOffsets[k++] = c * plane + ky * rdh * Wv + kx * rdw;
  const colOffsets = new Int32Array(count * OH * OW);
  for (let n = 0, j = 0; n < count; n++)
    for (let oy = 0; oy < OH; oy++)
      for (let ox = 0; ox < OW; ox++) colOffsets[j++] = n * C * plane + oy * sh * Wv + ox * sw;
  return { rowOffsets, colOffsets };
}

/** Elements per chunk of padded images, and of the chunk's product [O, count·OH·OW]. */
const CHUNK_MAX = 2 ** 22;

/** y [N, O, OH, OW] = conv(x [N, C, H, W], w [O, C, KH, KW]) in `dtype`. */
export function convHost(x: TypedArray, w: TypedArray, g: ConvGeometry, dtype: DType): TypedArray {
  const { N, C, O, KH, KW, OH, OW } = g,
    P = OH * OW,
    K = C * KH * KW;
  const out = typedArrayFor(dtype, N * O * P);
  if (N * O * P === 0) return out;
  const { Hv, Wv } = reachOf(g),
    plane = Hv * Wv;
  const chunk = Math.max(1, Math.min(N, Math.floor(CHUNK_MAX / Math.max(1, C * plane, O * P))));
  if (dtype === "float32") {
    const kernel = {
      data: w instanceof Float32Array ? w : Float32Array.from(w),
      offset: 0,
      batchStride: 0,
      rowStride: K,
      colStride: 1,
    };
    const images = new Float32Array(chunk * C * plane),
      product = new Float32Array(O * chunk * P),
      y = out as Float32Array;
    for (let n0 = 0; n0 < N; n0 += chunk) {
      const count = Math.min(chunk, N - n0);
      const { rowOffsets, colOffsets } = windowsOf(x, g, n0, count, images);
      // One product [O, K]·[K, count·P] for the chunk's images side by side (a weight gradient's 9 output places
      // an image would fill few of the GEMM's 8-column panels), its columns then dealt out to the images.
      gemmF32(kernel, { data: images, rowOffsets, colOffsets }, { batch: 1, m: O, k: K, n: count * P }, product);
      for (let o = 0; o < O; o++)
        for (let n = 0; n < count; n++)
          for (let q = 0, from = (o * count + n) * P, to = ((n0 + n) * O + o) * P; q < P; q++)
            y[to + q] = product[from + q]!;
    }
    return out;
  }
  // float64 (gradient checks) and integers: each output summed in float64 over (c, ky, kx).
  const images = new Float64Array(chunk * C * plane),
    acc = new Float64Array(P);
  for (let n0 = 0; n0 < N; n0 += chunk) {
    const count = Math.min(chunk, N - n0);
    const { rowOffsets, colOffsets } = windowsOf(x, g, n0, count, images);
    for (let n = 0; n < count; n++)
      for (let o = 0; o < O; o++) {
        acc.fill(0);
        for (let k = 0; k < K; k++) {
          const wv = w[o * K + k]!,
            r = rowOffsets[k]!;
          for (let q = 0; q < P; q++) acc[q] += wv * images[r + colOffsets[n * P + q]!]!;
        }
        out.set(acc, ((n0 + n) * O + o) * P);
      }
  }
  return out;
}
