/**
 * Turning rigid-scene vertices into video frames with the SoftRas rasterizer, and the
 * image-space losses of the paper (pixelwise MSE on RGBA frames).
 */
import { np, render, vmap, type Array } from "../../src/index.js";
import type { RigidScene } from "./rigid-scene.js";

/**
 * SoftRas σ (NDC²) for an image of `resolution` pixels: the coverage sigmoid spans about half a
 * pixel. SoftRas' default 1e-5 is tuned for 256²; at 64² it would be a hard edge (a tenth of a
 * pixel) and the loss would change in steps as the object moves.
 */
export const sigmaFor = (resolution: number): number => 0.25 * (2 / resolution) ** 2;

/**
 * Colour aggregation settings (see renderFrame): back faces never colour a pixel, the depth
 * softmax is mild (γ = 0.05 of the near–far range: front faces of one object blend smoothly,
 * the background weight stays below 1e-7), and faces are pruned only below coverage 1e-6.
 */
const DIST_EPS = 1e-6, GAMMA = 0.05;
/** Screen tiles of 8×8 pixels (the rasterizer's default). */
const TILE = 8;

/** Key light from above and slightly in front of the camera side, plus ambient. */
export const SCENE_LIGHTS: render.Lights = { ambient: 0.45, directional: [{ direction: [0.3, 1, -0.6], color: 0.6 }] };

export interface FrameOptions {
  /**
   * Faces kept per screen tile and non-empty tiles rasterized. Under jit the rasterizer cannot
   * see which faces reach which tile, so without them every pixel visits every face;
   * `measureTiling` measures safe values.
   */
  readonly tiling?: Tiling;
}

export interface Tiling { readonly capacity: number; readonly activeTiles: number }

/**
 * One RGBA frame [H, W, 4] of the scene's object at world vertices [V, 3]: RGB is the object
 * premultiplied by its soft silhouette, composited over the ground image in contact scenes
 * (over black otherwise); A is the object's silhouette.
 *
 * Why premultiplied, back-face culled and a mild depth softmax: SoftRas normalises its colour
 * softmax over the faces near a pixel, so a pixel just outside the silhouette takes the full
 * colour of a face whose coverage is tiny and drops to the background when that face is pruned;
 * and with a sharp depth softmax a face seen edge-on (whose clipped-barycentric depth jumps as it
 * turns) takes over pixels along its edge. Both make the loss step-like at the 1e-4 scale the
 * mass estimate needs; rgb·alpha, culling and γ = 0.05 leave steps of ~1e-6 there.
 *
 * The ground is a static image rather than rasterized triangles: the object never goes behind
 * it, so compositing is exact, costs nothing per iteration and has no SoftRas seam along the
 * triangles' shared edge.
 */
export function renderFrame(scene: RigidScene, vertices: Array, o: FrameOptions = {}): Array {
  const r = scene.spec.resolution;
  const rgba = render.render({ vertices, faces: scene.faces, faceColors: scene.faceColors }, scene.camera, SCENE_LIGHTS, undefined, {
    width: r, height: r, shading: "flat", tile: TILE,
    ...(o.tiling ? { ...o.tiling, onOverflow: "ignore" as const } : {}),
    softras: { sigma: sigmaFor(r), gamma: GAMMA, distEps: DIST_EPS, faceCulling: "back" },
  });
  const [rgb, alpha] = np.split(rgba, [3], -1) as [Array, Array];
  let colour = np.mul(rgb, alpha);
  if (scene.spec.contact) colour = np.add(colour, np.mul(groundImage(scene), np.sub(1, alpha)));
  return np.concatenate([colour, alpha], -1);
}

const groundCache = new WeakMap<RigidScene, Array>();
/** Half-size of the square ground (m) and the side of its checker squares. */
const GROUND_HALF = 4, CHECKER = 0.5;

/**
 * The ground plane y = 0 as seen by the scene's camera, [H, W, 3]: a grey checkerboard (for a
 * sense of motion and depth) under a dark sky, by casting each pixel centre's ray.
 */
export function groundImage(scene: RigidScene): Array {
  const cached = groundCache.get(scene);
  if (cached) return cached;
  const c = scene.spec.camera, r = scene.spec.resolution;
  const el = (c.elevation * Math.PI) / 180, az = (c.azimuth * Math.PI) / 180;
  const eye = [c.at[0] + c.distance * Math.cos(el) * Math.sin(az), c.at[1] + c.distance * Math.sin(el), c.at[2] - c.distance * Math.cos(el) * Math.cos(az)];
  const norm = (v: number[]) => { const n = Math.hypot(v[0]!, v[1]!, v[2]!); return v.map((x) => x / n); };
  const cross = (a: number[], b: number[]) => [a[1]! * b[2]! - a[2]! * b[1]!, a[2]! * b[0]! - a[0]! * b[2]!, a[0]! * b[1]! - a[1]! * b[0]!];
  // SoftRas look-at frame (CONVENTIONS.md): forward = at − eye, right = up × forward, up' = forward × right.
  const fwd = norm([c.at[0] - eye[0]!, c.at[1] - eye[1]!, c.at[2] - eye[2]!]);
  const right = norm(cross([0, 1, 0], fwd)), up = cross(fwd, right);
  const f = 1 / Math.tan(((c.fovY * Math.PI) / 180) / 2);
  const sky = [0.12, 0.13, 0.16], light = [0.42, 0.44, 0.47], dark = [0.33, 0.35, 0.38];
  const data = new Float32Array(r * r * 3);
  for (let row = 0; row < r; row++) for (let col = 0; col < r; col++) {
    const x = (2 * col + 1 - r) / r / f, y = (r - 2 * row - 1) / r / f; // aspect 1
    const d = [0, 1, 2].map((k) => x * right[k]! + y * up[k]! + fwd[k]!);
    const t = d[1]! < 0 ? -eye[1]! / d[1]! : Infinity;
    const px = eye[0]! + t * d[0]!, pz = eye[2]! + t * d[2]!;
    const onGround = Number.isFinite(t) && Math.abs(px) <= GROUND_HALF && Math.abs(pz) <= GROUND_HALF;
    const colour = !onGround ? sky : (Math.floor(px / CHECKER) + Math.floor(pz / CHECKER)) % 2 === 0 ? light : dark;
    data.set(colour, 3 * (row * r + col));
  }
  const img = np.reshape(np.array(data, { dtype: "float32" }), [r, r, 3]);
  groundCache.set(scene, img);
  return img;
}

/** Frames [T, H, W, 4] for world vertices [T, V, 3] (batched over frames with vmap). */
export const renderVideo = (scene: RigidScene, vertices: Array, o: FrameOptions = {}): Array =>
  vmap((v: Array) => renderFrame(scene, v, o))(vertices);

/**
 * Tiling for jitted renders of the given frames ([T, V, 3] each, concrete): a tile capacity that
 * holds every face overlapping any tile, with `slack`× headroom for the motion between iterates,
 * rounded up to a power of two and capped at the face count; and the number of non-empty tiles,
 * with the same headroom, capped at the tile count.
 */
export async function measureTiling(scene: RigidScene, videos: readonly Array[], slack = 2): Promise<Tiling> {
  const r = scene.spec.resolution;
  const grid = render.makeTileGrid(r, r, TILE, "float32");
  const margin = Math.sqrt(Math.log(1 / DIST_EPS - 1) * sigmaFor(r));
  let most = 1, active = 1;
  for (const verts of videos) {
    const proj = render.projectPoints(scene.camera, verts); // xy [T, V, 2]
    const frames = np.split(proj.xy, verts.shape[0]!, 0);
    for (const frame of frames) {
      const xy = np.take(np.squeeze(frame, 0), scene.faces, 0); // [F, 3, 2]
      const include = np.ones([scene.faces.shape[0]!], { dtype: "bool" });
      const counts = await render.binFaces(grid, xy, include, margin).counts.data();
      let nonEmpty = 0;
      for (const c of counts) { most = Math.max(most, c); if (c > 0) nonEmpty++; }
      active = Math.max(active, nonEmpty);
    }
  }
  let cap = 1;
  while (cap < most * slack) cap *= 2;
  return { capacity: Math.min(cap, scene.faces.shape[0]!), activeTiles: Math.min(Math.ceil(active * slack), grid.T) };
}

/** Pixelwise mean squared error between two videos (or images). */
export const videoMse = (a: Array, b: Array): Array => np.mean(np.square(np.sub(a, b)));

/** Average-pool frames [T, H, W, C] by `f` in both image axes (H, W divisible by f). */
export function poolFrames(x: Array, f: number): Array {
  if (f === 1) return x;
  const [T, H, W, C] = x.shape as [number, number, number, number];
  return np.mean(np.reshape(x, [T, H / f, f, W / f, f, C]), [2, 4]);
}

/**
 * Pixelwise MSE summed over an image pyramid: the frames, and the frames average-pooled by
 * 2, 4, …, 2^(levels−1). The coarse levels still compare an object with its counterpart when
 * the two no longer overlap at full resolution (there the full-resolution loss is flat: a
 * plateau or a V with no pull towards the truth), which widens the basin of convergence when
 * several parameters trade off against each other (contact: mass against friction).
 */
export function pyramidMse(a: Array, b: Array, levels: number): Array {
  let total = videoMse(a, b);
  for (let k = 1; k < levels; k++) total = np.add(total, videoMse(poolFrames(a, 2 ** k), poolFrames(b, 2 ** k)));
  return total;
}

/** Which frames an image-space loss compares (the paper's Fig. 12 variants). */
export type FrameSelection = "every" | "every2" | "every5" | "firstLast" | "firstMiddle";

export function frameIndices(sel: FrameSelection, frames: number): number[] {
  switch (sel) {
    case "every": return globalThis.Array.from({ length: frames }, (_, i) => i);
    case "every2": return globalThis.Array.from({ length: Math.floor(frames / 2) }, (_, i) => 2 * i + 1);
    case "every5": return globalThis.Array.from({ length: Math.floor(frames / 5) }, (_, i) => 5 * i + 4);
    case "firstLast": return [0, frames - 1];
    case "firstMiddle": return [0, Math.floor(frames / 2)];
  }
}
