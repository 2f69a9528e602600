/**
 * Resampling RGBA frames (no Node or DOM dependency: the video reader and the web page share it).
 */

/** An 8-bit RGBA image, row-major, row 0 = top. */
export interface Frame {
  readonly width: number;
  readonly height: number;
  readonly rgba: Uint8Array | Uint8ClampedArray;
}

/**
 * The crop of `f` resized to w×h by area averaging (each output pixel is the mean of the source
 * area it covers, with fractional edge weights), RGB premultiplied by alpha, into out[offset…].
 */
export function resizeInto(
  f: Frame,
  crop: readonly [number, number, number, number],
  w: number,
  h: number,
  out: Float32Array,
  offset: number,
): void {
  const [cx, cy, cw, ch] = crop;
  const sx = cw / w,
    sy = ch / h;
  const spans = (n: number, s: number, origin: number) =>
    globalThis.Array.from({ length: n }, (_, i) => {
      const lo = origin + i * s,
        hi = origin + (i + 1) * s;
      const taps: [number, number][] = [];
      for (let p = Math.floor(lo); p < Math.ceil(hi); p++) taps.push([p, Math.min(hi, p + 1) - Math.max(lo, p)]);
      return taps;
    });
  const xs = spans(w, sx, cx),
    ys = spans(h, sy, cy);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let r = 0,
        g = 0,
        b = 0,
        weight = 0;
      for (const [py, wy] of ys[y]!)
        for (const [px, wx] of xs[x]!) {
          const o = 4 * (py * f.width + px),
            a = f.rgba[o + 3]! / 255,
            k = wx * wy;
          r += k * a * f.rgba[o]!;
          g += k * a * f.rgba[o + 1]!;
          b += k * a * f.rgba[o + 2]!;
          weight += k;
        }
      const o = offset + 3 * (y * w + x);
      out[o] = r / weight / 255;
      out[o + 1] = g / weight / 255;
      out[o + 2] = b / weight / 255;
    }
}
