/**
 * Gradients of the renderers (float64): reverse mode against central finite differences for
 * vertex positions, colours, light parameters, textures (texels and uvs) and the camera, on
 * small images (12×12–16×16) with 1–4 faces; forward mode (jvp) against reverse mode (vjp) by
 * the dot-product test ⟨J t, c⟩ = ⟨t, Jᵀ c⟩; and finiteness of gradients in degenerate cases.
 * Losses are Σ W ⊙ image with fixed pseudo-random weights W, so no pixel's gradient cancels out.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { grad, init, jvp, np, vjp, type Array } from "../src/index.js";
import * as R from "../src/render/index.js";
import { directionalErrors, f64, pseudoRandom, randomLike, smallMesh } from "./render-helpers.js";

beforeAll(async () => {
  await init({ backend: "cpu" });
});

const W = 12;
const weights = np.reshape(np.array(pseudoRandom(W * W * 4, 7), { dtype: "float64" }), [W, W, 4]);
const softOpts: R.RenderOptions = { width: W, softras: { sigma: 1e-2, gamma: 1e-2, distEps: 1e-10 } };
const dibrOpts: R.RenderOptions = { width: W, rasterizer: "dibr", dibr: { sigmaInv: 100, boxLen: 0.5 } };
const cam = () => R.perspectiveCamera({ dtype: "float64" });
const lights = (): R.Lights => ({ ambient: 0.3, directional: [{ direction: f64([0.3, 0.8, -0.6]), color: 0.6 }] });

function expectMatchesFD(loss: (t: Array) => Array, theta: Array, tol = 2e-6, seeds = [11, 12, 13]): void {
  const g = grad(loss)(theta);
  expect([...g.dataSync()].every(Number.isFinite)).toBe(true);
  const errs = directionalErrors(loss, g, theta, seeds);
  for (const e of errs) expect(e.rel, `ad ${e.ad} vs fd ${e.fd}`).toBeLessThan(tol);
  expect(errs.some((e) => Math.abs(e.ad) > 1e-4)).toBe(true); // the check is not vacuous
}

const score = (img: Array) => np.sum(np.mul(img, weights));

describe("reverse mode matches finite differences", () => {
  const mesh = smallMesh();
  for (const [name, opts] of [
    ["SoftRas", softOpts],
    ["DIB-R", dibrOpts],
  ] as const) {
    for (const shading of ["flat", "gouraud", "phong"] as const) {
      it(`${name} (${shading}): vertex positions`, () => {
        const loss = (v: Array) =>
          score(
            R.render({ ...mesh, vertices: v }, cam(), lights(), { specular: 0.5, shininess: 8 }, { ...opts, shading }),
          );
        expectMatchesFD(loss, mesh.vertices);
      });
    }
    it(`${name}: per-vertex colours`, () => {
      const loss = (c: Array) => score(R.render({ ...mesh, colors: c }, cam(), lights(), undefined, opts));
      expectMatchesFD(loss, mesh.colors as Array);
    });
    it(`${name}: light direction, light colour and ambient; point light position; shininess`, () => {
      const dir = f64([0.3, 0.8, -0.6]),
        col = f64([0.6, 0.5, 0.4]),
        amb = f64([0.3, 0.2, 0.25]);
      const lossD = (d: Array) =>
        score(R.render(mesh, cam(), { ambient: amb, directional: [{ direction: d, color: col }] }, undefined, opts));
      expectMatchesFD(lossD, dir);
      const lossC = (c: Array) =>
        score(R.render(mesh, cam(), { ambient: amb, directional: [{ direction: dir, color: c }] }, undefined, opts));
      expectMatchesFD(lossC, col);
      const lossA = (a: Array) =>
        score(R.render(mesh, cam(), { ambient: a, directional: [{ direction: dir, color: col }] }, undefined, opts));
      expectMatchesFD(lossA, amb);
      const lossP = (p: Array) =>
        score(
          R.render(
            mesh,
            cam(),
            { ambient: 0.2, point: [{ position: p, color: 0.8 }] },
            { specular: 0.6, shininess: 4 },
            { ...opts, shading: "phong" },
          ),
        );
      expectMatchesFD(lossP, f64([0.5, 1.2, -1.5]));
      const lossS = (s: Array) =>
        score(
          R.render(
            mesh,
            cam(),
            { ambient: 0.2, point: [{ position: [0.5, 1.2, -1.5], color: 0.8 }] },
            { specular: 0.6, shininess: s },
            { ...opts, shading: "phong" },
          ),
        );
      expectMatchesFD(lossS, f64(3));
    });
    it(`${name}: camera eye and field of view`, () => {
      const lossE = (e: Array) =>
        score(
          R.render(
            mesh,
            R.perspectiveCamera({ eye: e, at: f64([0.05, 0.02, 0]), dtype: "float64" }),
            lights(),
            undefined,
            opts,
          ),
        );
      expectMatchesFD(lossE, f64([0.2, 0.3, -2.6]));
      const lossF = (fov: Array) =>
        score(R.render(mesh, R.perspectiveCamera({ fovY: fov, dtype: "float64" }), lights(), undefined, opts));
      expectMatchesFD(lossF, f64(55));
    });
  }
});

describe("textures: gradients reach texels and uvs", () => {
  const tex = np.reshape(
    np.array(
      pseudoRandom(4 * 5 * 3, 5).map((v) => 0.5 + 0.4 * v),
      { dtype: "float64" },
    ),
    [4, 5, 3],
  );
  // uvs avoid texel centres (integer ix, iy), where bilinear sampling has kinks and FD would straddle them.
  const uvs = f64([
    [0.13, 0.21],
    [0.87, 0.17],
    [0.33, 0.92],
    [0.81, 0.77],
  ]);
  const mesh = (): R.Mesh => ({ ...smallMesh(), texture: tex, uvs });
  for (const [name, opts] of [
    ["SoftRas", softOpts],
    ["DIB-R", { ...dibrOpts, dibr: { ...dibrOpts.dibr, perspectiveCorrect: true } }],
  ] as const) {
    it(`${name}: texels`, () => {
      const loss = (t: Array) => score(R.render({ ...mesh(), texture: t }, cam(), lights(), undefined, opts));
      expectMatchesFD(loss, tex);
    });
    it(`${name}: uvs and vertices of a textured mesh`, () => {
      const loss = (u: Array) => score(R.render({ ...mesh(), uvs: u }, cam(), lights(), undefined, opts));
      expectMatchesFD(loss, uvs, 2e-5);
      const lossV = (v: Array) => score(R.render({ ...mesh(), vertices: v }, cam(), lights(), undefined, opts));
      expectMatchesFD(lossV, mesh().vertices, 2e-5);
    });
  }
});

describe("screen-space rasterizers: gradients w.r.t. screen vertices and depths", () => {
  const faces = {
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
      [
        [-0.8, 0.3],
        [-0.2, 0.1],
        [-0.5, 0.9],
      ],
    ]),
    z: f64([
      [3, 3.2, 2.9],
      [3.05, 3.1, 3.0],
      [2.5, 2.6, 2.7],
    ]),
  };
  const attrs = randomLike(np.zeros([3, 3, 3], { dtype: "float64" }), 3);
  const w16 = np.reshape(np.array(pseudoRandom(16 * 16 * 4, 9), { dtype: "float64" }), [16, 16, 4]);
  const s = (img: Array) => np.sum(np.mul(img, w16));
  it("SoftRas: xy and z (depth softmax with overlapping faces, γ = 0.05)", () => {
    const o: R.SoftRasOptions = { sigma: 3e-3, gamma: 0.05, distEps: 1e-10 };
    expectMatchesFD((xy) => s(R.toRGBA(R.softRasterize({ xy, z: faces.z }, attrs, 16, 16, o))), faces.xy);
    expectMatchesFD((z) => s(R.toRGBA(R.softRasterize({ xy: faces.xy, z }, attrs, 16, 16, o))), faces.z);
  });
  it("SoftRas perspective-correct colours: xy and z", () => {
    const o: R.SoftRasOptions = { sigma: 3e-3, gamma: 0.05, distEps: 1e-10, perspectiveCorrect: true };
    expectMatchesFD((xy) => s(R.toRGBA(R.softRasterize({ xy, z: faces.z }, attrs, 16, 16, o))), faces.xy);
    expectMatchesFD((z) => s(R.toRGBA(R.softRasterize({ xy: faces.xy, z }, attrs, 16, 16, o))), faces.z);
  });
  it("DIB-R: xy through the winning face's barycentrics and the soft mask; attributes", () => {
    const o: R.DibrOptions = { sigmaInv: 300, boxLen: 0.3, faceCulling: "none" };
    const f = (xy: Array, a: Array) => {
      const r = R.dibrRasterize({ xy, z: faces.z }, a, 16, 16, o);
      return s(np.concatenate([r.features!, np.expandDims(r.alpha, -1)], -1));
    };
    expectMatchesFD((xy) => f(xy, attrs), faces.xy);
    expectMatchesFD((a) => f(faces.xy, a), attrs);
  });
});

describe("forward mode equals reverse mode (dot-product test)", () => {
  const mesh = smallMesh();
  for (const [name, opts] of [
    ["SoftRas", softOpts],
    ["DIB-R", dibrOpts],
  ] as const) {
    it(`${name}: ⟨J t, c⟩ = ⟨t, Jᵀ c⟩ for the whole RGBA image w.r.t. vertices and light direction`, () => {
      const f = (v: Array, d: Array) =>
        R.render(
          { ...mesh, vertices: v },
          cam(),
          { ambient: 0.3, directional: [{ direction: d, color: 0.7 }] },
          { specular: 0.4, shininess: 6 },
          { ...opts, shading: "phong" },
        );
      const v = mesh.vertices,
        d = f64([0.3, 0.8, -0.6]);
      const tv = randomLike(v, 21),
        td = randomLike(d, 22);
      const [out, jt] = jvp(f, [v, d], [tv, td]);
      const c = randomLike(out, 23);
      const [, back] = vjp(f, v, d);
      const [cv, cd] = back(c) as [Array, Array];
      const lhs = np.sum(np.mul(jt, c)).item();
      const rhs = np.sum(np.mul(cv, tv)).item() + np.sum(np.mul(cd, td)).item();
      expect(Math.abs(lhs)).toBeGreaterThan(1e-3);
      expect(Math.abs(lhs - rhs) / Math.abs(lhs)).toBeLessThan(1e-10);
    });
  }
});

describe("gradients stay finite in degenerate cases", () => {
  it("zero-area face, vertex behind the camera, pixel exactly on an edge, coincident vertices", () => {
    const faces = {
      xy: f64([
        [
          [-0.5, -0.5],
          [0.5, -0.5],
          [-0.5, 0.5],
        ],
        [
          [0.2, 0.2],
          [0.2, 0.2],
          [0.6, 0.6],
        ],
        [
          [0.1, -0.9],
          [0.9, -0.9],
          [0.5, -0.1],
        ],
      ]),
      z: f64([
        [3, 3, 3],
        [3, 3, 3],
        [3, -1, 3],
      ]),
    };
    const attrs = randomLike(np.zeros([3, 3, 3], { dtype: "float64" }), 4);
    for (const loss of [
      (xy: Array) => np.sum(R.toRGBA(R.softRasterize({ xy, z: faces.z }, attrs, 8, 8, { sigma: 1e-3 }))),
      (xy: Array) =>
        np.sum(
          R.toRGBA(
            R.softRasterize({ xy, z: faces.z }, attrs, 8, 8, {
              sigma: 1e-3,
              perspectiveCorrect: true,
              aggrRgb: "hard",
            }),
          ),
        ),
      (xy: Array) => {
        const r = R.dibrRasterize({ xy, z: faces.z }, attrs, 8, 8, {
          faceCulling: "none",
          boxLen: 0.3,
          perspectiveCorrect: true,
        });
        return np.add(np.sum(r.features!), np.sum(r.alpha));
      },
    ]) {
      const g = grad(loss)(faces.xy);
      expect([...g.dataSync()].every(Number.isFinite)).toBe(true);
    }
    // A mesh vertex behind the eye: dropped face, finite gradients for the rest.
    const mesh = {
      ...smallMesh(),
      vertices: f64([
        [-0.7, -0.5, 0.1],
        [0.6, -0.6, -0.2],
        [-0.2, 0.7, -3.5],
        [0.75, 0.55, 0.3],
      ]),
    };
    const gm = grad((v: Array) => np.sum(R.render({ ...mesh, vertices: v }, cam(), lights(), undefined, { width: 8 })))(
      mesh.vertices,
    );
    expect([...gm.dataSync()].every(Number.isFinite)).toBe(true);
  });
});
