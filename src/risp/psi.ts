/**
 * ψ: the rendering parameters RISP's training images are drawn under and differentiated by
 * (RISP §3.2: lighting, materials, background), and their domain randomisation as data — a
 * uniform range per parameter. The layout is fixed (`PSI_NAMES`, the order `softImage` reads ψ
 * in); the ranges are the user's to choose.
 */
import type { Array } from "../core/array.js";
import type { Rng } from "../core/host-rng.js";
import { np } from "../core/np/index.js";

export type Vec3 = readonly [number, number, number];

/** ψ's entries, in order. */
export const PSI_NAMES = [
  "ambient",
  "light azimuth (rad)",
  "light elevation (rad)",
  "light intensity",
  "albedo r",
  "albedo g",
  "albedo b",
  "specular",
  "sky r",
  "sky g",
  "sky b",
  "ground r",
  "ground g",
  "ground b",
] as const;
export type PsiName = (typeof PSI_NAMES)[number];

/** One parameter's training distribution: uniform in [low, high]. */
export interface PsiRange {
  readonly low: number;
  readonly high: number;
}
/** The training distribution of ψ: one range per entry of `PSI_NAMES`. */
export type PsiDistribution = readonly PsiRange[];

/**
 * RISP's training distribution as the paper tables use it. The light comes from any side (azimuth
 * over the full circle; 0 is the camera's side), so the shadows the training grounds show fall every way.
 */
export const DEFAULT_PSI: PsiDistribution = (
  [
    [0.1, 0.5],
    [-Math.PI, Math.PI],
    [0.3, 1.4],
    [0.4, 1],
    [0.35, 1],
    [0.35, 1],
    [0.35, 1],
    [0, 0.5],
    [0.05, 0.9],
    [0.05, 0.9],
    [0.05, 0.9],
    [0.1, 0.9],
    [0.1, 0.9],
    [0.1, 0.9],
  ] as const
).map(([low, high]) => ({ low, high }));

/** The distribution, checked: one finite range low ≤ high per entry of ψ. */
export function checkPsi(d: PsiDistribution): PsiDistribution {
  if (d.length !== PSI_NAMES.length)
    throw new Error(
      `risp: a ψ distribution has one range per parameter (${PSI_NAMES.length}: ${PSI_NAMES.join(", ")}), ` +
        `got ${d.length}.`,
    );
  d.forEach((r, i) => {
    if (!(Number.isFinite(r.low) && Number.isFinite(r.high) && r.low <= r.high))
      throw new Error(`risp: ψ's ${PSI_NAMES[i]} range [${r.low}, ${r.high}] must be finite with low ≤ high.`);
  });
  return d;
}

/** A draw of ψ from its training distribution. */
export const samplePsi = (rng: Rng, d: PsiDistribution = DEFAULT_PSI): number[] =>
  checkPsi(d).map(({ low, high }) => rng.uniform(low, high));

/** The middle of the distribution: the tasks' own renders use it, or start from it. */
export const psiMiddle = (d: PsiDistribution = DEFAULT_PSI): number[] =>
  checkPsi(d).map(({ low, high }) => (low + high) / 2);

/**
 * ψ from w ∈ [0, 1]^14, each entry's position within its range (w = ½: `psiMiddle`): how the tasks fit our frames' look
 * within the training ranges.
 */
export const psiOfUnit = (w: Array, d: PsiDistribution = DEFAULT_PSI): Array =>
  np.add(
    np.array(
      checkPsi(d).map((r) => r.low),
      { dtype: w.dtype },
    ),
    np.mul(
      w,
      np.array(
        d.map((r) => r.high - r.low),
        { dtype: w.dtype },
      ),
    ),
  );

/** Direction towards the light of azimuth and elevation (radians): azimuth 0 is the camera's side (−z). */
export const hostLightDirection = (az: number, el: number): Vec3 => [
  Math.cos(el) * Math.sin(az),
  Math.sin(el),
  -Math.cos(el) * Math.cos(az),
];
/** `hostLightDirection` in array ops (differentiable in ψ). */
export const lightDirection = (az: Array, el: Array): Array =>
  np.stack([np.mul(np.cos(el), np.sin(az)), np.sin(el), np.neg(np.mul(np.cos(el), np.cos(az)))], 0);
