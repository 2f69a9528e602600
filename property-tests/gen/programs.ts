/**
 * Random programs over the np API for property tests: expression DAGs of elementwise
 * unary/binary ops (with numpy broadcasting), reductions over random axes, reshape,
 * transpose, take (gather), scatterAdd, matmul, cumsum, where and concatenate, all float64.
 *
 * A program is built deterministically from (seed, input shapes, step count), so fast-check
 * shrinks it by dropping trailing steps (same seed ⇒ same prefix) and its text is printed
 * on failure. `fn` is an ordinary function of Arrays, so it can be run eagerly (the
 * reference: loops, finite differences) or under any transform.
 */
import fc from "fast-check";
import { np, nn, type Array } from "../../src/index.js";
import { makeRng, type Rng } from "../../src/core/host-rng.js";
import { broadcastShape } from "../loop-refs.js";

export type Shape = readonly number[];

export interface ProgramOptions {
  /** Number of float64 inputs (default 1). */
  readonly nInputs?: number;
  /** Fixed input shapes; random (rank 0..maxRank, dims 1..4) when absent. */
  readonly inShapes?: readonly Shape[];
  /** Maximum number of operations (default 6). */
  readonly maxSteps?: number;
  /** Only infinitely differentiable ops (no abs/max/min/where): for nested finite differences. */
  readonly smooth?: boolean;
  /**
   * Allow gather/scatter indices computed from the inputs (argmax of an input, mod the axis size).
   * Under vmap those indices are batched; they are piecewise constant, so keep this off for FD tests.
   */
  readonly dataIndices?: boolean;
  /** Largest number of elements any intermediate may have (default 48). */
  readonly maxSize?: number;
  readonly maxRank?: number;
}

export interface Program {
  readonly inShapes: readonly Shape[];
  readonly outShape: Shape;
  /** One line per value, e.g. `v3 = take(v1, axis=0, idx=i32[2]{1,-1})`. */
  readonly text: string;
  /** The program as a function of its inputs (float64 Arrays of `inShapes`). */
  readonly fn: (...xs: Array[]) => Array;
  readonly seed: number;
  readonly nSteps: number;
}

interface Step {
  readonly text: string;
  readonly shape: number[];
  readonly run: (env: readonly Array[]) => Array;
}

const sizeOf = (s: Shape): number => s.reduce((a, b) => a * b, 1);
const fmt = (s: Shape): string => `[${s.join(",")}]`;
const f64 = (data: readonly number[], shape: Shape): Array =>
  np.array(Float64Array.from(data), { dtype: "float64" }).reshape([...shape]);
const i32 = (data: readonly number[], shape: Shape): Array =>
  np.array(Int32Array.from(data), { dtype: "int32" }).reshape([...shape]);

const UNARY_SMOOTH: Record<string, (x: Array) => Array> = {
  sin: np.sin,
  cos: np.cos,
  tanh: np.tanh,
  neg: np.neg,
  square: np.square,
  sigmoid: nn.sigmoid,
  expTanh: (x) => np.exp(np.tanh(x)),
  log1pSq: (x) => np.log1p(np.square(x)),
  affine: (x) => x.mul(1.7).sub(0.3),
};
const UNARY_KINKED: Record<string, (x: Array) => Array> = { abs: np.abs, relu: nn.relu };
const BINARY_SMOOTH: Record<string, (a: Array, b: Array) => Array> = {
  add: np.add,
  sub: np.sub,
  mul: np.mul,
  safeDiv: (a, b) => np.div(a, np.add(1, np.square(b))),
};
const BINARY_KINKED: Record<string, (a: Array, b: Array) => Array> = { maximum: np.maximum, minimum: np.minimum };

/** A random shape with the given size, as 1..maxRank factors (a reshape target). */
function factorShape(size: number, rng: Rng, maxRank: number): number[] {
  const primes: number[] = [];
  let n = size;
  for (let p = 2; n > 1; p++)
    while (n % p === 0) {
      primes.push(p);
      n /= p;
    }
  const rank = rng.between(1, Math.max(1, maxRank));
  const dims = new globalThis.Array<number>(rank).fill(1);
  for (const p of rng.shuffle(primes)) dims[rng.int(rank)]! *= p;
  return dims;
}

/** Builds one program; throws never (falls back to a unary op when an op does not fit). */
export function buildProgram(
  seed: number,
  inShapes: readonly Shape[],
  nSteps: number,
  opts: ProgramOptions = {},
): Program {
  const rng = makeRng(seed);
  const maxSize = opts.maxSize ?? 48;
  const maxRank = opts.maxRank ?? 3;
  const smooth = opts.smooth ?? false;
  const unary = smooth ? UNARY_SMOOTH : { ...UNARY_SMOOTH, ...UNARY_KINKED };
  const binary = smooth ? BINARY_SMOOTH : { ...BINARY_SMOOTH, ...BINARY_KINKED };
  const shapes: number[][] = inShapes.map((s) => [...s]);
  const lines = inShapes.map((s, i) => `v${i} = input${i} f64${fmt(s)}`);
  const steps: Step[] = [];
  const name = (i: number) => `v${i}`;

  /** Mostly the newest value (deep chains), sometimes any earlier one (DAG sharing). */
  const used = new Set<number>();
  let pending: number[] = [];
  const pickOperand = (ok: (s: Shape) => boolean = () => true): number | null => {
    const cands = shapes.map((_, i) => i).filter((i) => ok(shapes[i]!));
    if (!cands.length) return null;
    const newest = cands[cands.length - 1]!;
    const k = rng.chance(0.55) ? newest : rng.pick(cands);
    pending.push(k);
    return k;
  };

  /** Integer indices of `shape` into an axis of length n: constants (negative ones too) or argmax of an input. */
  const indexSource = (
    n: number,
    maxIdxSize: number,
  ): { text: string; shape: number[]; make: (env: readonly Array[]) => Array } | null => {
    if (opts.dataIndices && rng.chance(0.5)) {
      const cands = inShapes.map((_, i) => i).filter((i) => inShapes[i]!.length >= 1);
      if (cands.length) {
        const k = rng.pick(cands);
        const axis = rng.int(inShapes[k]!.length);
        const shape = inShapes[k]!.filter((_, d) => d !== axis);
        if (sizeOf(shape) <= maxIdxSize) {
          return {
            text: `mod(argmax(v${k}, ${axis}), ${n})`,
            shape,
            make: (env) => np.mod(np.argmax(env[k]!, axis), n),
          };
        }
      }
    }
    const rank = rng.between(0, 2);
    const shape = globalThis.Array.from({ length: rank }, () => rng.between(1, 3));
    if (sizeOf(shape) > maxIdxSize) return null;
    const values = globalThis.Array.from({ length: sizeOf(shape) }, () => rng.between(-n, n - 1));
    return { text: `i32${fmt(shape)}{${values.join(",")}}`, shape, make: () => i32(values, shape) };
  };

  /**
   * Operand b for a binary op with a: a broadcast-compatible pool value, optionally reduced to a broadcastable shape.
   */
  const partner = (a: number): { text: string; shape: number[]; make: (env: readonly Array[]) => Array } => {
    const sa = shapes[a]!;
    const b = pickOperand((s) => broadcastShape(sa, s) !== null && sizeOf(broadcastShape(sa, s)!) <= maxSize) ?? a;
    const sb = shapes[b]!;
    if (sb.length === 0 || rng.chance(0.5)) return { text: name(b), shape: sb, make: (env) => env[b]! };
    if (rng.chance(0.5)) {
      // keepdims reduction: some axes become 1 (broadcast back against a)
      const axes = sb.map((_, i) => i).filter(() => rng.chance(0.5));
      return {
        text: `sum(${name(b)}, [${axes}], keepdims)`,
        shape: sb.map((d, i) => (axes.includes(i) ? 1 : d)),
        make: (env) => np.sum(env[b]!, axes, { keepdims: true }),
      };
    }
    // reduce leading axes away: a suffix of b's shape, right-aligned by broadcasting
    const k = rng.between(1, sb.length);
    const axes = globalThis.Array.from({ length: k }, (_, i) => i);
    return { text: `mean(${name(b)}, [${axes}])`, shape: sb.slice(k), make: (env) => np.mean(env[b]!, axes) };
  };

  const makers: [number, () => Step | null][] = [
    [
      3,
      () => {
        const a = pickOperand()!;
        const fname = rng.pick(Object.keys(unary));
        const f = unary[fname]!;
        return { text: `${fname}(${name(a)})`, shape: shapes[a]!, run: (env) => f(env[a]!) };
      },
    ],
    [
      3,
      () => {
        const a = pickOperand()!;
        const p = partner(a);
        const out = broadcastShape(shapes[a]!, p.shape);
        if (!out || sizeOf(out) > maxSize) return null;
        const fname = rng.pick(Object.keys(binary));
        const f = binary[fname]!;
        const swap = rng.chance(0.3);
        return {
          text: swap ? `${fname}(${p.text}, ${name(a)})` : `${fname}(${name(a)}, ${p.text})`,
          shape: out,
          run: (env) => (swap ? f(p.make(env), env[a]!) : f(env[a]!, p.make(env))),
        };
      },
    ],
    [
      2,
      () => {
        const a = pickOperand((s) => s.length >= 1);
        if (a === null) return null;
        const sa = shapes[a]!;
        const kinds = smooth ? ["sum", "mean"] : ["sum", "mean", "max", "min"];
        const kind = rng.pick(kinds);
        const axes = sa.map((_, i) => i).filter(() => rng.chance(0.5));
        if (!axes.length) axes.push(rng.int(sa.length));
        const keepdims = rng.chance(0.3);
        // negative axes exercise normalisation
        const given = axes.map((ax) => (rng.chance(0.3) ? ax - sa.length : ax));
        const shape = keepdims ? sa.map((d, i) => (axes.includes(i) ? 1 : d)) : sa.filter((_, i) => !axes.includes(i));
        const f = (np as unknown as Record<string, (x: Array, ax: number[], o: { keepdims: boolean }) => Array>)[kind]!;
        return {
          text: `${kind}(${name(a)}, [${given}]${keepdims ? ", keepdims" : ""})`,
          shape,
          run: (env) => f(env[a]!, given, { keepdims }),
        };
      },
    ],
    [
      1,
      () => {
        const a = pickOperand()!;
        const shape = factorShape(sizeOf(shapes[a]!), rng, maxRank);
        return { text: `reshape(${name(a)}, ${fmt(shape)})`, shape, run: (env) => np.reshape(env[a]!, shape) };
      },
    ],
    [
      1,
      () => {
        const a = pickOperand((s) => s.length >= 2);
        if (a === null) return null;
        const perm = rng.shuffle(shapes[a]!.map((_, i) => i));
        return {
          text: `transpose(${name(a)}, [${perm}])`,
          shape: perm.map((p) => shapes[a]![p]!),
          run: (env) => np.transpose(env[a]!, perm),
        };
      },
    ],
    [
      1.5,
      () => {
        const a = pickOperand((s) => s.length >= 1);
        if (a === null) return null;
        const sa = shapes[a]!;
        const axis = rng.int(sa.length);
        const rest = sizeOf(sa) / sa[axis]!;
        const idx = indexSource(sa[axis]!, Math.floor(maxSize / rest));
        if (!idx) return null;
        const shape = [...sa.slice(0, axis), ...idx.shape, ...sa.slice(axis + 1)];
        const given = rng.chance(0.3) ? axis - sa.length : axis;
        return {
          text: `take(${name(a)}, ${idx.text}, axis=${given})`,
          shape,
          run: (env) => np.take(env[a]!, idx.make(env), given),
        };
      },
    ],
    [
      1,
      () => {
        const a = pickOperand((s) => s.length >= 1);
        if (a === null) return null;
        const sa = shapes[a]!;
        const axis = rng.int(sa.length);
        const rest = sizeOf(sa) / sa[axis]!;
        const idx = indexSource(sa[axis]!, Math.floor(maxSize / rest));
        if (!idx) return null;
        // updates = take(src, other indices of the same shape): any values of the right shape
        const src = pickOperand((s) => s.length === sa.length && s.every((d, i) => d === sa[i])) ?? a;
        const srcIdx = globalThis.Array.from({ length: sizeOf(idx.shape) }, () => rng.int(sa[axis]!));
        return {
          text:
            `scatterAdd(${name(a)}, ${idx.text}, ` +
            `take(${name(src)}, i32${fmt(idx.shape)}{${srcIdx}}, ${axis}), axis=${axis})`,
          shape: sa,
          run: (env) => np.scatterAdd(env[a]!, idx.make(env), np.take(env[src]!, i32(srcIdx, idx.shape), axis), axis),
        };
      },
    ],
    [
      1.5,
      () => {
        const a = pickOperand((s) => s.length >= 1);
        if (a === null) return null;
        const sa = shapes[a]!;
        const variant = rng.pick(sa.length >= 2 ? ["aW", "Wa", "aaT"] : ["aW", "Wa"]);
        if (variant === "aW") {
          const k = sa[sa.length - 1]!,
            n = rng.between(1, 4);
          const w = globalThis.Array.from({ length: k * n }, () => rng.uniform(-1, 1));
          const shape = [...sa.slice(0, -1), n];
          if (sizeOf(shape) > maxSize) return null;
          return {
            text: `matmul(${name(a)}, W${fmt([k, n])})`,
            shape,
            run: (env) => np.matmul(env[a]!, f64(w, [k, n])),
          };
        }
        if (variant === "Wa") {
          const m = sa.length >= 2 ? sa[sa.length - 2]! : sa[0]!,
            p = rng.between(1, 4);
          const w = globalThis.Array.from({ length: p * m }, () => rng.uniform(-1, 1));
          const shape = sa.length >= 2 ? [...sa.slice(0, -2), p, sa[sa.length - 1]!] : [p];
          if (sizeOf(shape) > maxSize) return null;
          return {
            text: `matmul(W${fmt([p, m])}, ${name(a)})`,
            shape,
            run: (env) => np.matmul(f64(w, [p, m]), env[a]!),
          };
        }
        const b = pickOperand((s) => s.length === sa.length && s.every((d, i) => d === sa[i])) ?? a;
        const m = sa[sa.length - 2]!;
        const shape = [...sa.slice(0, -2), m, m];
        if (sizeOf(shape) > maxSize) return null;
        return {
          text: `matmul(${name(a)}, swapaxes(${name(b)}, -1, -2))`,
          shape,
          run: (env) => np.matmul(env[a]!, np.swapaxes(env[b]!, -1, -2)),
        };
      },
    ],
    [
      1,
      () => {
        const a = pickOperand((s) => s.length >= 1);
        if (a === null) return null;
        const axis = rng.int(shapes[a]!.length) - (rng.chance(0.3) ? shapes[a]!.length : 0);
        const reverse = rng.chance(0.3);
        return {
          text: `cumsum(${name(a)}, ${axis}${reverse ? ", reverse" : ""})`,
          shape: shapes[a]!,
          run: (env) => np.cumsum(env[a]!, axis, { reverse }),
        };
      },
    ],
    [
      smooth ? 0 : 1,
      () => {
        const a = pickOperand()!;
        const p = partner(a);
        const c = partner(a);
        const out = broadcastShape(broadcastShape(shapes[a]!, p.shape) ?? [], c.shape);
        if (!out || !broadcastShape(shapes[a]!, p.shape) || sizeOf(out) > maxSize) return null;
        return {
          text: `where(greater(${name(a)}, ${p.text}), ${name(a)}, ${c.text})`,
          shape: out,
          run: (env) => {
            const x = env[a]!;
            return np.where(np.greater(x, p.make(env)), x, c.make(env));
          },
        };
      },
    ],
    [
      0.5,
      () => {
        const a = pickOperand((s) => s.length >= 1);
        if (a === null) return null;
        const sa = shapes[a]!;
        const b = pickOperand((s) => s.length === sa.length && s.every((d, i) => d === sa[i])) ?? a;
        const axis = rng.int(sa.length);
        const shape = sa.map((d, i) => (i === axis ? 2 * d : d));
        if (sizeOf(shape) > maxSize) return null;
        return {
          text: `concatenate([${name(a)}, ${name(b)}], ${axis})`,
          shape,
          run: (env) => np.concatenate([env[a]!, env[b]!], axis),
        };
      },
    ],
  ];
  const total = makers.reduce((s, [w]) => s + w, 0);
  const pickMaker = () => {
    let r = rng.uniform(0, total);
    for (const [w, m] of makers) {
      if ((r -= w) < 0) return m;
    }
    return makers[0]![1];
  };

  for (let k = 0; k < Math.max(1, nSteps); k++) {
    let step: Step | null = null;
    for (let tries = 0; tries < 4 && !step; tries++) {
      pending = [];
      step = pickMaker()();
    }
    if (!step) {
      pending = [];
      step = makers[0]![1]()!;
    }
    pending.forEach((i) => used.add(i));
    lines.push(`v${shapes.length} = ${step.text}  : ${fmt(step.shape)}`);
    shapes.push(step.shape);
    steps.push(step);
  }
  // Values no later step reads (dead branches of the DAG, unused inputs) still reach the output:
  // out = last + 0.1 * Σ sum(dangling), so every op and input matters to the result and its gradient.
  const last = shapes.length - 1;
  const dangling = shapes.map((_, i) => i).filter((i) => i !== last && !used.has(i));
  if (dangling.length) lines.push(`out = v${last} + 0.1 * (${dangling.map((i) => `sum(v${i})`).join(" + ")})`);
  const nIn = inShapes.length;
  const fn = (...xs: Array[]): Array => {
    if (xs.length !== nIn) throw new Error(`program expects ${nIn} inputs, got ${xs.length}`);
    const env: Array[] = [...xs];
    for (const s of steps) env.push(s.run(env));
    let out = env[last]!;
    for (const i of dangling) out = np.add(out, np.mul(0.1, np.sum(env[i]!)));
    return out;
  };
  return { inShapes, outShape: shapes[last]!, text: lines.join("\n"), fn, seed, nSteps };
}

/** A random shape: rank 0..maxRank (rank 0 rarely), dims 1..4. */
export const arbShape = (maxRank = 3, minRank = 0): fc.Arbitrary<number[]> =>
  fc
    .integer({ min: minRank, max: maxRank })
    .chain((r) => fc.array(fc.integer({ min: 1, max: 4 }), { minLength: r, maxLength: r }));

/** fast-check arbitrary of programs; shrinking shortens the program. */
export function arbProgram(opts: ProgramOptions = {}): fc.Arbitrary<Program> {
  const nIn = opts.inShapes?.length ?? opts.nInputs ?? 1;
  const shapesArb = opts.inShapes
    ? fc.constant(opts.inShapes.map((s) => [...s]))
    : fc.array(arbShape(opts.maxRank ?? 3, 0), { minLength: nIn, maxLength: nIn });
  return fc
    .record({
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      shapes: shapesArb,
      nSteps: fc.integer({ min: 1, max: opts.maxSteps ?? 6 }),
    })
    .map(
      ({ seed, shapes, nSteps }) => buildProgram(seed, shapes, nSteps, opts),
      (p) => {
        // Programs are not unmapped back for shrinking from examples; fast-check only needs this for `examples`.
        const prog = p as Program;
        return { seed: prog.seed, shapes: prog.inShapes.map((s) => [...s]), nSteps: prog.nSteps };
      },
    );
}

/** Deterministic float64 data in [lo, hi) for a shape (inputs of programs). */
export function randomArray(seed: number, shape: Shape, lo = -1.5, hi = 1.5): Array {
  const rng = makeRng(seed ^ 0x9e3779b9);
  return f64(
    globalThis.Array.from({ length: sizeOf(shape) }, () => rng.uniform(lo, hi)),
    shape,
  );
}
export { f64, i32 };
