/**
 * The ray-traced second image formation (render.traceVideo): its masks line up with the
 * rasterizer's silhouettes under the same camera (look-at and calibrated), shadows fall on the
 * ground, noise is seeded, and bad input is a clear error.
 */
import { describe, expect, it } from "vitest";
import { init, models, np, render, sysid } from "../src/index.js";

await init({ backend: "cpu" });

const ball = models.meshes.icosphere(0.3, 2);
const at = (dy: number) => Float64Array.from(ball.vertices, (x, i) => (i % 3 === 1 ? x + dy : x));
const albedo = new Float32Array(ball.faces.length).fill(0.7);
const W = 40,
  H = 32;

/** Rasterized soft silhouette [H·W] of the ball (sharp σ: a hundredth of a pixel², no pruning of faces). */
function rasterMask(camera: sysid.CameraSpec, vertices: Float64Array): Float32Array {
  const rgba = render.render(
    {
      vertices: np.reshape(np.array(vertices, { dtype: "float32" }), [-1, 3]),
      faces: np.reshape(np.array(ball.faces, { dtype: "int32" }), [-1, 3]),
    },
    sysid.renderCamera(camera, W, H),
    { ambient: 1 },
    undefined,
    { width: W, height: H, softras: { sigma: 0.01 * (2 / H) ** 2, gamma: 1e-4, distEps: 1e-8 } },
  );
  return np.split(rgba, [3], -1)[1]!.dataSync() as Float32Array;
}

describe("traceVideo", () => {
  const cameras: Record<string, sysid.CameraSpec> = {
    "look-at": { eye: [0.4, 1.1, -2.2], at: [0, 0.3, 0], fovY: 40 },
    calibrated: {
      intrinsics: { fx: 50, fy: 48, cx: 22.5, cy: 14, width: W, height: H },
      pose: {
        R: [
          [1, 0, 0],
          [0, -1, 0],
          [0, 0, -1],
        ],
        t: [0.1, 0.3, 2.4],
      },
    },
  };
  for (const [name, camera] of Object.entries(cameras)) {
    it(`its masks are the rasterizer's silhouettes under the same ${name} camera`, () => {
      const v = at(0.35);
      const traced = render.traceVideo(
        { frames: [v], faces: ball.faces, albedo },
        { camera: sysid.hostCamera(camera, W, H), width: W, height: H, light: [0, 1, 0], samples: 6, noise: 0 },
      );
      const soft = rasterMask(camera, v);
      const moments = (m: ArrayLike<number>) => {
        let a = 0,
          x = 0,
          y = 0;
        for (let p = 0; p < W * H; p++) {
          a += m[p]!;
          x += m[p]! * (p % W);
          y += m[p]! * Math.floor(p / W);
        }
        return { area: a, x: x / a, y: y / a };
      };
      const t = moments(traced.masks),
        r = moments(soft);
      expect(t.area).toBeGreaterThan(30); // the ball covers tens of pixels
      // Same place to a fraction of a pixel (measured: ≤ 0.14 px); the sigmoid edge adds a thin rim of half-covered
      // pixels.
      expect(Math.abs(t.x - r.x)).toBeLessThan(0.25);
      expect(Math.abs(t.y - r.y)).toBeLessThan(0.25);
      expect(r.area / t.area).toBeGreaterThan(0.95);
      expect(r.area / t.area).toBeLessThan(1.1);
    });
  }

  it("casts the object's shadow on the ground, appends the plate, and seeds its noise", () => {
    const camera = sysid.hostCamera({ eye: [0, 1.5, -2.5], at: [0, 0, 0], fovY: 40 }, W, H);
    const opts = { camera, width: W, height: H, light: [0, 1, 0] as const, samples: 2, noise: 0 };
    const v = at(0.45);
    const t = render.traceVideo({ frames: [v], faces: ball.faces, albedo }, opts, true);
    expect(t.images.length).toBe(2 * W * H * 3);
    expect(t.masks.slice(W * H).every((m) => m === 0)).toBe(true); // the plate: no object
    // Straight below the ball (light from +y): ground pixels that are not the object are darker than on the plate.
    const p = sysid.hostCamera({ eye: [0, 1.5, -2.5], at: [0, 0, 0], fovY: 40 }, W, H);
    let darker = 0;
    for (let q = 0; q < W * H; q++) {
      if (t.masks[q]! > 0) continue;
      const d = render.pinholeRay(p, q % W, Math.floor(q / W), W, H);
      if (d[1] >= 0) continue;
      const s = -p.eye[1] / d[1],
        x = p.eye[0] + s * d[0],
        z = p.eye[2] + s * d[2];
      if (Math.hypot(x, z) < 0.2 && t.images[3 * q]! < 0.8 * t.images[3 * (W * H + q)]!) darker++;
    }
    expect(darker).toBeGreaterThan(5);
    const noisy = (seed: number) =>
      render.traceVideo({ frames: [v], faces: ball.faces, albedo }, { ...opts, noise: 0.02, seed }).images;
    expect(noisy(3)).toEqual(noisy(3));
    expect(noisy(3)).not.toEqual(noisy(4));
  });

  // That pixel is sky·colour + ground ⊙ (ambient + intensity·L_y·lit).
  it("traceGround's layers are the traced background: where rays miss the object they give traceVideo's pixel", () => {
    const camera = sysid.hostCamera({ eye: [0, 1.5, -2.5], at: [0, 0, 0], fovY: 40 }, W, H);
    const light: [number, number, number] = [0.5, 1, 0.3],
      L = Math.hypot(...light),
      sky: [number, number, number] = [0.2, 0.5, 0.9];
    const opts = { camera, width: W, height: H, light, samples: 3, groundColor: render.woodGrain };
    const v = at(0.45);
    const traced = render.traceVideo(
      { frames: [v], faces: ball.faces, albedo },
      { ...opts, ambient: 0.25, intensity: 0.8, sky, noise: 0 },
    );
    const g = render.traceGround(v, ball.faces, opts);
    let compared = 0,
      shadowed = 0;
    for (let p = 0; p < W * H; p++) {
      if (g.groundLit[3 * p]! < g.ground[3 * p]! - 1e-6) shadowed++;
      if (traced.masks[p]! > 0) continue;
      for (let c = 0; c < 3; c++) {
        const layered =
          g.sky[p]! * sky[c]! + 0.25 * g.ground[3 * p + c]! + 0.8 * (light[1] / L) * g.groundLit[3 * p + c]!;
        expect(traced.images[3 * p + c]!).toBeCloseTo(Math.min(1, layered), 5);
      }
      compared++;
    }
    expect(compared).toBeGreaterThan((W * H) / 2);
    expect(shadowed).toBeGreaterThan(5); // the ball's shadow
    // Without an object nothing is shadowed; the sky and ground fractions of a pixel add up to 1 (a plain ground of
    // albedo 1).
    const plain = render.traceGround(null, ball.faces, { ...opts, groundColor: () => [1, 1, 1] });
    for (let p = 0; p < W * H; p++) {
      expect(plain.groundLit[3 * p]!).toBe(plain.ground[3 * p]!);
      expect(plain.sky[p]! + plain.ground[3 * p]!).toBeCloseTo(1, 6);
    }
  });

  it("bad input is a clear error", () => {
    const camera = sysid.hostCamera({ eye: [0, 1, -3], at: [0, 0, 0], fovY: 40 }, W, H);
    const opts = { camera, width: W, height: H, light: [0, 1, 0] as const };
    expect(() => render.traceVideo({ frames: [at(0)], faces: ball.faces, albedo: albedo.subarray(3) }, opts)).toThrow(
      /albedo must hold 3 values per face/,
    );
    const broken = at(0);
    broken[4] = NaN;
    expect(() => render.traceVideo({ frames: [broken], faces: ball.faces, albedo }, opts)).toThrow(
      /vertex 1 is not finite/,
    );
    expect(() => render.traceVideo({ frames: [at(0)], faces: ball.faces, albedo }, { ...opts, width: 0 })).toThrow(
      /positive integers/,
    );
  });
});
