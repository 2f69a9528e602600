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
import { backgroundLayers, softImage, type GroundTexture, type SoftLook } from "./looks.js";
import {
  checkPsi,
  DEFAULT_PSI,
  hostLightDirection,
  PSI_NAMES,
  type PsiDistribution,
  type PsiName,
  type Vec3,
} from "./psi.js";

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

/** The ranges a family of test configurations is drawn from (each uniform; the azimuth's sign at random). */
interface ConfigRanges {
  readonly azimuth: readonly [number, number];
  readonly elevation: readonly [number, number];
  readonly ambient: readonly [number, number];
  /** The albedo's saturation (its hue any, its value 0.75–1). */
  readonly saturation: readonly [number, number];
  readonly specular: readonly [number, number];
}

/** A configuration: light, levels, albedo and specular from `r`, a random sky and a wood or random checker ground. */
function drawConfig(rng: Rng, r: ConfigRanges): TargetConfig {
  const az = (rng.uniform(0, 1) < 0.5 ? -1 : 1) * rng.uniform(...r.azimuth),
    el = rng.uniform(...r.elevation);
  const colour = (): Vec3 => [rng.uniform(0.3, 0.9), rng.uniform(0.3, 0.9), rng.uniform(0.3, 0.9)];
  return {
    ambient: rng.uniform(...r.ambient),
    light: hostLightDirection(az, el),
    intensity: rng.uniform(0.6, 1),
    albedo: hsv(rng.uniform(0, 1), rng.uniform(...r.saturation), rng.uniform(0.75, 1)),
    specular: rng.uniform(...r.specular),
    sky: colour(),
    ground: rng.uniform(0, 1) < 0.5 ? "wood" : { checker: [colour(), colour()] },
  };
}

/**
 * The target distribution: light from the side or behind, tinted albedo, strong highlights, a sky and a wood or checker
 * ground.
 */
export const sampleTargetConfig = (rng: Rng): TargetConfig =>
  drawConfig(rng, {
    azimuth: [1.2, 2.2],
    elevation: [0.4, 1],
    ambient: [0.15, 0.4],
    saturation: [0.3, 0.7],
    specular: [0.3, 0.7],
  });

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

/** A configuration's ground texture (the tracer's and, for `softConfigImages`, SoftRas' background), darkened by
 * its `groundLevel`. */
export function configGround(c: TargetConfig): GroundTexture {
  const texture =
    c.ground === "wood"
      ? render.woodGrain
      : (
          (cols) => (x: number, z: number) =>
            cols[(Math.floor(4 * x) + Math.floor(4 * z)) & 1]!
        )(c.ground.checker);
  const level = c.groundLevel ?? 1;
  return level === 1
    ? texture
    : (x: number, z: number): Vec3 => {
        const [r, g, b] = texture(x, z);
        return [level * r, level * g, level * b];
      };
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
      groundColor: configGround(c),
      sky: c.sky,
      samples: 3,
      noise: 0.02,
      seed,
    },
  );
  return np.array(video.images, { dtype: "float32" }).reshape([vertices.length, R, R, 3]);
}

/** A ground texture's mean colour over the floor the cameras see (a 4 m square about the origin). */
function meanColour(texture: GroundTexture): Vec3 {
  const n = 64,
    sum = [0, 0, 0];
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      const c = texture(-2 + (4 * (i + 0.5)) / n, -2 + (4 * (j + 0.5)) / n);
      for (let d = 0; d < 3; d++) sum[d]! += c[d]! / (n * n);
    }
  return sum as unknown as Vec3;
}

/**
 * ψ of a configuration: its light's azimuth and elevation, levels, albedo, specular and sky as ψ's entries, its ground
 * texture's mean colour as the ground's (`softConfigImages` draws the texture over that colour).
 */
export function configPsi(c: TargetConfig): number[] {
  const [x, y, z] = c.light;
  return [
    c.ambient,
    Math.atan2(x, -z),
    Math.asin(Math.max(-1, Math.min(1, y))),
    c.intensity,
    ...c.albedo,
    c.specular,
    ...c.sky,
    ...meanColour(configGround(c)),
  ];
}

/**
 * A training look as a ray-traced configuration (the renderer's gap alone: ψ from the training distribution, its
 * ground a checker of ψ's ground colour in two shades, as one of the training grounds' families).
 */
export function configOfPsi(psi: readonly number[]): TargetConfig {
  const ground = psi.slice(11, 14) as unknown as Vec3;
  const shade = (k: number): Vec3 => [k * ground[0], k * ground[1], k * ground[2]];
  return {
    ambient: psi[0]!,
    light: hostLightDirection(psi[1]!, psi[2]!),
    intensity: psi[3]!,
    albedo: psi.slice(4, 7) as unknown as Vec3,
    specular: psi[7]!,
    sky: psi.slice(8, 11) as unknown as Vec3,
    ground: { checker: [shade(0.75), shade(1.25)] },
  };
}

/**
 * SoftRas images [n, R, R, 3] of posed vertices under a configuration (its ψ, `configPsi`, over its own ground): the
 * training renderer outside the training looks — the ψ gap without the renderer's.
 */
export function softConfigImages(
  env: RispEnv,
  R: number,
  vertices: readonly Float64Array[],
  c: TargetConfig,
  look: SoftLook = {},
): Array {
  checkPosed(env, vertices);
  const values = configPsi(c),
    psi = np.array(values, { dtype: "float32" });
  // softImage tints the background's ground by ψ's ground colour: the texture relative to its mean.
  const texture = configGround(c),
    mean = values.slice(11, 14);
  const relative: GroundTexture = (x, z) => {
    const [r, g, b] = texture(x, z);
    return [r / mean[0]!, g / mean[1]!, b / mean[2]!];
  };
  return np.stack(
    vertices.map((v) =>
      softImage(
        env,
        R,
        np.array(v, { dtype: "float32" }).reshape([-1, 3]),
        psi,
        backgroundLayers(env, R, { vertices: v, light: c.light, texture: relative }),
        look,
      ),
    ),
    0,
  );
}

/**
 * The held-out split of ψ (RISP Table 1 under `--domain held-out`): training looks lit from the camera's side and
 * above (azimuth within ±1 rad, elevation 0.9–1.4 rad), with a bright ambient, light albedos and dull surfaces; test
 * configurations (`sampleHeldOutConfig`) outside those ranges in five parameters — ambient, both light angles, an
 * albedo channel and the specular — so no test image is a training look (`psiExcess` says by how much).
 */
export const HELD_OUT_TRAINING_PSI: PsiDistribution = ((held: Partial<Record<PsiName, [number, number]>>) =>
  PSI_NAMES.map((name, i) => (held[name] ? { low: held[name][0], high: held[name][1] } : DEFAULT_PSI[i]!)))({
  ambient: [0.25, 0.5],
  "light azimuth (rad)": [-1, 1],
  "light elevation (rad)": [0.9, 1.4],
  "albedo r": [0.55, 1],
  "albedo g": [0.55, 1],
  "albedo b": [0.55, 1],
  specular: [0, 0.25],
});

/**
 * A test configuration of the held-out split: a dim ambient, light low from the side or behind, a saturated albedo
 * (one channel at most 0.45 of full), a shiny surface — each outside `HELD_OUT_TRAINING_PSI` by at least 0.05
 * (ambient), 0.4 rad (azimuth), 0.15 rad (elevation), 0.1 (albedo) and 0.1 (specular).
 */
export const sampleHeldOutConfig = (rng: Rng): TargetConfig =>
  drawConfig(rng, {
    azimuth: [1.4, 2.4],
    elevation: [0.35, 0.75],
    ambient: [0.1, 0.2],
    saturation: [0.55, 0.8],
    specular: [0.35, 0.7],
  });

/**
 * How far ψ lies outside a training distribution, per parameter, in units of that parameter's range (0 inside); the
 * azimuth is an angle, its distance taken round the circle.
 */
export function psiExcess(psi: readonly number[], d: PsiDistribution): number[] {
  if (psi.length !== PSI_NAMES.length)
    throw new Error(`risp: ψ has ${PSI_NAMES.length} entries (${PSI_NAMES.join(", ")}), got ${psi.length}.`);
  return checkPsi(d).map(({ low, high }, i) => {
    const x = psi[i]!;
    const outside =
      i === 1
        ? Math.min(...[-2 * Math.PI, 0, 2 * Math.PI].map((k) => Math.max(0, low - (x + k), x + k - high)))
        : Math.max(0, low - x, x - high);
    return outside / Math.max(high - low, 1e-12);
  });
}
