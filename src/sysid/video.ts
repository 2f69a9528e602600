/**
 * Rendering simulated meshes into the videos a system-identification loss compares: SoftRas
 * frames with settings chosen so the image loss is smooth in the parameters, premultiplied RGBA,
 * compositing over a static background, batched over frames with vmap.
 *
 * Why these settings (measured with finite differences on the paper's scenes):
 *  - σ scaled to the pixel size (`sigmaFor`): SoftRas' default 1e-5 is tuned for 256²; at 32² or
 *    64² edges would be steps and the loss piecewise constant in the parameters;
 *  - RGB premultiplied by the soft silhouette: SoftRas gives a pixel just outside the silhouette
 *    the full colour of a face whose coverage is tiny and drops to the background when the face
 *    is pruned, a jump; rgb·alpha goes to 0 smoothly there;
 *  - a mild depth softmax and pruning only below coverage 1e-6: with SoftRas' γ = 1e-4, faces seen
 *    edge-on at the silhouette flip pixels between front and back colours within a hair of motion.
 */
import type { Array, ArrayLike } from "../core/array.js";
import { np } from "../core/np/index.js";
import * as render from "../render/index.js";
import { vmap } from "../transforms/index.js";

/** SoftRas σ (NDC²) for an image `resolution` pixels across: the coverage sigmoid spans about half a pixel. */
export const sigmaFor = (resolution: number): number => 0.25 * (2 / resolution) ** 2;

/** Light from above, slightly from the camera side, plus ambient. */
export const SCENE_LIGHTS: render.Lights = { ambient: 0.45, directional: [{ direction: [0.3, 1, -0.6], color: 0.6 }] };

/** [..., 4] RGBA → (rgb·a, a). */
export function premultiply(rgba: Array): Array {
  const [rgb, alpha] = np.split(rgba, [3], -1) as [Array, Array];
  return np.concatenate([np.mul(rgb, alpha), alpha], -1);
}

/**
 * Premultiplied RGBA [..., 4] over a background (a colour [3] or an image [H, W, 3]):
 * "rgba" keeps the silhouette as a fourth channel, "rgb" gives what a camera sees.
 */
export function overBackground(premultiplied: Array, background: ArrayLike, channels: "rgba" | "rgb" = "rgba"): Array {
  const [colour, alpha] = np.split(premultiplied, [3], -1) as [Array, Array];
  const rgb = np.add(colour, np.mul(background, np.sub(1, alpha)));
  return channels === "rgb" ? rgb : np.concatenate([rgb, alpha], -1);
}

/**
 * A mesh whose vertices change per frame: faces int32 [F, 3] and per-vertex colours [V, 3]; or a
 * texture [Ht, Wt, 3] with uvs ([V, 2] or per face corner [F, 3, 2]); optionally its own reflectance.
 */
export interface DeformingMesh {
  readonly faces: Array;
  readonly colors?: Array;
  readonly uvs?: Array;
  readonly texture?: Array;
  readonly material?: render.Material;
}

export interface SoftFrameOptions {
  readonly resolution: number;
  readonly camera: render.Camera;
  readonly lights?: render.Lights;
  /** Depth-softmax temperature (default 1e-3 of the near–far range). */
  readonly gamma?: number;
  /** Silhouette softness in NDC² (default `sigmaFor(resolution)`). */
  readonly sigma?: number;
  /** Interpolation of shading (default "gouraud"; "phong" for specular highlights). */
  readonly shading?: render.Shading;
}

/** Premultiplied RGBA [H, W, 4] of meshes given as (vertices [V, 3], topology). */
export function softFrame(parts: readonly { vertices: Array; mesh: DeformingMesh }[], o: SoftFrameOptions): Array {
  const r = o.resolution;
  const faces = parts.reduce((n, p) => n + p.mesh.faces.shape[0]!, 0);
  const rgba = render.render(
    parts.map((p) => ({ vertices: p.vertices, ...p.mesh })),
    o.camera,
    o.lights ?? SCENE_LIGHTS,
    undefined,
    {
      width: r,
      height: r,
      ...(o.shading ? { shading: o.shading } : {}),
      // One tile holding every face: under jit the rasterizer cannot cull faces per tile anyway,
      // and one dense tile compiles to much faster kernels than many small ones.
      tile: [r, r],
      capacity: faces,
      softras: { sigma: o.sigma ?? sigmaFor(r), gamma: o.gamma ?? 1e-3, distEps: 1e-6 },
    },
  );
  return premultiply(rgba);
}

/** Frames [T, H, W, 4] of one deforming mesh at vertex positions [T, V, 3]. */
export const softVideo = (vertices: Array, mesh: DeformingMesh, o: SoftFrameOptions): Array =>
  vmap((v: Array) => softFrame([{ vertices: v, mesh }], o))(vertices);

/**
 * Per-vertex colours [V, 3] from rest positions [V·3]: an octant code around `center`, so that
 * rotation and shear of the body are visible in the shading (a uniform colour only shows the outline).
 */
export function octantColors(
  rest: { readonly length: number; readonly [i: number]: number },
  center: readonly [number, number, number],
): Array {
  const n = rest.length / 3;
  const rows = globalThis.Array.from({ length: n }, (_, i) => {
    const d = [0, 1, 2].map((k) => rest[3 * i + k]! - center[k]!);
    return [d[0]! > 0 ? 0.95 : 0.35, d[1]! > 0 ? 0.8 : 0.3, d[2]! > 0 ? 0.85 : 0.35];
  });
  return np.array(rows, { dtype: "float32" });
}
