/**
 * Ambient + Lambert + Phong shading (anchors §4, PyTorch3D's formulation):
 *   diffuse  = Σ_l c_l · relu(n̂·l̂)
 *   specular = Σ_l s_l · (relu(v̂·r̂)·1[n̂·l̂ > 0])^shininess,  r = −l̂ + 2(n̂·l̂)n̂,  v̂ = normalize(eye − p)
 *   colour   = (k_a∘L_a + k_d∘diffuse)·albedo + k_s∘specular
 * l̂ is the unit vector from the surface towards the light: a directional light's `direction`,
 * or normalize(position − p) for a point light. Every function works on any leading shape
 * [..., 3] (per vertex, per face, per pixel), so one code path serves flat, Gouraud and Phong.
 * SoftRas/gradSim defaults (ambient 0.5 + directional 0.5 along +y, no specular) give
 * factor 1.0 for n·l = 1 and 0.5 for n ⟂ l (oracle 15).
 */
import type { Array, ArrayLike } from "../core/array.js";
import { np } from "../core/np/index.js";
import { normalize, toArray } from "./camera.js";

export interface DirectionalLight {
  /** Direction from the surface towards the light (need not be unit length). */
  readonly direction: ArrayLike;
  /** Diffuse colour·intensity [3] (or a number). Default 1. */
  readonly color?: ArrayLike;
  /** Specular colour·intensity. Default: `color`. */
  readonly specular?: ArrayLike;
}
export interface PointLight {
  readonly position: ArrayLike;
  readonly color?: ArrayLike;
  readonly specular?: ArrayLike;
}
export interface Lights {
  /** Ambient colour·intensity [3] (or a number). Default 0. */
  readonly ambient?: ArrayLike;
  readonly directional?: readonly DirectionalLight[];
  readonly point?: readonly PointLight[];
}
export interface Material {
  /** k_a, k_d, k_s: [3] or numbers. Defaults 1, 1, 0. */
  readonly ambient?: ArrayLike;
  readonly diffuse?: ArrayLike;
  readonly specular?: ArrayLike;
  /** Phong exponent. Default 64. */
  readonly shininess?: ArrayLike;
}

/** SoftRas/gradSim lighting: ambient 0.5 + directional 0.5 along (0, 1, 0). */
export const defaultLights = (): Lights => ({ ambient: 0.5, directional: [{ direction: [0, 1, 0], color: 0.5 }] });
/** PyTorch3D defaults: ambient 0.5, diffuse 0.3, specular 0.2 (here as one directional light along +y). */
export const pytorch3dLights = (direction: ArrayLike = [0, 1, 0]): Lights => ({
  ambient: 0.5,
  directional: [{ direction, color: 0.3, specular: 0.2 }],
});
export const defaultMaterial = (): Material => ({ ambient: 1, diffuse: 1, specular: 0, shininess: 64 });

export interface LightTerms {
  /** k_a∘L_a + k_d∘diffuse, multiplies the albedo. [..., 3] */
  readonly diffuse: Array;
  /** k_s∘specular, added. [..., 3] */
  readonly specular: Array;
}

const dot = (a: Array, b: Array): Array => np.sum(np.mul(a, b), -1, { keepdims: true });
/** Products of two JS numbers stay in JS (weak scalars would otherwise be multiplied in float32). */
const mulExact = (a: ArrayLike, b: ArrayLike): ArrayLike =>
  typeof a === "number" && typeof b === "number" ? a * b : np.mul(a, b);

/** Lighting factors at points p with normals n (both [..., 3]); `eye` [3] is needed only for specular. */
export function lightTerms(
  normals: Array,
  points: Array,
  eye: Array | null,
  lights: Lights,
  material: Material = {},
): LightTerms {
  const n = normalize(normals, 1e-12);
  const arr = (x: ArrayLike) => (typeof x === "number" ? x : toArray(x, n.dtype));
  const ka = arr(material.ambient ?? 1),
    kd = arr(material.diffuse ?? 1),
    ks = arr(material.specular ?? 0);
  const shin = arr(material.shininess ?? 64);
  const needSpec =
    !(typeof material.specular === "number" && material.specular === 0) && material.specular !== undefined;
  const view = needSpec && eye ? normalize(np.sub(eye, points), 1e-12) : null;
  let diffuse: Array = np.zerosLike(n);
  let specular: Array = np.zerosLike(n);
  const add = (l: Array, color: ArrayLike | undefined, spec: ArrayLike | undefined) => {
    const c = arr(color ?? 1);
    const cos = dot(n, l);
    diffuse = np.add(diffuse, np.mul(c, np.maximum(cos, 0)));
    if (view) {
      const r = np.sub(np.mul(np.mul(cos, 2), n), l);
      const cr = dot(view, r);
      // Double-where: pow only ever sees a positive base, so ∂/∂shininess = x^s·ln x stays finite.
      const lit = np.logicalAnd(np.greater(cos, 0), np.greater(cr, 0));
      const s = np.where(lit, np.pow(np.where(lit, cr, 1), shin), 0);
      specular = np.add(specular, np.mul(arr(spec ?? color ?? 1), s));
    }
  };
  for (const d of lights.directional ?? [])
    add(np.broadcastTo(normalize(toArray(d.direction, n.dtype)), n.shape), d.color, d.specular);
  for (const p of lights.point ?? []) add(normalize(np.sub(toArray(p.position, n.dtype), points)), p.color, p.specular);
  return {
    diffuse: np.add(mulExact(ka, arr(lights.ambient ?? 0)), np.mul(kd, diffuse)),
    specular: np.mul(ks, specular),
  };
}

/** Shaded colour (k_a∘L_a + k_d∘diffuse)·albedo + k_s∘specular, all [..., 3]. */
export function shade(
  normals: Array,
  points: Array,
  albedo: Array,
  eye: Array | null,
  lights: Lights,
  material: Material = {},
): Array {
  const t = lightTerms(normals, points, eye, lights, material);
  return np.add(np.mul(t.diffuse, albedo), t.specular);
}
