/**
 * The verdict of a fit on a video: how good the answer is, said plainly.
 *
 * - The final loss against the video's own floor — what even the right model could not explain:
 *   sensor noise (static pixels' frame-to-frame variance) and, for silhouettes, the two outlines'
 *   departures from sharp ones (the mask's ramp; the soft rasterizer's edge, against the model drawn
 *   sharp) — and against the loss of an empty frame (no object at all), above that floor.
 * - Whether the model's object stays in view where the video's object is.
 * - An interval for every unknown (uncertainty.ts); one too wide means the video does not
 *   determine that unknown.
 * A fit is "fits" only when all of these hold; "poor" (the model does not explain the video),
 * "undetermined" and "imprecise" (an unknown pinned down, but not to the precision asked) are answers,
 * not successes — the CLI exits 3, 4 and 5 for them.
 */
import type { Uncertainty } from "./uncertainty.js";

export type VerdictStatus = "fits" | "poor" | "undetermined" | "imprecise";

export interface Verdict {
  readonly status: VerdictStatus;
  /** One line per thing that is wrong (empty when status is "fits"). */
  readonly reasons: readonly string[];
  readonly finalLoss: number;
  /** The loss with no object rendered. */
  readonly emptyLoss: number;
  /** What the right model would still leave: noise + outline softness. */
  readonly floor: { readonly noise: number; readonly edges: number; readonly total: number };
  /** finalLoss / floor.total. */
  readonly floorRatio: number;
  /**
   * 1 − (finalLoss − floor) / (emptyLoss − floor): the share of the video's difference from its background, beyond
   * the floor, that the fit explains.
   */
  readonly explained: number;
  /** Frames where the model's object covers less than a third of the video's object. */
  readonly framesMissed: readonly number[];
  readonly uncertainty: Uncertainty;
  /** The precision asked: the largest 95% half-width, as a share of the value, an unknown may have to fit. */
  readonly precision: number;
}

/** Thresholds of the verdict (documented in src/sysid/README.md, "The verdict"). */
export const VERDICT_LIMITS = {
  /**
   * A fit within this many times the floor fits the video (the outside set's 17 fits end at 0.57–1.12; the shipped
   * example's box given a wrong spin in its scene file, at 3.0).
   */
  floorRatio: 2,
  /** and explains at least this share of the empty-frame loss above the floor. */
  explained: 0.9,
  /**
   * An unknown whose 95% interval's half-width exceeds this share of its value is not determined; it is also the
   * default precision asked (`judge`'s `precision`, `gradsim fit --precision`).
   */
  relativeHalfWidth: 0.25,
  /** A frame where the model's object covers less than this share of the video's object is missed. */
  coverage: 1 / 3,
} as const;

/** Per-frame sums [T] of a video's channel-0 values [T, H, W, C] (host data). */
const perFrame = (d: ArrayLike<number>, T: number, n: number, C: number): number[] =>
  globalThis.Array.from({ length: T }, (_, t) => {
    let s = 0;
    for (let p = 0; p < n; p++) s += d[(t * n + p) * C]!;
    return s;
  });

/**
 * Floors of a silhouette fit: `mask` [T, H, W, 1] the video's soft foreground, `alpha` the model's
 * soft silhouette at the estimate and `sharp` the same drawn with a sharp outline. Edges: the mask's
 * distance from its own hard version (mean (m − [m > ½])²) plus the model's from its sharp drawing
 * (mean (α − sharp)²) — not from α's own ½ contour, which the soft rasterizer draws outside the true
 * outline (the union of a closed mesh's front and back faces' soft edges: 0.9 px on a 320-face ball),
 * a difference no pose or mass can remove; noise: foreground the mask shows where the object never is
 * (pixels whose mask stays below ½ in every frame), as a share of all pixels.
 */
export function silhouetteFloor(
  mask: ArrayLike<number>,
  alpha: ArrayLike<number>,
  sharp: ArrayLike<number>,
  T: number,
  n: number,
): { noise: number; edges: number } {
  let edges = 0,
    noise = 0;
  for (let i = 0; i < T * n; i++) {
    const m = mask[i]!;
    edges += (m - (m > 0.5 ? 1 : 0)) ** 2 + (alpha[i]! - sharp[i]!) ** 2;
  }
  for (let p = 0; p < n; p++) {
    let most = 0,
      sq = 0;
    for (let t = 0; t < T; t++) {
      const m = mask[t * n + p]!;
      most = Math.max(most, m);
      sq += m * m;
    }
    if (most < 0.5) noise += sq;
  }
  return { noise: noise / (T * n), edges: edges / (T * n) };
}

/**
 * Sensor noise of a colour video [T, H, W, 3] as the model would see it (σ² per sample): half the
 * mean squared frame-to-frame difference over pixels the object never covers (`mask` below ½ in
 * both frames), or 0 with a single frame.
 */
export function colourNoise(video: ArrayLike<number>, mask: ArrayLike<number>, T: number, n: number): number {
  let s = 0,
    count = 0;
  for (let t = 0; t + 1 < T; t++)
    for (let p = 0; p < n; p++) {
      if (mask[t * n + p]! >= 0.5 || mask[(t + 1) * n + p]! >= 0.5) continue;
      for (let c = 0; c < 3; c++) {
        const d = video[3 * ((t + 1) * n + p) + c]! - video[3 * (t * n + p) + c]!;
        s += d * d;
        count++;
      }
    }
  return count ? s / count / 2 : 0;
}

/**
 * Frames where the model's coverage (Σ alpha) is below `coverage` of the video's (Σ mask), among frames where the video
 * shows the object.
 */
export function missedFrames(mask: ArrayLike<number>, alpha: ArrayLike<number>, T: number, n: number): number[] {
  const seen = perFrame(mask, T, n, 1),
    drawn = perFrame(alpha, T, n, 1);
  const visible = Math.max(...seen) * 0.05;
  return seen.flatMap((s, t) => (s > visible && drawn[t]! < VERDICT_LIMITS.coverage * s ? [t] : []));
}

/** Assemble the verdict and its reasons. */
export function judge(o: {
  finalLoss: number;
  emptyLoss: number;
  floor: { noise: number; edges: number };
  framesMissed: readonly number[];
  uncertainty: Uncertainty;
  units?: Readonly<Record<string, string>>;
  /**
   * The largest 95% half-width, as a share of the value, at which an unknown counts as known (e.g. 0.02: within ±2%);
   * wider, up to VERDICT_LIMITS.relativeHalfWidth, makes the fit "imprecise". Default: that limit.
   */
  precision?: number;
}): Verdict {
  const precision = o.precision ?? VERDICT_LIMITS.relativeHalfWidth;
  if (!(precision > 0 && precision <= VERDICT_LIMITS.relativeHalfWidth))
    throw new Error(
      `verdict: precision ${o.precision} is not a share in (0, ${VERDICT_LIMITS.relativeHalfWidth}] ` +
        `(0.02 asks for every unknown within ±2%; wider than ±${100 * VERDICT_LIMITS.relativeHalfWidth}% is ` +
        "not determined at all).",
    );
  const total = o.floor.noise + o.floor.edges;
  const floorRatio = o.finalLoss / Math.max(total, 1e-12);
  // Of the empty frame's loss, only what lies above the floor can be explained.
  const explainable = o.emptyLoss - total;
  const explained = explainable > 0 ? 1 - Math.max(0, o.finalLoss - total) / explainable : 0;
  const poor: string[] = [],
    undetermined: string[] = [],
    imprecise: string[] = [];
  if (!Number.isFinite(o.finalLoss)) poor.push(`the final loss is ${o.finalLoss}`);
  if (floorRatio > VERDICT_LIMITS.floorRatio) {
    poor.push(
      `the final loss ${o.finalLoss.toExponential(2)} is ${floorRatio.toFixed(1)}× the ` +
        `video's floor ${total.toExponential(2)} (noise ${o.floor.noise.toExponential(2)}, ` +
        `outlines ${o.floor.edges.toExponential(2)}): the model does not explain the video ` +
        `— check the scene file (camera, initial state, pushes, background) or add unknowns; if they are right, ` +
        `the model may not make this motion (compare the fit's rendering with the video; known limits: ` +
        `src/models/README.md)`,
    );
  }
  if (explained < VERDICT_LIMITS.explained)
    poor.push(
      `the fit explains ${(100 * explained).toFixed(1)}% of the empty-frame ` +
        `loss ${o.emptyLoss.toExponential(2)} above the floor (needs ${100 * VERDICT_LIMITS.explained}%)`,
    );
  if (o.framesMissed.length) {
    const f = o.framesMissed;
    poor.push(
      `the model's object misses the video's in ${f.length} frame${f.length > 1 ? "s" : ""} ` +
        `(${f.slice(0, 6).join(", ")}${f.length > 6 ? ", …" : ""}): ` +
        `it leaves the frame or the view while the video's object is there`,
    );
  }
  const percent = (x: number) => `±${100 * x >= 10 ? (100 * x).toFixed(0) : (100 * x).toPrecision(2)}%`;
  for (const u of o.uncertainty.unknowns) {
    const unit = o.units?.[u.name.replace(/\[.*$/, "")] ?? "";
    const interval = `${u.interval[0].toPrecision(3)}–${u.interval[1].toPrecision(3)}${unit ? ` ${unit}` : ""}`;
    if (!(u.relativeHalfWidth <= VERDICT_LIMITS.relativeHalfWidth))
      undetermined.push(
        Number.isFinite(u.relativeHalfWidth)
          ? `the video does not determine ${u.name}: its 95% interval is ${interval} (${percent(u.relativeHalfWidth)})`
          : `the video does not determine ${u.name}: the loss does not change with it at the estimate`,
      );
    else if (u.relativeHalfWidth > precision)
      imprecise.push(
        `the video determines ${u.name} only to ${percent(u.relativeHalfWidth)} (95% interval ${interval}), ` +
          `not to the ${percent(precision)} asked (precision)`,
      );
  }
  const status: VerdictStatus = poor.length
    ? "poor"
    : undetermined.length
      ? "undetermined"
      : imprecise.length
        ? "imprecise"
        : "fits";
  return {
    status,
    precision,
    reasons: [...poor, ...undetermined, ...imprecise],
    finalLoss: o.finalLoss,
    emptyLoss: o.emptyLoss,
    floor: { ...o.floor, total },
    floorRatio,
    explained,
    framesMissed: o.framesMissed,
    uncertainty: o.uncertainty,
  };
}

const EXIT_CODES: Readonly<Record<VerdictStatus, number>> = { fits: 0, poor: 3, undetermined: 4, imprecise: 5 };
/** The exit code of a command that ends with this verdict: 0 fits, 3 poor, 4 undetermined, 5 imprecise. */
export const verdictExitCode = (v: Verdict): number => EXIT_CODES[v.status];
