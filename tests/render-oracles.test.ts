/**
 * The 16 test oracles of render-anchors.md §7 (values from a float64 NumPy reference of the
 * SoftRas / DIB-R / PyTorch3D formulas), on the screen-space rasterizers, cameras, textures
 * and shading. Setup A: 64×64, triangle (−c,−c), (c,−c), (−c,c) with c = 33/64; pixel centres
 * x = (2i+1−W)/W, y = (H−2r−1)/H, so column 15 lies on the left edge and row 31 is y = 1/64.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { grad, init, np, type Array } from "../src/index.js";
import * as R from "../src/render/index.js";
import { C_A, f64, maxAbsDiff, onePixel, pixel, setupA } from "./render-helpers.js";

beforeAll(async () => {
  await init({ backend: "cpu" });
});

const ROW = 31; // y = 1/64
const soft = (faces: R.ScreenFaces, opts: R.SoftRasOptions, W = 64, attrs: Array | null = null) =>
  R.softRasterize(faces, attrs, W, W, opts);

describe("oracle 1: SoftRas coverage at the centroid, on, inside and outside an edge", () => {
  it("centroid D = 1 and on-edge D = 0.5 exactly, for every σ ≤ 1e-3", () => {
    for (const sigma of [1e-4, 4e-4, 1e-3]) {
      const a = soft(setupA(), { sigma }).alpha;
      expect(pixel(a, 37, 26)).toBeCloseTo(1, 12); // centroid (−11/64, −11/64)
      expect(pixel(a, ROW, 15)).toBe(0.5);
    }
  });
  it("0.5 px inside / outside (triangle shifted by half a pixel), and D(d) + D(−d) = 1", () => {
    const want: Record<number, [number, number]> = {
      1e-4: [0.91993, 0.08007],
      4e-4: [0.64802, 0.35198],
      1e-3: [0.56073, 0.43927],
    };
    for (const [s, [inside, outside]] of Object.entries(want)) {
      const a = soft(setupA(1 / 64), { sigma: Number(s) }).alpha; // left edge at x = −32/64
      expect(pixel(a, ROW, 16)).toBeCloseTo(inside, 5);
      expect(pixel(a, ROW, 15)).toBeCloseTo(outside, 5);
      expect(pixel(a, ROW, 16) + pixel(a, ROW, 15)).toBeCloseTo(1, 12);
    }
  });
  it("1 px and 2 px outside: pruned to exactly 0 at σ = 1e-4, soft values otherwise", () => {
    const a1 = soft(setupA(), { sigma: 1e-4 }).alpha;
    expect(pixel(a1, ROW, 14)).toBe(0);
    expect(pixel(a1, ROW, 13)).toBe(0);
    // The unpruned value.
    expect(pixel(soft(setupA(), { sigma: 1e-4, distEps: 1e-10 }).alpha, ROW, 14)).toBeCloseTo(5.74e-5, 7);
    const a4 = soft(setupA(), { sigma: 4e-4 }).alpha;
    expect(pixel(a4, ROW, 14)).toBeCloseTo(0.08007, 5);
    expect(pixel(a4, ROW, 13)).toBe(0);
    const a3 = soft(setupA(), { sigma: 1e-3 }).alpha;
    expect(pixel(a3, ROW, 14)).toBeCloseTo(0.27357, 5);
    expect(pixel(a3, ROW, 13)).toBeCloseTo(0.01972, 5);
  });
});

describe("oracle 2: prune radius √(9.2102σ)", () => {
  it("matches the anchors' radii", () => {
    expect(R.pruneThreshold(1e-4)).toBeCloseTo(9.2102, 4);
    expect(R.pruneRadius(1e-4)).toBeCloseTo(0.0303, 4);
    expect(R.pruneRadius(1e-4) / (2 / 64)).toBeCloseTo(0.97, 2);
    expect(R.pruneRadius(1e-5)).toBeCloseTo(0.0096, 4);
  });
  it("a pixel just inside the radius is covered, just outside it is exactly 0", () => {
    const r = R.pruneRadius(1e-4);
    const x = -C_A - 2 / 64; // column 14's centre
    const at = (dist: number) => pixel(soft(setupA(x + dist + C_A), { sigma: 1e-4 }).alpha, ROW, 14);
    expect(at(r * 0.99)).toBeGreaterThan(1e-4);
    expect(at(r * 1.01)).toBe(0);
  });
});

describe("oracle 3: DIB-R soft mask exp(−7000 d²)", () => {
  /** A triangle whose left edge lies `px` pixels right of column W/4's centre (row W/2 faces the edge's middle). */
  const alphaAt = (W: number, px: number, boxLen?: number) => {
    const e = (2 * (W / 4) + 1 - W) / W + (2 * px) / W;
    const faces = {
      xy: f64([
        [
          [e, -0.5],
          [e + 1, -0.5],
          [e, 0.5],
        ],
      ]),
      z: f64([[3, 3, 3]]),
    };
    return pixel(R.dibrRasterize(faces, null, W, W, { boxLen, faceCulling: "none" }).alpha, W / 2, W / 4);
  };
  const table: [number, number[]][] = [
    [64, [0.181, 1.07e-3, 1.3e-12]],
    [128, [0.6523, 0.181, 1.07e-3, 2.1e-7]],
    [256, [0.8987, 0.6523, 0.181, 0.0214]],
  ];
  for (const [W, values] of table) {
    it(`0.5/1/2/3 px outside at ${W}²`, () => {
      values.forEach((v, k) => {
        const got = alphaAt(W, [0.5, 1, 2, 3][k]!, 0.2);
        if (v < 1e-4) expect(Math.abs(got - v) / v).toBeLessThan(0.05);
        else expect(got).toBeCloseTo(v, 4);
      });
    });
  }
  it("covered pixels (inside and on the edge) have A = 1", () => {
    const r = R.dibrRasterize(setupA(), null, 64, 64, { faceCulling: "none" });
    expect(pixel(r.alpha, ROW, 15)).toBe(1);
    expect(pixel(r.alpha, ROW, 16)).toBe(1);
  });
  it("default boxLen 0.02 cuts the tail beyond 0.64 px @64 and 1.28 px @128 (step height 0.0608)", () => {
    expect(alphaAt(64, 0.5)).toBeCloseTo(0.181, 4);
    expect(alphaAt(64, 1)).toBe(0);
    expect(alphaAt(128, 1)).toBeCloseTo(0.181, 4);
    expect(alphaAt(128, 1.25)).toBeCloseTo(Math.exp(-7000 * (2.5 / 128) ** 2), 6);
    expect(alphaAt(128, 1.3)).toBe(0);
    expect(Math.exp(-7000 * 0.02 ** 2)).toBeCloseTo(0.0608, 4);
  });
});

describe("oracles 4–6: gradient signs and values just outside an edge", () => {
  const x = (xy: Array) => ({ xy, z: f64([[2.732, 2.732, 2.732]]) });
  const sel = onePixel(64, 64, ROW, 14); // 1 px left of the left edge: (−c − 2/64, 1/64)
  it("oracle 4: SoftRas σ = 4e-4: D = 0.0800693, ∂D/∂x = (−5.58017, 0, −5.92893), ∂D/∂y = 0", () => {
    const D = (xy: Array) => np.sum(np.mul(R.softRasterize(x(xy), null, 64, 64, { sigma: 4e-4 }).alpha, sel));
    const xy = setupA().xy;
    expect(D(xy).item()).toBeCloseTo(0.0800693, 7);
    const g = grad(D)(xy).dataSync(); // [1,3,2]
    expect(g[0]).toBeCloseTo(-5.58017, 4);
    expect(g[2]).toBe(0);
    expect(g[4]).toBeCloseTo(-5.92893, 4);
    expect(Math.abs(g[1]!) + Math.abs(g[3]!) + Math.abs(g[5]!)).toBeLessThan(1e-12);
    expect(g[0]! + g[4]!).toBeCloseTo(-11.509, 3);
    // closed form −D(1−D)/σ · 2·(2/64)·λ_k with t = 34/66
    const d = 0.0800693,
      t = 34 / 66,
      k = (-(d * (1 - d)) / 4e-4) * 2 * (2 / 64);
    expect(g[0]).toBeCloseTo(k * (1 - t), 3);
    expect(g[4]).toBeCloseTo(k * t, 3);
  });
  it("oracle 5: DIB-R: A = 1.07446e-3, ∂A/∂x = (−0.22792, 0, −0.24216) with boxLen 0.05, exactly 0 with 0.02", () => {
    const A = (boxLen: number) => (xy: Array) =>
      np.sum(np.mul(R.dibrRasterize(x(xy), null, 64, 64, { boxLen, faceCulling: "none" }).alpha, sel));
    const xy = setupA().xy;
    expect(A(0.05)(xy).item()).toBeCloseTo(1.07446e-3, 8);
    const g = grad(A(0.05))(xy).dataSync();
    expect(g[0]).toBeCloseTo(-0.22792, 5);
    expect(g[2]).toBe(0);
    expect(g[4]).toBeCloseTo(-0.24216, 5);
    expect([...grad(A(0.02))(xy).dataSync()].every((v) => v === 0)).toBe(true);
  });
  it("oracle 6: PyTorch3D sigmoid_alpha_blend: A = 0.887210, ∂A/∂dist = (−993.448, −53.4915, −7.54884)", () => {
    const d = f64([-2e-4, 3e-4, 5e-4]);
    const A = (v: Array) => R.sigmoidAlphaBlend(v, 1e-4);
    expect(A(d).item()).toBeCloseTo(0.88721, 6);
    const g = grad(A)(d).dataSync();
    expect(g[0]).toBeCloseTo(-993.448, 2);
    expect(g[1]).toBeCloseTo(-53.4915, 3);
    expect(g[2]).toBeCloseTo(-7.54884, 4);
  });
});

describe("oracle 7: shared edge", () => {
  // Two faces sharing the vertical edge x = s from y = −0.5 to 0.5.
  const pair = (s: number) => ({
    xy: f64([
      [
        [s, -0.5],
        [s, 0.5],
        [s - 0.6, 0],
      ],
      [
        [s, 0.5],
        [s, -0.5],
        [s + 0.6, 0],
      ],
    ]),
    z: f64([
      [3, 3, 3],
      [3, 3, 3],
    ]),
  });
  it("pixel centre on the seam: SoftRas A = 1 − 0.5·0.5 = 0.75; DIB-R 1", () => {
    const s = -1 / 64; // column 31's centre
    expect(pixel(R.softRasterize(pair(s), null, 64, 64, { sigma: 1e-4 }).alpha, ROW, 31)).toBeCloseTo(0.75, 12);
    expect(pixel(R.dibrRasterize(pair(s), null, 64, 64, { faceCulling: "none" }).alpha, ROW, 31)).toBe(1);
  });
  it("0.5 px from the seam at σ = 1e-4: A = 1 − (0.08007)(0.91993) = 0.92634", () => {
    expect(pixel(R.softRasterize(pair(0), null, 64, 64, { sigma: 1e-4 }).alpha, ROW, 32)).toBeCloseTo(0.92634, 5);
  });
});

describe("oracle 8: area", () => {
  it("Σ A over setup A at σ = 1e-4 is 545.51 (exact area·(W/2)² = 544.5)", () => {
    const a = soft(setupA(), { sigma: 1e-4 }).alpha;
    expect(np.sum(a).item()).toBeCloseTo(545.51, 2);
  });
});

describe("oracle 9: translation by one pixel is a one-column shift", () => {
  const cols = (img: Array, from: number, to: number) => np.split(img, [from, to], 1)[1]!;
  it("screen space: shifting every vertex by 2/W shifts SoftRas and DIB-R images by exactly one column", () => {
    const attrs = f64([
      [
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
      ],
    ]);
    for (const run of [
      (f: R.ScreenFaces) => {
        const r = R.softRasterize(f, attrs, 64, 64, { sigma: 4e-4 });
        return np.concatenate([r.rgb!, np.expandDims(r.alpha, -1)], -1);
      },
      (f: R.ScreenFaces) => {
        const r = R.dibrRasterize(f, attrs, 64, 64, { faceCulling: "none", boxLen: 0.05 });
        return np.concatenate([r.features!, np.expandDims(r.alpha, -1)], -1);
      },
    ]) {
      const a = run(setupA()),
        b = run(setupA(2 / 64));
      expect(maxAbsDiff(cols(a, 0, 63), cols(b, 1, 64))).toBe(0);
      expect(maxAbsDiff(a, b)).toBeGreaterThan(0.5);
    }
  });
  it("perspective: a fronto-parallel shift Δ at depth z moves the image by Δ/(z·tan 30°) NDC", () => {
    const cam = R.perspectiveCamera({ dtype: "float64" }); // eye (0,0,−2.732), fovY 60°
    const z = 1 / Math.tan(Math.PI / 6) + 1 + 1.5; // camera depth of the world plane z = 1.5
    const delta = (2 / 64) * z * Math.tan(Math.PI / 6); // Δ/(z·tan 30°) = one pixel
    const tri = (dx: number): R.Mesh => ({
      vertices: f64([
        [-0.6 + dx, -0.5, 1.5],
        [0.7 + dx, -0.4, 1.5],
        [-0.1 + dx, 0.8, 1.5],
      ]),
      faces: np.array([[0, 2, 1]], { dtype: "int32" }),
      colors: [1, 1, 1],
    });
    const img = (dx: number) =>
      R.render(tri(dx), cam, { ambient: 1 }, undefined, { width: 64, softras: { sigma: 4e-4 } });
    const a = img(0),
      b = img(delta);
    expect(maxAbsDiff(cols(a, 0, 63), cols(b, 1, 64))).toBeLessThan(1e-9);
    expect(maxAbsDiff(a, b)).toBeGreaterThan(0.1); // it did move
  });
});

describe("oracle 10: mirror symmetry", () => {
  it("an isosceles triangle renders exactly mirror-symmetric (SoftRas and DIB-R)", () => {
    const f = {
      xy: f64([
        [
          [-0.5, -0.5],
          [0.5, -0.5],
          [0, 0.5],
        ],
      ]),
      z: f64([[3, 3, 3]]),
    };
    const s = R.softRasterize(f, null, 64, 64, { sigma: 4e-4 }).alpha;
    expect(maxAbsDiff(s, np.flip(s, 1))).toBeLessThan(1e-15);
    const d = R.dibrRasterize(f, null, 64, 64, { faceCulling: "none", boxLen: 0.05 }).alpha;
    expect(maxAbsDiff(d, np.flip(d, 1))).toBeLessThan(1e-15);
  });
});

describe("oracle 11: SoftRas colour aggregation with the background term", () => {
  const white = f64([
    [
      [1, 1, 1],
      [1, 1, 1],
      [1, 1, 1],
    ],
  ]);
  it("single face, colour 1, bg 0, z = 2.732: RGB = 1 for D = 1, 0.5 and 5.7e-5", () => {
    const r = R.softRasterize(setupA(), white, 64, 64, { sigma: 1e-4, distEps: 1e-10, faceCulling: "none" });
    expect(pixel(r.rgb!, 37, 26)).toBeCloseTo(1, 12);
    expect(pixel(r.alpha, ROW, 15)).toBe(0.5);
    expect(pixel(r.rgb!, ROW, 15)).toBeCloseTo(1, 12);
    expect(pixel(r.alpha, ROW, 14)).toBeCloseTo(5.74e-5, 7);
    expect(pixel(r.rgb!, ROW, 14)).toBeCloseTo(1, 12); // background weight e^{−9815}
  });
  it("a face at z = 99.9 (z̄ ≈ ε) with D = 0.5: RGB = 0.35614", () => {
    const f = { xy: setupA().xy, z: f64([[99.9, 99.9, 99.9]]) };
    const r = R.softRasterize(f, white, 64, 64, { sigma: 1e-4, faceCulling: "none" });
    expect(pixel(r.rgb!, ROW, 15)).toBeCloseTo(0.35614, 5);
  });
});

describe("oracle 12: depth softmax between two fully covering faces (colour 1 at z = 2, 0 at z = 3)", () => {
  const big = [
    [-4, -4],
    [4, -4],
    [0, 4],
  ];
  const f = {
    xy: f64([big, big]),
    z: f64([
      [2, 2, 2],
      [3, 3, 3],
    ]),
  };
  const attrs = f64([
    [[1], [1], [1]],
    [[0], [0], [0]],
  ]);
  for (const [gamma, rgb] of [
    [1e-4, 1.0],
    [1e-3, 0.999959],
    [1e-2, 0.73304],
  ] as const) {
    it(`γ = ${gamma}: RGB = ${rgb}, weight ratio far/near = exp(−(1/99)/γ)`, () => {
      const r = R.softRasterize(f, attrs, 8, 8, { sigma: 1e-4, gamma, faceCulling: "none" });
      expect(pixel(r.rgb!, 4, 4)).toBeCloseTo(rgb, 6);
      const ratio = Math.exp(-(1 / 99) / gamma);
      expect(pixel(r.rgb!, 4, 4)).toBeCloseTo(1 / (1 + ratio), 6);
    });
  }
});

describe("oracle 13: cameras", () => {
  it("SoftRas default look_at: (1,1,−1) → NDC (1,1); (1,1,0) → (0.634,0.634); depth 2.732", () => {
    const cam = R.perspectiveCamera({ dtype: "float64" });
    const p = R.projectPoints(
      cam,
      f64([
        [1, 1, -1],
        [1, 1, 0],
      ]),
    );
    const xy = p.xy.dataSync(),
      z = p.depth.dataSync();
    expect(xy[0]).toBeCloseTo(1, 12);
    expect(xy[1]).toBeCloseTo(1, 12);
    expect(xy[2]).toBeCloseTo(0.634, 3);
    expect(xy[3]).toBeCloseTo(0.634, 3);
    expect(z[1]).toBeCloseTo(2.732, 3);
  });
  it("gradSim (8, 30°, 0°): eye (0, 4, −6.93); origin → NDC (0,0) at depth 8", () => {
    const cam = R.perspectiveCamera({ distance: 8, elevation: 30, azimuth: 0, dtype: "float64" });
    const e = cam.eye.dataSync();
    expect(e[0]).toBeCloseTo(0, 12);
    expect(e[1]).toBeCloseTo(4, 12);
    expect(e[2]).toBeCloseTo(-6.9282, 4);
    const p = R.projectPoints(cam, f64([[0, 0, 0]]));
    expect(Math.abs(p.xy.dataSync()[0]!) + Math.abs(p.xy.dataSync()[1]!)).toBeLessThan(1e-12);
    expect(p.depth.item()).toBeCloseTo(8, 12);
  });
  it("DIB-R fovY 49.134°: 1/tan(fovY/2) = 2.1875; (x,0,0) seen from +z at distance d → x_ndc = 2.1875·x/d", () => {
    const d = 5;
    const cam = R.perspectiveCamera({
      eye: R.dibrEyeFromAngles(d, 0, 0, "float64"),
      fovY: 49.134,
      convention: "opengl",
      dtype: "float64",
    });
    expect(cam.focal.dataSync()[1]).toBeCloseTo(2.1875, 4);
    const p = R.projectPoints(cam, f64([[0.7, 0, 0]]));
    expect(p.xy.dataSync()[0]).toBeCloseTo((2.1875 * 0.7) / d, 4);
    expect(p.depth.item()).toBeCloseTo(d, 12);
    // the SoftRas frame sees the same world from +z mirrored
    const soft = R.perspectiveCamera({ eye: R.dibrEyeFromAngles(d, 0, 0, "float64"), fovY: 49.134, dtype: "float64" });
    expect(R.projectPoints(soft, f64([[0.7, 0, 0]])).xy.dataSync()[0]).toBeCloseTo(-(2.1875 * 0.7) / d, 4);
  });
  it("intrinsics/extrinsics reproduce pixel coordinates (centres at integers, v down) and round-trip", () => {
    const W = 48,
      H = 32;
    const cam = R.perspectiveCamera({
      distance: 6,
      elevation: 20,
      azimuth: 35,
      fovY: 50,
      aspect: W / H,
      dtype: "float64",
    });
    const pts = f64([
      [0.3, -0.2, 0.5],
      [-1, 0.4, 0.1],
      [0.2, 1.1, -0.7],
    ]);
    const K = R.intrinsics(cam, W, H),
      Rt = R.extrinsics(cam);
    const hom = np.concatenate([pts, np.ones([3, 1], { dtype: "float64" })], 1);
    const q = np.matmul(np.matmul(hom, np.transpose(Rt)), np.transpose(K)); // [3,3]
    const qd = q.dataSync();
    const p = R.projectPoints(cam, pts),
      xy = p.xy.dataSync();
    for (let i = 0; i < 3; i++) {
      const u = qd[3 * i]! / qd[3 * i + 2]!,
        v = qd[3 * i + 1]! / qd[3 * i + 2]!;
      expect(u).toBeCloseTo((xy[2 * i]! * W + W - 1) / 2, 10); // x = (2u+1−W)/W
      expect(v).toBeCloseTo((H - 1 - xy[2 * i + 1]! * H) / 2, 10); // y = (H−2v−1)/H
      expect(qd[3 * i + 2]).toBeCloseTo(p.depth.dataSync()[i]!, 10);
    }
    const back = R.cameraFromMatrices(K, Rt, W, H);
    expect(maxAbsDiff(R.projectPoints(back, pts).xy, p.xy)).toBeLessThan(1e-12);
    expect(maxAbsDiff(back.eye, cam.eye)).toBeLessThan(1e-12);
  });
});

describe("oracle 14: bilinear texture sampling", () => {
  const T = f64([
    [[0], [1]],
    [[2], [3]],
  ]); // row 0 = top (v ≈ 1)
  const at = (u: number, v: number, alignCorners = false) => R.sampleBilinear(T, f64([u, v]), { alignCorners }).item();
  it("values (align_corners = False and True)", () => {
    expect(at(0.5, 0.5)).toBeCloseTo(1.5, 12);
    expect(at(0.25, 0.75)).toBeCloseTo(0, 12);
    expect(at(0.75, 0.25)).toBeCloseTo(3, 12);
    expect(at(0.25, 0.25)).toBeCloseTo(2, 12);
    expect(at(0.25, 0.75, true)).toBeCloseTo(0.75, 12);
  });
  it("derivatives: ∂/∂u = 2, ∂/∂v = −4 at the centre; align_corners: ∂/∂u = 1; ∂/∂T = 0.25 each", () => {
    const gu = grad((uv: Array) => np.sum(R.sampleBilinear(T, uv)))(f64([0.5, 0.5])).dataSync();
    expect(gu[0]).toBeCloseTo(2, 12);
    expect(gu[1]).toBeCloseTo(-4, 12);
    const ga = grad((uv: Array) => np.sum(R.sampleBilinear(T, uv, { alignCorners: true })))(f64([0.5, 0.5])).dataSync();
    expect(ga[0]).toBeCloseTo(1, 12);
    const gt = grad((t: Array) => np.sum(R.sampleBilinear(t, f64([0.5, 0.5]))))(T).dataSync();
    expect([...gt]).toEqual([0.25, 0.25, 0.25, 0.25]);
  });
});

describe("oracle 15: lighting", () => {
  const n = f64([
      [0, 1, 0],
      [1, 0, 0],
      [0, -1, 0],
    ]),
    p = f64([
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ]);
  it("SoftRas/gradSim defaults: factor 1.0 for n·l = 1, 0.5 for n ⟂ l and back-lit", () => {
    const t = R.lightTerms(n, p, null, R.defaultLights()).diffuse.dataSync();
    expect([t[0], t[3], t[6]]).toEqual([1, 0.5, 0.5]);
  });
  it("PyTorch3D defaults with n = l = v: 0.8·texel + 0.2", () => {
    const texel = f64([[0.3, 0.6, 0.9]]);
    const c = R.shade(f64([[0, 1, 0]]), f64([[0, 0, 0]]), texel, f64([0, 5, 0]), R.pytorch3dLights(), {
      ambient: 1,
      diffuse: 1,
      specular: 1,
      shininess: 64,
    });
    const d = c.dataSync();
    [0.3, 0.6, 0.9].forEach((t, i) => expect(d[i]).toBeCloseTo(0.8 * t + 0.2, 12));
  });
  it("DIB-R Phong with K_a = 0, K_d = K_s = 1 and n = l = ê: tex + 1", () => {
    const tex = f64([[0.25, 0.5, 0.75]]);
    const c = R.shade(
      f64([[0, 0, 1]]),
      f64([[0, 0, 0]]),
      tex,
      f64([0, 0, 3]),
      { directional: [{ direction: [0, 0, 1] }] },
      { ambient: 0, diffuse: 1, specular: 1, shininess: 10 },
    );
    const d = c.dataSync();
    [0.25, 0.5, 0.75].forEach((t, i) => expect(d[i]).toBeCloseTo(t + 1, 12));
  });
});

describe("oracle 16: invariances", () => {
  const two = {
    xy: f64([
      [
        [-0.6, -0.5],
        [0.5, -0.6],
        [-0.1, 0.6],
      ],
      [
        [0.1, -0.2],
        [0.7, 0.5],
        [-0.3, 0.4],
      ],
    ]),
    z: f64([
      [3, 3.2, 2.9],
      [2.5, 2.7, 3.1],
    ]),
  };
  const attrs = f64([
    [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ],
    [
      [1, 1, 0],
      [0, 1, 1],
      [1, 0, 1],
    ],
  ]);
  it("A ∈ [0,1]; adding a face never lowers A (SoftRas and DIB-R)", () => {
    const one = { xy: np.split(two.xy, [1], 0)[0]!, z: np.split(two.z, [1], 0)[0]! };
    for (const ras of [
      (f: R.ScreenFaces) => R.softRasterize(f, null, 16, 16, { sigma: 1e-3 }).alpha,
      (f: R.ScreenFaces) => R.dibrRasterize(f, null, 16, 16, { faceCulling: "none", boxLen: 0.2, sigmaInv: 500 }).alpha,
    ]) {
      const a1 = ras(one),
        a2 = ras(two);
      expect(np.min(a2).item()).toBeGreaterThanOrEqual(0);
      expect(np.max(a2).item()).toBeLessThanOrEqual(1);
      expect(np.min(np.sub(a2, a1)).item()).toBeGreaterThanOrEqual(-1e-15);
    }
  });
  it("SoftRas alpha is independent of γ, near/far and winding", () => {
    const base = R.softRasterize(two, attrs, 16, 16, { sigma: 1e-3 }).alpha;
    const flipped = { xy: np.flip(two.xy, 1), z: np.flip(two.z, 1) };
    expect(
      maxAbsDiff(R.softRasterize(two, attrs, 16, 16, { sigma: 1e-3, gamma: 0.1, near: 2.8, far: 3 }).alpha, base),
    ).toBe(0);
    expect(maxAbsDiff(R.softRasterize(flipped, attrs, 16, 16, { sigma: 1e-3 }).alpha, base)).toBeLessThan(1e-14);
  });
  it("SoftRas RGB is independent of σ where a single opaque layer covers the pixel", () => {
    const big = {
      xy: f64([
        [
          [-4, -4],
          [4, -4],
          [0, 4],
        ],
      ]),
      z: f64([[3, 3, 3]]),
    };
    const col = f64([
      [
        [0.2, 0.4, 0.6],
        [0.2, 0.4, 0.6],
        [0.2, 0.4, 0.6],
      ],
    ]);
    const a = R.softRasterize(big, col, 8, 8, { sigma: 1e-4 }).rgb!,
      b = R.softRasterize(big, col, 8, 8, { sigma: 1e-2 }).rgb!;
    expect(maxAbsDiff(a, b)).toBeLessThan(1e-12);
  });
  it("DIB-R features are independent of sigmaInv and boxLen", () => {
    const a = R.dibrRasterize(two, attrs, 16, 16, { sigmaInv: 7000, boxLen: 0.02 }).features!;
    const b = R.dibrRasterize(two, attrs, 16, 16, { sigmaInv: 300, boxLen: 0.3 }).features!;
    expect(maxAbsDiff(a, b)).toBe(0);
  });
  it("gradients w.r.t. a vertex are exactly 0 for pixels beyond the prune radius / expanded box", () => {
    const far = onePixel(64, 64, ROW, 13); // 2 px outside setup A
    const gs = grad((xy: Array) =>
      np.sum(np.mul(R.softRasterize({ xy, z: setupA().z }, null, 64, 64, { sigma: 1e-4 }).alpha, far)),
    )(setupA().xy);
    expect([...gs.dataSync()].every((v) => v === 0)).toBe(true);
    const gd = grad((xy: Array) =>
      np.sum(np.mul(R.dibrRasterize({ xy, z: setupA().z }, null, 64, 64, { faceCulling: "none" }).alpha, far)),
    )(setupA().xy);
    expect([...gd.dataSync()].every((v) => v === 0)).toBe(true);
  });
  it("results are invariant to face order (SoftRas; DIB-R without depth ties)", () => {
    const rev = { xy: np.flip(two.xy, 0), z: np.flip(two.z, 0) };
    const ra = np.flip(attrs, 0);
    const s1 = R.toRGBA(R.softRasterize(two, attrs, 16, 16, { sigma: 1e-3 })),
      s2 = R.toRGBA(R.softRasterize(rev, ra, 16, 16, { sigma: 1e-3 }));
    expect(maxAbsDiff(s1, s2)).toBeLessThan(1e-14);
    const d1 = R.dibrRasterize(two, attrs, 16, 16, { faceCulling: "none" }),
      d2 = R.dibrRasterize(rev, ra, 16, 16, { faceCulling: "none" });
    expect(maxAbsDiff(d1.features!, d2.features!)).toBeLessThan(1e-14);
    expect(maxAbsDiff(d1.alpha, d2.alpha)).toBeLessThan(1e-14);
  });
});

describe("rasterizer options (SoftRas modes, culling, DIB-R knum)", () => {
  const white = f64([
    [
      [1, 1, 1],
      [1, 1, 1],
      [1, 1, 1],
    ],
  ]);
  it("distFunc 'hard' + aggrAlpha 'hard' give the strict inside test; 'barycentric' uses sign(m)·m²", () => {
    const hard = R.softRasterize(setupA(), null, 64, 64, { distFunc: "hard", aggrAlpha: "hard" }).alpha;
    expect(pixel(hard, ROW, 15)).toBe(0); // on the edge: not strictly inside
    expect(pixel(hard, ROW, 16)).toBe(1);
    let inside = 0; // independent count of pixel centres strictly inside: x > −c, y > −c, x + y < 0
    for (let r = 0; r < 64; r++)
      for (let i = 0; i < 64; i++) {
        const x = (2 * i + 1 - 64) / 64,
          y = (64 - 2 * r - 1) / 64;
        if (x > -C_A && y > -C_A && x + y < 0) inside++;
      }
    expect(np.sum(hard).item()).toBe(inside);
    const bary = R.softRasterize(setupA(), null, 64, 64, { distFunc: "barycentric", sigma: 0.05 }).alpha;
    // centroid: m = 1/3 (to rounding) → D = sigmoid((1/9)/0.05)
    expect(pixel(bary, 37, 26)).toBeCloseTo(1 / (1 + Math.exp(-(1 / 9) / 0.05)), 2);
  });
  it("faceCulling removes back faces from colour only; cullAlpha from the silhouette too", () => {
    // Setup A is counter-clockwise on screen: a back face for SoftRas-convention cameras.
    const none = R.softRasterize(setupA(), white, 64, 64, { sigma: 1e-4 });
    const back = R.softRasterize(setupA(), white, 64, 64, { sigma: 1e-4, faceCulling: "back" });
    const both = R.softRasterize(setupA(), white, 64, 64, { sigma: 1e-4, faceCulling: "back", cullAlpha: true });
    expect(pixel(none.rgb!, 37, 26)).toBeCloseTo(1, 12);
    expect(pixel(back.rgb!, 37, 26)).toBe(0);
    expect(maxAbsDiff(back.alpha, none.alpha)).toBe(0);
    expect(np.max(both.alpha).item()).toBe(0);
    const front = R.softRasterize({ ...setupA(), front: np.array([true]) }, white, 64, 64, {
      sigma: 1e-4,
      faceCulling: "back",
    });
    expect(pixel(front.rgb!, 37, 26)).toBeCloseTo(1, 12);
  });
  it("colorBaryGradient: false stops gradients through the colour barycentrics (SoftRas' CUDA backward)", () => {
    const attrs = f64([
      [
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
      ],
    ]);
    const sel = onePixel(64, 64, 37, 26);
    const red = f64([1, 0, 0]); // one channel: the three interpolated weights sum to 1, so their sum has no gradient
    const g = (o: R.SoftRasOptions) =>
      grad((xy: Array) =>
        np.sum(
          np.mul(np.mul(R.softRasterize({ xy, z: setupA().z }, attrs, 64, 64, o).rgb!, np.expandDims(sel, -1)), red),
        ),
      )(setupA().xy);
    expect(np.max(np.abs(g({ sigma: 1e-4 }))).item()).toBeGreaterThan(0.1);
    expect(np.max(np.abs(g({ sigma: 1e-4, colorBaryGradient: false }))).item()).toBe(0);
  });
  it("DIB-R knum: only the first knum boxed faces (face order) shape a pixel's soft mask", () => {
    const f = {
      xy: f64([
        [
          [-0.5, -0.5],
          [-0.1, -0.5],
          [-0.5, 0.5],
        ],
        [
          [0.1, -0.5],
          [0.5, -0.5],
          [0.5, 0.5],
        ],
      ]),
      z: f64([
        [3, 3, 3],
        [3, 3, 3],
      ]),
    };
    // pixel between the two faces (x = 1/64 on row 31): both within boxLen 0.3
    const all = pixel(
      R.dibrRasterize(f, null, 64, 64, { faceCulling: "none", boxLen: 0.3, sigmaInv: 50 }).alpha,
      ROW,
      32,
    );
    const one = pixel(
      R.dibrRasterize(f, null, 64, 64, { faceCulling: "none", boxLen: 0.3, sigmaInv: 50, knum: 1 }).alpha,
      ROW,
      32,
    );
    const firstOnly = pixel(
      R.dibrRasterize({ xy: np.split(f.xy, [1], 0)[0]!, z: np.split(f.z, [1], 0)[0]! }, null, 64, 64, {
        faceCulling: "none",
        boxLen: 0.3,
        sigmaInv: 50,
      }).alpha,
      ROW,
      32,
    );
    expect(one).toBeCloseTo(firstOnly, 14);
    expect(all).toBeGreaterThan(one + 1e-3);
  });
});
