/**
 * Central finite differences in float64: the transform-free reference for gradients and
 * directional derivatives. Functions are called eagerly on perturbed copies of the input.
 */
import { np, type Array } from "../../src/index.js";

const perturbed = (x: Array, dir: Float64Array, h: number): Array => {
  const d = x.dataSync();
  const out = new Float64Array(d.length);
  for (let i = 0; i < d.length; i++) out[i] = d[i]! + h * dir[i]!;
  return np.array(out, { dtype: "float64" }).reshape([...x.shape]);
};

/** (f(x + h v) - f(x - h v)) / 2h, for any output shape. */
export function fdDirectional(f: (x: Array) => Array, x: Array, v: Array, h = 1e-6): Array {
  const dir = Float64Array.from(v.dataSync());
  const up = f(perturbed(x, dir, h)),
    down = f(perturbed(x, dir, -h));
  const a = up.dataSync(),
    b = down.dataSync();
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i]! - b[i]!) / (2 * h);
  return np.array(out, { dtype: "float64" }).reshape([...up.shape]);
}

/** Full gradient of a scalar function by central differences (one coordinate at a time). */
export function fdGrad(f: (x: Array) => Array, x: Array, h = 1e-6): Array {
  const n = x.size;
  const out = new Float64Array(n);
  const e = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    e.fill(0);
    e[i] = 1;
    const up = f(perturbed(x, e, h)).item(),
      down = f(perturbed(x, e, -h)).item();
    out[i] = (up - down) / (2 * h);
  }
  return np.array(out, { dtype: "float64" }).reshape([...x.shape]);
}

/** Jacobian d f(x) / d x by central differences: shape out.shape + x.shape. */
export function fdJacobian(f: (x: Array) => Array, x: Array, h = 1e-6): Array {
  const n = x.size;
  const cols: Array[] = [];
  const e = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    e.fill(0);
    e[i] = 1;
    cols.push(fdDirectional(f, x, np.array(e, { dtype: "float64" }).reshape([...x.shape]), h));
  }
  const stacked = np.stack(cols, -1); // out.shape + [n]
  return stacked.reshape([...stacked.shape.slice(0, -1), ...x.shape]);
}

/** Σ a·b as a JS number (for directional-derivative checks <grad, v>). */
export function dotAll(a: Array, b: Array): number {
  const x = a.dataSync(),
    y = b.dataSync();
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * y[i]!;
  return s;
}

/** d/ds f(args + s·dirs) at s = 0 by central differences, for a scalar function of several Arrays. */
export function fdDirectionalArgs(
  f: (...xs: Array[]) => Array,
  args: readonly Array[],
  dirs: readonly Array[],
  h = 1e-6,
): number {
  const at = (s: number) => f(...args.map((a, i) => perturbed(a, Float64Array.from(dirs[i]!.dataSync()), s))).item();
  return (at(h) - at(-h)) / (2 * h);
}

/**
 * Whether s ↦ f(args + s·dirs) is smooth at 0 at the finite-difference scale: the one-sided
 * differences agree. Generated programs can sit exactly on a kink (where(x > mean(x)) with tied
 * x, max of equal values), where central differences measure a jump rather than the derivative.
 */
export function smoothAlong(
  f: (...xs: Array[]) => Array,
  args: readonly Array[],
  dirs: readonly Array[],
  h = 1e-6,
): boolean {
  const at = (s: number) => f(...args.map((a, i) => perturbed(a, Float64Array.from(dirs[i]!.dataSync()), s))).item();
  const f0 = at(0),
    up = at(h) - f0,
    down = f0 - at(-h);
  return Math.abs(up - down) <= 1e-3 * (Math.abs(up) + Math.abs(down)) + 1e-12;
}
