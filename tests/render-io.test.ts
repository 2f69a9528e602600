/**
 * Image I/O around the renderer: PNG round trip of a rendered RGBA frame, numbered PNG frame
 * sequences read back as targets, GIF turntables and side-by-side comparisons.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { init, np } from "../src/index.js";
import { readPng, sideBySide, writePng } from "../src/io/image.js";
import { compositeOver, readPngFrames, writeComparisonGif, writePngFrames } from "../src/io/video.js";
import { writeGif } from "../src/io/image.js";
import * as R from "../src/render/index.js";
import { maxAbsDiff } from "./render-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "gradsim-render-io-"));
beforeAll(async () => {
  await init({ backend: "cpu" });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const frame = (az: number) =>
  R.render(
    R.meshFromData(R.icosphereData(1, 0.8), { colors: [0.9, 0.4, 0.2] }),
    R.perspectiveCamera({ distance: 3, elevation: 20, azimuth: az }),
    undefined,
    undefined,
    { width: 16, softras: { sigma: 2e-3 }, background: [0.2, 0.3, 0.4] },
  );

/** Count image descriptors (0x2C after a block) in a GIF by walking its blocks. */
function gifFrames(buf: Buffer): number {
  expect(buf.subarray(0, 6).toString()).toBe("GIF89a");
  let p = 13;
  if (buf[10]! & 0x80) p += 3 * (1 << ((buf[10]! & 7) + 1));
  let frames = 0;
  const skipSub = () => {
    while (buf[p]! !== 0) p += buf[p]! + 1;
    p++;
  };
  while (p < buf.length && buf[p] !== 0x3b) {
    if (buf[p] === 0x21) {
      p += 2;
      skipSub();
    } else if (buf[p] === 0x2c) {
      frames++;
      const packed = buf[p + 9]!;
      p += 10;
      if (packed & 0x80) p += 3 * (1 << ((packed & 7) + 1));
      p++; // LZW minimum code size
      skipSub();
    } else throw new Error(`unexpected GIF block 0x${buf[p]!.toString(16)}`);
  }
  return frames;
}

describe("render I/O", () => {
  it("a rendered RGBA frame survives a PNG round trip to 8-bit precision", () => {
    const img = frame(0);
    writePng(join(dir, "one.png"), img);
    const back = readPng(join(dir, "one.png"));
    expect(back.shape).toEqual([16, 16, 4]);
    expect(maxAbsDiff(back, np.astype(np.clip(img, 0, 1), "float32"))).toBeLessThanOrEqual(0.5 / 255 + 1e-7);
  });
  it("numbered PNG frames are written and read back in order", () => {
    const frames = [0, 90, 180].map(frame);
    const paths = writePngFrames(join(dir, "seq"), frames, { prefix: "f", digits: 3 });
    expect(paths.map((p) => p.slice(-8))).toEqual(["f000.png", "f001.png", "f002.png"]);
    const back = readPngFrames(join(dir, "seq"), { prefix: "f" });
    expect(back.length).toBe(3);
    back.forEach((b, i) =>
      expect(maxAbsDiff(b, np.astype(np.clip(frames[i]!, 0, 1), "float32"))).toBeLessThanOrEqual(0.5 / 255 + 1e-7),
    );
    expect(() => readPngFrames(join(dir, "seq"), { prefix: "nope" })).toThrow(/no nope/);
  });
  it("turntable GIF and side-by-side comparison GIF have one image per frame", () => {
    const frames = [0, 60, 120, 180].map(frame);
    writeGif(join(dir, "turn.gif"), frames, { delayMs: 50 });
    expect(gifFrames(readFileSync(join(dir, "turn.gif")))).toBe(4);
    writeComparisonGif(join(dir, "cmp.gif"), [frames, frames.slice().reverse()]);
    expect(gifFrames(readFileSync(join(dir, "cmp.gif")))).toBe(4);
    const sbs = sideBySide([frames[0]!, frames[1]!], 4);
    expect([sbs.width, sbs.height]).toEqual([36, 16]);
    expect(() => writeComparisonGif(join(dir, "bad.gif"), [frames, frames.slice(1)])).toThrow(/different lengths/);
  });
  it("compositeOver blends RGB by alpha over the background", () => {
    const rgba = np.array(
      [
        [
          [1, 0, 0, 0.25],
          [0, 1, 0, 1],
        ],
      ],
      { dtype: "float64" },
    );
    expect(compositeOver(rgba, [0, 0, 1]).toList()).toEqual([
      [
        [0.25, 0, 0.75],
        [0, 1, 0],
      ],
    ]);
  });
});
