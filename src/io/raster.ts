/**
 * Rasters: 8-bit RGBA images in memory (no files, no Node built-ins, so the browser entry can use
 * them): conversion from arrays, side-by-side and stacked strips, text, labelled grids, GIF bytes.
 * Images are RGBA float data in [0, 1], row-major [H, W, 4] (or [H, W, 3] / [H, W]).
 */
import * as gifencModule from "gifenc";
import { Array } from "../core/array.js";
import { GLYPH_HEIGHT, rasterizeText, textWidth } from "./pixel-font.js";

/** An 8-bit RGBA raster. */
export interface Raster {
  readonly width: number;
  readonly height: number;
  readonly rgba: Uint8ClampedArray;
}

/** Convert an image Array ([H,W], [H,W,1], [H,W,3] or [H,W,4], values in [0,1]) to an 8-bit raster. */
export function toRaster(img: Array | Raster): Raster {
  if (!(img instanceof Array)) return img;
  const s = img.shape;
  if (s.length < 2 || s.length > 3 || (s.length === 3 && ![1, 3, 4].includes(s[2]!))) {
    throw new Error(`image: expected an array of shape [H,W], [H,W,1], [H,W,3] or [H,W,4], got [${s}].`);
  }
  const [h, w] = [s[0]!, s[1]!];
  const c = s.length === 3 ? s[2]! : 1;
  const d = img.dataSync();
  const rgba = new Uint8ClampedArray(w * h * 4);
  for (let i = 0; i < w * h; i++) {
    const px = (k: number) =>
      Math.round(Math.min(1, Math.max(0, Number.isFinite(d[i * c + k]!) ? d[i * c + k]! : 0)) * 255);
    if (c === 1) {
      const v = px(0);
      rgba[4 * i] = v;
      rgba[4 * i + 1] = v;
      rgba[4 * i + 2] = v;
      rgba[4 * i + 3] = 255;
    } else {
      rgba[4 * i] = px(0);
      rgba[4 * i + 1] = px(1);
      rgba[4 * i + 2] = px(2);
      rgba[4 * i + 3] = c === 4 ? px(3) : 255;
    }
  }
  return { width: w, height: h, rgba };
}

/** Place images left to right (with a gap), e.g. estimate vs ground truth. */
export const sideBySide = (images: readonly (Array | Raster)[], gap = 4, background: Rgba = WHITE): Raster =>
  tile(images, "row", gap, background);

/** Stack images top to bottom (with a gap), e.g. rows of frame strips. */
export const stackRows = (images: readonly (Array | Raster)[], gap = 4, background: Rgba = WHITE): Raster =>
  tile(images, "column", gap, background);

type Rgba = readonly [number, number, number, number];
const WHITE: Rgba = [255, 255, 255, 255];

function tile(images: readonly (Array | Raster)[], direction: "row" | "column", gap: number, background: Rgba): Raster {
  const rs = images.map(toRaster);
  const along = (r: Raster) => (direction === "row" ? r.width : r.height);
  const across = (r: Raster) => (direction === "row" ? r.height : r.width);
  const length = rs.reduce((s, r) => s + along(r), 0) + gap * (rs.length - 1),
    breadth = Math.max(...rs.map(across));
  const [width, height] = direction === "row" ? [length, breadth] : [breadth, length];
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) rgba.set(background, 4 * i);
  let offset = 0;
  for (const r of rs) {
    const [x0, y0] = direction === "row" ? [offset, 0] : [0, offset];
    for (let y = 0; y < r.height; y++)
      rgba.set(r.rgba.subarray(4 * y * r.width, 4 * (y + 1) * r.width), 4 * ((y0 + y) * width + x0));
    offset += along(r) + gap;
  }
  return { width, height, rgba };
}

/**
 * A raster holding `text` in the 5×7 font at `scale`, dark on `background` (default white), `padding` pixels around it.
 */
export function textRaster(text: string, scale = 2, padding = 3, background: Rgba = WHITE): Raster {
  const width = textWidth(text, scale) + 2 * padding,
    height = GLYPH_HEIGHT * scale + 2 * padding;
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) rgba.set(background, 4 * i);
  rasterizeText(text, padding, padding, scale, (x, y) => {
    if (x < width && y < height) rgba.set([40, 40, 40, 255], 4 * (y * width + x));
  });
  return { width, height, rgba };
}

/**
 * A labelled grid of images, e.g. a frame strip: one row per sequence with its name on the left
 * (target, estimate, initial guess) and a label over each column (the frame or its time).
 */
export function labelledGrid(
  rows: readonly { readonly label: string; readonly images: readonly (Array | Raster)[] }[],
  columnLabels: readonly string[],
  corner = "",
  o: { gap?: number; background?: Rgba } = {},
): Raster {
  const gap = o.gap ?? 4,
    bg = o.background ?? WHITE;
  const cells = rows.map((r) => r.images.map(toRaster));
  if (cells.some((c) => c.length !== columnLabels.length))
    throw new Error(`labelledGrid: every row needs ${columnLabels.length} images (one per column label).`);
  const label = (text: string, scale = 2) => textRaster(text, scale, 3, bg);
  const rowLabels = rows.map((r) => label(r.label));
  const labelWidth = Math.max(label(corner).width, ...rowLabels.map((l) => l.width));
  const columnWidth = (j: number) => Math.max(...cells.map((c) => c[j]!.width));
  // A column label wider than its column is drawn at half size, so columns stay aligned.
  const headerCell = (l: string, j: number) =>
    fit(label(l, label(l).width <= columnWidth(j) ? 2 : 1), columnWidth(j), label(l).height, bg);
  const header = sideBySide([fit(label(corner), labelWidth, 1, bg), ...columnLabels.map(headerCell)], gap, bg);
  const body = rows.map((_, i) =>
    sideBySide([fit(rowLabels[i]!, labelWidth, cells[i]![0]?.height ?? 0, bg), ...cells[i]!], gap, bg),
  );
  return stackRows([header, ...body], gap, bg);
}

/** `r` centred on a canvas of `background` at least width × height (never cropped). */
function fit(r: Raster, width: number, height: number, background: Rgba): Raster {
  const w = Math.max(width, r.width),
    h = Math.max(height, r.height);
  const out: Raster = { width: w, height: h, rgba: new Uint8ClampedArray(w * h * 4) };
  for (let i = 0; i < w * h; i++) out.rgba.set(background, 4 * i);
  const x0 = Math.floor((w - r.width) / 2),
    y0 = Math.floor((h - r.height) / 2);
  for (let y = 0; y < r.height; y++)
    out.rgba.set(r.rgba.subarray(4 * y * r.width, 4 * (y + 1) * r.width), 4 * ((y0 + y) * w + x0));
  return out;
}

/** Composite straight-alpha RGBA over a background colour (GIF has no partial alpha). */
function flatten(r: Raster, bg: readonly [number, number, number]): Uint8ClampedArray {
  const o = new Uint8ClampedArray(r.rgba.length);
  for (let i = 0; i < r.width * r.height; i++) {
    const a = r.rgba[4 * i + 3]! / 255;
    for (let k = 0; k < 3; k++) o[4 * i + k] = r.rgba[4 * i + k]! * a + bg[k]! * 255 * (1 - a);
    o[4 * i + 3] = 255;
  }
  return o;
}

/** RGB as it is, opaque (a render's RGB already holds its background colour where alpha is 0). */
function opaque(r: Raster): Uint8ClampedArray {
  const o = new Uint8ClampedArray(r.rgba);
  for (let i = 3; i < o.length; i += 4) o[i] = 255;
  return o;
}

/** The most frequent colour of opaque RGBA pixels (a frame's background, as a rule). */
function commonestColour(rgba: Uint8ClampedArray): number[] {
  const counts = new Map<number, number>();
  let best = 0,
    bestCount = -1;
  for (let i = 0; i < rgba.length; i += 4) {
    const c = (rgba[i]! << 16) | (rgba[i + 1]! << 8) | rgba[i + 2]!;
    const n = (counts.get(c) ?? 0) + 1;
    counts.set(c, n);
    if (n > bestCount) {
      best = c;
      bestCount = n;
    }
  }
  return [best >> 16, (best >> 8) & 255, best & 255];
}

/**
 * Per-frame GIF delays in centiseconds (the only unit GIF has) whose running sum follows
 * frame·delayMs: 1000/30 ms gives 3, 4, 3, 3, 4, 3, … cs, so the file plays at 30 fps on average
 * rather than the 33.3 fps of a constant 3 cs.
 */
export function gifDelays(frames: number, delayMs: number): number[] {
  const at = (i: number) => Math.round((i * delayMs) / 10);
  return globalThis.Array.from({ length: frames }, (_, i) => at(i + 1) - at(i));
}

interface GifApi {
  GIFEncoder: () => {
    writeFrame(idx: Uint8Array, w: number, h: number, o: { palette: number[][]; delay: number }): void;
    finish(): void;
    bytes(): Uint8Array;
  };
  quantize: (rgba: Uint8ClampedArray, n: number) => number[][];
  applyPalette: (rgba: Uint8ClampedArray, pal: number[][]) => Uint8Array;
}
/**
 * gifenc's API under both module systems: Node loads its CJS build (API on `default`), Vite its ESM build (named
 * exports).
 */
function gifApi(): GifApi {
  const m = gifencModule as unknown as Partial<GifApi> & { default?: Partial<GifApi> };
  const api = typeof m.GIFEncoder === "function" ? m : m.default;
  if (!api || typeof api.GIFEncoder !== "function")
    throw new Error("encodeGif: the gifenc module has no GIFEncoder export.");
  return api as GifApi;
}

export interface GifOptions {
  /**
   * Frames per second; the delays alternate (e.g. 3, 4, 3 cs at 30 fps) so the mean rate is this
   * one. Default 30. Above 50 fps the GIF plays at 50 (players show delays under 2 cs as 10 cs).
   */
  readonly fps?: number;
  /** Display time of each frame in ms (instead of fps; fractions allowed, averaged the same way). */
  readonly delayMs?: number;
  /**
   * Composite straight-alpha RGBA over this colour (RGB in [0, 1]). Without it, RGB is written as
   * it is and alpha ignored: a render's RGB already holds its background colour where its alpha
   * (the silhouette) is 0, and that colour is what the GIF shows.
   */
  readonly background?: readonly [number, number, number];
}

/**
 * Frames as the bytes of an animated GIF. GIF has no partial transparency: see `background`.
 * Each frame's palette (256 colours) always holds its background colour — the given one, else
 * its commonest colour — exactly, so quantization never shifts it.
 */
export function encodeGif(frames: readonly (Array | Raster)[], opts: GifOptions = {}): Uint8Array {
  if (!frames.length) throw new Error("encodeGif: no frames given.");
  if (opts.fps !== undefined && opts.delayMs !== undefined)
    throw new Error("encodeGif: give fps or delayMs, not both.");
  const delayMs = opts.delayMs ?? 1000 / (opts.fps ?? 30);
  if (!(Number.isFinite(delayMs) && delayMs > 0))
    throw new Error(
      `encodeGif: the frame rate must be a positive finite number, ` +
        `got ${opts.fps !== undefined ? `fps ${opts.fps}` : `delayMs ${opts.delayMs}`}.`,
    );
  // Players show a delay under 2 cs as 10 cs: a faster video plays at 50 fps (slowed), not at 10.
  const shown = Math.max(delayMs, 20);
  const rs = frames.map(toRaster);
  const { width, height } = rs[0]!;
  if (rs.some((r) => r.width !== width || r.height !== height))
    throw new Error("encodeGif: all frames must have the same size.");
  const delays = gifDelays(rs.length, shown);
  const { GIFEncoder, quantize, applyPalette } = gifApi();
  const enc = GIFEncoder();
  rs.forEach((r, i) => {
    const flat = opts.background ? flatten(r, opts.background) : opaque(r);
    const bg = opts.background
      ? opts.background.map((c) => Math.round(Math.min(1, Math.max(0, c)) * 255))
      : commonestColour(flat);
    // 255 quantized colours and the exact background: its pixels map to it, whatever the quantizer merged.
    const palette = [...quantize(flat, 255).filter((c) => c[0] !== bg[0] || c[1] !== bg[1] || c[2] !== bg[2]), bg];
    enc.writeFrame(applyPalette(flat, palette), width, height, { palette, delay: 10 * delays[i]! });
  });
  enc.finish();
  return enc.bytes();
}
