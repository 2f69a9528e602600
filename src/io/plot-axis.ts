/** Axis ranges, tick positions and tick labels for line plots (linear or log10). */

export interface Axis {
  /** Data value → position in [0, 1] along the axis (NaN for values the scale cannot show). */
  readonly toUnit: (v: number) => number;
  readonly ticks: readonly { readonly value: number; readonly label: string }[];
}

/** A "nice" step (1, 2 or 5 × 10ᵏ) giving about `target` intervals over `span`. */
function niceStep(span: number, target: number): number {
  const raw = span / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

function formatLinear(v: number, step: number): string {
  if (v === 0) return "0";
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  if (Math.abs(v) >= 1e5 || decimals > 4)
    return v.toExponential(Math.min(2, Math.max(0, Math.round(Math.log10(Math.abs(v) / step))))).replace("e+", "e");
  return v.toFixed(decimals);
}

/** A linear axis over [lo, hi] (a degenerate range is widened), with about 5 ticks. */
export function linearAxis(lo: number, hi: number): Axis {
  if (hi - lo <= 0) {
    const pad = Math.abs(lo) * 0.1 || 1;
    lo -= pad;
    hi += pad;
  }
  const pad = (hi - lo) * 0.05;
  const [a, b] = [lo - pad, hi + pad];
  const step = niceStep(b - a, 5);
  const ticks = [];
  for (let t = Math.ceil(a / step) * step; t <= b + step * 1e-9; t += step) {
    const v = Math.abs(t) < step * 1e-9 ? 0 : t;
    ticks.push({ value: v, label: formatLinear(v, step) });
  }
  return { toUnit: (v) => (Number.isFinite(v) ? (v - a) / (b - a) : NaN), ticks };
}

const formatDecade = (k: number): string => (k >= -2 && k <= 3 ? String(10 ** k) : `1e${k}`);

/** A log10 axis spanning whole decades around [lo, hi] (both > 0); non-positive values map to NaN. */
export function logAxis(lo: number, hi: number): Axis {
  let a = Math.floor(Math.log10(lo)),
    b = Math.ceil(Math.log10(hi));
  if (b <= a) {
    a -= 1;
    b += 1;
  }
  const every = Math.max(1, Math.ceil((b - a) / 8));
  const ticks = [];
  for (let k = a; k <= b; k += every) ticks.push({ value: 10 ** k, label: formatDecade(k) });
  return { toUnit: (v) => (v > 0 && Number.isFinite(v) ? (Math.log10(v) - a) / (b - a) : NaN), ticks };
}
