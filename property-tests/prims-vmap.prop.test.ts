/**
 * Batching rules of every primitive, driven by the same spec table: vmap(apply) over random
 * batch axes (some operands unbatched) equals stacking apply on each batch element
 * (JAX's _CheckBatching). Batch elements are permutations of the case's inputs, so they stay
 * in the primitive's domain.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Array } from "../src/core/array.js";
import { fromTyped } from "../src/core/create.js";
import * as lax from "../src/core/prims/index.js";
import { bind1 } from "../src/core/trace.js";
import { vmap } from "../src/index.js";
import { fmt, seedArb, shapeArb } from "./arbitraries.js";
import { f64, hostOf, makeRng, type Rng } from "./gradcheck.js";
import { specEntries, type PrimName } from "./prim-specs.js";
import type { HostTensor, PrimCase, PrimSpec } from "./spec-types.js";

const RUNS: Partial<Record<PrimName, number>> = {
  dot_general: 40,
  conv2d: 8,
  scan: 5,
  while: 5,
  cond: 5,
  jit_call: 5,
  checkpoint: 5,
  custom_vjp_call: 5,
};

const permuted = (t: HostTensor, rng: Rng): Float64Array => {
  const d = Float64Array.from(t.data);
  for (let i = d.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [d[i], d[j]] = [d[j]!, d[i]!];
  }
  return d;
};

/** Host data of `items` (each of `shape`) stacked along a new axis at `axis`. */
function stackAt(items: readonly Float64Array[], shape: readonly number[], axis: number): HostTensor {
  const B = items.length;
  const outShape = [...shape.slice(0, axis), B, ...shape.slice(axis)];
  const inner = shape.slice(axis).reduce((a, b) => a * b, 1);
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const data = new Float64Array(B * outer * inner);
  for (let o = 0; o < outer; o++)
    for (let b = 0; b < B; b++)
      for (let k = 0; k < inner; k++) data[(o * B + b) * inner + k] = items[b]![o * inner + k]!;
  return { shape: outShape, data };
}

function checkBatching(c: PrimCase, B: number, axisChoice: readonly number[]): void {
  const rng = makeRng(c.seed);
  // Batch axis per input (null = unbatched); if none is batched, input 0 is, so the batch size is defined.
  const dims: (number | null)[] = c.inputs.map((t, i) => {
    const r = axisChoice[i]! % (t.shape.length + 2);
    return r === t.shape.length + 1 ? null : r;
  });
  if (!dims.some((d) => d !== null)) dims[0] = 0;
  const perBatch = globalThis.Array.from({ length: B }, (_, b) =>
    c.inputs.map((t) => (b === 0 ? t.data : permuted(t, rng))),
  );
  const xsFor = (b: number) => c.inputs.map((t, i) => f64(dims[i] === null ? t.data : perBatch[b]![i]!, t.shape));
  const loop = globalThis.Array.from({ length: B }, (_, b) => c.apply(...xsFor(b)));
  const batchedArgs = c.inputs.map((t, i) => {
    if (dims[i] === null) return f64(t.data, t.shape);
    const s = stackAt(
      perBatch.map((p) => p[i]!),
      t.shape,
      dims[i]!,
    );
    return f64(s.data, s.shape);
  });
  const out = vmap((...xs: Array[]) => c.apply(...xs), { inAxes: dims })(...batchedArgs) as Array;
  expect(out.shape).toEqual([B, ...loop[0]!.shape]);
  expect(out.dtype).toBe(loop[0]!.dtype);
  const got = hostOf(out);
  const want = Float64Array.from(loop.flatMap((y) => [...hostOf(y)]));
  got.forEach((g, k) => {
    const w = want[k]!;
    if (Number.isNaN(w) ? !Number.isNaN(g) : !(Math.abs(g - w) <= 1e-12 * (1 + Math.abs(w)))) {
      throw new Error(
        `${c.label}, batch ${B}, inAxes ${JSON.stringify(dims)}: element ${k} is ${g}, per-slice loop gives ${w}`,
      );
    }
  });
}

describe.each(specEntries().filter(([, s]) => s.kind !== "covered-elsewhere"))("%s", (name, spec) => {
  const s = spec as Exclude<PrimSpec, { kind: "covered-elsewhere" }>;
  it("vmap equals a loop over the batch", () => {
    const arb = fc.tuple(s.cases, fc.integer({ min: 1, max: 3 }), fc.array(fc.nat(), { minLength: 4, maxLength: 4 }));
    fc.assert(
      fc.property(arb, ([c, B, axes]) => checkBatching(c, B, axes)),
      { numRuns: RUNS[name] ?? 15 },
    );
  });
});

/** Integer operands (indices, start positions) are closure constants in the spec cases; batch them here. */
describe("batched integer operands", () => {
  const i32 = (data: ArrayLike<number>, shape: readonly number[]): Array =>
    fromTyped(Int32Array.from(data), shape, "int32");
  const sizeOf = (s: readonly number[]) => s.reduce((a, b) => a * b, 1);
  /** vmap(f)(batched) against stacking f over the batch, exactly. */
  function expectVmapMatchesLoop(
    f: (...xs: Array[]) => Array,
    perBatch: Array[][],
    batched: Array[],
    inAxes: (number | null)[],
    label: string,
  ): void {
    const out = vmap(f, { inAxes })(...batched) as Array;
    const want = perBatch.flatMap((xs) => [...hostOf(f(...xs))]);
    expect(out.shape[0], label).toBe(perBatch.length);
    expect([...hostOf(out)], label).toEqual(want);
  }
  const gatherArb = shapeArb({ minRank: 1, maxDim: 4 }).chain((s) =>
    fc.tuple(
      fc.constant(s),
      fc.integer({ min: 0, max: s.length - 1 }),
      shapeArb({ maxRank: 2 }),
      fc.integer({ min: 1, max: 3 }),
      fc.boolean(),
      seedArb,
    ),
  );

  it("gather and scatter_add with batched indices (operand batched or not)", () => {
    fc.assert(
      fc.property(gatherArb, ([s, axis, is, B, batchX, seed]) => {
        const rng = makeRng(seed);
        const n = s[axis]!;
        const idx = globalThis.Array.from({ length: B }, () =>
          Float64Array.from({ length: sizeOf(is) }, () => Math.floor(rng() * 2 * n) - n),
        );
        const xs = globalThis.Array.from({ length: B }, () =>
          Float64Array.from({ length: sizeOf(s) }, () => rng() * 4 - 2),
        );
        const us = [...s.slice(0, axis), ...is, ...s.slice(axis + 1)];
        const u = globalThis.Array.from({ length: B }, () =>
          Float64Array.from({ length: sizeOf(us) }, () => rng() * 4 - 2),
        );
        const x0 = f64(xs[0]!, s);
        const xArg = batchX ? stackAt(xs, s, 0) : null;
        const label = `x${fmt(s)} axis=${axis} idx${fmt(is)} B=${B} batchX=${batchX}`;
        const idxB = stackAt(idx, is, 0);
        expectVmapMatchesLoop(
          (x, i) => bind1(lax.gatherP, [x, i], { axis }),
          idx.map((d, b) => [batchX ? f64(xs[b]!, s) : x0, i32(d, is)]),
          [xArg ? f64(xArg.data, xArg.shape) : x0, i32(idxB.data, idxB.shape)],
          [batchX ? 0 : null, 0],
          `gather ${label}`,
        );
        const uB = stackAt(u, us, 0);
        expectVmapMatchesLoop(
          (t, i, v) => bind1(lax.scatterAddP, [t, i, v], { axis }),
          idx.map((d, b) => [batchX ? f64(xs[b]!, s) : x0, i32(d, is), f64(u[b]!, us)]),
          [xArg ? f64(xArg.data, xArg.shape) : x0, i32(idxB.data, idxB.shape), f64(uB.data, uB.shape)],
          [batchX ? 0 : null, 0, 0],
          `scatter_add ${label}`,
        );
      }),
      { numRuns: 30 },
    );
  });

  it("dynamic_slice and dynamic_update_slice with batched start indices", () => {
    const arb = shapeArb({ minRank: 1, maxDim: 4 }).chain((s) =>
      fc.tuple(
        fc.constant(s),
        fc.tuple(...s.map((d) => fc.integer({ min: 1, max: d }))),
        fc.integer({ min: 1, max: 3 }),
        seedArb,
      ),
    );
    fc.assert(
      fc.property(arb, ([s, sizes, B, seed]) => {
        const rng = makeRng(seed);
        const starts = globalThis.Array.from({ length: B }, () => s.map((d) => Math.floor(rng() * (d + 4)) - 2));
        const x = f64(
          Float64Array.from({ length: sizeOf(s) }, () => rng()),
          s,
        );
        const u = f64(
          Float64Array.from({ length: sizeOf(sizes) }, () => rng() + 2),
          sizes,
        );
        const startArgs = s.map((_, d) =>
          i32(
            starts.map((st) => st[d]!),
            [B],
          ),
        );
        const label = `x${fmt(s)} sizes=${fmt(sizes)} starts=${JSON.stringify(starts)}`;
        expectVmapMatchesLoop(
          (y, ...st) => bind1(lax.dynamicSliceP, [y, ...st], { sizes }),
          starts.map((st) => [x, ...st.map((v) => i32([v], []))]),
          [x, ...startArgs],
          [null, ...s.map(() => 0)],
          `dynamic_slice ${label}`,
        );
        expectVmapMatchesLoop(
          (y, v, ...st) => bind1(lax.dynamicUpdateSliceP, [y, v, ...st], {}),
          starts.map((st) => [x, u, ...st.map((v) => i32([v], []))]),
          [x, u, ...startArgs],
          [null, null, ...s.map(() => 0)],
          `dynamic_update_slice ${label}`,
        );
      }),
      { numRuns: 30 },
    );
  });
});
