/** The line-plot rasterizer behind the loss-curve PNGs: geometry of the drawn curve, log scale, gaps. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { linePlot, writeLinePlot } from "../src/node.js";
import { readPng, type Raster } from "../src/io/image.js";
import { nums } from "./optim-helpers.js";

/** Per column, the centroid row of "coloured" pixels (axes and grid are grey, so R = G = B there). */
function curveRows(r: Raster, isCurve: (R: number, G: number, B: number) => boolean): Map<number, number> {
  const rows = new Map<number, number>();
  for (let x = 0; x < r.width; x++) {
    let sw = 0,
      sy = 0;
    for (let y = 0; y < r.height; y++) {
      const o = 4 * (y * r.width + x);
      const [R, G, B] = [r.rgba[o]!, r.rgba[o + 1]!, r.rgba[o + 2]!];
      if (!isCurve(R, G, B)) continue;
      const w = (Math.max(R, G, B) - Math.min(R, G, B)) / 255; // colour saturation: 0 on grey
      sw += w;
      sy += w * y;
    }
    if (sw > 0.2) rows.set(x, sy / sw);
  }
  return rows;
}
const blue = (R: number, _G: number, B: number) => B - R > 30;
const orange = (R: number, _G: number, B: number) => R - B > 30;

/** Least-squares line through (x, row) points: slope and worst residual in pixels. */
function lineFit(points: Map<number, number>): { slope: number; maxResidual: number } {
  const xs = [...points.keys()],
    ys = [...points.values()];
  const n = xs.length,
    mx = xs.reduce((a, b) => a + b) / n,
    my = ys.reduce((a, b) => a + b) / n;
  const slope = xs.reduce((s, x, i) => s + (x - mx) * (ys[i]! - my), 0) / xs.reduce((s, x) => s + (x - mx) ** 2, 0);
  const maxResidual = Math.max(...xs.map((x, i) => Math.abs(ys[i]! - (my + slope * (x - mx)))));
  return { slope, maxResidual };
}

describe("linePlot", () => {
  it("draws y = x as a straight rising line across the plot", () => {
    const r = linePlot(
      Array.from({ length: 50 }, (_, i) => i),
      { width: 400, height: 300 },
    );
    expect([r.width, r.height, r.rgba.length]).toEqual([400, 300, 400 * 300 * 4]);
    const rows = curveRows(r, blue);
    expect(rows.size).toBeGreaterThan(250); // spans most of the width
    const { slope, maxResidual } = lineFit(rows);
    expect(slope).toBeLessThan(-0.3); // rows grow downwards, so a rising line has negative slope
    expect(maxResidual).toBeLessThan(1.5);
  });

  it("logY makes an exponential straight, which the linear axis does not", () => {
    const ys = Array.from({ length: 41 }, (_, i) => 10 ** (-i / 5)); // eight decades
    const log = lineFit(curveRows(linePlot(ys, { logY: true }), blue));
    const lin = lineFit(curveRows(linePlot(ys), blue));
    expect(log.maxResidual).toBeLessThan(1.5);
    expect(log.slope).toBeGreaterThan(0.3);
    expect(lin.maxResidual).toBeGreaterThan(40);
  });

  it("leaves gaps at non-finite values (and at non-positive ones on a log axis)", () => {
    const ys = Array.from({ length: 100 }, (_, i) => (i >= 40 && i < 60 ? NaN : 1 + i));
    const rows = curveRows(linePlot(ys, { width: 500, height: 300 }), blue);
    const cols = [...rows.keys()];
    const gaps = cols.slice(1).map((c, i) => c - cols[i]!);
    expect(Math.max(...gaps)).toBeGreaterThan(80); // ~20% of ~430 px of plot width
    const withZero = curveRows(linePlot([1, 0.1, 0, 0.001, 1e-4], { logY: true }), blue);
    expect(withZero.size).toBeGreaterThan(50);
  });

  it("draws several series in different colours, each where its data is", () => {
    const r = linePlot([{ y: [0, 0, 0, 0] }, { y: [10, 10, 10, 10] }], { width: 300, height: 200 });
    const low = curveRows(r, blue),
      high = curveRows(r, orange);
    expect(low.size).toBeGreaterThan(150);
    expect(high.size).toBeGreaterThan(150);
    const mean = (m: Map<number, number>) => [...m.values()].reduce((a, b) => a + b) / m.size;
    expect(mean(high)).toBeLessThan(mean(low) - 100);
  });

  it("rejects a canvas too small for its axes, and plots empty or constant data without failing", () => {
    expect(() => linePlot([1, 2], { width: 20, height: 20 })).toThrow(/too small/);
    expect(linePlot([]).width).toBe(640);
    expect(curveRows(linePlot([3, 3, 3]), blue).size).toBeGreaterThan(400);
  });

  it("draws the title, axis titles and a legend where they belong, and shades a band between its edges", () => {
    const y = Array.from({ length: 20 }, (_, i) => i);
    const plain = linePlot(y, { width: 400, height: 300 });
    const named = linePlot([{ y, label: "mean", band: { lower: y.map((v) => v - 3), upper: y.map((v) => v + 3) } }], {
      width: 400,
      height: 300,
      title: "Loss",
      xLabel: "step",
      yLabel: "loss (MSE)",
    });
    const dark = (r: Raster, x0: number, x1: number, y0: number, y1: number) => {
      let n = 0;
      for (let yy = y0; yy < y1; yy++) for (let xx = x0; xx < x1; xx++) if (r.rgba[4 * (yy * r.width + xx)]! < 120) n++;
      return n;
    };
    // Title strip at the top centre, x title at the bottom centre, y title along the left edge.
    expect(dark(plain, 150, 250, 0, 12)).toBe(0);
    expect(dark(named, 150, 250, 0, 22)).toBeGreaterThan(20);
    expect(dark(plain, 150, 250, 293, 300)).toBe(0);
    expect(dark(named, 150, 250, 293, 300)).toBeGreaterThan(5);
    expect(dark(named, 0, 18, 100, 200)).toBeGreaterThan(10);
    // The band is a light tint of the curve's colour on both sides of it; the plain plot has none there.
    const tinted = (r: Raster) => {
      let columns = 0;
      for (let x = 0; x < r.width; x++) {
        let n = 0;
        for (let yy = 0; yy < r.height; yy++) {
          const o = 4 * (yy * r.width + x),
            [R, B] = [r.rgba[o]!, r.rgba[o + 2]!];
          if (R > 190 && B - R >= 20 && B - R <= 35) n++;
        }
        if (n >= 8) columns++;
      }
      return columns;
    };
    expect(tinted(named)).toBeGreaterThan(200);
    expect(tinted(plain)).toBe(0);
    // The legend goes in the corner of the plot the data cover least: the only pixels a label
    // changes are there, and they include the swatch's colour. A rising curve (and its band) ends in
    // the top-right corner, so its legend is top-left; a falling one leaves the top-right free.
    const options = { width: 400, height: 300, title: "Loss", xLabel: "step", yLabel: "loss (MSE)" };
    const legendPixels = (values: number[]) => {
      const band = { lower: values.map((v) => v - 3), upper: values.map((v) => v + 3) };
      const [withLabel, without] = [
        linePlot([{ y: values, label: "mean", band }], options),
        linePlot([{ y: values, band }], options),
      ];
      const changed: [number, number][] = [];
      for (let i = 0; i < withLabel.rgba.length; i += 4) {
        if ([0, 1, 2].some((k) => withLabel.rgba[i + k] !== without.rgba[i + k]))
          changed.push([(i / 4) % 400, Math.floor(i / 4 / 400)]);
      }
      expect(changed.length).toBeGreaterThan(50);
      expect(
        changed.some(([x, yy]) =>
          blue(withLabel.rgba[4 * (yy * 400 + x)]!, 0, withLabel.rgba[4 * (yy * 400 + x) + 2]!),
        ),
      ).toBe(true);
      return { xs: changed.map(([x]) => x), ys: changed.map(([, yy]) => yy) };
    };
    const rising = legendPixels(y);
    expect(Math.max(...rising.xs)).toBeLessThan(200);
    expect(Math.max(...rising.ys)).toBeLessThan(80);
    const falling = legendPixels([...y].reverse());
    expect(Math.min(...falling.xs)).toBeGreaterThan(250);
    expect(Math.max(...falling.ys)).toBeLessThan(80);
  });

  describe("writeLinePlot", () => {
    const dir = mkdtempSync(join(tmpdir(), "gradsim-plot-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    it("writes a PNG that reads back with the same pixels", () => {
      const path = join(dir, "a/b/plot.png");
      const data = [5, 3, 4, 1, 2];
      writeLinePlot(path, data, { width: 200, height: 120 });
      const img = readPng(path);
      expect(img.shape).toEqual([120, 200, 4]);
      const expected = linePlot(data, { width: 200, height: 120 }).rgba;
      const got = nums(img).map((v) => Math.round(v * 255));
      expect(got).toEqual(globalThis.Array.from(expected));
    });
  });
});
