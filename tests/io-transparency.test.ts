/**
 * Transparent pixels in images read as inputs: a background plate with any is refused (they say
 * nothing about what the camera saw), ordinary video frames are composited over black (as
 * documented), and a control target image over the scene's background, as its frames are.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { init, np } from "../src/index.js";
import { writePng, type Raster } from "../src/io/image.js";
import { readBackgroundPlate, readVideo } from "../src/sysid/node.js";
import { readTargetImage } from "../src/control/node.js";

await init({ backend: "cpu" });
const dir = mkdtempSync(join(tmpdir(), "gradsim-alpha-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 4×2: the left half opaque red, the right half fully transparent (its colour channels green). */
const halfTransparent = (): Raster => {
  const rgba = new Uint8ClampedArray(4 * 2 * 4);
  for (let y = 0; y < 2; y++)
    for (let x = 0; x < 4; x++) rgba.set(x < 2 ? [255, 0, 0, 255] : [0, 255, 0, 0], 4 * (y * 4 + x));
  return { width: 4, height: 2, rgba };
};

describe("transparency", () => {
  it("a background plate with transparent pixels is refused, saying what to do; an opaque one is read", () => {
    const plate = join(dir, "plate.png");
    writePng(plate, halfTransparent());
    expect(() => readBackgroundPlate(plate, { width: 2, height: 1 })).toThrow(
      new RegExp(
        /the background plate .*plate\.png has 4 transparent pixels of 8 \(the first at x=2, y=0\); /.source +
          /a plate is a photo of the scene without the object: save it without transparency/.source,
      ),
    );
    // Cropped to its opaque half, it is a plate.
    const ok = readBackgroundPlate(plate, { width: 1, height: 1, crop: [0, 0, 2, 2] });
    expect(ok.shape).toEqual([1, 1, 3]);
    expect([...ok.dataSync()]).toEqual([1, 0, 0]);
  });

  it("ordinary video frames are composited over black (RGB times alpha)", () => {
    const frames = join(dir, "frames");
    writePng(join(frames, "f0.png"), halfTransparent());
    const v = readVideo(frames, { width: 2, height: 1 });
    expect([...v.frames.dataSync()]).toEqual([1, 0, 0, 0, 0, 0]);
  });

  it("a control target image is composited over the scene's background, not black", () => {
    const target = join(dir, "target.png");
    writePng(target, halfTransparent());
    const grey = [0.5, 0.25, 0.125] as const;
    expect([...readTargetImage(target, 2, "a test", grey).dataSync()].map((x) => Number(x.toFixed(4)))).toEqual([
      1, 0, 0, 0.5, 0.25, 0.125, 1, 0, 0, 0.5, 0.25, 0.125,
    ]);
    const image = np.reshape(np.arange(12, undefined, undefined, { dtype: "float32" }), [2, 2, 3]);
    const over = [...readTargetImage(target, 2, "a test", np.div(image, 12)).dataSync()].map((x) =>
      Number(x.toFixed(4)),
    );
    expect(over.slice(3, 6)).toEqual([3, 4, 5].map((x) => Number((x / 12).toFixed(4))));
    expect(over.slice(0, 3)).toEqual([1, 0, 0]);
  });
});
