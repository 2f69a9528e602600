/**
 * A second image formation, for target videos that the estimator's rasterizer did not make — the
 * stand-in for a photorealistic renderer (gradSim §4.3's "photorealistic render" row, RISP's
 * target domain): every pixel's rays are traced against the triangles and a textured ground
 * plane, with supersampling (S×S rays per pixel), Lambert + Blinn–Phong shading under a
 * directional light, hard shadows cast on the ground and on the object, and seeded Gaussian sensor
 * noise. It returns the object's coverage masks beside the images (the fraction of each pixel's
 * rays that hit the object): the foreground masks a photorealistic renderer provides.
 *
 * Host-side and not differentiable: it only ever makes observations.
 */
import { makeRng } from "../core/host-rng.js";

export type Vec3 = readonly [number, number, number];

/**
 * A pinhole camera on the host: eye, orthonormal right/up/forward axes, and NDC focal lengths
 * and principal point (x right, y up), the same frame the rasterizer's camera projects with.
 */
export interface PinholeFrame {
  readonly eye: Vec3;
  readonly right: Vec3;
  readonly up: Vec3;
  readonly forward: Vec3;
  readonly focal: readonly [number, number];
  readonly center: readonly [number, number];
}

/** World-space ray direction (not normalised) through image point (column, row); pixel centres at integers. */
export function pinholeRay(h: PinholeFrame, column: number, row: number, width: number, height: number): Vec3 {
  const x = ((2 * column + 1 - width) / width - h.center[0]) / h.focal[0];
  const y = ((height - 2 * row - 1) / height - h.center[1]) / h.focal[1];
  return [0, 1, 2].map((k) => x * h.right[k]! + y * h.up[k]! + h.forward[k]!) as unknown as Vec3;
}

/** One object: world vertices per frame ([T][V·3]), faces [F·3] (CCW from outside) and per-face albedo [F·3]. */
export interface TracedObject {
  readonly frames: readonly ArrayLike<number>[];
  readonly faces: ArrayLike<number>;
  readonly albedo: ArrayLike<number>;
  /** Blinn–Phong specular intensity and exponent (defaults 0.35, 40). */
  readonly specular?: number;
  readonly shininess?: number;
}

export interface TraceOptions {
  readonly camera: PinholeFrame;
  readonly width: number;
  readonly height: number;
  /** Direction towards the light (normalised here). */
  readonly light: Vec3;
  /** Light intensity and ambient level (defaults 0.75, 0.3). */
  readonly intensity?: number;
  readonly ambient?: number;
  /** The ground plane's height (y), or null for none (default 0). */
  readonly groundY?: number | null;
  /** Ground albedo at a ground point (x, z); default: wood grain. */
  readonly groundColor?: (x: number, z: number) => Vec3;
  /** Colour of rays that hit nothing. */
  readonly sky?: Vec3;
  /** Rays per pixel along each axis (default 4: 16 rays). */
  readonly samples?: number;
  /** Standard deviation of the Gaussian sensor noise added to each channel (default 0.01). */
  readonly noise?: number;
  readonly seed?: number;
}

export interface TracedVideo {
  readonly width: number;
  readonly height: number;
  /** RGB in [0, 1], [T·H·W·3]. */
  readonly images: Float32Array;
  /** Object coverage in [0, 1], [T·H·W]. */
  readonly masks: Float32Array;
}

/** The default ground: a wood-like grain (stripes with a slow wobble), unlike any rasterizer background here. */
export const woodGrain = (x: number, z: number): Vec3 => {
  const g = 0.5 + 0.5 * Math.sin(9 * z + 2.5 * Math.sin(2.3 * x));
  return [0.47 + 0.13 * g, 0.34 + 0.09 * g, 0.22 + 0.05 * g];
};

const dot = (a: Vec3, b: Vec3): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const unit = (a: Vec3): Vec3 => {
  const n = Math.hypot(a[0], a[1], a[2]);
  return [a[0] / n, a[1] / n, a[2] / n];
};

/** Per-frame triangles in a flat layout with a bounding sphere for early ray rejection. */
interface FrameGeometry {
  readonly tri: Float64Array;
  readonly normal: Float64Array;
  readonly c: Vec3;
  readonly r2: number;
}

function frameGeometry(v: ArrayLike<number>, faces: ArrayLike<number>): FrameGeometry {
  const F = faces.length / 3,
    tri = new Float64Array(9 * F),
    normal = new Float64Array(3 * F);
  const lo = [Infinity, Infinity, Infinity],
    hi = [-Infinity, -Infinity, -Infinity];
  for (let f = 0; f < F; f++) {
    for (let j = 0; j < 3; j++)
      for (let d = 0; d < 3; d++) {
        const x = v[3 * faces[3 * f + j]! + d]!;
        if (!Number.isFinite(x)) throw new Error(`traceVideo: vertex ${faces[3 * f + j]} is not finite (${x}).`);
        tri[9 * f + 3 * j + d] = x;
        lo[d] = Math.min(lo[d]!, x);
        hi[d] = Math.max(hi[d]!, x);
      }
    const e1 = [0, 1, 2].map((d) => tri[9 * f + 3 + d]! - tri[9 * f + d]!),
      e2 = [0, 1, 2].map((d) => tri[9 * f + 6 + d]! - tri[9 * f + d]!);
    const n: Vec3 = [
      e1[1]! * e2[2]! - e1[2]! * e2[1]!,
      e1[2]! * e2[0]! - e1[0]! * e2[2]!,
      e1[0]! * e2[1]! - e1[1]! * e2[0]!,
    ];
    const len = Math.hypot(...n) || 1;
    for (let d = 0; d < 3; d++) normal[3 * f + d] = n[d]! / len;
  }
  const c: Vec3 = [(lo[0]! + hi[0]!) / 2, (lo[1]! + hi[1]!) / 2, (lo[2]! + hi[2]!) / 2];
  return { tri, normal, c, r2: ((hi[0]! - lo[0]!) ** 2 + (hi[1]! - lo[1]!) ** 2 + (hi[2]! - lo[2]!) ** 2) / 4 };
}

/** Nearest hit (distance > 1e-6) of the ray o + s·d (d unit) with the object: [s, face], or null. Möller–Trumbore. */
function hit(g: FrameGeometry, o: Vec3, d: Vec3, anyHit = false): [number, number] | null {
  // Bounding sphere: most rays miss the object entirely.
  const oc: Vec3 = [o[0] - g.c[0], o[1] - g.c[1], o[2] - g.c[2]];
  const b = dot(oc, d),
    cc = dot(oc, oc) - g.r2;
  if (cc > 0 && (b > 0 || b * b < cc)) return null;
  const t = g.tri;
  let best = Infinity,
    face = -1;
  for (let f = 0; f < t.length / 9; f++) {
    const k = 9 * f;
    const e1x = t[k + 3]! - t[k]!,
      e1y = t[k + 4]! - t[k + 1]!,
      e1z = t[k + 5]! - t[k + 2]!;
    const e2x = t[k + 6]! - t[k]!,
      e2y = t[k + 7]! - t[k + 1]!,
      e2z = t[k + 8]! - t[k + 2]!;
    const px = d[1] * e2z - d[2] * e2y,
      py = d[2] * e2x - d[0] * e2z,
      pz = d[0] * e2y - d[1] * e2x;
    const det = e1x * px + e1y * py + e1z * pz;
    if (Math.abs(det) < 1e-14) continue;
    const inv = 1 / det;
    const sx = o[0] - t[k]!,
      sy = o[1] - t[k + 1]!,
      sz = o[2] - t[k + 2]!;
    const u = (sx * px + sy * py + sz * pz) * inv;
    if (u < 0 || u > 1) continue;
    const qx = sy * e1z - sz * e1y,
      qy = sz * e1x - sx * e1z,
      qz = sx * e1y - sy * e1x;
    const v = (d[0] * qx + d[1] * qy + d[2] * qz) * inv;
    if (v < 0 || u + v > 1) continue;
    const s = (e2x * qx + e2y * qy + e2z * qz) * inv;
    if (s > 1e-6 && s < best) {
      best = s;
      face = f;
      if (anyHit) break;
    }
  }
  return face < 0 ? null : [best, face];
}

/** Unit directions of every pixel's S×S primary rays [H·W·S·S·3], pixel by pixel (row-major), subpixel rows within. */
function primaryRays(camera: PinholeFrame, W: number, H: number, S: number): Float64Array {
  const dirs = new Float64Array(W * H * S * S * 3);
  for (let row = 0, k = 0; row < H; row++)
    for (let col = 0; col < W; col++)
      for (let sy = 0; sy < S; sy++)
        for (let sx = 0; sx < S; sx++, k += 3) {
          const d = unit(pinholeRay(camera, col + (sx + 0.5) / S - 0.5, row + (sy + 0.5) / S - 0.5, W, H));
          dirs[k] = d[0];
          dirs[k + 1] = d[1];
          dirs[k + 2] = d[2];
        }
  return dirs;
}

/** Where the ray from `eye` along `d` meets the ground plane y = groundY, or null (no ground, or the ray misses it). */
function groundHit(eye: Vec3, d: Vec3, groundY: number | null): Vec3 | null {
  if (groundY === null || d[1] >= 0 || eye[1] <= groundY) return null;
  const s = (groundY - eye[1]) / d[1];
  return [eye[0] + s * d[0], groundY, eye[2] + s * d[2]];
}

/**
 * Trace a video of one object over a ground plane. Frame t uses `object.frames[t]`; with
 * `plate: true` one more frame without the object is appended (the background plate).
 */
export function traceVideo(object: TracedObject, o: TraceOptions, plate = false): TracedVideo {
  const { width: W, height: H } = o;
  if (!(Number.isInteger(W) && W > 0 && Number.isInteger(H) && H > 0))
    throw new Error(`traceVideo: width and height must be positive integers, got ${W}×${H}.`);
  const F = object.faces.length / 3;
  if (!Number.isInteger(F) || F < 1)
    throw new Error(`traceVideo: faces must hold a multiple of 3 vertex indices, got ${object.faces.length}.`);
  if (object.albedo.length !== 3 * F)
    throw new Error(`traceVideo: albedo must hold 3 values per face (${3 * F}), got ${object.albedo.length}.`);
  const S = o.samples ?? 4,
    noise = o.noise ?? 0.01,
    ambient = o.ambient ?? 0.3,
    intensity = o.intensity ?? 0.75;
  const groundY = o.groundY === undefined ? 0 : o.groundY;
  const groundColor = o.groundColor ?? woodGrain,
    sky = o.sky ?? [0.55, 0.62, 0.7];
  const L = unit(o.light),
    spec = object.specular ?? 0.35,
    shininess = object.shininess ?? 40;
  const T = object.frames.length + (plate ? 1 : 0);
  const geometry = object.frames.map((v) => frameGeometry(v, object.faces));
  // Primary ray directions are the same every frame.
  const dirs = primaryRays(o.camera, W, H, S);
  const images = new Float32Array(T * W * H * 3),
    masks = new Float32Array(T * W * H);
  const rng = makeRng(o.seed ?? 0);
  const eye = o.camera.eye;
  for (let t = 0; t < T; t++) {
    const g = t < geometry.length ? geometry[t]! : null;
    for (let p = 0; p < W * H; p++) {
      let r = 0,
        gr = 0,
        bl = 0,
        covered = 0;
      for (let s = 0; s < S * S; s++) {
        const k = 3 * (p * S * S + s);
        const d: Vec3 = [dirs[k]!, dirs[k + 1]!, dirs[k + 2]!];
        const h = g && hit(g, eye, d);
        const onGround = h ? null : groundHit(eye, d, groundY);
        let c: Vec3;
        if (h) {
          covered++;
          const f = h[1];
          let n: Vec3 = [g.normal[3 * f]!, g.normal[3 * f + 1]!, g.normal[3 * f + 2]!];
          if (dot(n, d) > 0) n = [-n[0], -n[1], -n[2]];
          const x: Vec3 = [eye[0] + h[0] * d[0], eye[1] + h[0] * d[1], eye[2] + h[0] * d[2]];
          const lit = dot(n, L) > 0 && !hit(g, x, L, true);
          const lambert = lit ? dot(n, L) : 0;
          const half = unit([L[0] - d[0], L[1] - d[1], L[2] - d[2]]);
          const highlight = lit ? spec * Math.max(0, dot(n, half)) ** shininess : 0;
          const a = [object.albedo[3 * f]!, object.albedo[3 * f + 1]!, object.albedo[3 * f + 2]!];
          c = [
            a[0]! * (ambient + intensity * lambert) + highlight,
            a[1]! * (ambient + intensity * lambert) + highlight,
            a[2]! * (ambient + intensity * lambert) + highlight,
          ];
        } else if (onGround) {
          const a = groundColor(onGround[0], onGround[2]);
          const shade = ambient + (g && hit(g, onGround, L, true) ? 0 : intensity * Math.max(0, L[1]));
          c = [a[0] * shade, a[1] * shade, a[2] * shade];
        } else c = sky;
        r += c[0];
        gr += c[1];
        bl += c[2];
      }
      const q = t * W * H + p,
        n2 = S * S;
      images[3 * q] = clamp01(r / n2 + noise * rng.normal());
      images[3 * q + 1] = clamp01(gr / n2 + noise * rng.normal());
      images[3 * q + 2] = clamp01(bl / n2 + noise * rng.normal());
      masks[q] = covered / n2;
    }
  }
  return { width: W, height: H, images, masks };
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));

/** The background of an object's image as layers that are linear in the light's and colours' levels (`traceGround`). */
export interface GroundLayers {
  /** Fraction of each pixel's rays that reach the sky [H·W]. */
  readonly sky: Float32Array;
  /** Mean ground albedo over each pixel's ground rays [H·W·3] (ambient light reaches all of them). */
  readonly ground: Float32Array;
  /** The same over the ground rays the object does not shadow from the light [H·W·3]. */
  readonly groundLit: Float32Array;
}

/**
 * The sky and the textured, shadowed ground behind an object (its shadow cast along `light`), as
 * layers: a pixel's background is sky·skyColour + groundColour ⊙ (ambient·ground + intensity·L_y·groundLit),
 * linear in every colour and level, so a rasterized object can be composited over it with
 * those parameters differentiable. Rays that hit the object count as ground rays seen at the
 * point behind it (the object is composited over them). `vertices` [V·3] or null for no object.
 */
export function traceGround(
  vertices: ArrayLike<number> | null,
  faces: ArrayLike<number>,
  o: Pick<TraceOptions, "camera" | "width" | "height" | "light" | "groundY" | "groundColor" | "samples">,
): GroundLayers {
  const { width: W, height: H } = o,
    S = o.samples ?? 3;
  const groundY = o.groundY === undefined ? 0 : o.groundY,
    groundColor = o.groundColor ?? woodGrain;
  const L = unit(o.light),
    eye = o.camera.eye;
  const g = vertices ? frameGeometry(vertices, faces) : null;
  const dirs = primaryRays(o.camera, W, H, S);
  const sky = new Float32Array(W * H),
    ground = new Float32Array(3 * W * H),
    groundLit = new Float32Array(3 * W * H);
  for (let p = 0; p < W * H; p++)
    for (let s = 0; s < S * S; s++) {
      const k = 3 * (p * S * S + s);
      const x = groundHit(eye, [dirs[k]!, dirs[k + 1]!, dirs[k + 2]!], groundY);
      if (!x) {
        sky[p]! += 1;
        continue;
      }
      const a = groundColor(x[0], x[2]);
      const lit = !(g && L[1] > 0 && hit(g, x, L, true));
      for (let c = 0; c < 3; c++) {
        ground[3 * p + c]! += a[c]!;
        if (lit) groundLit[3 * p + c]! += a[c]!;
      }
    }
  const n = S * S;
  for (let k = 0; k < sky.length; k++) sky[k]! /= n;
  for (let k = 0; k < ground.length; k++) {
    ground[k]! /= n;
    groundLit[k]! /= n;
  }
  return { sky, ground, groundLit };
}
