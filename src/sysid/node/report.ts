/**
 * What people look at after a fit, written to disk: the target and estimated videos (GIF), a
 * labelled frame strip (rows: target, estimate, initial guess; columns: time), and the loss curve
 * (PNG with axis titles and a legend, CSV with full precision), the residual maps and the loss's profile.
 */
import { join } from "node:path";
import type { Array } from "../../core/array.js";
import { writeAtomic } from "../../io/atomic.js";
import { labelledGrid, writeGif, writeLinePlot, writePng, type Raster } from "../../io/image.js";
import { writeLossCurveCsv, writeLossCurvePng } from "../../optim/loss-curve-files.js";
import { alongAxis, type Profile } from "../profile.js";
import type { Layout } from "../unknowns.js";

export interface DisplayOptions {
  /** Nearest-neighbour enlargement factor. Default 3. */
  readonly zoom?: number;
  /** Background behind premultiplied RGBA frames, 0–1 RGB. Default dark blue-grey. */
  readonly background?: readonly [number, number, number];
  /** The frames' RGB already includes a background (contact scenes' ground, camera videos): show it as is. */
  readonly composited?: boolean;
}

/**
 * Frames [T, H, W, 3 or 4] → opaque rasters; 4 channels are premultiplied RGBA shown as
 * rgb + bg·(1 − α). Reads the data with `await data()`, so it works on every backend.
 */
export async function displayFrames(video: Array, o: DisplayOptions = {}): Promise<Raster[]> {
  const [T, H, W, C] = video.shape as [number, number, number, number];
  const zoom = o.zoom ?? 3,
    bg = o.composited || C === 3 ? [0, 0, 0] : (o.background ?? [0.12, 0.13, 0.16]);
  const d = await video.data();
  const out: Raster[] = [];
  for (let t = 0; t < T; t++) {
    const w = W * zoom,
      h = H * zoom;
    const rgba = new Uint8ClampedArray(w * h * 4);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const src = C * ((t * H + Math.floor(y / zoom)) * W + Math.floor(x / zoom));
        const a = C === 4 ? Math.min(1, Math.max(0, d[src + 3]!)) : 1;
        const dst = 4 * (y * w + x);
        for (let k = 0; k < 3; k++)
          rgba[dst + k] = Math.round(255 * Math.min(1, Math.max(0, d[src + k]! + bg[k]! * (1 - a))));
        rgba[dst + 3] = 255;
      }
    out.push({ width: w, height: h, rgba });
  }
  return out;
}

/** `count` evenly spaced frame indices of a T-frame video, first and last included. */
export const stripIndices = (T: number, count = 6): number[] =>
  globalThis.Array.from({ length: Math.min(count, T) }, (_, i) =>
    Math.round((i * (T - 1)) / Math.max(1, Math.min(count, T) - 1)),
  );

/**
 * The target and the estimate as GIFs (at `fps`) and one PNG strip at the same frames, rows
 * labelled target / estimate / initial guess and columns by time. File names: ground-truth.gif
 * (the target), estimate.gif, frames.png.
 */
export async function writeComparison(
  dir: string,
  videos: { truth: Array; estimate: Array; initial?: Array },
  fps: number,
  display: DisplayOptions = {},
  labels: { truth?: string; estimate?: string; initial?: string } = {},
): Promise<{ files: string[] }> {
  const truth = await displayFrames(videos.truth, display),
    estimate = await displayFrames(videos.estimate, display);
  writeGif(join(dir, "ground-truth.gif"), truth, { fps });
  writeGif(join(dir, "estimate.gif"), estimate, { fps });
  const pick = stripIndices(truth.length);
  const rows = [
    { label: labels.truth ?? "target", images: pick.map((i) => truth[i]!) },
    { label: labels.estimate ?? "estimate", images: pick.map((i) => estimate[i]!) },
    ...(videos.initial
      ? [
          {
            label: labels.initial ?? "initial guess",
            images: await displayFrames(videos.initial, display).then((f) => pick.map((i) => f[i]!)),
          },
        ]
      : []),
  ];
  writePng(
    join(dir, "frames.png"),
    labelledGrid(
      rows,
      pick.map((i) => `${(i / fps).toFixed(2)} s`),
      "time:",
    ),
  );
  return { files: ["ground-truth.gif", "estimate.gif", "frames.png"] };
}

/**
 * The loss curve as loss.csv (step, loss, gradient norm) and loss.png with a title and axis
 * titles naming the loss and its units.
 */
export function writeLossCurves(
  dir: string,
  losses: readonly number[],
  gradNorms: readonly number[],
  o: { title: string; loss: string },
): string[] {
  writeLossCurveCsv(join(dir, "loss.csv"), losses, gradNorms.length ? gradNorms : undefined);
  writeLossCurvePng(join(dir, "loss.png"), losses, {
    title: o.title,
    xLabel: "optimisation step",
    yLabel: o.loss,
    label: "loss",
  });
  return ["loss.png", "loss.csv"];
}

/**
 * Where the fit leaves the video unexplained: residual-mean.png (per pixel, the mean over frames
 * of the squared residual, black 0 → white at the largest) and residual-frames.png (signed
 * residuals of six frames: red where the model shows more than the video, blue where less).
 * `residual` is [T, H, W, C], model minus video.
 */
export function writeResidualMaps(dir: string, residual: Array, zoom = 3): string[] {
  const [T, H, W, C] = residual.shape as [number, number, number, number];
  const d = residual.dataSync(),
    n = H * W;
  const raster = (value: (p: number) => [number, number, number]): Raster => {
    const w = W * zoom,
      h = H * zoom,
      rgba = new Uint8ClampedArray(w * h * 4);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const c = value(Math.floor(y / zoom) * W + Math.floor(x / zoom)),
          o = 4 * (y * w + x);
        for (let k = 0; k < 3; k++) rgba[o + k] = Math.round(255 * Math.min(1, Math.max(0, c[k]!)));
        rgba[o + 3] = 255;
      }
    return { width: w, height: h, rgba };
  };
  const signed = (t: number, p: number) => {
    let s = 0;
    for (let c = 0; c < C; c++) s += d[(t * n + p) * C + c]!;
    return s / C;
  };
  const mean = new Float64Array(n);
  for (let t = 0; t < T; t++) for (let p = 0; p < n; p++) mean[p]! += signed(t, p) ** 2 / T;
  const top = Math.max(...mean, 1e-12);
  writePng(
    join(dir, "residual-mean.png"),
    raster((p) => {
      const v = Math.sqrt(mean[p]! / top);
      return [v, v, v];
    }),
  );
  const pick = stripIndices(T);
  const scale = Math.max(
    1e-6,
    ...pick.map((t) => {
      let m = 0;
      for (let p = 0; p < n; p++) m = Math.max(m, Math.abs(signed(t, p)));
      return m;
    }),
  );
  const frames = pick.map((t) =>
    raster((p) => {
      const v = signed(t, p) / scale;
      return v > 0 ? [v, 0.1 * v, 0.1 * v] : [-0.1 * v, 0.3 * -v, -v];
    }),
  );
  writePng(
    join(dir, "residual-frames.png"),
    labelledGrid(
      [{ label: "model − video", images: frames }],
      pick.map((t) => `frame ${t}`),
      "frame:",
    ),
  );
  return ["residual-mean.png", "residual-frames.png"];
}

/**
 * The loss's profile along the interval's long axis (profile.ts): profile.csv (each point's step, unknowns, loss,
 * whether it is consistent and whether interpolated) and profile.png (the loss against the first unknown, the
 * estimate's loss plus the allowance as a line).
 */
export function writeProfile(dir: string, profile: Profile, layout: Layout): string[] {
  const names = layout.unknowns.map((k) => k.name);
  const rows = alongAxis(profile);
  const valuesOf = (u: readonly number[]) => {
    const v = layout.fromU(u);
    return names.map((n) => v[n] as number);
  };
  writeAtomic(
    join(dir, "profile.csv"),
    [
      `step,${names.join(",")},loss,consistent,interpolated`,
      ...rows.map((x) => `${x.step},${valuesOf(x.u).join(",")},${x.loss},${x.consistent},${!!x.interpolated}`),
    ].join("\n") + "\n",
  );
  const evaluated = rows.filter((x) => !x.interpolated && Number.isFinite(x.loss));
  const xs = evaluated.map((x) => valuesOf(x.u)[0]!);
  writeLinePlot(
    join(dir, "profile.png"),
    [
      {
        x: xs,
        y: evaluated.map((x) => x.loss),
        label: names.length > 1 ? "loss, the other unknowns re-fitted" : "loss",
      },
      {
        x: [Math.min(...xs), Math.max(...xs)],
        y: [profile.loss + profile.allowance, profile.loss + profile.allowance],
        label: "the estimate's loss + the alternatives' cost",
      },
    ],
    {
      title: "the loss along the interval's long axis",
      xLabel: `${names[0]}${layout.unknowns[0]!.unit ? ` (${layout.unknowns[0]!.unit})` : ""}`,
      yLabel: "loss",
    },
  );
  return ["profile.png", "profile.csv"];
}
