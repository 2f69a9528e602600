/**
 * Rendering deforming meshes (FEM solids, cloth, pendulum bobs) to the videos the non-rigid
 * experiments fit: SoftRas frames as RGBA with RGB premultiplied by the soft silhouette,
 * batched over frames with `vmap` (rendering inside a `lax.scan` body is much slower on the CPU
 * compiler, and a JS loop over frames makes one huge program).
 *
 * Why these SoftRas settings (measured with finite differences on the deformable scenes):
 *  - σ scaled to the pixel size (`sigmaFor`), or at 32² the edges are steps and the loss is
 *    piecewise constant in the parameters;
 *  - RGB premultiplied by alpha: SoftRas gives a pixel just outside the silhouette the full colour
 *    of a face whose coverage is tiny and drops to the background when the face is pruned, a jump;
 *    rgb·alpha goes to 0 smoothly there;
 *  - a mild depth softmax (γ = 1e-3 of the near–far range) and pruning only below coverage 1e-6:
 *    with SoftRas' γ = 1e-4, faces seen edge-on at the silhouette flip pixels between front and
 *    back colours within a hair of motion. No face culling: a face turning away would vanish in
 *    one step (culling is decided on stop-gradient geometry).
 */
import { np, render, vmap, type Array } from "../../src/index.js";
import { sigmaFor } from "./video.js";

export const SOFT_GAMMA = 1e-3;
export const SOFT_DIST_EPS = 1e-6;

/** Light from above, slightly from the camera side, plus ambient (as the rigid scenes). */
export const SOFT_LIGHTS: render.Lights = { ambient: 0.45, directional: [{ direction: [0.3, 1, -0.6], color: 0.6 }] };

export interface SoftFrameOptions {
  readonly resolution: number;
  readonly camera: render.Camera;
  readonly lights?: render.Lights;
}

/** A mesh whose vertices change per frame: faces int32 [F, 3] and per-vertex colours [V, 3]. */
export interface DeformingMesh {
  readonly faces: Array;
  readonly colors: Array;
}

/** RGBA [H, W, 4] with RGB premultiplied by alpha, for meshes given as (vertices [V, 3], topology). */
export function softFrame(parts: readonly { vertices: Array; mesh: DeformingMesh }[], o: SoftFrameOptions): Array {
  const r = o.resolution;
  const faces = parts.reduce((n, p) => n + p.mesh.faces.shape[0]!, 0);
  const rgba = render.render(parts.map((p) => ({ vertices: p.vertices, faces: p.mesh.faces, colors: p.mesh.colors })), o.camera, o.lights ?? SOFT_LIGHTS, undefined, {
    width: r, height: r,
    // One tile holding every face: under jit the rasterizer cannot cull faces per tile anyway,
    // and one dense tile compiles to much faster kernels than many small ones.
    tile: [r, r], capacity: faces,
    softras: { sigma: sigmaFor(r), gamma: SOFT_GAMMA, distEps: SOFT_DIST_EPS },
  });
  return premultiply(rgba);
}

/** [..., 4] RGBA → (rgb·a, a). */
export function premultiply(rgba: Array): Array {
  const [rgb, alpha] = np.split(rgba, [3], -1) as [Array, Array];
  return np.concatenate([np.mul(rgb, alpha), alpha], -1);
}

/** Frames [T, H, W, 4] of one deforming mesh at vertex positions [T, V, 3]. */
export const softVideo = (vertices: Array, mesh: DeformingMesh, o: SoftFrameOptions): Array =>
  vmap((v: Array) => softFrame([{ vertices: v, mesh }], o))(vertices);

/**
 * Per-vertex colours [V, 3] from rest positions [V·3]: an octant code around `center`, so that
 * rotation and shear of the body are visible in the shading (a uniform colour only shows the outline).
 */
export function octantColors(rest: Float64Array, center: readonly [number, number, number]): Array {
  const n = rest.length / 3;
  const rows = globalThis.Array.from({ length: n }, (_, i) => {
    const d = [0, 1, 2].map((k) => rest[3 * i + k]! - center[k]!);
    return [d[0]! > 0 ? 0.95 : 0.35, d[1]! > 0 ? 0.8 : 0.3, d[2]! > 0 ? 0.85 : 0.35];
  });
  return np.array(rows, { dtype: "float32" });
}
