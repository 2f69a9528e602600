/**
 * RISP's target (test) domain: the ray tracer (render.traceVideo: supersampling, shadows on a
 * textured ground, Blinn–Phong highlights, sensor noise) under rendering configurations drawn
 * from other distributions than ψ's — light from the side and behind, tinted albedos, a wood or
 * checker ground — the "unseen rendering" the predictors are tested and the tasks run under.
 */
import type { Array } from "../core/array.js";
import type { Rng } from "../core/host-rng.js";
import { np } from "../core/np/index.js";
import * as render from "../render/index.js";
import { hostCamera } from "../sysid/scenes/camera.js";
import { checkPosed, type RispEnv } from "./env.js";
import type { Vec3 } from "./psi.js";

/** One rendering configuration of the target (ray-traced) domain. */
export interface TargetConfig {
  readonly ambient: number;
  readonly light: Vec3;
  readonly intensity: number;
  readonly albedo: Vec3;
  readonly specular: number;
  readonly sky: Vec3;
  readonly ground: "wood" | { readonly checker: readonly [Vec3, Vec3] };
  /** The ground texture's brightness factor (1 if absent): `reverseContrast` darkens it. */
  readonly groundLevel?: number;
}

const hsv = (h: number, s: number, v: number): Vec3 => {
  const f = (n: number) => {
    const k = (n + h * 6) % 6;
    return v - v * s * Math.max(0, Math.min(k, 4 - k, 1));
  };
  return [f(5), f(3), f(1)];
};

/**
 * The target distribution: light from the side or behind, tinted albedo, strong highlights, a sky and a wood or checker
 * ground.
 */
export function sampleTargetConfig(rng: Rng): TargetConfig {
  const az = (rng.uniform(0, 1) < 0.5 ? -1 : 1) * rng.uniform(1.2, 2.2),
    el = rng.uniform(0.4, 1);
  const colour = (): Vec3 => [rng.uniform(0.3, 0.9), rng.uniform(0.3, 0.9), rng.uniform(0.3, 0.9)];
  return {
    ambient: rng.uniform(0.15, 0.4),
    light: [Math.cos(el) * Math.sin(az), Math.sin(el), -Math.cos(el) * Math.cos(az)],
    intensity: rng.uniform(0.6, 1),
    albedo: hsv(rng.uniform(0, 1), rng.uniform(0.3, 0.7), rng.uniform(0.75, 1)),
    specular: rng.uniform(0.3, 0.7),
    sky: colour(),
    ground: rng.uniform(0, 1) < 0.5 ? "wood" : { checker: [colour(), colour()] },
  };
}

/**
 * The same configuration with the body's contrast against the ground reversed from the tasks'
 * own frames' (a dark body on a mid-grey ground, under ψ's middle): a near-white body in strong
 * light on a ground darkened to 0.1–0.2 of its brightness. Wherever the two images'
 * body-minus-ground contrasts have opposite signs, a pixelwise MSE is lower with the silhouettes
 * apart than overlapping, so it pushes the estimate away from the truth: the kind of shift RISP's
 * pixelwise rows fail under. Draws from its own `rng`, so the configuration it starts from, and
 * everything drawn after it, stay as they were.
 */
export function reverseContrast(c: TargetConfig, rng: Rng): TargetConfig {
  return {
    ...c,
    albedo: hsv(rng.uniform(0, 1), rng.uniform(0, 0.3), 1),
    intensity: rng.uniform(0.9, 1),
    groundLevel: rng.uniform(0.1, 0.2),
  };
}

/** The ray tracer's colours of the object [F·3]: each face in its corners' mean pattern colour, tinted by `albedo`. */
export function faceAlbedo(env: RispEnv, albedo: Vec3): Float32Array {
  const F = env.faces.length / 3,
    out = new Float32Array(3 * F);
  for (let f = 0; f < F; f++)
    for (let d = 0; d < 3; d++) {
      out[3 * f + d] = (albedo[d] * [0, 1, 2].reduce((s, j) => s + env.pattern[3 * env.faces[3 * f + j]! + d]!, 0)) / 3;
    }
  return out;
}

/**
 * Target images [n, R, R, 3] of posed vertices under one configuration (3×3 rays per pixel, σ = 0.02 noise, seeded).
 */
export function targetImages(
  env: RispEnv,
  R: number,
  vertices: readonly Float64Array[],
  c: TargetConfig,
  seed: number,
): Array {
  checkPosed(env, vertices);
  const albedo = faceAlbedo(env, c.albedo);
  const texture =
    c.ground === "wood"
      ? render.woodGrain
      : (
          (cols) => (x: number, z: number) =>
            cols[(Math.floor(4 * x) + Math.floor(4 * z)) & 1]!
        )(c.ground.checker);
  const level = c.groundLevel ?? 1;
  const groundColor =
    level === 1
      ? texture
      : (x: number, z: number): Vec3 => {
          const [r, g, b] = texture(x, z);
          return [level * r, level * g, level * b];
        };
  const video = render.traceVideo(
    { frames: vertices, faces: env.faces, albedo, specular: c.specular, shininess: 40 },
    {
      camera: hostCamera(env.camera, R, R),
      width: R,
      height: R,
      light: c.light,
      intensity: c.intensity,
      ambient: c.ambient,
      groundY: env.groundY,
      groundColor,
      sky: c.sky,
      samples: 3,
      noise: 0.02,
      seed,
    },
  );
  return np.array(video.images, { dtype: "float32" }).reshape([vertices.length, R, R, 3]);
}
