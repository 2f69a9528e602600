/**
 * Writing videos people can look at: premultiplied RGBA frames → opaque 8-bit rasters over a
 * background, enlarged (64² frames are small on screen), as GIFs and frame strips.
 */
import type { Array } from "../../src/index.js";
import { sideBySide, stackRows, writeGif, writePng, type Raster } from "../../src/io/image.js";

export interface DisplayOptions {
  /** Nearest-neighbour enlargement factor. Default 3. */
  readonly zoom?: number;
  /** Background behind the object, 0–1 RGB. Default dark blue-grey. */
  readonly background?: readonly [number, number, number];
  /** The frames' RGB already includes a background (contact scenes' ground): show it as is. */
  readonly composited?: boolean;
}

/**
 * Frames [T, H, W, 4] (RGB premultiplied by alpha) → opaque rasters: rgb + bg·(1 − α).
 * Reads the data with `await data()`, so it works on every backend.
 */
export async function displayFrames(video: Array, o: DisplayOptions = {}): Promise<Raster[]> {
  const [T, H, W] = video.shape as [number, number, number, number];
  const zoom = o.zoom ?? 3, bg = o.composited ? [0, 0, 0] : o.background ?? [0.12, 0.13, 0.16];
  const d = await video.data();
  const out: Raster[] = [];
  for (let t = 0; t < T; t++) {
    const w = W * zoom, h = H * zoom;
    const rgba = new Uint8ClampedArray(w * h * 4);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
      const src = 4 * ((t * H + Math.floor(y / zoom)) * W + Math.floor(x / zoom));
      const a = Math.min(1, Math.max(0, d[src + 3]!));
      const dst = 4 * (y * w + x);
      for (let k = 0; k < 3; k++) rgba[dst + k] = Math.round(255 * Math.min(1, Math.max(0, d[src + k]! + bg[k]! * (1 - a))));
      rgba[dst + 3] = 255;
    }
    out.push({ width: w, height: h, rgba });
  }
  return out;
}

/** `count` evenly spaced frame indices of a T-frame video, first and last included. */
export const stripIndices = (T: number, count = 6): number[] =>
  globalThis.Array.from({ length: Math.min(count, T) }, (_, i) => Math.round((i * (T - 1)) / Math.max(1, Math.min(count, T) - 1)));

/**
 * Ground truth and estimate as GIFs (at `fps`) plus one PNG strip at the same frames: the top
 * row is the ground truth, then the estimate, then (if given) the initial guess.
 */
export async function writeComparison(dir: string, videos: { truth: Array; estimate: Array; initial?: Array }, fps: number, display: DisplayOptions = {}): Promise<{ files: string[] }> {
  const truth = await displayFrames(videos.truth, display), estimate = await displayFrames(videos.estimate, display);
  const delayMs = Math.round(1000 / fps);
  writeGif(`${dir}/ground-truth.gif`, truth, { delayMs });
  writeGif(`${dir}/estimate.gif`, estimate, { delayMs });
  const pick = stripIndices(truth.length);
  const rows = [truth, estimate, ...(videos.initial ? [await displayFrames(videos.initial, display)] : [])];
  writePng(`${dir}/frames.png`, stackRows(rows.map((r) => sideBySide(pick.map((i) => r[i]!)))));
  return { files: ["ground-truth.gif", "estimate.gif", "frames.png"] };
}
