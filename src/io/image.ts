/**
 * Image files at the edge of the library (Node only): PNG frames, animated GIFs and line plots
 * written to disk, PNGs read back. The in-memory raster operations are in raster.ts.
 */
import { readFileSync } from "node:fs";
import { PNG } from "pngjs";
import type { Array } from "../core/array.js";
import { fromTyped } from "../core/create.js";
import { linePlot, type LinePlotOptions, type PlotSeries } from "./plot.js";
import { writeAtomic } from "./atomic.js";
import { checkDecodedBytes, type DecodeLimits } from "./decode-limits.js";
import { pngDecodedBytes, pngHeader } from "./png-header.js";
import { encodeGif, toRaster, type GifOptions, type Raster } from "./raster.js";

export * from "./raster.js";

export function writePng(path: string, img: Array | Raster): void {
  const r = toRaster(img);
  const png = new PNG({ width: r.width, height: r.height });
  png.data = Buffer.from(r.rgba.buffer, r.rgba.byteOffset, r.rgba.byteLength);
  writeAtomic(path, PNG.sync.write(png));
}

/**
 * Read a PNG as a float32 [H, W, 4] array in [0, 1] (alpha kept as the fourth channel: nothing
 * is composited). What decoding allocates is checked from the header first, against
 * `maxDecodedBytes` (default 1 GiB; decode-limits.ts).
 */
export function readPng(path: string, o: DecodeLimits = {}): Array {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (e) {
    throw new Error(`readPng: cannot read ${path}: ${(e as Error).message}`);
  }
  const header = pngHeader(buf, `readPng: ${path}`);
  checkDecodedBytes(
    `readPng: ${path}`,
    `${header.width}×${header.height} pixels, decoded and as float32 RGBA`,
    pngDecodedBytes(header) + header.width * header.height * 16,
    o,
  );
  let png: PNG;
  try {
    png = PNG.sync.read(buf);
  } catch (e) {
    throw new Error(`readPng: ${path} is not a readable PNG (${(e as Error).message}); give an 8-bit PNG file.`);
  }
  const out = new Float32Array(png.width * png.height * 4);
  for (let i = 0; i < out.length; i++) out[i] = png.data[i]! / 255;
  return fromTyped(out, [png.height, png.width, 4], "float32", { backend: "cpu" });
}

/**
 * Write frames as an animated GIF (encodeGif: `fps` or `delayMs`; RGB as rendered, or straight alpha over
 * `background`).
 */
export function writeGif(path: string, frames: readonly (Array | Raster)[], opts: GifOptions = {}): void {
  const bytes = encodeGif(frames, opts);
  writeAtomic(path, bytes);
}

/** linePlot written as a PNG file (directories are created). */
export function writeLinePlot(
  path: string,
  data: readonly number[] | readonly PlotSeries[],
  opts: LinePlotOptions = {},
): void {
  writePng(path, linePlot(data, opts));
}
