import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeGif, gifFrameRate } from "../src/io/gif-decode.js";
import { encodeGif, gifDelays, writeGif, type Raster } from "../src/io/image.js";
import { probeVideo } from "../src/sysid/node.js";

/** A raster with a colour per pixel from f(x, y). */
function raster(width: number, height: number, f: (x: number, y: number) => [number, number, number]): Raster {
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const [r, g, b] = f(x, y);
      rgba.set([r, g, b, 255], 4 * (y * width + x));
    }
  return { width, height, rgba };
}

/**
 * A minimal GIF writer for cases gifenc does not produce (interlacing, transparency, disposal):
 * "uncompressed" LZW — a clear code before the dictionary would grow past the first code size.
 */
function handGif(
  width: number,
  height: number,
  palette: number[][],
  frames: {
    indices: number[];
    rect?: [number, number, number, number];
    interlaced?: boolean;
    transparent?: number;
    disposal?: number;
  }[],
): Uint8Array {
  const out: number[] = [];
  const u16 = (v: number) => out.push(v & 255, v >> 8);
  out.push(..."GIF89a".split("").map((c) => c.charCodeAt(0)));
  u16(width);
  u16(height);
  out.push(0x80 | 1, 0, 0); // global table of 4 colours
  for (let i = 0; i < 4; i++) out.push(...(palette[i] ?? [0, 0, 0]));
  for (const f of frames) {
    out.push(
      0x21,
      0xf9,
      4,
      ((f.disposal ?? 0) << 2) | (f.transparent !== undefined ? 1 : 0),
      10,
      0,
      f.transparent ?? 0,
      0,
    );
    const [left, top, w, h] = f.rect ?? [0, 0, width, height];
    out.push(0x2c);
    u16(left);
    u16(top);
    u16(w);
    u16(h);
    out.push(f.interlaced ? 0x40 : 0);
    const minCode = 2,
      clear = 4,
      size = 3;
    const codes: number[] = [clear];
    f.indices.forEach((v, i) => {
      if (i > 0 && i % 2 === 0) codes.push(clear);
      codes.push(v);
    });
    codes.push(5);
    let acc = 0,
      bits = 0;
    const data: number[] = [];
    for (const c of codes) {
      acc |= c << bits;
      bits += size;
      while (bits >= 8) {
        data.push(acc & 255);
        acc >>= 8;
        bits -= 8;
      }
    }
    if (bits) data.push(acc & 255);
    out.push(minCode);
    for (let i = 0; i < data.length; i += 255) {
      const chunk = data.slice(i, i + 255);
      out.push(chunk.length, ...chunk);
    }
    out.push(0);
  }
  out.push(0x3b);
  return Uint8Array.from(out);
}

const pixel = (img: Uint8Array, width: number, x: number, y: number) => [
  ...img.subarray(4 * (y * width + x), 4 * (y * width + x) + 4),
];

describe("decodeGif", () => {
  it("reads back what gifenc (writeGif) wrote: every frame, every pixel, the delays", () => {
    const dir = mkdtempSync(join(tmpdir(), "gradsim-gif-"));
    try {
      // Few distinct colours, so the quantiser keeps them exactly.
      const colours: [number, number, number][] = [
        [255, 0, 0],
        [0, 128, 255],
        [20, 200, 40],
        [250, 250, 250],
      ];
      const frames = [0, 1, 2].map((t) => raster(37, 23, (x, y) => colours[(x + 2 * y + t) % 4]!));
      const path = join(dir, "clip.gif");
      writeGif(path, frames, { delayMs: 50 });
      const gif = decodeGif(new Uint8Array(readFileSync(path)));
      expect([gif.width, gif.height, gif.frames.length]).toEqual([37, 23, 3]);
      expect(gif.delaysMs).toEqual([50, 50, 50]);
      frames.forEach((f, t) => expect([...gif.frames[t]!]).toEqual([...f.rgba]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("de-interlaces rows, keeps pixels under transparent ones, and applies disposal", () => {
    const palette = [
      [0, 0, 0],
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
    ];
    const W = 3,
      H = 9;
    const rows = [0, 8, 4, 2, 6, 1, 3, 5, 7]; // pass order of an interlaced 9-row image
    // Frame 0, interlaced: row y has colour 1 + (y % 3); stored in pass order.
    const f0 = rows.flatMap((y) => [1, 2, 3].map(() => 1 + (y % 3)));
    // Frame 1: a 1×1 patch at (1, 1) in colour 3, disposal 2 (cleared to the background afterwards); index 0
    // transparent.
    // Frame 2: fully transparent: shows the canvas as frame 1 left it.
    const gif = decodeGif(
      handGif(W, H, palette, [
        { indices: f0, interlaced: true },
        { indices: [3], rect: [1, 1, 1, 1], transparent: 0, disposal: 2 },
        { indices: new globalThis.Array(W * H).fill(0), transparent: 0 },
      ]),
    );
    for (let y = 0; y < H; y++) expect(pixel(gif.frames[0]!, W, 0, y)).toEqual([...palette[1 + (y % 3)]!, 255]);
    expect(pixel(gif.frames[1]!, W, 1, 1)).toEqual([0, 0, 255, 255]);
    expect(pixel(gif.frames[1]!, W, 0, 1)).toEqual(pixel(gif.frames[0]!, W, 0, 1));
    // Disposal 2 cleared (1, 1) to transparent, as browsers show it; the rest of the canvas stays.
    expect(pixel(gif.frames[2]!, W, 1, 1)).toEqual([0, 0, 0, 0]);
    expect(pixel(gif.frames[2]!, W, 2, 5)).toEqual(pixel(gif.frames[0]!, W, 2, 5));
  });

  it("names what is wrong with a file that is not a GIF, truncated or corrupt", () => {
    expect(() => decodeGif(new TextEncoder().encode("PNG..."))).toThrow(/not a GIF file/);
    const good = handGif(
      2,
      2,
      [
        [0, 0, 0],
        [9, 9, 9],
      ],
      [{ indices: [1, 0, 1, 0] }],
    );
    expect(decodeGif(good).frames).toHaveLength(1);
    for (const cut of [8, 20, good.length - 6])
      expect(() => decodeGif(good.subarray(0, cut))).toThrow(/decodeGif: .*(truncated|ends inside)/);
    const badCode = good.slice();
    badCode[good.indexOf(0x2c) + 10] = 13; // LZW minimum code size
    expect(() => decodeGif(badCode)).toThrow(/invalid LZW code size 13/);
    const zero = good.slice();
    zero[6] = 0;
    zero[7] = 0;
    expect(() => decodeGif(zero)).toThrow(/0×2/);
  });
});

describe("writeGif: frame rate and background", () => {
  it("30 fps is written as alternating 3 and 4 cs delays, and read back as 30 fps (not 33.3)", () => {
    const dir = mkdtempSync(join(tmpdir(), "gradsim-gif-rate-"));
    try {
      const frames = globalThis.Array.from({ length: 30 }, (_, t) => raster(4, 4, () => [8 * t, 0, 0]));
      const path = join(dir, "rate.gif");
      writeGif(path, frames, { fps: 30 });
      const gif = decodeGif(new Uint8Array(readFileSync(path)));
      expect(new Set(gif.delaysMs)).toEqual(new Set([30, 40]));
      expect(gif.delaysMs.reduce((a, b) => a + b, 0)).toBe(1000);
      expect(gifFrameRate(gif.delaysMs)).toBeCloseTo(30, 9);
      expect(probeVideo(path).fps).toBeCloseTo(30, 9);
      expect(gifDelays(6, 1000 / 30)).toEqual([3, 4, 3, 3, 4, 3]);
      expect(gifDelays(4, 1000 / 24)).toEqual([4, 4, 5, 4]);
      expect(gifDelays(3, 50)).toEqual([5, 5, 5]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a render's background colour survives: RGB where alpha is 0 is kept, and the palette holds it exactly", () => {
    // A render: RGB already blended with the background colour, alpha the silhouette (0 outside it);
    // inside, thousands of colours (more than a palette), some a step away from the background.
    const bg = [31, 33, 41];
    const w = 96,
      h = 96,
      rgba = new Uint8ClampedArray(w * h * 4);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        // The object covers most of the frame, so a plain 256-colour quantizer moves the background to [31, 34, 42].
        const inside = (x - 48) ** 2 + (y - 48) ** 2 < 4000;
        rgba.set(
          inside
            ? [bg[0]! + ((x * 7) % 40) - 3, bg[1]! + ((y * 5) % 40) - 3, bg[2]! + ((x + y) % 30) - 2, 200]
            : [...bg, 0],
          4 * (y * w + x),
        );
      }
    const gif = decodeGif(encodeGif([{ width: w, height: h, rgba }]));
    expect(pixel(gif.frames[0]!, w, 0, 0)).toEqual([...bg, 255]);
    expect(pixel(gif.frames[0]!, w, 95, 95)).toEqual([...bg, 255]);
    // Straight alpha over a chosen colour, when asked.
    const over = decodeGif(encodeGif([{ width: w, height: h, rgba }], { background: [1, 0.5, 0] }));
    expect(pixel(over.frames[0]!, w, 0, 0)).toEqual([255, 128, 0, 255]);
  });
});
