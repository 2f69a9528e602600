/**
 * Frame sequences on top of image.ts: numbered PNG frames (write and read back as targets),
 * side-by-side comparison videos (e.g. estimate | ground truth per frame) as GIF, and
 * compositing RGBA renders over a background colour.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Array, ArrayLike } from "../core/array.js";
import { np } from "../core/np/index.js";
import { checkDecodedBytes, type DecodeLimits } from "./decode-limits.js";
import { readPng, sideBySide, writeGif, writePng, type GifOptions, type Raster } from "./image.js";
import { pngHeader, type PngHeader } from "./png-header.js";

export interface FrameOptions {
  /** File name prefix. Default "frame". */
  readonly prefix?: string;
  /** Number of the first frame. Default 0. */
  readonly start?: number;
  /** Zero-padded width of the frame number. Default 4. */
  readonly digits?: number;
}

const frameName = (prefix: string, i: number, digits: number) => `${prefix}${String(i).padStart(digits, "0")}.png`;

/** Write frames as dir/prefix0000.png, prefix0001.png, …; returns the paths. */
export function writePngFrames(dir: string, frames: readonly (Array | Raster)[], opts: FrameOptions = {}): string[] {
  mkdirSync(dir, { recursive: true });
  const prefix = opts.prefix ?? "frame",
    start = opts.start ?? 0,
    digits = opts.digits ?? 4;
  return frames.map((f, i) => {
    const path = join(dir, frameName(prefix, start + i, digits));
    writePng(path, f);
    return path;
  });
}

/**
 * Read every dir/prefix*.png in numeric order as float32 [H, W, 4] arrays in [0, 1] (e.g. target
 * videos; alpha kept). Their total size is checked from the headers before any is decoded,
 * against `maxDecodedBytes` (default 1 GiB; decode-limits.ts).
 */
export function readPngFrames(dir: string, opts: Pick<FrameOptions, "prefix"> & DecodeLimits = {}): Array[] {
  const prefix = opts.prefix ?? "frame";
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new Error(`readPngFrames: cannot list ${dir}: ${(e as Error).message}`);
  }
  const frames = names
    .filter((n) => n.startsWith(prefix) && n.endsWith(".png") && /^\d+$/.test(n.slice(prefix.length, -4)))
    .sort((a, b) => Number(a.slice(prefix.length, -4)) - Number(b.slice(prefix.length, -4)));
  if (!frames.length) throw new Error(`readPngFrames: no ${prefix}<number>.png files in ${dir}.`);
  const pixels = frames.reduce((sum, n) => {
    const path = join(dir, n);
    let h: PngHeader;
    try {
      h = pngHeader(readFileSync(path), `readPngFrames: ${path}`);
    } catch (e) {
      throw new Error(
        (e as Error).message.startsWith("readPngFrames")
          ? (e as Error).message
          : `readPngFrames: cannot read ${path}: ${(e as Error).message}`,
      );
    }
    return sum + h.width * h.height;
  }, 0);
  checkDecodedBytes(
    `readPngFrames: ${dir}`,
    `${frames.length} frames, ${pixels} pixels as float32 RGBA`,
    pixels * 16,
    opts,
  );
  return frames.map((n) => readPng(join(dir, n), opts));
}

/**
 * A side-by-side comparison video: `columns` are equally long frame sequences (e.g.
 * [estimates, targets]); frame t shows columns[0][t] | columns[1][t] | ….
 */
export function writeComparisonGif(
  path: string,
  columns: readonly (readonly (Array | Raster)[])[],
  opts: GifOptions & { gap?: number } = {},
): void {
  if (!columns.length) throw new Error("writeComparisonGif: no sequences given.");
  const n = columns[0]!.length;
  if (columns.some((c) => c.length !== n))
    throw new Error(
      `writeComparisonGif: sequences have different lengths (${columns.map((c) => c.length).join(", ")}).`,
    );
  const frames = globalThis.Array.from({ length: n }, (_, t) =>
    sideBySide(
      columns.map((c) => c[t]!),
      opts.gap ?? 4,
    ),
  );
  const { gap: _gap, ...gif } = opts;
  writeGif(path, frames, gif);
}

/** Composite an RGBA image [H, W, 4] over a background colour → RGB [H, W, 3] (array ops, so also usable in losses). */
export function compositeOver(rgba: Array, background: ArrayLike = [1, 1, 1]): Array {
  if (rgba.ndim !== 3 || rgba.shape[2] !== 4)
    throw new Error(`compositeOver: expected an [H, W, 4] image, got [${rgba.shape}].`);
  const [rgb, a] = np.split(rgba, [3], -1) as [Array, Array];
  const bg = np.astype(np.array(background), rgba.dtype);
  return np.add(np.mul(rgb, a), np.mul(bg, np.sub(1, a)));
}
