/** fast-check generators for small shapes, axis sets and float64 values on a chosen domain. */
import fc from "fast-check";
import { makeRng, type Rng } from "./gradcheck.js";
import type { HostTensor, PrimCase } from "./spec-types.js";
import type { Array } from "../src/core/array.js";

export const sizeOfShape = (s: readonly number[]): number => s.reduce((a, b) => a * b, 1);

/** Where values are drawn; every domain keeps ≥ 1e-2 away from kinks, far beyond the FD step (1e-5). */
export type Domain =
  | { readonly kind: "uniform"; readonly lo: number; readonly hi: number }
  /** |x| ∈ [lo, hi] with a random sign. */
  | { readonly kind: "away-from-zero"; readonly lo: number; readonly hi: number }
  /** x ∈ [lo, hi] with frac(x − offset) ∈ [margin, 1 − margin] (floor/ceil at offset 0, round at 0.5). */
  | {
      readonly kind: "off-grid";
      readonly lo: number;
      readonly hi: number;
      readonly offset: number;
      readonly margin: number;
    }
  /** Pairwise distinct values, gaps ≥ (hi − lo)/(2n) (no ties for max/min). */
  | { readonly kind: "distinct"; readonly lo: number; readonly hi: number };

export function sample(domain: Domain, n: number, rng: Rng): Float64Array {
  const u = () => rng();
  switch (domain.kind) {
    case "uniform":
      return Float64Array.from({ length: n }, () => domain.lo + (domain.hi - domain.lo) * u());
    case "away-from-zero":
      return Float64Array.from({ length: n }, () => (u() < 0.5 ? -1 : 1) * (domain.lo + (domain.hi - domain.lo) * u()));
    case "off-grid":
      return Float64Array.from({ length: n }, () => {
        const k = Math.floor(domain.lo + (domain.hi - domain.lo) * u());
        return k + domain.offset + domain.margin + (1 - 2 * domain.margin) * u();
      });
    case "distinct": {
      const step = (domain.hi - domain.lo) / Math.max(n, 1);
      const slots = Float64Array.from({ length: n }, (_, i) => domain.lo + step * (i + 0.25 + 0.5 * u()));
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(u() * (i + 1));
        [slots[i], slots[j]] = [slots[j]!, slots[i]!];
      }
      return slots;
    }
  }
}

/** Draw several tensors jointly (so "distinct" holds across operands, e.g. for binary max). */
export function tensors(shapes: readonly (readonly number[])[], domain: Domain, rng: Rng): HostTensor[] {
  const all = sample(
    domain,
    shapes.reduce((a, s) => a + sizeOfShape(s), 0),
    rng,
  );
  let off = 0;
  return shapes.map((s) => {
    const n = sizeOfShape(s);
    const t = { shape: [...s], data: all.slice(off, off + n) };
    off += n;
    return t;
  });
}

export const shapeArb = (opts: { minRank?: number; maxRank?: number; minDim?: number; maxDim?: number } = {}) =>
  fc.array(fc.integer({ min: opts.minDim ?? 1, max: opts.maxDim ?? 3 }), {
    minLength: opts.minRank ?? 0,
    maxLength: opts.maxRank ?? 3,
  });

/** Shapes of `n` operands that broadcast together (numpy rules): suffixes of a base shape with some dims set to 1. */
export const broadcastShapesArb = (n: number, maxRank = 3) =>
  shapeArb({ maxRank }).chain((base) =>
    fc.tuple(
      ...globalThis.Array.from({ length: n }, () =>
        fc
          .tuple(
            fc.integer({ min: 0, max: base.length }),
            fc.array(fc.boolean(), { minLength: base.length, maxLength: base.length }),
          )
          .map(([drop, ones]) => base.slice(drop).map((d, i) => (ones[i + drop] ? 1 : d))),
      ),
    ),
  );

/** A subset of 0..rank-1 in random order. */
export const axesArb = (rank: number, minSize = 0) =>
  fc.shuffledSubarray(
    globalThis.Array.from({ length: rank }, (_, i) => i),
    { minLength: Math.min(minSize, rank) },
  );
/** A permutation of 0..rank-1. */
export const permArb = (rank: number) =>
  fc.shuffledSubarray(
    globalThis.Array.from({ length: rank }, (_, i) => i),
    { minLength: rank, maxLength: rank },
  );

export const seedArb = fc.integer({ min: 0, max: 0x7fffffff });

/** Builds a PrimCase arbitrary from params: `build` draws the inputs from an Rng seeded by fast-check. */
export function caseArb<P>(
  params: fc.Arbitrary<P>,
  build: (p: P, rng: Rng) => { label: string; inputs: HostTensor[]; apply: (...xs: Array[]) => Array },
): fc.Arbitrary<PrimCase> {
  return fc.tuple(params, seedArb).map(([p, seed]) => {
    const rng = makeRng(seed);
    const c = build(p, rng);
    return { ...c, seed: seed ^ 0x5bd1e995 };
  });
}

export const fmt = (s: readonly number[]): string => `[${s.join(",")}]`;

/**
 * A random triangle soup in NDC: F faces' screen vertices [F·6], depths [F·3] and corner attributes [F·3·D] in [0, 1).
 */
export interface Soup {
  readonly xy: number[];
  readonly z: number[];
  readonly attrs: number[];
  readonly F: number;
  readonly W: number;
  readonly H: number;
}

/**
 * Soups of mostly on-screen triangles (radius in [radius[0], radius[0] + radius[1]) about a centre
 * in [−0.8, 0.8]²), plus degenerate (a repeated vertex, 8%), off-screen (6%) and partly
 * behind-the-camera (one vertex at z = −0.5, 6%) faces, for the rasterizer tests.
 */
export function soupArb(o: {
  readonly faces: number;
  readonly channels: number;
  readonly width: fc.Arbitrary<number>;
  readonly height: fc.Arbitrary<number>;
  readonly radius: readonly [number, number];
}): fc.Arbitrary<Soup> {
  return fc
    .record({
      F: fc.integer({ min: 1, max: o.faces }),
      W: o.width,
      H: o.height,
      seed: fc.integer({ min: 0, max: 2 ** 30 }),
    })
    .map(({ F, W, H, seed }) => {
      let s = seed >>> 0;
      const u = () => {
        s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
        return s / 2 ** 32;
      };
      const xy: number[] = [],
        z: number[] = [],
        attrs: number[] = [];
      for (let f = 0; f < F; f++) {
        const kind = u();
        const cx = -0.8 + 1.6 * u(),
          cy = -0.8 + 1.6 * u(),
          r = o.radius[0] + o.radius[1] * u();
        const verts = [0, 1, 2].map(() => [cx + r * (2 * u() - 1), cy + r * (2 * u() - 1)]);
        if (kind < 0.08) verts[2] = [...verts[1]!];
        if (kind >= 0.08 && kind < 0.14) for (const v of verts) v[0] += 5;
        for (const v of verts) xy.push(v[0]!, v[1]!);
        for (let k = 0; k < 3; k++) z.push(kind >= 0.14 && kind < 0.2 && k === 1 ? -0.5 : 1.5 + 6 * u());
        for (let k = 0; k < 3 * o.channels; k++) attrs.push(u());
      }
      return { xy, z, attrs, F, W, H };
    });
}
