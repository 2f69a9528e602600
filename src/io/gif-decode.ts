/**
 * A GIF decoder (GIF87a/GIF89a) with no Node or DOM dependency, so it runs in the browser too:
 * bytes → full-canvas RGBA frames, composited as a viewer shows them (frame disposal,
 * transparency, interlacing, local colour tables). Malformed files throw an Error that says
 * what is wrong and where, never return partial garbage. What decoding allocates is bounded
 * (decode-limits.ts) from the file's structure before any pixel is decoded.
 */
import { checkDecodedBytes, type DecodeLimits } from "./decode-limits.js";

export interface DecodedGif {
  readonly width: number;
  readonly height: number;
  /** One RGBA image (width·height·4 bytes, row-major, row 0 = top) per frame, as displayed. */
  readonly frames: Uint8Array[];
  /** Display time of each frame in milliseconds (0 where the file gives none). */
  readonly delaysMs: number[];
}

/** A GIF's logical screen, frame count and delays, read without decoding any pixels. */
export interface GifInfo {
  readonly width: number;
  readonly height: number;
  readonly frames: number;
  /** Display time of each frame in milliseconds (0 where the file gives none). */
  readonly delaysMs: number[];
}

/** Frame rate of GIF delays: frames per second of their mean (the file's playing rate); null if it gives none. */
export function gifFrameRate(delaysMs: readonly number[]): number | null {
  const delays = delaysMs.filter((d) => d > 0);
  return delays.length ? 1000 / (delays.reduce((a, b) => a + b, 0) / delays.length) : null;
}

/** GIF files larger than this many pixels per frame are refused (a corrupt header is the likely cause). */
const MAX_PIXELS = 1 << 26;

class Reader {
  pos = 0;
  constructor(readonly bytes: Uint8Array) {}
  need(n: number, what: string): void {
    if (this.pos + n > this.bytes.length) {
      throw new Error(
        `decodeGif: the file ends inside the ${what} (byte ${this.pos} ` +
          `of ${this.bytes.length}); it is truncated or not a GIF.`,
      );
    }
  }
  u8(what: string): number {
    this.need(1, what);
    return this.bytes[this.pos++]!;
  }
  u16(what: string): number {
    this.need(2, what);
    const v = this.bytes[this.pos]! | (this.bytes[this.pos + 1]! << 8);
    this.pos += 2;
    return v;
  }
  take(n: number, what: string): Uint8Array {
    this.need(n, what);
    const s = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  /** Skip data sub-blocks up to the 0 terminator. */
  skipSubBlocks(what: string): void {
    for (;;) {
      const n = this.u8(what);
      if (n === 0) return;
      this.need(n, what);
      this.pos += n;
    }
  }
  /** Concatenated data sub-blocks up to the 0 terminator. */
  subBlocks(what: string): Uint8Array {
    const parts: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const n = this.u8(what);
      if (n === 0) break;
      parts.push(this.take(n, what));
      total += n;
    }
    const out = new Uint8Array(total);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

/** The file's structure (checked block by block) without decoding its pixels: cheap, for a size check or a probe. */
export function gifInfo(bytes: Uint8Array): GifInfo {
  const delaysMs: number[] = [];
  const screen = walk(bytes, (frame) => {
    delaysMs.push(frame.delayMs);
  });
  return { ...screen, frames: delaysMs.length, delaysMs };
}

/**
 * Decode every frame, composited as a viewer shows them, into memory. What that allocates
 * (frames × width × height × 4 bytes) is checked against `maxDecodedBytes` (default 1 GiB) from
 * the file's structure before any pixel is decoded; for long or large GIFs, decodeGifFrames
 * hands out one frame at a time instead.
 */
export function decodeGif(bytes: Uint8Array, o: DecodeLimits = {}): DecodedGif {
  const info = gifInfo(bytes);
  checkDecodedBytes(
    "decodeGif",
    `${info.frames} frames of ${info.width}×${info.height} RGBA`,
    info.frames * info.width * info.height * 4,
    o,
  );
  const frames: Uint8Array[] = [],
    delaysMs: number[] = [];
  decodeGifFrames(
    bytes,
    (rgba, delayMs) => {
      frames.push(rgba.slice());
      delaysMs.push(delayMs);
    },
    o,
  );
  return { width: info.width, height: info.height, frames, delaysMs };
}

/**
 * Decode the frames one at a time: `onFrame` gets the composited canvas (width·height·4 bytes,
 * valid only during the call: copy, crop or resample it there), so memory stays at one canvas
 * (its size is checked against `maxDecodedBytes` first) however many frames the file holds.
 * `onFrame` returning false stops decoding there (the frames after it are not decoded).
 */
export function decodeGifFrames(
  bytes: Uint8Array,
  // biome-ignore lint/suspicious/noConfusingVoidType: onFrame may return nothing (go on) or false (stop).
  onFrame: (rgba: Uint8Array, delayMs: number, index: number) => boolean | void,
  o: DecodeLimits = {},
): { width: number; height: number; frames: number } {
  let canvas: Uint8Array | null = null,
    count = 0;
  const screen = walk(bytes, (f, width, height) => {
    // Disposal 3 keeps a second copy of the canvas while the frame is drawn.
    if (!canvas) {
      checkDecodedBytes("decodeGif", `a ${width}×${height} RGBA canvas and its copy`, 2 * width * height * 4, o);
      canvas = new Uint8Array(width * height * 4);
    }
    const c: Uint8Array = canvas;
    const before = f.disposal === 3 ? c.slice() : null;
    f.draw(c);
    if (onFrame(c, f.delayMs, count++) === false) return false;
    // Disposal prepares the canvas for the next frame: 2 clears this frame's rectangle (to transparent, as
    // browsers do), 3 restores the canvas as it was before this frame.
    if (f.disposal === 2) {
      for (let y = f.top; y < Math.min(f.top + f.h, height); y++)
        c.fill(0, 4 * (y * width + f.left), 4 * (y * width + Math.min(f.left + f.w, width)));
    } else if (before) c.set(before);
    return true;
  });
  return { ...screen, frames: count };
}

interface FrameRecord {
  readonly left: number;
  readonly top: number;
  readonly w: number;
  readonly h: number;
  readonly delayMs: number;
  readonly disposal: number;
  /** Decode this frame's pixels onto the canvas (only called while decoding, not by gifInfo). */
  readonly draw: (canvas: Uint8Array) => void;
}

/**
 * Walk the blocks of a GIF, calling `frame` per image (false: stop there); its `draw` decodes the pixels when called.
 */
function walk(
  bytes: Uint8Array,
  // biome-ignore lint/suspicious/noConfusingVoidType: frame may return nothing (go on) or false (stop).
  frame: (f: FrameRecord, width: number, height: number) => boolean | void,
): { width: number; height: number } {
  const r = new Reader(bytes);
  const sig = String.fromCharCode(...r.take(6, "header"));
  if (sig !== "GIF87a" && sig !== "GIF89a")
    throw new Error(
      `decodeGif: not a GIF file (it starts with ${JSON.stringify(sig)}, expected "GIF87a" or "GIF89a").`,
    );
  const width = r.u16("screen descriptor"),
    height = r.u16("screen descriptor");
  const packed = r.u8("screen descriptor");
  r.u8("screen descriptor"); // background colour index (unused: disposal clears to transparent)
  r.u8("screen descriptor"); // pixel aspect ratio
  if (width === 0 || height === 0)
    throw new Error(`decodeGif: the image size is ${width}×${height}; a GIF needs a positive width and height.`);
  if (width * height > MAX_PIXELS)
    throw new Error(
      `decodeGif: the image size ${width}×${height} is too large ` +
        `(more than ${MAX_PIXELS} pixels); the file is probably corrupt.`,
    );
  const globalTable = packed & 0x80 ? r.take(3 * (2 << (packed & 7)), "global colour table") : null;

  let transparent = -1,
    delay = 0,
    disposal = 0,
    index = 0;
  for (;;) {
    const block = r.u8("block introducer");
    if (block === 0x3b) break; // trailer
    if (block === 0x21) {
      const label = r.u8("extension label");
      if (label === 0xf9) {
        const data = r.subBlocks("graphic control extension");
        if (data.length < 4)
          throw new Error(`decodeGif: a graphic control extension has ${data.length} bytes; it needs 4.`);
        disposal = (data[0]! >> 2) & 7;
        transparent = data[0]! & 1 ? data[3]! : -1;
        delay = (data[1]! | (data[2]! << 8)) * 10;
      } else r.skipSubBlocks("extension");
      continue;
    }
    if (block !== 0x2c)
      throw new Error(
        `decodeGif: unexpected block type 0x${block.toString(16)} at byte ${r.pos - 1}; the file is corrupt.`,
      );
    const left = r.u16("image descriptor"),
      top = r.u16("image descriptor");
    const w = r.u16("image descriptor"),
      h = r.u16("image descriptor");
    const flags = r.u8("image descriptor");
    const table = flags & 0x80 ? r.take(3 * (2 << (flags & 7)), "local colour table") : globalTable;
    const n = index;
    if (!table) throw new Error(`decodeGif: frame ${n} has no colour table (neither local nor global).`);
    if (w * h > MAX_PIXELS)
      throw new Error(
        `decodeGif: frame ${n} is ${w}×${h}, more than ${MAX_PIXELS} pixels; the file is probably corrupt.`,
      );
    const minCode = r.u8("image data");
    if (minCode < 2 || minCode > 11)
      throw new Error(`decodeGif: frame ${n} has an invalid LZW code size ${minCode} (must be 2–11).`);
    const dataStart = r.pos;
    r.skipSubBlocks("image data");
    const dataEnd = r.pos,
      tr = transparent;
    const draw = (canvas: Uint8Array) => {
      const indices = lzwDecode(
        new Reader(bytes.subarray(dataStart, dataEnd)).subBlocks("image data"),
        minCode,
        w * h,
        n,
      );
      const rows = flags & 0x40 ? interlacedRows(h) : null;
      for (let y = 0; y < h; y++) {
        const cy = top + (rows ? rows[y]! : y);
        if (cy >= height) continue;
        for (let x = 0; x < w; x++) {
          const cx = left + x;
          if (cx >= width) continue;
          const ci = indices[y * w + x]!;
          if (ci === tr) continue;
          if (3 * ci + 2 >= table.length)
            throw new Error(
              `decodeGif: frame ${n} uses colour ${ci}, beyond its ${table.length / 3}-entry colour table.`,
            );
          const o = 4 * (cy * width + cx);
          canvas[o] = table[3 * ci]!;
          canvas[o + 1] = table[3 * ci + 1]!;
          canvas[o + 2] = table[3 * ci + 2]!;
          canvas[o + 3] = 255;
        }
      }
    };
    index++;
    if (frame({ left, top, w, h, delayMs: delay, disposal, draw }, width, height) === false) return { width, height };
    transparent = -1;
    delay = 0;
    disposal = 0;
  }
  if (!index) throw new Error("decodeGif: the file holds no image frames.");
  return { width, height };
}

/** Row order of an interlaced image: rows 0,8,16…, then 4,12…, then 2,6…, then 1,3…. */
function interlacedRows(h: number): Int32Array {
  const rows = new Int32Array(h);
  let k = 0;
  for (const [start, step] of [
    [0, 8],
    [4, 8],
    [2, 4],
    [1, 2],
  ] as const)
    for (let y = start; y < h; y += step) rows[k++] = y;
  return rows;
}

/** Variable-width LZW as GIF uses it: codes packed LSB-first, clear and end codes, 12-bit maximum. */
function lzwDecode(data: Uint8Array, minCode: number, n: number, frame: number): Uint8Array {
  const out = new Uint8Array(n);
  const clear = 1 << minCode,
    end = clear + 1;
  const prefix = new Int16Array(4096),
    suffix = new Uint8Array(4096),
    length = new Uint16Array(4096);
  for (let i = 0; i < clear; i++) {
    prefix[i] = -1;
    suffix[i] = i;
    length[i] = 1;
  }
  let size = minCode + 1,
    next = end + 1,
    prev = -1;
  let bits = 0,
    acc = 0,
    o = 0;
  for (let p = 0; p < data.length || bits >= size; ) {
    while (bits < size && p < data.length) {
      acc |= data[p++]! << bits;
      bits += 8;
    }
    if (bits < size) break;
    const code = acc & ((1 << size) - 1);
    acc >>>= size;
    bits -= size;
    if (code === clear) {
      size = minCode + 1;
      next = end + 1;
      prev = -1;
      continue;
    }
    if (code === end) break;
    if (code > next || (code === next && prev < 0)) {
      throw new Error(`decodeGif: frame ${frame} has a corrupt LZW stream (code ${code} before it was defined).`);
    }
    // code === next: the KwKwK case, the previous string plus its own first character.
    const emit = code === next ? prev : code;
    let first = emit;
    while (prefix[first]! >= 0) first = prefix[first]!;
    o = writeString(out, o, emit, n, prefix, suffix, length);
    if (code === next && o < n) out[o++] = suffix[first]!;
    if (prev >= 0 && next < 4096) {
      prefix[next] = prev;
      suffix[next] = suffix[first]!;
      length[next] = length[prev]! + 1;
      next++;
      if (next === 1 << size && size < 12) size++;
    }
    prev = code;
  }
  if (o < n) throw new Error(`decodeGif: frame ${frame} holds ${o} of its ${n} pixels; the image data is truncated.`);
  return out;
}

/** Write the string of `code` at out[o…] (clipped to n); returns the new offset. */
function writeString(
  out: Uint8Array,
  o: number,
  code: number,
  n: number,
  prefix: Int16Array,
  suffix: Uint8Array,
  length: Uint16Array,
): number {
  const len = length[code]!;
  let c = code;
  for (let k = len - 1; k >= 0; k--) {
    if (o + k < n) out[o + k] = suffix[c]!;
    c = prefix[c]!;
  }
  return Math.min(o + len, n);
}
