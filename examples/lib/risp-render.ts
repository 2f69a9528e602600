/**
 * RISP's two image formations for an environment (examples/lib/risp-envs.ts):
 *
 *  - training (source domain): SoftRas with Phong shading under rendering parameters ψ (light,
 *    material, sky and ground colours) over a ground of random brightness patterns, with
 *    ∂I/∂ψ made by forward mode (a jvp per parameter, vmapped) and stored beside each image, as
 *    RISP precomputes it;
 *  - target (test domain): the ray tracer (render.traceVideo: supersampling, shadows on a
 *    textured ground, Blinn–Phong highlights, sensor noise) under rendering configurations drawn
 *    from other distributions than ψ's: light from the side and behind instead of the camera's
 *    side, tinted albedos, shadows, and a wood or checker ground.
 */
import { jit, jvp, np, render, sysid, vmap, type Array } from "../../src/index.js";
import type { Rng } from "../../src/core/host-rng.js";
import type { RispEnv, Vec3 } from "./risp-envs.js";

/** ψ: the rendering parameters the training images are differentiated by. */
export const PSI_NAMES = [
  "ambient", "light azimuth (rad)", "light elevation (rad)", "light intensity", "albedo r", "albedo g", "albedo b", "specular",
  "sky r", "sky g", "sky b", "ground r", "ground g", "ground b",
] as const;
const P = PSI_NAMES.length;
const SHININESS = 20;

/** The training distribution of ψ (uniform within these ranges): light from the camera's side of the scene. */
const PSI_RANGES: readonly (readonly [number, number])[] = [
  [0.1, 0.5], [-1, 1], [0.5, 1.4], [0.4, 1],
  [0.35, 1], [0.35, 1], [0.35, 1], [0, 0.5],
  [0.05, 0.9], [0.05, 0.9], [0.05, 0.9], [0.1, 0.9], [0.1, 0.9], [0.1, 0.9],
];
export const sampleTrainingPsi = (rng: Rng): number[] => PSI_RANGES.map(([lo, hi]) => rng.uniform(lo, hi));
/** The middle of the training distribution: the rendering the downstream tasks' own renders use. */
export const PSI_MIDDLE: readonly number[] = PSI_RANGES.map(([lo, hi]) => (lo + hi) / 2);

/** The training renders' ground: a GRID × GRID quad grid at the environment's ground height, reaching far towards the horizon. */
const GRID = 8;
function groundMesh(y: number): { vertices: Array; faces: Array } {
  const v: number[][] = [], f: number[][] = [];
  for (let i = 0; i <= GRID; i++) for (let j = 0; j <= GRID; j++) {
    // Rows spaced geometrically in z: fine near the camera, coarse far away.
    v.push([-4 + (8 * j) / GRID, y, -0.5 + 12.5 * ((2 ** (3 * i / GRID) - 1) / 7)]);
  }
  const at = (i: number, j: number) => i * (GRID + 1) + j;
  for (let i = 0; i < GRID; i++) for (let j = 0; j < GRID; j++) f.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)], [at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
  return { vertices: np.array(v, { dtype: "float32" }), faces: np.array(f, { dtype: "int32" }) };
}
export const GROUND_VERTICES = (GRID + 1) ** 2;

/** A plain ground texture: every brightness factor 1. */
export const plainGround = (): Array => np.ones([GROUND_VERTICES, 3], { dtype: "float32" });

/** A random ground texture: per-vertex brightness factors [GROUND_VERTICES, 3] within 1 ± a, a ~ U[0, 0.5]. */
export function groundPattern(rng: Rng): number[][] {
  const a = rng.uniform(0, 0.5);
  return globalThis.Array.from({ length: GROUND_VERTICES }, () => { const k = 1 + a * rng.uniform(-1, 1); return [k, k, k]; });
}

const lightDirection = (az: Array, el: Array): Array =>
  np.stack([np.mul(np.cos(el), np.sin(az)), np.sin(el), np.neg(np.mul(np.cos(el), np.cos(az)))], 0);

/** The training image [R, R, 3] of vertices [V, 3] under ψ [14], on a ground with per-vertex brightness `ground` [GROUND_VERTICES, 3], under a sky. */
export function softImage(env: RispEnv, R: number, vertices: Array, psi: Array, ground: Array, gamma?: number): Array {
  const at = (i: number, n = 1) => (n === 1 ? np.index(psi, i) : np.take(psi, np.arange(i, i + n), 0));
  const intensity = at(3);
  const lights: render.Lights = { ambient: at(0), directional: [{ direction: lightDirection(at(1), at(2)), color: intensity, specular: intensity }] };
  const object = {
    faces: np.reshape(np.array(env.faces, { dtype: "int32" }), [-1, 3]),
    colors: np.mul(np.reshape(np.array(env.pattern, { dtype: "float32" }), [-1, 3]), at(4, 3)),
    material: { specular: at(7), shininess: SHININESS },
  };
  const plane = groundMesh(env.groundY);
  const frame = sysid.softFrame([{ vertices, mesh: object }, { vertices: plane.vertices, mesh: { faces: plane.faces, colors: np.mul(ground, at(11, 3)), material: { specular: 0 } } }],
    { resolution: R, camera: sysid.renderCamera(env.camera, R, R), lights, shading: "phong", ...(gamma ? { gamma } : {}) });
  return sysid.overBackground(frame, at(8, 3), "rgb");
}

export interface TrainingSet {
  readonly states: Array;
  /** [N, R, R, 3] and ∂I/∂ψ [N, 12, R, R, 3]. */
  readonly images: Array;
  readonly dImages: Array;
}

/**
 * Training images of `vertices` under random ψ with their ∂I/∂ψ columns (forward mode: one jvp
 * per parameter, vmapped), in compiled chunks, plus Gaussian sensor noise of σ = `noise`.
 */
export function trainingSet(env: RispEnv, R: number, states: number[][], vertices: Float64Array[], rng: Rng, o: { noise: number; chunk?: number; log?: (done: number) => void }): TrainingSet {
  const n = states.length, chunk = o.chunk ?? 16;
  const basis = np.eye(P, undefined, { dtype: "float32" });
  const withColumns = jit(vmap((v: Array, psi: Array, ground: Array) => {
    const image = (p: Array) => softImage(env, R, v, p, ground);
    const columns = vmap((e: Array) => jvp(image, [psi], [e])[1] as Array)(basis);
    return [image(psi), columns];
  }));
  const images: Array[] = [], columns: Array[] = [];
  for (let start = 0; start < n; start += chunk) {
    const idx = globalThis.Array.from({ length: Math.min(chunk, n - start) }, (_, k) => start + k);
    // Pad the last chunk to the compiled size.
    const padded = [...idx, ...globalThis.Array.from({ length: chunk - idx.length }, () => idx[0]!)];
    const v = np.array(padded.map((i) => globalThis.Array.from({ length: vertices[i]!.length / 3 }, (_, j) => [vertices[i]![3 * j]!, vertices[i]![3 * j + 1]!, vertices[i]![3 * j + 2]!])), { dtype: "float32" });
    const psi = np.array(padded.map(() => sampleTrainingPsi(rng)), { dtype: "float32" });
    const ground = np.array(padded.map(() => groundPattern(rng)), { dtype: "float32" });
    const [im, dI] = withColumns(v, psi, ground) as [Array, Array];
    const keep = np.arange(idx.length);
    const noisy = im.dataSync().map((x) => x + o.noise * rng.normal());
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

/** Target images [n, R, R, 3] of posed vertices under one configuration (3×3 rays per pixel, σ = 0.02 noise). */
export function targetImages(env: RispEnv, R: number, vertices: readonly Float64Array[], c: TargetConfig, seed: number): Array {
  const F = env.faces.length / 3, albedo = new Float32Array(3 * F);
  for (let f = 0; f < F; f++) for (let d = 0; d < 3; d++) {
    albedo[3 * f + d] = (c.albedo[d] * [0, 1, 2].reduce((s, j) => s + env.pattern[3 * env.faces[3 * f + j]! + d]!, 0)) / 3;
  }
  const groundColor = c.ground === "wood" ? render.woodGrain : ((cols) => (x: number, z: number) => cols[(Math.floor(4 * x) + Math.floor(4 * z)) & 1]!)(c.ground.checker);
  const video = render.traceVideo({ frames: vertices, faces: env.faces, albedo, specular: c.specular, shininess: 40 }, {
    camera: sysid.hostCamera(env.camera, R, R), width: R, height: R, light: c.light, intensity: c.intensity, ambient: c.ambient,
    groundY: env.groundY, groundColor, sky: c.sky, samples: 3, noise: 0.02, seed,
  });
  return np.array(video.images, { dtype: "float32" }).reshape([vertices.length, R, R, 3]);
}
