/**
 * Decompression bombs: a few hundred bytes of GIF or PNG claiming gigabytes of pixels are refused
 * from their headers, before anything is allocated, with the limit and how to raise it; the video
 * reader decodes a GIF once, a frame at a time, so a large canvas costs one canvas.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32, deflateSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { decodeGif, gifInfo } from "../src/io/gif-decode.js";
import { readPng } from "../src/io/image.js";
import { readPngFrames } from "../src/io/video.js";
import { probeVideo, readVideo } from "../src/sysid/node.js";

const dir = mkdtempSync(join(tmpdir(), "gradsim-bombs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A GIF with a width×height logical screen and `frames` frames of 1×1 pixel (colour 1). */
function tinyFrameGif(width: number, height: number, frames: number): Uint8Array {
  const out: number[] = [..."GIF89a"].map((c) => c.charCodeAt(0));
  const u16 = (v: number) => out.push(v & 255, v >> 8);
  u16(width);
  u16(height);
  out.push(0x80 | 1, 0, 0, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255);
  for (let f = 0; f < frames; f++) {
    out.push(0x21, 0xf9, 4, 0, 3, 0, 0, 0);
    out.push(0x2c);
    u16(f % width);
    u16(0);
    u16(1);
    u16(1);
    out.push(0);
    // LZW, code size 2: clear (4), index 1, end (5), 3 bits each.
    out.push(2, 2, 4 | (1 << 3) | ((5 & 3) << 6), 5 >> 2, 0);
  }
  out.push(0x3b);
  return Uint8Array.from(out);
}

/** A PNG whose header claims width×height RGBA pixels, with a few bytes of image data. */
function claimedPng(width: number, height: number): Uint8Array {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.alloc(64))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

describe("decode limits", () => {
  // The GIF: an 8192×8192 screen, 64 frames of 1×1.
  it("a 1.5 KB GIF asking for 16 GiB is refused before decoding, naming the limit and how to raise it", () => {
    const bomb = tinyFrameGif(8192, 8192, 64);
    expect(bomb.length).toBeLessThan(1500 + 1);
    expect(gifInfo(bomb)).toMatchObject({ width: 8192, height: 8192, frames: 64 });
    expect(() => decodeGif(bomb)).toThrow(
      new RegExp(
        /decodeGif: decoding it needs 16\.0 GiB \(64 frames of 8192×8192 RGBA\), /.source +
          /more than the limit of 1\.0 GiB.*maxDecodedBytes.*GRADSIM_MAX_DECODED_BYTES/.source,
      ),
    );
    // Raising the limit is honoured (here: lowering it, so a small file shows the same refusal).
    const small = tinyFrameGif(64, 64, 8);
    expect(decodeGif(small).frames.length).toBe(8);
    expect(() => decodeGif(small, { maxDecodedBytes: 64 * 64 * 4 * 7 })).toThrow(/needs 128 KiB/);
    expect(() => decodeGif(small, { maxDecodedBytes: -1 })).toThrow(/maxDecodedBytes must be a positive number/);
  });

  it("the video reader decodes a GIF a frame at a time: memory is one canvas, however many frames", () => {
    const path = join(dir, "many.gif");
    writeFileSync(path, tinyFrameGif(256, 256, 64));
    // All 64 canvases would be 16 MiB; one canvas and its copy fit in 1 MiB, and so do the resampled frames.
    const limit = { maxDecodedBytes: 2 ** 20 };
    expect(() => decodeGif(tinyFrameGif(256, 256, 64), limit)).toThrow(/needs 16\.0 MiB/);
    const v = readVideo(path, { width: 4, height: 4, crop: [0, 0, 4, 4], ...limit });
    expect(v.frames.shape).toEqual([64, 4, 4, 3]);
    expect(v.fps).toBeCloseTo(1000 / 30, 9);
    // Frame 2 drew its pixel (red) at x = 2, over the transparent canvas (black).
    const d = v.frames.dataSync();
    expect([...d.subarray(2 * 48 + 3 * 2, 2 * 48 + 3 * 2 + 3)]).toEqual([1, 0, 0]);
    // The resampled output counts too: asking for many large frames names it.
    expect(() => readVideo(path, { width: 256, height: 256, ...limit })).toThrow(
      /many\.gif: decoding it needs 48\.0 MiB \(64 frames of 256×256 RGB as float32\)/,
    );
    expect(probeVideo(path)).toMatchObject({ format: "gif", width: 256, height: 256, frames: 64 });
  });

  it("a 200-byte PNG claiming 30000×30000 is refused from its header, by readPng, readPngFrames and readVideo", () => {
    const bytes = claimedPng(30000, 30000);
    expect(bytes.length).toBeLessThan(200);
    const file = join(dir, "frame0000.png");
    writeFileSync(file, bytes);
    expect(() => readPng(file)).toThrow(
      /readPng: .*frame0000\.png: decoding it needs 20\.1 GiB \(30000×30000 pixels.*limit of 1\.0 GiB/,
    );
    expect(() => readPngFrames(dir)).toThrow(/readPngFrames: .*decoding it needs 13\.4 GiB/);
    expect(() => readVideo(file, { width: 4, height: 4 })).toThrow(
      /video: .*frame0000\.png: decoding it needs 6\.7 GiB/,
    );
    writeFileSync(file, "not a png at all, but long enough to have a header");
    expect(() => readPng(file)).toThrow(/is not a readable PNG \(it has no PNG signature\)/);
  });
});
