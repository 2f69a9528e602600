/**
 * A small line-plot rasterizer (no dependencies): axes with ticks and numeric labels, a title,
 * axis titles (with units), a legend, one or more anti-aliased curves with optional shaded bands
 * (mean ± std), optional log-scale y. Produces a `Raster` (writeLinePlot in image.ts writes it as a PNG).
 *
 * @example
 * writeLinePlot("out/loss.png", losses, { logY: true, title: "Fit", xLabel: "step", yLabel: "loss (MSE)" });
 */
import type { Raster } from "./raster.js";
import { linearAxis, logAxis, type Axis } from "./plot-axis.js";
import { GLYPH_HEIGHT, rasterizeText, rasterizeTextVertical, textWidth } from "./pixel-font.js";

type RGB = readonly [number, number, number];

export interface PlotSeries {
  readonly y: readonly number[];
  /** x coordinates (default 0, 1, 2, …). */
  readonly x?: readonly number[];
  readonly color?: RGB;
  /** Name shown in the legend (series without a label are left out of it). */
  readonly label?: string;
  /** A shaded band around the curve (e.g. mean ± std over seeds), drawn under it. */
  readonly band?: { readonly lower: readonly number[]; readonly upper: readonly number[] };
}

export interface LinePlotOptions {
  readonly width?: number;
  readonly height?: number;
  /** log10 y axis; non-positive values are left out (gaps in the curve). */
  readonly logY?: boolean;
  readonly lineWidth?: number;
  readonly background?: RGB;
  /** Title above the plot. */
  readonly title?: string;
  /** Axis titles, with units, e.g. "step" and "loss (mean squared error per pixel)". */
  readonly xLabel?: string;
  readonly yLabel?: string;
}

const PALETTE: readonly RGB[] = [
  [31, 119, 180],
  [255, 127, 14],
  [44, 160, 44],
  [214, 39, 40],
  [148, 103, 189],
];
const AXIS: RGB = [60, 60, 60];
const GRID: RGB = [225, 225, 225];
const FONT_SCALE = 2;

/** An RGBA canvas with alpha blending (internal). */
class Canvas {
  readonly rgba: Uint8ClampedArray;
  constructor(
    readonly width: number,
    readonly height: number,
    bg: RGB,
  ) {
    this.rgba = new Uint8ClampedArray(width * height * 4);
    for (let i = 0; i < width * height; i++) this.rgba.set([bg[0], bg[1], bg[2], 255], 4 * i);
  }
  blend(x: number, y: number, c: RGB, alpha = 1): void {
    if (x < 0 || y < 0 || x >= this.width || y >= this.height || !(alpha > 0)) return;
    const o = 4 * (y * this.width + x);
    for (let k = 0; k < 3; k++) this.rgba[o + k] = this.rgba[o + k]! * (1 - alpha) + c[k]! * alpha;
  }
  hline(x0: number, x1: number, y: number, c: RGB): void {
    for (let x = x0; x <= x1; x++) this.blend(x, y, c);
  }
  vline(x: number, y0: number, y1: number, c: RGB): void {
    for (let y = y0; y <= y1; y++) this.blend(x, y, c);
  }
  text(s: string, x: number, y: number, c: RGB, scale = FONT_SCALE): void {
    rasterizeText(s, x, y, scale, (px, py) => this.blend(px, py, c));
  }
  textVertical(s: string, x: number, y: number, c: RGB, scale = FONT_SCALE): void {
    rasterizeTextVertical(s, x, y, scale, (px, py) => this.blend(px, py, c));
  }
  toRaster(): Raster {
    return { width: this.width, height: this.height, rgba: this.rgba };
  }
}

/**
 * Anti-aliased polyline coverage: the max over segments of a soft disk brush swept along each
 * segment, so overlapping segments do not darken. Points that are NaN break the line.
 */
function strokeCoverage(points: readonly [number, number][], w: number, h: number, lineWidth: number): Float32Array {
  const cov = new Float32Array(w * h);
  const r = lineWidth / 2;
  const stamp = (cx: number, cy: number) => {
    for (let y = Math.floor(cy - r - 1); y <= Math.ceil(cy + r + 1); y++) {
      for (let x = Math.floor(cx - r - 1); x <= Math.ceil(cx + r + 1); x++) {
        if (x < 0 || y < 0 || x >= w || y >= h) continue;
        const a = Math.min(1, Math.max(0, r + 0.5 - Math.hypot(x - cx, y - cy)));
        if (a > cov[y * w + x]!) cov[y * w + x] = a;
      }
    }
  };
  for (let i = 0; i < points.length; i++) {
    const [x1, y1] = points[i]!;
    if (Number.isNaN(x1) || Number.isNaN(y1)) continue;
    const prev = points[i - 1];
    if (!prev || Number.isNaN(prev[0]) || Number.isNaN(prev[1])) {
      stamp(x1, y1);
      continue;
    }
    const n = Math.max(1, Math.ceil(Math.hypot(x1 - prev[0], y1 - prev[1]) * 2));
    for (let k = 1; k <= n; k++) stamp(prev[0] + ((x1 - prev[0]) * k) / n, prev[1] + ((y1 - prev[1]) * k) / n);
  }
  return cov;
}

/** [min, max] without spreading (long series would overflow the call stack). */
const extent = (v: readonly number[]): [number, number] =>
  v.reduce<[number, number]>(([a, b], x) => [Math.min(a, x), Math.max(b, x)], [Infinity, -Infinity]);

const normalize = (data: readonly number[] | readonly PlotSeries[]): PlotSeries[] =>
  data.length > 0 && typeof data[0] === "number"
    ? [{ y: data as readonly number[] }]
    : [...(data as readonly PlotSeries[])];

/** Rasterize one or more series as a line plot. */
export function linePlot(data: readonly number[] | readonly PlotSeries[], opts: LinePlotOptions = {}): Raster {
  const { width = 640, height = 360, logY = false, lineWidth = 2, background = [255, 255, 255] } = opts;
  const series = normalize(data);
  const xsOf = (s: PlotSeries) => s.x ?? s.y.map((_, i) => i);
  const shown = (v: number) => Number.isFinite(v) && (!logY || v > 0);
  const ys = series.flatMap((s) => [...s.y, ...(s.band?.lower ?? []), ...(s.band?.upper ?? [])].filter(shown));
  const xs = series.flatMap((s) => xsOf(s).filter(Number.isFinite));
  const [ylo, yhi] = extent(ys),
    [xlo, xhi] = extent(xs);
  const yAxis: Axis =
    ys.length === 0 ? (logY ? logAxis(0.1, 10) : linearAxis(0, 1)) : logY ? logAxis(ylo, yhi) : linearAxis(ylo, yhi);
  const xAxis: Axis = xs.length === 0 ? linearAxis(0, 1) : linearAxis(xlo, xhi);

  const labelH = GLYPH_HEIGHT * FONT_SCALE;
  const titleH = opts.title ? labelH + 10 : 0,
    yTitleW = opts.yLabel ? labelH + 8 : 0,
    xTitleH = opts.xLabel ? labelH + 8 : 0;
  const left = yTitleW + Math.max(...yAxis.ticks.map((t) => textWidth(t.label, FONT_SCALE)), 0) + 14;
  const [top, right, bottom] = [12 + titleH, 16, labelH + 16 + xTitleH];
  const pw = width - left - right,
    ph = height - top - bottom;
  if (pw < 10 || ph < 10)
    throw new Error(
      `linePlot: ${width}×${height} is too small for the axes; use at least ${left + right + 10}×${top + bottom + 10}.`,
    );
  const px = (x: number) => left + xAxis.toUnit(x) * pw;
  const py = (y: number) => top + (1 - yAxis.toUnit(y)) * ph;

  const canvas = new Canvas(width, height, background);
  if (opts.title) {
    // A title too long for the canvas is drawn at half size rather than cut off.
    const scale = textWidth(opts.title, FONT_SCALE) <= width - 8 ? FONT_SCALE : 1;
    canvas.text(opts.title, Math.max(4, Math.round(left + pw / 2 - textWidth(opts.title, scale) / 2)), 8, AXIS, scale);
  }
  if (opts.yLabel) {
    // A y title longer than the axis is drawn at half size rather than cut off.
    const scale = textWidth(opts.yLabel, FONT_SCALE) <= ph + top ? FONT_SCALE : 1;
    canvas.textVertical(
      opts.yLabel,
      4 + (FONT_SCALE - scale) * GLYPH_HEIGHT,
      Math.max(2, Math.round(top + ph / 2 - textWidth(opts.yLabel, scale) / 2)),
      AXIS,
      scale,
    );
  }
  if (opts.xLabel)
    canvas.text(
      opts.xLabel,
      Math.max(2, Math.round(left + pw / 2 - textWidth(opts.xLabel, FONT_SCALE) / 2)),
      height - labelH - 4,
      AXIS,
    );
  for (const t of yAxis.ticks) {
    const y = Math.round(py(t.value));
    if (y < top || y > top + ph) continue;
    canvas.hline(left, left + pw, y, GRID);
    canvas.hline(left - 4, left, y, AXIS);
    canvas.text(t.label, left - 7 - textWidth(t.label, FONT_SCALE), y - Math.floor(labelH / 2), AXIS);
  }
  for (const t of xAxis.ticks) {
    const x = Math.round(px(t.value));
    if (x < left || x > left + pw) continue;
    canvas.vline(x, top, top + ph, GRID);
    canvas.vline(x, top + ph, top + ph + 4, AXIS);
    canvas.text(t.label, x - Math.floor(textWidth(t.label, FONT_SCALE) / 2), top + ph + 8, AXIS);
  }
  canvas.hline(left, left + pw, top + ph, AXIS);
  canvas.hline(left, left + pw, top, AXIS);
  canvas.vline(left, top, top + ph, AXIS);
  canvas.vline(left + pw, top, top + ph, AXIS);

  const colorOf = (s: PlotSeries, k: number): RGB => s.color ?? PALETTE[k % PALETTE.length]!;
  // How much of each pixel the data cover (curves and bands): the legend goes where they cover least.
  const covered = new Float32Array(width * height);
  series.forEach((s, k) => {
    if (!s.band) return;
    const sx = xsOf(s);
    // Fill between the band's edges column by column (linear interpolation between data points).
    for (let i = 1; i < sx.length; i++) {
      const [x0, x1] = [sx[i - 1]!, sx[i]!];
      const [l0, l1, u0, u1] = [s.band.lower[i - 1]!, s.band.lower[i]!, s.band.upper[i - 1]!, s.band.upper[i]!];
      if (![x0, x1].every(Number.isFinite) || ![l0, l1, u0, u1].every(shown)) continue;
      for (let c = Math.ceil(px(x0)); c <= Math.floor(px(x1)); c++) {
        const f = px(x1) === px(x0) ? 0 : (c - px(x0)) / (px(x1) - px(x0));
        const lo = logY ? 10 ** (Math.log10(l0) + f * (Math.log10(l1) - Math.log10(l0))) : l0 + f * (l1 - l0);
        const hi = logY ? 10 ** (Math.log10(u0) + f * (Math.log10(u1) - Math.log10(u0))) : u0 + f * (u1 - u0);
        for (let r = Math.ceil(Math.max(top, py(hi))); r <= Math.floor(Math.min(top + ph, py(lo))); r++) {
          canvas.blend(c, r, colorOf(s, k), 0.2);
          covered[r * width + c] += 0.2;
        }
      }
    }
  });
  series.forEach((s, k) => {
    const sx = xsOf(s);
    const pts = s.y.map((v, i): [number, number] =>
      shown(v) && Number.isFinite(sx[i]!) ? [px(sx[i]!), py(v)] : [NaN, NaN],
    );
    const cov = strokeCoverage(pts, width, height, lineWidth);
    const color = colorOf(s, k);
    for (let i = 0; i < cov.length; i++) {
      if (!(cov[i]! > 0)) continue;
      canvas.blend(i % width, Math.floor(i / width), color, cov[i]!);
      covered[i] += cov[i]!;
    }
  });

  // Legend: a box in the corner of the plot area that the data cover least (the top-right on a tie),
  // a colour swatch and the label per labelled series.
  const entries = series
    .map((s, k) => ({ label: s.label, color: colorOf(s, k) }))
    .filter((e): e is { label: string; color: RGB } => !!e.label);
  if (entries.length) {
    const rowH = labelH + 6,
      swatch = 18;
    const boxW = swatch + 14 + Math.max(...entries.map((e) => textWidth(e.label, FONT_SCALE))),
      boxH = entries.length * rowH + 6;
    const [east, west, north, south] = [left + pw - boxW - 6, left + 6, top + 6, top + ph - boxH - 6];
    const under = ([x0, y0]: readonly [number, number]) => {
      let sum = 0;
      for (let y = Math.max(0, y0); y < Math.min(height, y0 + boxH); y++)
        for (let x = Math.max(0, x0); x < Math.min(width, x0 + boxW); x++) sum += covered[y * width + x]!;
      return sum;
    };
    const corners = [
        [east, north],
        [west, north],
        [east, south],
        [west, south],
      ] as const,
      scores = corners.map(under);
    const [bx, by] = corners[scores.indexOf(Math.min(...scores))]!;
    for (let y = by; y < by + boxH; y++) for (let x = bx; x < bx + boxW; x++) canvas.blend(x, y, background, 0.85);
    canvas.hline(bx, bx + boxW, by, GRID);
    canvas.hline(bx, bx + boxW, by + boxH, GRID);
    canvas.vline(bx, by, by + boxH, GRID);
    canvas.vline(bx + boxW, by, by + boxH, GRID);
    entries.forEach((e, i) => {
      const y = by + 4 + i * rowH;
      for (let t = 0; t < 3; t++) canvas.hline(bx + 5, bx + 5 + swatch, y + Math.floor(labelH / 2) - 1 + t, e.color);
      canvas.text(e.label, bx + swatch + 10, y, AXIS);
    });
  }
  return canvas.toRaster();
}
