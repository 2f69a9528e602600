/**
 * Scenes: several meshes (object + ground plane) rasterized together with a background colour,
 * mesh generators and normals, shading modes, textures on meshes, non-square images.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { init, np } from "../src/index.js";
import * as R from "../src/render/index.js";
import { f64, maxAbsDiff, pixel } from "./render-helpers.js";

beforeAll(async () => {
  await init({ backend: "cpu" });
});

const dt = "float64" as const;

describe("mesh generators and normals", () => {
  const outward = (d: R.MeshData, centre: number[]) => {
    const m = R.meshFromData(d, { dtype: dt });
    const n = R.faceNormals(m.vertices, m.faces);
    const c = np.sub(np.mean(np.take(m.vertices, m.faces, 0), 1), f64(centre));
    return np.min(np.sum(np.mul(n, c), -1)).item();
  };
  it("icosphere, UV sphere and box are wound CCW seen from outside; the plane faces +y", () => {
    expect(R.icosphereData(2).faces.length).toBe(320);
    expect(outward(R.icosphereData(2, 1.5, [1, 2, 3]), [1, 2, 3])).toBeGreaterThan(0);
    expect(R.uvSphereData(6, 8).faces.length).toBe(2 * 8 * 5);
    expect(outward(R.uvSphereData(6, 8), [0, 0, 0])).toBeGreaterThan(0);
    expect(outward(R.boxData([0.5, 1, 2]), [0, 0, 0])).toBeGreaterThan(0);
    const p = R.meshFromData(R.planeData(2, 3, 0.5), { dtype: dt });
    const n = R.normalize(R.faceNormals(p.vertices, p.faces));
    expect(maxAbsDiff(n, np.broadcastTo(f64([0, 1, 0]), n.shape))).toBeLessThan(1e-12);
  });
  it("vertex normals of a sphere point along the position", () => {
    const m = R.meshFromData(R.icosphereData(2), { dtype: dt });
    const n = R.vertexNormals(m.vertices, m.faces);
    expect(np.min(np.sum(np.mul(n, m.vertices), -1)).item()).toBeGreaterThan(0.99);
    expect(maxAbsDiff(np.sum(np.square(n), -1), np.ones([m.vertices.shape[0]!], { dtype: dt }))).toBeLessThan(1e-12);
  });
});

describe("object + ground plane + background", () => {
  const cam = R.perspectiveCamera({ eye: [0, 1.2, -3.5], at: [0, 0.3, 0], dtype: dt });
  const ball = R.meshFromData(R.icosphereData(1, 0.5, [0, 0.5, 0]), { dtype: dt, colors: [0.9, 0.1, 0.1] });
  const ground = R.groundPlane({ size: 3, y: 0, subdivisions: 2, colors: [0.1, 0.8, 0.1], dtype: dt });
  const light: R.Lights = { ambient: 1 };
  const bg = [0.2, 0.3, 0.9];
  for (const ras of ["softras", "dibr"] as const) {
    const opts: R.RenderOptions = {
      width: 24,
      rasterizer: ras,
      background: bg,
      softras: { sigma: 1e-3 },
      dibr: { boxLen: 0.05 },
    };
    it(`${ras}: two meshes render like their concatenation; background where empty; the ball hides the ground`, () => {
      const two = R.render([ball, ground], cam, light, undefined, opts);
      const V = ball.vertices.shape[0]!;
      const merged: R.Mesh = {
        vertices: np.concatenate([ball.vertices, ground.vertices], 0),
        faces: np.concatenate([ball.faces, np.add(ground.faces, V)], 0),
        colors: np.concatenate(
          [
            np.broadcastTo(f64([0.9, 0.1, 0.1]), [V, 3]),
            np.broadcastTo(f64([0.1, 0.8, 0.1]), [ground.vertices.shape[0]!, 3]),
          ],
          0,
        ),
      };
      expect(maxAbsDiff(two, R.render(merged, cam, light, undefined, opts))).toBeLessThan(1e-12);
      // top row: sky → background colour, alpha 0
      [0, 1, 2].forEach((k) => expect(pixel(two, 0, 12, k)).toBeCloseTo(bg[k]!, 12));
      expect(pixel(two, 0, 12, 3)).toBe(0);
      // the ball's projected centre shows the ball, a bottom pixel shows the ground
      const c = R.projectPoints(cam, f64([[0, 0.5, 0]])).xy.dataSync();
      const col = Math.round((c[0]! * 24 + 23) / 2),
        row = Math.round((23 - c[1]! * 24) / 2);
      expect(pixel(two, row, col, 0)).toBeCloseTo(0.9, 6);
      expect(pixel(two, 17, 4, 1)).toBeCloseTo(0.8, 6);
    });
  }
  it("flat, Gouraud and Phong agree on a directionally lit plane; Phong equals shade() at the pixel's 3D point", () => {
    const plane = R.groundPlane({ size: 2, y: -0.3, subdivisions: 1, colors: [0.6, 0.6, 0.6], dtype: dt });
    const dir: R.Lights = { ambient: 0.2, directional: [{ direction: [0.3, 1, -0.2], color: 0.8 }] };
    const img = (shading: R.Shading, l: R.Lights, m: R.Material) =>
      R.render(plane, cam, l, m, { width: 16, rasterizer: "dibr", shading, dibr: { perspectiveCorrect: true } });
    const flat = img("flat", dir, {});
    expect(maxAbsDiff(flat, img("gouraud", dir, {}))).toBeLessThan(1e-12);
    expect(maxAbsDiff(flat, img("phong", dir, {}))).toBeLessThan(1e-12);
    // Point light + specular: per-pixel lighting at the ray–plane intersection of the pixel centre.
    const point: R.Lights = { ambient: 0.2, point: [{ position: [0.3, 1.5, -0.5], color: 0.8 }] };
    const shiny: R.Material = { specular: 0.7, shininess: 12 };
    const phong = img("phong", point, shiny);
    const eye = cam.eye.dataSync(),
      Rm = cam.rotation.dataSync(),
      fy = cam.focal.dataSync()[1]!;
    let checked = 0;
    for (let k = 0; k < 16 * 16; k += 3) {
      const r = Math.floor(k / 16),
        c = k % 16;
      if (pixel(phong, r, c, 3) !== 1) continue;
      const dc = [(2 * c + 1 - 16) / 16 / fy, (16 - 2 * r - 1) / 16 / fy, 1]; // camera-space ray
      const dw = [0, 1, 2].map((k) => Rm[k]! * dc[0]! + Rm[3 + k]! * dc[1]! + Rm[6 + k]! * dc[2]!); // Rᵀ·d
      const t = (-0.3 - eye[1]!) / dw[1]!;
      const p = [0, 1, 2].map((k) => eye[k]! + t * dw[k]!);
      const want = R.shade(f64([0, 1, 0]), f64(p), f64([0.6, 0.6, 0.6]), cam.eye, point, shiny).dataSync();
      [0, 1, 2].forEach((k) => expect(pixel(phong, r, c, k)).toBeCloseTo(want[k]!, 9));
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(5);
    expect(maxAbsDiff(phong, img("gouraud", point, shiny))).toBeGreaterThan(1e-3);
  });
  it("faceColors give one colour per face", () => {
    const quad = R.groundPlane({ size: 2, y: -0.3, subdivisions: 1, dtype: dt });
    const img = R.render(
      {
        ...quad,
        faceColors: f64([
          [1, 0, 0],
          [0, 0, 1],
        ]),
      },
      cam,
      { ambient: 1 },
      undefined,
      { width: 16, rasterizer: "dibr" },
    );
    const px = [...img.dataSync()];
    const colours = new Set<string>();
    for (let i = 0; i < px.length; i += 4)
      if (px[i + 3] === 1)
        colours.add(
          px
            .slice(i, i + 3)
            .map((v) => v.toFixed(6))
            .join(","),
        );
    expect([...colours].sort()).toEqual(["0.000000,0.000000,1.000000", "1.000000,0.000000,0.000000"]);
  });
});

describe("textures on meshes", () => {
  it("a fronto-parallel textured quad shows the bilinear texture sample at each pixel's uv (DIB-R)", () => {
    // Quad in the plane z = 0 facing the default SoftRas camera; uv = ((x+1)/2, (y+1)/2) over x, y ∈ [−1, 1].
    const tex = np.reshape(f64(Array.from({ length: 4 * 6 * 3 }, (_, i) => ((i * 37) % 11) / 10)), [4, 6, 3]);
    const quad: R.Mesh = {
      vertices: f64([
        [-1, -1, 0],
        [1, -1, 0],
        [1, 1, 0],
        [-1, 1, 0],
      ]),
      faces: np.array(
        [
          [0, 3, 2],
          [0, 2, 1],
        ],
        { dtype: "int32" },
      ),
      uvs: f64([
        [0, 0],
        [1, 0],
        [1, 1],
        [0, 1],
      ]),
      texture: tex,
    };
    const cam = R.perspectiveCamera({ dtype: dt }); // the plane z = 0 sits at depth 2.732: NDC = x/(2.732·tan30°)
    const img = R.render(quad, cam, { ambient: 1 }, undefined, { width: 16, rasterizer: "dibr" });
    const zc = 1 / Math.tan(Math.PI / 6) + 1; // world units per NDC unit at that depth: zc·tan 30° = 1 + tan 30°
    let checked = 0;
    for (const [r, c] of [
      [3, 4],
      [8, 8],
      [12, 5],
      [6, 11],
    ] as const) {
      const x = ((2 * c + 1 - 16) / 16) * zc * Math.tan(Math.PI / 6),
        y = ((16 - 2 * r - 1) / 16) * zc * Math.tan(Math.PI / 6);
      if (Math.abs(x) >= 1 || Math.abs(y) >= 1) continue;
      const want = R.sampleBilinear(tex, f64([(x + 1) / 2, (y + 1) / 2])).dataSync();
      [0, 1, 2].forEach((k) => expect(pixel(img, r, c, k)).toBeCloseTo(want[k]!, 10));
      checked++;
    }
    expect(checked).toBe(4);
  });
});

describe("non-square images", () => {
  it("DIB-R coverage equals the pixel centres inside the triangle projected with K·[R|t] (W = 24, H = 16)", () => {
    const W = 24,
      H = 16;
    const cam = R.perspectiveCamera({ distance: 4, elevation: 10, azimuth: 20, aspect: W / H, dtype: dt });
    const P = [
      [-1.8, -0.8, 0.4],
      [1.6, -0.4, -0.6],
      [0.2, 1.8, 0.2],
    ];
    const K = R.intrinsics(cam, W, H),
      Rt = R.extrinsics(cam);
    const uv = P.map((p) => {
      const q = np.matmul(K, np.matmul(Rt, f64([...p, 1]))).dataSync();
      return [q[0]! / q[2]!, q[1]! / q[2]!] as const;
    });
    const tri: R.Mesh = { vertices: f64(P), faces: np.array([[0, 1, 2]], { dtype: "int32" }), colors: [1, 1, 1] };
    const img = R.render(tri, cam, { ambient: 1 }, undefined, {
      width: W,
      height: H,
      rasterizer: "dibr",
      dibr: { faceCulling: "none", boxLen: 0 },
    });
    expect(img.shape).toEqual([H, W, 4]);
    const edge = (a: readonly number[], b: readonly number[], u: number, v: number) =>
      (u - a[0]!) * (b[1]! - a[1]!) - (v - a[1]!) * (b[0]! - a[0]!);
    let covered = 0;
    for (let v = 0; v < H; v++)
      for (let u = 0; u < W; u++) {
        const e = [edge(uv[0]!, uv[1]!, u, v), edge(uv[1]!, uv[2]!, u, v), edge(uv[2]!, uv[0]!, u, v)];
        const inside = e.every((x) => x >= 0) || e.every((x) => x <= 0);
        expect(pixel(img, v, u, 3) === 1).toBe(inside);
        if (inside) covered++;
      }
    expect(covered).toBeGreaterThan(20);
  });
});
