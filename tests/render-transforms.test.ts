/**
 * Transforms over the renderers: vmap over batches of cameras and meshes equals separate
 * renders; jit equals eager (forward, and gradients); culling/binning never changes results
 * (tiled + bucketed vs one dense tile, values and gradients), fixed capacities under jit, and
 * overflow is reported rather than silent in eager mode.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { grad, init, jit, np, vmap, type Array } from "../src/index.js";
import * as R from "../src/render/index.js";
import { setCpuCompile } from "../src/core/run-ir.js";
import { f64, maxAbsDiff, pseudoRandom, smallMesh } from "./render-helpers.js";

beforeAll(async () => {
  await init({ backend: "cpu" });
});

const sphere = (sub = 1): R.Mesh =>
  R.meshFromData(R.icosphereData(sub, 0.8), { dtype: "float64", colors: [0.9, 0.4, 0.2] });
const W = 16;
const OPTS: Record<"softras" | "dibr", R.RenderOptions> = {
  softras: { width: W, softras: { sigma: 2e-3, gamma: 1e-3 } },
  dibr: { width: W, rasterizer: "dibr", dibr: { sigmaInv: 2000, boxLen: 0.1 } },
};
const lights = (): R.Lights => ({ ambient: 0.3, directional: [{ direction: [0.4, 1, -0.5], color: 0.7 }] });

describe("vmap", () => {
  for (const ras of ["softras", "dibr"] as const) {
    it(`${ras}: a batch of cameras equals separate renders`, () => {
      const mesh = sphere();
      const eyes = f64([
        [0, 0.5, -3],
        [0.8, 0.2, -2.6],
        [-1.2, 1.0, -2.4],
      ]);
      const f = (eye: Array) =>
        R.render(mesh, R.perspectiveCamera({ eye, dtype: "float64" }), lights(), undefined, OPTS[ras]);
      const batched = vmap(f)(eyes);
      expect(batched.shape).toEqual([3, W, W, 4]);
      for (let i = 0; i < 3; i++)
        expect(maxAbsDiff(np.take(batched, i, 0), f(np.take(eyes, i, 0)))).toBeLessThan(1e-12);
    });
    it(`${ras}: a batch of meshes (vertex positions) equals separate renders, and per-example gradients match`, () => {
      const base = sphere();
      const offs = f64([
        [0, 0, 0],
        [0.3, -0.2, 0.1],
        [-0.25, 0.15, 0.4],
      ]);
      const verts = np.add(np.expandDims(base.vertices, 0), np.expandDims(offs, 1)); // [3, V, 3]
      const cam = R.perspectiveCamera({ dtype: "float64" });
      const f = (v: Array) => R.render({ ...base, vertices: v }, cam, lights(), undefined, OPTS[ras]);
      const batched = vmap(f)(verts);
      for (let i = 0; i < 3; i++)
        expect(maxAbsDiff(np.take(batched, i, 0), f(np.take(verts, i, 0)))).toBeLessThan(1e-12);
      const loss = (v: Array) => np.sum(np.square(f(v)));
      const gb = vmap(grad(loss))(verts);
      for (let i = 0; i < 3; i++)
        expect(maxAbsDiff(np.take(gb, i, 0), grad(loss)(np.take(verts, i, 0)))).toBeLessThan(1e-10);
    });
  }
});

describe("jit", () => {
  for (const ras of ["softras", "dibr"] as const) {
    it(`${ras}: jit equals eager (compiled CPU program), traced once per signature`, () => {
      const mesh = sphere();
      const f = (eye: Array) =>
        R.render(
          mesh,
          R.perspectiveCamera({ eye, dtype: "float64" }),
          lights(),
          { specular: 0.3, shininess: 8 },
          { ...OPTS[ras], shading: "phong" },
        );
      const jf = jit(f);
      for (const e of [
        [0, 0.5, -3],
        [0.4, 0.1, -2.8],
      ])
        expect(maxAbsDiff(jf(f64(e)), f(f64(e)))).toBeLessThan(1e-12);
      expect(jf.traceCount).toBe(1);
    });
    it(`${ras}: jit(grad) equals eager grad (unlit colours; compiled)`, () => {
      // Small (2 faces, 8×8, one tile): compiled backward programs are currently slow to build (see report).
      const mesh = smallMesh();
      const loss = (v: Array) =>
        np.sum(
          np.square(
            R.render({ ...mesh, vertices: v }, R.perspectiveCamera({ dtype: "float64" }), { ambient: 1 }, undefined, {
              ...OPTS[ras],
              width: 8,
              tile: 8,
              capacity: 20,
            }),
          ),
        );
      expect(maxAbsDiff(jit(grad(loss))(mesh.vertices), grad(loss)(mesh.vertices))).toBeLessThan(1e-10);
    });
    it(`${ras}: jit(grad) equals eager grad with lighting (jit interpreted op by op)`, () => {
      const mesh = sphere(0);
      const loss = (v: Array) =>
        np.sum(
          np.square(
            R.render(
              { ...mesh, vertices: v },
              R.perspectiveCamera({ dtype: "float64" }),
              lights(),
              undefined,
              OPTS[ras],
            ),
          ),
        );
      const prev = setCpuCompile(false);
      try {
        expect(maxAbsDiff(jit(grad(loss))(mesh.vertices), grad(loss)(mesh.vertices))).toBeLessThan(1e-10);
      } finally {
        setCpuCompile(prev);
      }
    });
  }
  // Regression: jit(grad) of a lit render once failed to plan ("cyclic kernel dependencies").
  it("softras: jit(grad) with lighting, compiled", () => {
    const mesh = sphere(0);
    const loss = (v: Array) =>
      np.sum(
        R.render({ ...mesh, vertices: v }, R.perspectiveCamera({ dtype: "float64" }), lights(), undefined, {
          width: 8,
          capacity: 20,
        }),
      );
    expect(maxAbsDiff(jit(grad(loss))(mesh.vertices), grad(loss)(mesh.vertices))).toBeLessThan(1e-10);
  });
});

/** The array program's tile binning (the fused kernels bin for themselves: see render-fused tests). */
const BINNED: Record<"softras" | "dibr", R.RenderOptions> = {
  softras: { ...OPTS.softras, softras: { ...OPTS.softras.softras, fused: false } },
  dibr: { ...OPTS.dibr, dibr: { ...OPTS.dibr.dibr, fused: false } },
};

describe("culling and binning select, they do not change results", () => {
  const mesh = sphere(2); // 320 faces
  const cam = R.perspectiveCamera({ eye: [0.3, 0.4, -2.5], dtype: "float64" });
  const weights = np.reshape(np.array(pseudoRandom(24 * 24 * 4, 3), { dtype: "float64" }), [24, 24, 4]);
  for (const ras of ["softras", "dibr"] as const) {
    const opts = (extra: Partial<R.RenderOptions>): R.RenderOptions => ({ ...BINNED[ras], width: 24, ...extra });
    it(`${ras}: tiles of 3, 4, 8 (bucketed, auto capacity) equal one dense tile with every face`, () => {
      const dense = R.render(mesh, cam, lights(), undefined, opts({ tile: [24, 24], capacity: 320 }));
      for (const tile of [3, 4, 8])
        expect(maxAbsDiff(R.render(mesh, cam, lights(), undefined, opts({ tile })), dense)).toBeLessThan(1e-12);
    });
    it(`${ras}: gradients are identical with and without binning`, () => {
      const loss = (o: R.RenderOptions) => (v: Array) =>
        np.sum(np.mul(R.render({ ...mesh, vertices: v }, cam, lights(), undefined, o), weights));
      const gd = grad(loss(opts({ tile: [24, 24], capacity: 320 })))(mesh.vertices);
      const gt = grad(loss(opts({ tile: 4 })))(mesh.vertices);
      expect(maxAbsDiff(gt, gd)).toBeLessThan(1e-10);
      expect(np.max(np.abs(gd)).item()).toBeGreaterThan(1e-3);
    });
    it(`${ras}: a fixed capacity makes jit cull too; too small, it errors in eager and is counted under jit`, () => {
      const exact = R.renderWithInfo(mesh, cam, lights(), undefined, opts({ tile: 4 }));
      expect(exact.overflow.item()).toBe(0);
      const cap = R.estimateCapacity(mesh, cam, opts({ tile: 4 }));
      const jf = jit((v: Array) =>
        R.render({ ...mesh, vertices: v }, cam, lights(), undefined, opts({ tile: 4, capacity: cap })),
      );
      expect(maxAbsDiff(jf(mesh.vertices), exact.image)).toBeLessThan(1e-12);
      expect(() => R.render(mesh, cam, lights(), undefined, opts({ tile: 4, capacity: Math.max(1, cap - 4) }))).toThrow(
        /capacity/,
      );
      const jo = jit(
        (v: Array) =>
          R.renderWithInfo(
            { ...mesh, vertices: v },
            cam,
            lights(),
            undefined,
            opts({ tile: 4, capacity: Math.max(1, cap - 4) }),
          ).overflow,
      );
      expect(jo(mesh.vertices).item()).toBeGreaterThan(0);
      const ignored = R.renderWithInfo(
        mesh,
        cam,
        lights(),
        undefined,
        opts({ tile: 4, capacity: Math.max(1, cap - 4), onOverflow: "ignore" }),
      );
      expect(ignored.overflow.item()).toBeGreaterThan(0);
    });
  }
  for (const ras of ["softras", "dibr"] as const) {
    // Too few active tiles are counted as overflow.
    it(`${ras}: under jit, activeTiles rasterizes only the non-empty tiles — same image and gradients`, () => {
      const small = R.meshFromData(R.icosphereData(1, 0.25), { dtype: "float64", colors: [0.9, 0.4, 0.2] });
      const opts = (extra: Partial<R.RenderOptions>): R.RenderOptions => ({
        ...BINNED[ras],
        width: 24,
        tile: 4,
        capacity: 80,
        ...extra,
      });
      const eager = R.render(small, cam, lights(), undefined, opts({}));
      const overflowAt = (a: number) =>
        jit(
          (v: Array) =>
            R.renderWithInfo({ ...small, vertices: v }, cam, lights(), undefined, opts({ activeTiles: a })).overflow,
        )(small.vertices).item();
      let need = 36,
        lo = 0; // smallest activeTiles without overflow, by bisection: overflowAt(lo) > 0 or lo = 0
      while (need - lo > 1) {
        const mid = (lo + need) >> 1;
        if (overflowAt(mid) > 0) lo = mid;
        else need = mid;
      }
      expect(need).toBeGreaterThan(1);
      expect(need).toBeLessThan(36 / 2); // a small object: most of the 36 tiles are skipped
      const jf = jit((v: Array) =>
        R.render({ ...small, vertices: v }, cam, lights(), undefined, opts({ activeTiles: need })),
      );
      expect(maxAbsDiff(jf(small.vertices), eager)).toBeLessThan(1e-12);
      const loss = (o: R.RenderOptions) => (v: Array) =>
        np.sum(np.mul(R.render({ ...small, vertices: v }, cam, lights(), undefined, o), weights));
      const ge = grad(loss(opts({})))(small.vertices);
      const gj = jit(grad(loss(opts({ activeTiles: need }))))(small.vertices);
      expect(maxAbsDiff(gj, ge)).toBeLessThan(1e-10);
      expect(np.max(np.abs(ge)).item()).toBeGreaterThan(1e-3);
      // Batched under vmap (two camera heights): each frame compacts its own tiles.
      const cams = [0.3, -0.3].map((y) => R.perspectiveCamera({ eye: [0.3, y, -2.5], dtype: "float64" }));
      const frames = cams.map((c) => R.render(small, c, lights(), undefined, opts({})));
      const shifts = np.array(
        [
          [0, 0, 0],
          [0, 0.6, 0],
        ],
        { dtype: "float64" },
      );
      const batched = jit(
        vmap((d: Array) =>
          R.render(
            { ...small, vertices: np.add(small.vertices, d) },
            cams[0]!,
            lights(),
            undefined,
            opts({ activeTiles: need + 4 }),
          ),
        ),
      )(shifts);
      const moved = R.render(
        { ...small, vertices: np.add(small.vertices, np.array([0, 0.6, 0], { dtype: "float64" })) },
        cams[0]!,
        lights(),
        undefined,
        opts({}),
      );
      expect(maxAbsDiff(np.index(batched, 0), frames[0]!)).toBeLessThan(1e-12);
      expect(maxAbsDiff(np.index(batched, 1), moved)).toBeLessThan(1e-12);
      expect(maxAbsDiff(moved, frames[0]!)).toBeGreaterThan(0.1);
    });
  }
  it("binFaces: each tile keeps its overlapping faces in face order; empty slots are flagged", () => {
    const grid = R.makeTileGrid(8, 8, 4, "float64"); // 4 tiles
    const xy = f64([
      [
        [-0.9, -0.9],
        [-0.6, -0.9],
        [-0.9, -0.6],
      ],
      [
        [0.5, 0.5],
        [0.9, 0.5],
        [0.5, 0.9],
      ],
      [
        [-0.9, 0.2],
        [0.9, 0.2],
        [0, 0.9],
      ],
    ]);
    const b = R.binFaces(grid, xy, np.array([true, true, true]), 0);
    // tiles: 0 = top-left, 1 = top-right, 2 = bottom-left, 3 = bottom-right
    expect(b.counts.toList()).toEqual([1, 2, 1, 0]);
    expect(b.capacity).toBe(2);
    const idx = b.index.toList() as number[][],
      valid = b.slotValid.toList() as boolean[][];
    expect(idx[0]![0]).toBe(2);
    expect(idx[1]).toEqual([1, 2]);
    expect(idx[2]![0]).toBe(0);
    expect(valid.map((r) => r.map(Number))).toEqual([
      [1, 0],
      [1, 1],
      [1, 0],
      [0, 0],
    ]);
  });
});
