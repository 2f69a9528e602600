/** Shapes, numpy broadcasting and axis normalisation. */
export type Shape = readonly number[];

export const sizeOf = (s: Shape): number => s.reduce((a, b) => a * b, 1);

export const shapeEq = (a: Shape, b: Shape): boolean => a.length === b.length && a.every((d, i) => d === b[i]);

export const fmtShape = (s: Shape): string => `[${s.join(",")}]`;

export function stridesOf(s: Shape): number[] {
  const st = new globalThis.Array<number>(s.length);
  let acc = 1;
  for (let i = s.length - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= s[i]!;
  }
  return st;
}

/** numpy broadcasting of several shapes; throws naming the op and shapes. */
export function broadcastShapes(op: string, ...shapes: Shape[]): number[] {
  const nd = Math.max(0, ...shapes.map((s) => s.length));
  const out = new globalThis.Array<number>(nd).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const o = nd - s.length + i;
      const d = s[i]!;
      if (out[o] === 1) out[o] = d;
      else if (d !== 1 && d !== out[o]) {
        throw new Error(
          `${op}: shapes ${shapes.map(fmtShape).join(" and ")} are not broadcast-compatible ` +
            `(dimension ${o} from the right-aligned shapes is ${out[o]} vs ${d}). ` +
            `Reshape or expandDims one operand so trailing dimensions match or are 1.`,
        );
      }
    }
  }
  return out;
}

/** Normalise a possibly negative axis; throws naming the op, the axis and the rank. */
export function normAxis(op: string, axis: number, ndim: number): number {
  if (!Number.isInteger(axis)) throw new Error(`${op}: axis must be an integer, got ${axis}.`);
  const a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) {
    throw new Error(`${op}: axis ${axis} is out of range for an array of rank ${ndim} (valid: ${-ndim}..${ndim - 1}).`);
  }
  return a;
}

export function normAxes(op: string, axes: number | readonly number[] | undefined | null, ndim: number): number[] {
  if (axes === undefined || axes === null) return range(ndim);
  const list = typeof axes === "number" ? [axes] : [...axes];
  const out = list.map((a) => normAxis(op, a, ndim));
  if (new Set(out).size !== out.length) throw new Error(`${op}: repeated axis in ${JSON.stringify(list)}.`);
  return out.sort((a, b) => a - b);
}

export function checkShape(op: string, shape: unknown): number[] {
  if (!globalThis.Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new Error(`${op}: shape must be an array of non-negative integers, got ${JSON.stringify(shape)}.`);
  }
  return [...(shape as number[])];
}

/**
 * For each output flat index, the flat index into an input broadcast to `out`.
 * Returns null when no mapping is needed (same shape).
 */
export function broadcastIndexMap(inp: Shape, out: Shape): Int32Array | null {
  if (shapeEq(inp, out)) return null;
  const n = sizeOf(out);
  const map = new Int32Array(n);
  if (sizeOf(inp) === 1) return map; // all zeros
  const nd = out.length;
  const inStr = stridesOf(inp);
  const str = new globalThis.Array<number>(nd).fill(0);
  for (let i = 0; i < inp.length; i++) {
    const o = nd - inp.length + i;
    str[o] = inp[i] === 1 ? 0 : inStr[i]!;
  }
  const idx = new globalThis.Array<number>(nd).fill(0);
  let off = 0;
  for (let k = 0; k < n; k++) {
    map[k] = off;
    for (let d = nd - 1; d >= 0; d--) {
      idx[d]!++;
      off += str[d]!;
      if (idx[d]! < out[d]!) break;
      off -= str[d]! * out[d]!;
      idx[d] = 0;
    }
  }
  return map;
}

/** [0, 1, ..., n-1] (the global Array is shadowed by gradsim's Array in most modules). */
export const range = (n: number): number[] => [...globalThis.Array(Math.max(0, n)).keys()];
