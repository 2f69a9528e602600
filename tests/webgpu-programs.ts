/**
 * Random programs for the webgpu-vs-cpu tests. (property-tests/gen/programs.ts builds float64
 * programs with float64 constants, which cannot run on webgpu; these programs keep every
 * constant float32/int32 on the CPU, so one function runs on float32 webgpu inputs and on
 * float64 CPU inputs alike: the CPU run is the reference.)
 *
 * A program is an expression DAG of elementwise unary/binary ops with numpy broadcasting,
 * reductions over random axes, reshape, transpose, take (gather) with repeated and negative
 * indices, scatterAdd, matmul, cumsum, where and concatenate. Ops are smooth or well
 * conditioned (no division by small numbers), so float32 stays close to float64.
 */
import fc from "fast-check";
import { np, nn, type Array } from "../src/index.js";
import { makeRng } from "../src/core/host-rng.js";
import { broadcastShape } from "../property-tests/loop-refs.js";

type Shape = readonly number[];
export interface GpuProgram {
  readonly inShapes: readonly Shape[];
  readonly text: string;
  readonly fn: (...xs: Array[]) => Array;
}

const sizeOf = (s: Shape): number => s.reduce((a, b) => a * b, 1);
const fmt = (s: Shape): string => `[${s.join(",")}]`;
/** CPU float32 / int32 constants: uploaded next to webgpu operands, promoted to float64 next to CPU ones. */
const f32c = (d: readonly number[], s: Shape): Array =>
  np.array(Float32Array.from(d), { backend: "cpu" }).reshape([...s]);
const i32c = (d: readonly number[], s: Shape): Array =>
  np.array(Int32Array.from(d), { dtype: "int32", backend: "cpu" }).reshape([...s]);

const UNARY: Record<string, (x: Array) => Array> = {
  sin: np.sin,
  cos: np.cos,
  tanh: np.tanh,
  neg: np.neg,
  abs: np.abs,
  relu: nn.relu,
  sigmoid: nn.sigmoid,
  square: (x) => np.square(np.tanh(x)),
  expTanh: (x) => np.exp(np.tanh(x)),
  log1pSq: (x) => np.log1p(np.square(x)),
  affine: (x) => x.mul(1.7).sub(0.3),
};
const BINARY: Record<string, (a: Array, b: Array) => Array> = {
  add: np.add,
  sub: np.sub,
  mul: np.mul,
  maximum: np.maximum,
  minimum: np.minimum,
  safeDiv: (a, b) => np.div(a, np.add(1, np.square(b))),
};

interface Step {
  readonly text: string;
  readonly shape: number[];
  readonly run: (env: readonly Array[]) => Array;
}

export function buildGpuProgram(seed: number, inShapes: readonly Shape[], nSteps: number, maxSize = 64): GpuProgram {
  const rng = makeRng(seed);
  const shapes: number[][] = inShapes.map((s) => [...s]);
  const lines = inShapes.map((s, i) => `v${i} = input${i} ${fmt(s)}`);
  const steps: Step[] = [];
  const used = new Set<number>();
  const pick = (ok: (s: Shape) => boolean = () => true): number | null => {
    const c = shapes.map((_, i) => i).filter((i) => ok(shapes[i]!));
    if (!c.length) return null;
    const k = rng.chance(0.55) ? c[c.length - 1]! : rng.pick(c);
    used.add(k);
    return k;
  };
  const indices = (n: number, maxIdx: number): { shape: number[]; values: number[] } | null => {
    const rank = rng.between(0, 2);
    const shape = globalThis.Array.from({ length: rank }, () => rng.between(1, 3));
    if (sizeOf(shape) > maxIdx) return null;
    return { shape, values: globalThis.Array.from({ length: sizeOf(shape) }, () => rng.between(-n, n - 1)) };
  };
  const unary = (): Step => {
    const a = pick()!;
    const f = rng.pick(Object.keys(UNARY));
    return { text: `${f}(v${a})`, shape: shapes[a]!, run: (e) => UNARY[f]!(e[a]!) };
  };
  /** Two operands that broadcast together within maxSize (the second may be the first), and the result shape. */
  const broadcastPair = (): [number, number, number[]] => {
    const a = pick()!;
    const b =
      pick((s) => {
        const o = broadcastShape(shapes[a]!, s);
        return o !== null && sizeOf(o) <= maxSize;
      }) ?? a;
    return [a, b, broadcastShape(shapes[a]!, shapes[b]!)!];
  };
  const binary = (): Step => {
    const [a, b, out] = broadcastPair();
    const f = rng.pick(Object.keys(BINARY));
    return { text: `${f}(v${a}, v${b})`, shape: out, run: (e) => BINARY[f]!(e[a]!, e[b]!) };
  };
  const makers: (() => Step | null)[] = [
    unary,
    unary,
    binary,
    binary, // elementwise steps twice as likely as the others
    () => {
      const a = pick((s) => s.length >= 1);
      if (a === null) return null;
      const sa = shapes[a]!;
      const kind = rng.pick(["sum", "mean", "max", "min"]);
      const axes = sa.map((_, i) => i).filter(() => rng.chance(0.5));
      if (!axes.length) axes.push(rng.int(sa.length));
      const keep = rng.chance(0.3);
      const shape = keep ? sa.map((d, i) => (axes.includes(i) ? 1 : d)) : sa.filter((_, i) => !axes.includes(i));
      const f = (np as unknown as Record<string, (x: Array, ax: number[], o: { keepdims: boolean }) => Array>)[kind]!;
      return {
        text: `${kind}(v${a}, [${axes}]${keep ? ", keepdims" : ""})`,
        shape,
        run: (e) => f(e[a]!, axes, { keepdims: keep }),
      };
    },
    () => {
      const a = pick()!;
      const n = sizeOf(shapes[a]!);
      const shape = rng.chance(0.5) ? [n] : n % 2 === 0 ? [2, n / 2] : [n, 1];
      return { text: `reshape(v${a}, ${fmt(shape)})`, shape, run: (e) => np.reshape(e[a]!, shape) };
    },
    () => {
      const a = pick((s) => s.length >= 2);
      if (a === null) return null;
      const perm = shapes[a]!.map((_, i) => i).reverse();
      return {
        text: `transpose(v${a}, [${perm}])`,
        shape: perm.map((p) => shapes[a]![p]!),
        run: (e) => np.transpose(e[a]!, perm),
      };
    },
    () => {
      const a = pick((s) => s.length >= 1);
      if (a === null) return null;
      const sa = shapes[a]!,
        axis = rng.int(sa.length);
      const idx = indices(sa[axis]!, Math.floor(maxSize / (sizeOf(sa) / sa[axis]!)));
      if (!idx) return null;
      const shape = [...sa.slice(0, axis), ...idx.shape, ...sa.slice(axis + 1)];
      return {
        text: `take(v${a}, i32${fmt(idx.shape)}{${idx.values}}, ${axis})`,
        shape,
        run: (e) => np.take(e[a]!, i32c(idx.values, idx.shape), axis),
      };
    },
    () => {
      const a = pick((s) => s.length >= 1);
      if (a === null) return null;
      const sa = shapes[a]!,
        axis = rng.int(sa.length);
      const idx = indices(sa[axis]!, Math.floor(maxSize / (sizeOf(sa) / sa[axis]!)));
      if (!idx) return null;
      const src = globalThis.Array.from({ length: sizeOf(idx.shape) }, () => rng.int(sa[axis]!));
      return {
        text: `scatterAdd(v${a}, i32${fmt(idx.shape)}{${idx.values}}, take(v${a}, {${src}}, ${axis}), ${axis})`,
        shape: sa,
        run: (e) => np.scatterAdd(e[a]!, i32c(idx.values, idx.shape), np.take(e[a]!, i32c(src, idx.shape), axis), axis),
      };
    },
    () => {
      const a = pick((s) => s.length >= 1);
      if (a === null) return null;
      const sa = shapes[a]!,
        k = sa[sa.length - 1]!,
        n = rng.between(1, 4);
      const shape = [...sa.slice(0, -1), n];
      if (sizeOf(shape) > maxSize) return null;
      const w = globalThis.Array.from({ length: k * n }, () => Math.fround(rng.uniform(-1, 1)));
      return { text: `matmul(v${a}, W${fmt([k, n])})`, shape, run: (e) => np.matmul(e[a]!, f32c(w, [k, n])) };
    },
    () => {
      const a = pick((s) => s.length >= 1);
      if (a === null) return null;
      const axis = rng.int(shapes[a]!.length),
        reverse = rng.chance(0.3);
      return {
        text: `cumsum(v${a}, ${axis}${reverse ? ", reverse" : ""})`,
        shape: shapes[a]!,
        run: (e) => np.cumsum(e[a]!, axis, { reverse }),
      };
    },
    () => {
      const [a, b, out] = broadcastPair();
      return {
        text: `where(v${a} > v${b}, v${a}, v${b})`,
        shape: out,
        run: (e) => np.where(np.greater(e[a]!, e[b]!), e[a]!, e[b]!),
      };
    },
    () => {
      const a = pick((s) => s.length >= 1);
      if (a === null) return null;
      const sa = shapes[a]!,
        axis = rng.int(sa.length);
      const shape = sa.map((d, i) => (i === axis ? 2 * d : d));
      if (sizeOf(shape) > maxSize) return null;
      return {
        text: `concatenate([v${a}, sin(v${a})], ${axis})`,
        shape,
        run: (e) => np.concatenate([e[a]!, np.sin(e[a]!)], axis),
      };
    },
  ];
  for (let k = 0; k < nSteps; k++) {
    let st: Step | null = null;
    for (let t = 0; t < 4 && !st; t++) st = rng.pick(makers)();
    st ??= makers[0]!()!;
    lines.push(`v${shapes.length} = ${st.text}  : ${fmt(st.shape)}`);
    shapes.push(st.shape);
    steps.push(st);
  }
  // Unused values still reach the output, so every op matters to the result and its gradient.
  const last = shapes.length - 1;
  const dangling = shapes.map((_, i) => i).filter((i) => i !== last && !used.has(i));
  if (dangling.length) lines.push(`out = v${last} + 0.1 * (${dangling.map((i) => `sum(v${i})`).join(" + ")})`);
  const fn = (...xs: Array[]): Array => {
    const env: Array[] = [...xs];
    for (const s of steps) env.push(s.run(env));
    let out = env[last]!;
    for (const i of dangling) out = np.add(out, np.mul(0.1, np.sum(env[i]!)));
    return out;
  };
  return { inShapes, text: lines.join("\n"), fn };
}

const arbShape = fc
  .integer({ min: 0, max: 3 })
  .chain((r) => fc.array(fc.integer({ min: 1, max: 4 }), { minLength: r, maxLength: r }));
export const arbGpuProgram = (nInputs = 2, maxSteps = 7): fc.Arbitrary<GpuProgram> =>
  fc
    .record({
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      shapes: fc.array(arbShape, { minLength: nInputs, maxLength: nInputs }),
      nSteps: fc.integer({ min: 1, max: maxSteps }),
    })
    .map(({ seed, shapes, nSteps }) => buildGpuProgram(seed, shapes, nSteps));
