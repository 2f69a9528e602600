/**
 * Summary statistics of host numbers for the experiments' tables and curves (population std; NaN median of nothing).
 */
export const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
export const std = (xs: readonly number[]): number => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
/** Curves (one value per grid point each) each rescaled to [0, 1] (a flat one to 0), then averaged point by point. */
export function meanRescaled(curves: readonly (readonly number[])[]): number[] {
  const rescaled = curves.map((ys) => {
    const lo = Math.min(...ys),
      hi = Math.max(...ys);
    return ys.map((v) => (hi > lo ? (v - lo) / (hi - lo) : 0));
  });
  return (curves[0] ?? []).map((_, i) => mean(rescaled.map((ys) => ys[i]!)));
}
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
