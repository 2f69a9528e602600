/**
 * Direct JS-loop references for np/nn functions, written from the numpy definitions and
 * sharing no code with src/ (so a bug in the implementation cannot hide in the oracle).
 * Everything computes in float64 on multi-indices.
 */
export interface Nd {
  readonly shape: readonly number[];
  readonly data: Float64Array;
}

export const size = (s: readonly number[]): number => s.reduce((a, b) => a * b, 1);
export const nd = (shape: readonly number[], data?: ArrayLike<number>): Nd => ({
  shape: [...shape],
  data: data ? Float64Array.from(data) : new Float64Array(size(shape)),
});

function strides(s: readonly number[]): number[] {
  const out = new globalThis.Array<number>(s.length);
  let acc = 1;
  for (let i = s.length - 1; i >= 0; i--) {
    out[i] = acc;
    acc *= s[i]!;
  }
  return out;
}
/** Calls fn for every multi-index of `shape` in row-major order. */
export function forEachIndex(shape: readonly number[], fn: (idx: readonly number[], flat: number) => void): void {
  const n = size(shape);
  const idx = new globalThis.Array<number>(shape.length).fill(0);
  for (let k = 0; k < n; k++) {
    fn(idx, k);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
}
export const at = (x: Nd, idx: readonly number[]): number => {
  const st = strides(x.shape);
  return x.data[idx.reduce((o, v, d) => o + v * st[d]!, 0)]!;
};

/** numpy broadcasting: align right, sizes equal or 1. Returns null when incompatible. */
export function broadcastShape(a: readonly number[], b: readonly number[]): number[] | null {
  const n = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1,
      y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) return null;
    out.push(Math.max(x, y));
  }
  return out;
}
/** x read at an output index of a broadcast result (size-1 and missing leading dims repeat). */
const atBroadcast = (x: Nd, outIdx: readonly number[]): number =>
  at(
    x,
    x.shape.map((d, i) => (d === 1 ? 0 : outIdx[outIdx.length - x.shape.length + i]!)),
  );

export function binaryRef(a: Nd, b: Nd, fn: (x: number, y: number) => number): Nd {
  const shape = broadcastShape(a.shape, b.shape)!;
  const out = nd(shape);
  forEachIndex(shape, (idx, k) => {
    out.data[k] = fn(atBroadcast(a, idx), atBroadcast(b, idx));
  });
  return out;
}

/** Reduce over `axes` (already non-negative, deduplicated), optionally keeping size-1 dims. */
export function reduceRef(
  x: Nd,
  axes: readonly number[],
  init: number,
  fn: (acc: number, v: number) => number,
  keepdims = false,
): Nd {
  const kept = x.shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const acc = nd(kept, new Float64Array(size(kept)).fill(init));
  forEachIndex(x.shape, (idx, k) => {
    const o = idx.map((v, i) => (axes.includes(i) ? 0 : v));
    const st = strides(kept);
    const j = o.reduce((s, v, d) => s + v * st[d]!, 0);
    acc.data[j] = fn(acc.data[j]!, x.data[k]!);
  });
  return keepdims
    ? acc
    : nd(
        x.shape.filter((_, i) => !axes.includes(i)),
        acc.data,
      );
}

/** argmax/argmin along one axis: index of the first best value. */
export function argRef(x: Nd, axis: number, better: (a: number, b: number) => boolean): Nd {
  const outShape = x.shape.filter((_, i) => i !== axis);
  const out = nd(outShape);
  forEachIndex(outShape, (o, k) => {
    let best = 0,
      bv = NaN;
    for (let j = 0; j < x.shape[axis]!; j++) {
      const v = at(x, [...o.slice(0, axis), j, ...o.slice(axis)]);
      if (j === 0 || better(v, bv)) {
        best = j;
        bv = v;
      }
    }
    out.data[k] = best;
  });
  return out;
}

/** numpy matmul: 1-D operands are promoted (and the added dim removed), batch dims broadcast. */
export function matmulRef(a: Nd, b: Nd): Nd {
  const A = a.shape.length === 1 ? nd([1, a.shape[0]!], a.data) : a;
  const B = b.shape.length === 1 ? nd([b.shape[0]!, 1], b.data) : b;
  const [m, k] = A.shape.slice(-2) as [number, number];
  const n = B.shape[B.shape.length - 1]!;
  const batch = broadcastShape(A.shape.slice(0, -2), B.shape.slice(0, -2))!;
  const full = [...batch, m, n];
  const out = nd(full);
  forEachIndex(full, (idx, q) => {
    const bi = idx.slice(0, -2),
      i = idx[idx.length - 2]!,
      j = idx[idx.length - 1]!;
    let s = 0;
    for (let r = 0; r < k; r++) s += atBroadcast(A, [...bi, i, r]) * atBroadcast(B, [...bi, r, j]);
    out.data[q] = s;
  });
  const shape = [...batch, ...(a.shape.length === 1 ? [] : [m]), ...(b.shape.length === 1 ? [] : [n])];
  return nd(shape, out.data);
}

/** einsum by looping over every assignment of every label (explicit "->" output). */
export function einsumRef(spec: string, ...ops: Nd[]): Nd {
  const [lhs, outLabels] = spec.split("->") as [string, string];
  const ins = lhs.split(",");
  const sizes = new Map<string, number>();
  ins.forEach((s, i) => [...s].forEach((c, d) => sizes.set(c, Math.max(sizes.get(c) ?? 1, ops[i]!.shape[d]!))));
  const labels = [...sizes.keys()];
  const outShape = [...outLabels].map((c) => sizes.get(c)!);
  const out = nd(outShape);
  const ost = strides(outShape);
  forEachIndex(
    labels.map((c) => sizes.get(c)!),
    (vals) => {
      const v = (c: string) => vals[labels.indexOf(c)]!;
      let p = 1;
      ins.forEach((s, i) => {
        p *= at(
          ops[i]!,
          [...s].map((c, d) => (ops[i]!.shape[d] === 1 ? 0 : v(c))),
        );
      });
      out.data[[...outLabels].reduce((o, c, d) => o + v(c) * ost[d]!, 0)] += p;
    },
  );
  return out;
}

const wrap = (i: number, n: number): number => (i < 0 ? i + n : i);

/** numpy take_along_axis, with the non-axis dims of x and idx broadcast against each other. */
export function takeAlongAxisRef(x: Nd, idx: Nd, axis: number): Nd {
  const xs = x.shape.map((d, i) => (i === axis ? 1 : d)),
    is = idx.shape.map((d, i) => (i === axis ? 1 : d));
  const shape = broadcastShape(xs, is)!.map((d, i) => (i === axis ? idx.shape[axis]! : d));
  const out = nd(shape);
  forEachIndex(shape, (o, k) => {
    const j = wrap(
      at(
        idx,
        o.map((v, i) => (idx.shape[i] === 1 ? 0 : v)),
      ),
      x.shape[axis]!,
    );
    out.data[k] = at(
      x,
      o.map((v, i) => (i === axis ? j : x.shape[i] === 1 ? 0 : v)),
    );
  });
  return out;
}

/** target.at[indices].add(updates) along `axis`: updates have shape target[:axis] + idx.shape + target[axis+1:]. */
export function scatterAddRef(t: Nd, idx: Nd, u: Nd, axis: number): Nd {
  const out = nd(t.shape, t.data);
  const st = strides(t.shape);
  const ni = idx.shape.length;
  forEachIndex(u.shape, (o, k) => {
    const iIdx = o.slice(axis, axis + ni);
    const j = wrap(at(idx, iIdx), t.shape[axis]!);
    const tIdx = [...o.slice(0, axis), j, ...o.slice(axis + ni)];
    out.data[tIdx.reduce((s, v, d) => s + v * st[d]!, 0)] += u.data[k]!;
  });
  return out;
}

/** Cross-correlation, x [N,C,H,W], w [O,C,kh,kw], padding [[top, bottom], [left, right]], zero padding. */
export function conv2dRef(
  x: Nd,
  w: Nd,
  stride: readonly [number, number],
  padding: readonly [readonly [number, number], readonly [number, number]],
  dilation: readonly [number, number] = [1, 1],
): Nd {
  const [N, C, H, W] = x.shape as [number, number, number, number];
  const [O, , KH, KW] = w.shape as [number, number, number, number];
  const OH = Math.floor((H + padding[0][0] + padding[0][1] - dilation[0] * (KH - 1) - 1) / stride[0]) + 1;
  const OW = Math.floor((W + padding[1][0] + padding[1][1] - dilation[1] * (KW - 1) - 1) / stride[1]) + 1;
  const out = nd([N, O, OH, OW]);
  forEachIndex(out.shape, ([n, o, i, j], k) => {
    let s = 0;
    for (let c = 0; c < C; c++)
      for (let p = 0; p < KH; p++)
        for (let q = 0; q < KW; q++) {
          const y = i! * stride[0] + p * dilation[0] - padding[0][0],
            z = j! * stride[1] + q * dilation[1] - padding[1][0];
          if (y >= 0 && y < H && z >= 0 && z < W) s += at(x, [n!, c, y, z]) * at(w, [o!, c, p, q]);
        }
    out.data[k] = s;
  });
  return out;
}

/** TensorFlow/JAX "SAME" padding: output ceil(in/stride), the odd pixel of padding goes after. */
export function samePadding(inSize: number, k: number, stride: number, dilation: number): [number, number] {
  const out = Math.ceil(inSize / stride);
  const total = Math.max((out - 1) * stride + (k - 1) * dilation + 1 - inSize, 0);
  return [Math.floor(total / 2), total - Math.floor(total / 2)];
}
