/**
 * Differentiable bilinear texture sampling with torch `grid_sample` semantics (anchors §4):
 * uv ∈ [0,1]², v up, texture row 0 = top (v = 1).
 *   alignCorners=false (kaolin): ix = u·W − 0.5, iy = (1−v)·H − 0.5
 *   alignCorners=true (PyTorch3D): ix = u·(W−1), iy = (1−v)·(H−1)
 * value = Σ (1−fx|fx)(1−fy|fy)·T[y,x]. Gradients reach the texels (scatter-add of the four
 * weights, via np.take's transpose) and uv (through fx, fy; piecewise linear, jumping at texel
 * centres). Indices outside the texture are clamped ("border") or wrapped ("repeat").
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";

export interface TextureOptions {
  readonly alignCorners?: boolean;
  /** "clamp" (border padding, default) or "repeat" (tiling). */
  readonly wrap?: "clamp" | "repeat";
}

/** Sample texture [Ht, Wt, C] at uv [..., 2] → [..., C]. */
export function sampleBilinear(texture: Array, uv: Array, opts: TextureOptions = {}): Array {
  if (texture.ndim !== 3) throw new Error(`sampleBilinear: texture must be [H, W, C], got [${texture.shape}].`);
  if (uv.shape[uv.ndim - 1] !== 2) throw new Error(`sampleBilinear: uv must be [..., 2], got [${uv.shape}].`);
  const [H, W, C] = texture.shape as [number, number, number];
  let [u, v] = np.split(uv, 2, -1).map((s) => np.squeeze(s, -1)) as [Array, Array];
  const repeat = opts.wrap === "repeat";
  if (repeat) {
    u = np.sub(u, np.floor(np.stopGradient(u)));
    v = np.sub(v, np.floor(np.stopGradient(v)));
  }
  const ac = opts.alignCorners ?? false;
  const ix = ac ? np.mul(u, W - 1) : np.sub(np.mul(u, W), 0.5);
  const iy = ac ? np.mul(np.sub(1, v), H - 1) : np.sub(np.mul(np.sub(1, v), H), 0.5);
  const x0f = np.floor(np.stopGradient(ix)),
    y0f = np.floor(np.stopGradient(iy));
  const fx = np.sub(ix, x0f),
    fy = np.sub(iy, y0f);
  const x0 = np.astype(x0f, "int32"),
    y0 = np.astype(y0f, "int32");
  const fix = (i: Array, n: number) => (repeat ? np.mod(i, n) : np.clip(i, 0, n - 1));
  const xa = fix(x0, W),
    xb = fix(np.add(x0, 1), W),
    ya = fix(y0, H),
    yb = fix(np.add(y0, 1), H);
  const flat = np.reshape(texture, [H * W, C]);
  const at = (yy: Array, xx: Array) => np.take(flat, np.add(np.mul(yy, W), xx), 0); // [..., C]
  const e = (a: Array) => np.expandDims(a, -1);
  const gx = e(fx),
    gy = e(fy),
    hx = e(np.sub(1, fx)),
    hy = e(np.sub(1, fy));
  return np.add(
    np.add(np.mul(np.mul(hx, hy), at(ya, xa)), np.mul(np.mul(gx, hy), at(ya, xb))),
    np.add(np.mul(np.mul(hx, gy), at(yb, xa)), np.mul(np.mul(gx, gy), at(yb, xb))),
  );
}
