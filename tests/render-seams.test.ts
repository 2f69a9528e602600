/**
 * Joined shared edges (mesh-edges.ts, SoftRasOptions.sharedEdges): a subdivided ground plane has
 * no seams along its inner triangle edges (SoftRas' per-face coverage gives ¾ there), in the
 * array program and the fused CPU kernels; the outline outside the plane and a closed mesh's whole
 * image stay SoftRas' own; vertex gradients of a joined plane agree with central differences.
 * (WebGPU: tests/webgpu-fused-raster.test.ts.)
 */
import { beforeAll, describe, expect, it } from "vitest";
import { grad, init, np, type Array } from "../src/index.js";
import * as R from "../src/render/index.js";
import { directionalErrors, pseudoRandom } from "./render-helpers.js";

beforeAll(async () => {
  await init({ backend: "cpu" });
});

const S = 64;
const camera = (dtype: "float32" | "float64" = "float32") =>
  R.perspectiveCamera({
    eye: [0.3, 1.2, -2.2],
    at: [0, 0, 0],
    up: [0, 1, 0],
    fovY: 60,
    aspect: 1,
    near: 0.5,
    far: 20,
    dtype,
  });
const unlit: R.Lights = { ambient: 1, directional: [] };
const plane = () => R.groundPlane({ size: 1.6, subdivisions: 4, colors: [0.8, 0.8, 0.8] });

function alphaOf(mesh: R.Mesh, softras: R.SoftRasOptions, size = S): Float64Array {
  const img = R.render(mesh, camera(), unlit, undefined, { width: size, background: [0, 0, 0], softras });
  return Float64Array.from({ length: size * size }, (_, i) => img.dataSync()[4 * i + 3]!);
}

/**
 * Pixels whose centre lies inside the plane's screen quad by at least `margin` NDC (so its own outline is excluded).
 */
function interiorPixels(size: number, margin: number): number[] {
  const cam = camera("float64");
  const corners = R.projectPoints(
    cam,
    np.array(
      [
        [-0.8, 0, -0.8],
        [0.8, 0, -0.8],
        [0.8, 0, 0.8],
        [-0.8, 0, 0.8],
      ],
      { dtype: "float64" },
    ),
  ).xy.dataSync();
  const q = [0, 1, 2, 3].map((k) => [corners[2 * k]!, corners[2 * k + 1]!] as const);
  const out: number[] = [];
  for (let r = 0; r < size; r++)
    for (let c = 0; c < size; c++) {
      const px = (2 * c + 1 - size) / size,
        py = (size - 2 * r - 1) / size;
      const dists = q.map((a, k) => {
        const b = q[(k + 1) % 4]!,
          ex = b[0] - a[0],
          ey = b[1] - a[1];
        return ((px - a[0]) * ey - (py - a[1]) * ex) / Math.hypot(ex, ey); // signed distance to edge k
      });
      if (dists.every((d) => d > margin) || dists.every((d) => d < -margin)) out.push(r * size + c);
    }
  return out;
}

describe("joined shared edges", () => {
  const interior = interiorPixels(S, 0.05);
  it("the interior has enough pixels to mean something", () => {
    expect(interior.length).toBeGreaterThan(400);
  });

  for (const fused of [false, true]) {
    const mode = fused ? "fused" : "array program";
    it(`${mode}: a subdivided ground plane has alpha ≥ 0.999 at every interior pixel`, () => {
      const joined = alphaOf(plane(), { fused, sharedEdges: "join" });
      const worst = Math.min(...interior.map((i) => joined[i]!));
      expect(worst).toBeGreaterThanOrEqual(0.999);
      // SoftRas' per-face edges ("split", the default) leave ¾-coverage seams on the same pixels' grid lines.
      const split = alphaOf(plane(), { fused });
      expect(Math.min(...interior.map((i) => split[i]!))).toBeLessThan(0.9);
    });

    it(`${mode}: the outline outside the plane is SoftRas' own, and a closed box renders identically`, () => {
      const joined = alphaOf(plane(), { fused, sharedEdges: "join" }),
        split = alphaOf(plane(), { fused });
      // Only near a border vertex (within the prune radius of a joined edge that ends there, so a few radii of it at
      // shallow angles) can a face's nearest point outside have been on a now-joined edge; there coverage may only
      // drop (joined edges no longer count), elsewhere it is unchanged.
      const border = R.projectPoints(
        camera("float64"),
        np.array(
          R.planeData(1.6, 4).positions.filter((p) => Math.abs(p[0]!) > 0.79 || Math.abs(p[2]!) > 0.79),
          { dtype: "float64" },
        ),
      ).xy.dataSync();
      const radius = R.pruneRadius(1e-5) * 4;
      const nearBorderVertex = (i: number) => {
        const px = (2 * (i % S) + 1 - S) / S,
          py = (S - 2 * Math.floor(i / S) - 1) / S;
        for (let k = 0; k < border.length; k += 2)
          if (Math.hypot(px - border[k]!, py - border[k + 1]!) < radius) return true;
        return false;
      };
      let outline = 0,
        near = 0;
      for (let i = 0; i < S * S; i++) {
        if (!(split[i]! > 1e-3 && split[i]! < 0.5)) continue;
        outline++;
        if (nearBorderVertex(i)) {
          near++;
          expect(joined[i]!, `pixel ${i}`).toBeLessThanOrEqual(split[i]! + 1e-7);
          expect(joined[i]!).toBeGreaterThan(split[i]! - 0.05);
        } else expect(Math.abs(joined[i]! - split[i]!), `pixel ${i}`).toBeLessThan(1e-6);
      }
      expect(outline - near).toBeGreaterThan(10);
      const box = R.meshFromData(R.boxData([0.4, 0.3, 0.35], [0, 0.3, 0]), { colors: [0.8, 0.3, 0.2] });
      const cam = camera();
      const render = (sharedEdges: "join" | "split") =>
        R.render(box, cam, undefined, undefined, { width: S, softras: { fused, sharedEdges } }).dataSync();
      expect([...render("join")]).toEqual([...render("split")]);
    });
  }

  it("the array program and the fused kernels agree on a joined plane (colour and alpha)", () => {
    const lights: R.Lights = { ambient: 0.4, directional: [{ direction: [0.3, 1, -0.4], color: 0.6 }] };
    const img = (fused: boolean) =>
      R.render(plane(), camera(), lights, undefined, { width: 32, softras: { fused, sharedEdges: "join" } }).dataSync();
    const a = img(false),
      b = img(true);
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
    expect(worst).toBeLessThan(1e-5);
  });

  for (const fused of [false, true]) {
    const mode = fused ? "fused" : "array program";
    it(`${mode}: vertex gradients of a joined plane match central differences (float64)`, () => {
      const W = 16;
      const mesh = R.meshFromData(R.planeData(1.2, 2), { dtype: "float64", colors: [0.7, 0.5, 0.3] });
      const weights = np.reshape(np.array(pseudoRandom(W * W * 4, 5), { dtype: "float64" }), [W, W, 4]);
      const lights: R.Lights = { ambient: 0.3, directional: [{ direction: [0.3, 0.8, -0.6], color: 0.6 }] };
      const cam = camera("float64");
      const loss = (v: Array) =>
        np.sum(
          np.mul(
            weights,
            R.render({ ...mesh, vertices: v }, cam, lights, undefined, {
              width: W,
              softras: { sigma: 1e-2, gamma: 1e-2, distEps: 1e-10, fused, sharedEdges: "join" },
            }),
          ),
        );
      const g = grad(loss)(mesh.vertices);
      expect([...g.dataSync()].every(Number.isFinite)).toBe(true);
      const errs = directionalErrors(loss, g, mesh.vertices, [21, 22, 23]);
      for (const e of errs) expect(e.rel, `ad ${e.ad} vs fd ${e.fd}`).toBeLessThan(2e-6);
      expect(errs.some((e) => Math.abs(e.ad) > 1e-4)).toBe(true);
    });
  }
});
