/**
 * RISP's two image formations for an environment (examples/lib/risp-envs.ts):
 *
 *  - training (source domain): the object by SoftRas with Phong shading under rendering
 *    parameters ψ (light, material, sky and ground colours), over a procedural ground (random
 *    blotches, checkers or stripes) with the object's shadow traced along ψ's light, with ∂I/∂ψ
 *    made by forward mode (a jvp per parameter, vmapped) and stored beside each image, as RISP
 *    precomputes it;
 *  - target (test domain): the ray tracer (render.traceVideo: supersampling, shadows on a
 *    textured ground, Blinn–Phong highlights, sensor noise) under rendering configurations drawn
 *    from other distributions than ψ's: light from the side and behind instead of the camera's
 *    side, tinted albedos, shadows, and a wood or checker ground.
 */
import { jit, jvp, np, render, sysid, vmap, type Array, type Rng } from "gradsim";
import type { RispEnv, Vec3 } from "./risp-envs.js";

/** ψ: the rendering parameters the training images are differentiated by. */
export const PSI_NAMES = [
  "ambient", "light azimuth (rad)", "light elevation (rad)", "light intensity", "albedo r", "albedo g", "albedo b", "specular",
  "sky r", "sky g", "sky b", "ground r", "ground g", "ground b",
] as const;
const P = PSI_NAMES.length;
const SHININESS = 20;

/**
 * The training distribution of ψ (uniform within these ranges). The light comes from any side
 * (azimuth over the full circle), so the shadows the training grounds show fall every way.
 */
const PSI_RANGES: readonly (readonly [number, number])[] = [
  [0.1, 0.5], [-Math.PI, Math.PI], [0.3, 1.4], [0.4, 1],
  [0.35, 1], [0.35, 1], [0.35, 1], [0, 0.5],
  [0.05, 0.9], [0.05, 0.9], [0.05, 0.9], [0.1, 0.9], [0.1, 0.9], [0.1, 0.9],
];
export const sampleTrainingPsi = (rng: Rng): number[] => PSI_RANGES.map(([lo, hi]) => rng.uniform(lo, hi));
/** The middle of the training distribution (light from the camera's side): the downstream tasks' own renders use it, or start from it. */
export const PSI_MIDDLE: readonly number[] = PSI_RANGES.map(([lo, hi]) => (lo + hi) / 2);
/** ψ from w ∈ [0, 1]^14, each entry's position within its training range (w = ½: PSI_MIDDLE). */
export const psiOfUnit = (w: Array): Array =>
  np.add(np.array(PSI_RANGES.map(([lo]) => lo), { dtype: w.dtype }), np.mul(w, np.array(PSI_RANGES.map(([lo, hi]) => hi - lo), { dtype: w.dtype })));

/** Direction towards the light of azimuth and elevation (radians): azimuth 0 is the camera's side (−z). */
export const hostLightDirection = (az: number, el: number): Vec3 => [Math.cos(el) * Math.sin(az), Math.sin(el), -Math.cos(el) * Math.cos(az)];
const lightDirection = (az: Array, el: Array): Array =>
  np.stack([np.mul(np.cos(el), np.sin(az)), np.sin(el), np.neg(np.mul(np.cos(el), np.cos(az)))], 0);

/** A ground texture: brightness factors per channel at a ground point (x, z), multiplied by ψ's ground colour. */
export type GroundTexture = (x: number, z: number) => Vec3;

/**
 * A random procedural ground texture (domain randomisation of the background): smooth blotches
 * of random scale, checkers of random cell size, orientation and colours, or wavy stripes of
 * random frequency — brightness factors around 1 with random per-channel tints.
 */
export function randomGroundTexture(rng: Rng): GroundTexture {
  const tint = (a: number): Vec3 => [1 + a * rng.uniform(-1, 1), 1 + a * rng.uniform(-1, 1), 1 + a * rng.uniform(-1, 1)];
  const angle = rng.uniform(0, Math.PI), [ca, sa] = [Math.cos(angle), Math.sin(angle)];
  const family = Math.floor(rng.uniform(0, 3));
  if (family === 0) {
    // Bilinear value noise on a lattice of cells `size` m wide.
    const size = rng.uniform(0.15, 1), a = rng.uniform(0, 0.5), N = 32;
    const lattice = globalThis.Array.from({ length: N * N }, () => 1 + a * rng.uniform(-1, 1));
    const colour = tint(0.2);
    const at = (i: number, j: number) => lattice[(((i % N) + N) % N) * N + (((j % N) + N) % N)]!;
    return (x, z) => {
      const u = (ca * x + sa * z) / size + 100, v = (-sa * x + ca * z) / size + 100;
      const i = Math.floor(u), j = Math.floor(v), fu = u - i, fv = v - j;
      const k = (1 - fu) * ((1 - fv) * at(i, j) + fv * at(i, j + 1)) + fu * ((1 - fv) * at(i + 1, j) + fv * at(i + 1, j + 1));
      return [k * colour[0], k * colour[1], k * colour[2]];
    };
  }
  if (family === 1) {
    const size = rng.uniform(0.1, 0.6), colours = [tint(0.5), tint(0.5)];
    return (x, z) => colours[(Math.floor((ca * x + sa * z) / size) + Math.floor((-sa * x + ca * z) / size)) & 1]!;
  }
  const frequency = rng.uniform(3, 15), wobble = rng.uniform(0, 3), a = rng.uniform(0.1, 0.5), colour = tint(0.3);
  return (x, z) => {
    const u = ca * x + sa * z, v = -sa * x + ca * z;
    const k = 1 + a * Math.sin(frequency * u + wobble * Math.sin(2.3 * v));
    return [k * colour[0], k * colour[1], k * colour[2]];
  };
}

/**
 * The background behind an object, as layers linear in ψ's colours and levels
 * (render.traceGround): [R, R, 7] = sky fraction, mean ground texture, mean ground texture where
 * the object does not shadow it from the light.
 */
export function backgroundLayers(env: RispEnv, R: number, o: { vertices: ArrayLike<number> | null; light: Vec3; texture: GroundTexture }): Array {
  const g = render.traceGround(o.vertices, env.faces, { camera: sysid.hostCamera(env.camera, R, R), width: R, height: R, light: o.light, groundY: env.groundY, groundColor: o.texture, samples: 3 });
  const layer = (x: Float32Array, channels: number) => np.array(x, { dtype: "float32" }).reshape([R, R, channels]);
  return np.concatenate([layer(g.sky, 1), layer(g.ground, 3), layer(g.groundLit, 3)], -1);
}

/** The tasks' own background: a plain, unshadowed ground (its layers do not depend on the object, so they are made once). */
export const plainBackground = (env: RispEnv, R: number): Array => backgroundLayers(env, R, { vertices: null, light: [0, 1, 0], texture: () => [1, 1, 1] });

/** How the object is rasterized: SoftRas' depth temperature and silhouette softness (sysid.softFrame's defaults if absent), and whether it is faceted. */
export interface SoftLook {
  readonly gamma?: number;
  readonly sigma?: number;
  /**
   * Every face flat-shaded in the mean colour of its corners (as the ray tracer shades): the
   * vertices are unshared per face, so each corner's normal is its face's.
   */
  readonly faceted?: boolean;
}

/**
 * The training image [R, R, 3] of vertices [V, 3] under ψ [14]: the object rasterized by
 * SoftRas with Phong shading, composited over a background (`backgroundLayers` [R, R, 7]) lit by
 * the same light, with ψ's sky and ground colours — differentiable in every ψ but the shadow's
 * shape (the layers are traced on the host).
 */
export function softImage(env: RispEnv, R: number, vertices: Array, psi: Array, background: Array, look: SoftLook = {}): Array {
  const at = (i: number, n = 1) => (n === 1 ? np.index(psi, i) : np.take(psi, np.arange(i, i + n), 0));
  const ambient = at(0), intensity = at(3), light = lightDirection(at(1), at(2));
  const lights: render.Lights = { ambient, directional: [{ direction: light, color: intensity, specular: intensity }] };
  const corners = np.array(env.faces, { dtype: "int32" }), pattern = np.reshape(np.array(env.pattern, { dtype: "float32" }), [-1, 3]);
  const colours = look.faceted ? np.repeat(np.mean(np.reshape(np.take(pattern, corners, 0), [-1, 3, 3]), 1), 3, 0) : pattern;
  const object = {
    faces: look.faceted ? np.reshape(np.arange(0, env.faces.length, 1, { dtype: "int32" }), [-1, 3]) : np.reshape(corners, [-1, 3]),
    colors: np.mul(colours, at(4, 3)),
    material: { specular: at(7), shininess: SHININESS },
  };
  const posed = look.faceted ? np.take(vertices, corners, 0) : vertices;
  const frame = sysid.softFrame([{ vertices: posed, mesh: object }], {
    resolution: R, camera: sysid.renderCamera(env.camera, R, R), lights, shading: "phong", ...(look.gamma ? { gamma: look.gamma } : {}), ...(look.sigma ? { sigma: look.sigma } : {}),
  });
  const [rgb, alpha] = np.split(frame, [3], -1) as [Array, Array];
  const [sky, ground, groundLit] = np.split(background, [1, 4], -1) as [Array, Array, Array];
  const sun = np.mul(intensity, np.maximum(np.index(light, 1), 0));
  const behind = np.add(np.mul(sky, at(8, 3)), np.mul(at(11, 3), np.add(np.mul(ambient, ground), np.mul(sun, groundLit))));
  return np.clip(np.add(rgb, np.mul(np.sub(1, alpha), behind)), 0, 1);
}

/** One training image's look: its rendering parameters ψ, its traced background and its sensor noise σ. */
export interface TrainingLook { readonly psi: number[]; readonly background: Array; readonly noise: number }

/** Draw a training image's look for posed vertices [V·3]: ψ, a random ground texture shadowed by the object under ψ's light, σ ∈ [0, maxNoise]. */
export function sampleTrainingLook(env: RispEnv, R: number, vertices: ArrayLike<number>, rng: Rng, maxNoise: number): TrainingLook {
  const psi = sampleTrainingPsi(rng);
  const background = backgroundLayers(env, R, { vertices, light: hostLightDirection(psi[1]!, psi[2]!), texture: randomGroundTexture(rng) });
  return { psi, background, noise: rng.uniform(0, maxNoise) };
}

export interface TrainingSet {
  readonly states: Array;
  /** [N, R, R, 3] and ∂I/∂ψ [N, 14, R, R, 3]. */
  readonly images: Array;
  readonly dImages: Array;
}

/**
 * Training images of `vertices` under random looks (`sampleTrainingLook`) with their ∂I/∂ψ
 * columns (forward mode: one jvp per parameter, vmapped), in compiled chunks, plus Gaussian sensor
 * noise of σ up to `noise`. With several `rasterizations` (SoftRas' silhouette softness, faceting)
 * each chunk is rendered by one of them drawn at random: the renderer itself randomised, as the
 * ray tracer's silhouettes are sharp and its faces flat.
 */
export function trainingSet(env: RispEnv, R: number, states: number[][], vertices: Float64Array[], rng: Rng, o: { noise: number; chunk?: number; rasterizations?: readonly SoftLook[]; log?: (done: number) => void }): TrainingSet {
  const n = states.length, chunk = o.chunk ?? 16, rasterizations = o.rasterizations ?? [{}];
  const basis = np.eye(P, undefined, { dtype: "float32" });
  const compiled = rasterizations.map((look) => jit(vmap((v: Array, psi: Array, background: Array) => {
    const image = (p: Array) => softImage(env, R, v, p, background, look);
    const columns = vmap((e: Array) => jvp(image, [psi], [e])[1] as Array)(basis);
    return [image(psi), columns];
  })));
  const images: Array[] = [], columns: Array[] = [];
  for (let start = 0; start < n; start += chunk) {
    const idx = globalThis.Array.from({ length: Math.min(chunk, n - start) }, (_, k) => start + k);
    // One rasterization draws nothing, so the training sets of runs before there were several stay the same.
    const withColumns = compiled.length === 1 ? compiled[0]! : compiled[Math.min(compiled.length - 1, Math.floor(rng.uniform(0, compiled.length)))]!;
    const looks = idx.map((i) => sampleTrainingLook(env, R, vertices[i]!, rng, o.noise));
    // Pad the last chunk to the compiled size.
    const padded = [...idx, ...globalThis.Array.from({ length: chunk - idx.length }, () => idx[0]!)];
    const look = (k: number) => looks[k < idx.length ? k : 0]!;
    const v = np.array(padded.map((i) => globalThis.Array.from({ length: vertices[i]!.length / 3 }, (_, j) => [vertices[i]![3 * j]!, vertices[i]![3 * j + 1]!, vertices[i]![3 * j + 2]!])), { dtype: "float32" });
    const psi = np.array(padded.map((_, k) => look(k).psi), { dtype: "float32" });
    const background = np.stack(padded.map((_, k) => look(k).background), 0);
    const [im, dI] = withColumns(v, psi, background) as [Array, Array];
    const keep = np.arange(idx.length);
    const pixels = R * R * 3, data = im.dataSync();
    const noisy = Float32Array.from(data, (x, q) => x + look(Math.floor(q / pixels)).noise * rng.normal());
    images.push(np.take(np.array(noisy, { dtype: "float32" }).reshape(im.shape), keep, 0));
    columns.push(np.take(dI, keep, 0));
    o.log?.(start + idx.length);
  }
  return { states: np.array(states, { dtype: "float32" }), images: np.concatenate(images, 0), dImages: np.concatenate(columns, 0) };
}

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
  const f = (n: number) => { const k = (n + h * 6) % 6; return v - v * s * Math.max(0, Math.min(k, 4 - k, 1)); };
  return [f(5), f(3), f(1)];
};

/** The target distribution: light from the side or behind, tinted albedo, strong highlights, a sky and a wood or checker ground. */
export function sampleTargetConfig(rng: Rng): TargetConfig {
  const az = (rng.uniform(0, 1) < 0.5 ? -1 : 1) * rng.uniform(1.2, 2.2), el = rng.uniform(0.4, 1);
  const colour = (): Vec3 => [rng.uniform(0.3, 0.9), rng.uniform(0.3, 0.9), rng.uniform(0.3, 0.9)];
  return {
    ambient: rng.uniform(0.15, 0.4), light: [Math.cos(el) * Math.sin(az), Math.sin(el), -Math.cos(el) * Math.cos(az)], intensity: rng.uniform(0.6, 1),
    albedo: hsv(rng.uniform(0, 1), rng.uniform(0.3, 0.7), rng.uniform(0.75, 1)), specular: rng.uniform(0.3, 0.7),
    sky: colour(), ground: rng.uniform(0, 1) < 0.5 ? "wood" : { checker: [colour(), colour()] },
  };
}

/**
 * The same configuration with the body's contrast against the ground reversed from our own
 * frames' (a dark body on a mid-grey ground, under ψ's middle): a near-white body in strong light
 * on a ground darkened to 0.1–0.2 of its brightness. Wherever the two images' body-minus-ground
 * contrasts have opposite signs, the pixelwise loss (an MSE) is lower with the silhouettes apart
 * than overlapping, so it pushes the estimate away from the truth: the kind of shift RISP's
 * pixelwise rows fail under. Draws from its own `rng`, so the configuration it starts from, and
 * everything drawn after it, stay as they were.
 */
export function reverseContrast(c: TargetConfig, rng: Rng): TargetConfig {
  return { ...c, albedo: hsv(rng.uniform(0, 1), rng.uniform(0, 0.3), 1), intensity: rng.uniform(0.9, 1), groundLevel: rng.uniform(0.1, 0.2) };
}

/** The ray tracer's colours of the object [F·3]: each face in its corners' mean pattern colour, tinted by `albedo`. */
export function faceAlbedo(env: RispEnv, albedo: Vec3): Float32Array {
  const F = env.faces.length / 3, out = new Float32Array(3 * F);
  for (let f = 0; f < F; f++) for (let d = 0; d < 3; d++) {
    out[3 * f + d] = (albedo[d] * [0, 1, 2].reduce((s, j) => s + env.pattern[3 * env.faces[3 * f + j]! + d]!, 0)) / 3;
  }
  return out;
}

/** Target images [n, R, R, 3] of posed vertices under one configuration (3×3 rays per pixel, σ = 0.02 noise). */
export function targetImages(env: RispEnv, R: number, vertices: readonly Float64Array[], c: TargetConfig, seed: number): Array {
  const albedo = faceAlbedo(env, c.albedo);
  const texture = c.ground === "wood" ? render.woodGrain : ((cols) => (x: number, z: number) => cols[(Math.floor(4 * x) + Math.floor(4 * z)) & 1]!)(c.ground.checker);
  const level = c.groundLevel ?? 1;
  const groundColor = level === 1 ? texture : (x: number, z: number): Vec3 => { const [r, g, b] = texture(x, z); return [level * r, level * g, level * b]; };
  const video = render.traceVideo({ frames: vertices, faces: env.faces, albedo, specular: c.specular, shininess: 40 }, {
    camera: sysid.hostCamera(env.camera, R, R), width: R, height: R, light: c.light, intensity: c.intensity, ambient: c.ambient,
    groundY: env.groundY, groundColor, sky: c.sky, samples: 3, noise: 0.02, seed,
  });
  return np.array(video.images, { dtype: "float32" }).reshape([vertices.length, R, R, 3]);
}
