/**
 * The loss's profile along the interval's long axis: how far along it a value still fits as well
 * as the modelling choices already allow.
 *
 * Why: the Laplace interval reads the loss's curvature at the estimate. Where contact makes the
 * loss rugged along a long flat valley, the estimate sits in one small dip and the curvature there
 * says little about the valley: the outside set's rocking cylinder (MuJoCo) fitted at 4.338 kg,
 * μ 0.538 with a ±5.5% interval, while its loss along the valley (μ on a 0.5% grid at each mass)
 * stays within 3.1% of the estimate's from 4.0 to 4.5 kg and within 6% from 3.9 to 4.7 kg, with
 * another dip at 4.6 kg (2.0% above) and the truth (4.0 kg, μ 0.6) 3.3% above the estimate's loss.
 *
 * What counts as "as well": the alternatives (uncertainty.ts) re-find the minimiser under other
 * reasonable modelling choices; under the default choices those minimisers cost some loss above
 * the estimate's. A value whose best fit costs no more is as plausible as they are. So the profile
 * walks out along the covariance's principal axis (the other directions re-fitted by
 * Levenberg–Marquardt at each point, continuing from the last), and the interval is widened to
 * the farthest point on each side that costs no more than the costliest alternative — also beyond
 * a ridge, where a second basin lies.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { levenbergMarquardt } from "../optim/least-squares.js";
import { jit } from "../transforms/index.js";

/** Multiples of the interval's half-length along its principal axis at which the profile is evaluated. */
export const PROFILE_STEPS = [1, 1.5, 2, 3, 4, 6] as const;
/**
 * A walk stops where the loss has risen twice in a row beyond the allowance and to more than this many allowances
 * above the estimate's: the cost of a profile point (a re-fit) bounds how far past a ridge it looks for another basin.
 */
const RIDGE_LIMIT = 4;
/** Levenberg–Marquardt steps re-fitting the other directions at each profile point. */
const PROFILE_REFIT_STEPS = 5;

export interface ProfilePoint {
  /** Signed distance along the axis in the interval's half-lengths. */
  readonly step: number;
  /** The point (unconstrained coordinates, every unknown). */
  readonly u: readonly number[];
  readonly loss: number;
  /** Its loss is within `allowance` of the estimate's. */
  readonly consistent: boolean;
  /** Not evaluated: where the loss crosses the allowance, between a consistent point and the next. */
  readonly interpolated?: boolean;
}

export interface Profile {
  /** The estimate it starts from (unconstrained coordinates). */
  readonly center: readonly number[];
  /** The principal axis (unit vector in unconstrained coordinates). */
  readonly axis: readonly number[];
  /** The interval's half-length along the axis (unconstrained units). */
  readonly halfLength: number;
  /** The estimate's loss, and the largest excess over it a value may have to count as consistent. */
  readonly loss: number;
  readonly allowance: number;
  readonly points: readonly ProfilePoint[];
}

/** The principal eigenvector and eigenvalue of a small symmetric positive semi-definite matrix (power iteration). */
export function principalAxis(cov: readonly (readonly number[])[]): { axis: number[]; variance: number } {
  const start = cov.map((row, i) => Math.sqrt(Math.max(row[i]!, 0)) + 1e-12);
  let v = start.map((x) => x / Math.hypot(...start));
  let lambda = 0;
  for (let it = 0; it < 200; it++) {
    const w = cov.map((row) => row.reduce((s, c, j) => s + c * v[j]!, 0));
    const norm = Math.hypot(...w);
    if (!(norm > 0)) break;
    const next = w.map((x) => x / norm);
    const moved = Math.hypot(...next.map((x, i) => x - v[i]!));
    v = next;
    lambda = norm;
    if (moved < 1e-12) break;
  }
  return { axis: v, variance: lambda };
}

/** Σ r²: the loss of a residual (objective.ts scales residuals so). */
const sumOfSquares = (r: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < r.length; i++) s += r[i]! * r[i]!;
  return s;
};

/** An orthonormal basis (p − 1 vectors) of the directions perpendicular to the unit vector `axis` (Gram–Schmidt). */
function complement(axis: readonly number[]): number[][] {
  const p = axis.length,
    basis: number[][] = [];
  const order = axis.map((x, i) => [Math.abs(x), i] as const).sort((a, b) => a[0] - b[0]);
  for (const [, e] of order) {
    if (basis.length === p - 1) break;
    let v: number[] = axis.map((_, i) => (i === e ? 1 : 0));
    for (const b of [axis, ...basis]) {
      const d = v.reduce((s, x, i) => s + x * b[i]!, 0);
      v = v.map((x, i) => x - d * b[i]!);
    }
    const n = Math.hypot(...v);
    if (n > 1e-6) basis.push(v.map((x) => x / n));
  }
  return basis;
}

/**
 * The profile of the loss Σ residual(u)² along `axis` from `u`: at ± each of PROFILE_STEPS half-lengths, the other
 * directions re-fitted (Levenberg–Marquardt from the last point's fit outward); `lossAt` is the estimate's loss.
 */
export async function profileAlongAxis(
  residual: (u: Array) => Array,
  u: readonly number[],
  cov: readonly (readonly number[])[],
  lossAt: number,
  allowance: number,
): Promise<Profile> {
  const p = u.length;
  const { axis, variance } = principalAxis(cov);
  const halfLength = 1.96 * Math.sqrt(variance);
  const others = complement(axis);
  const pointAt = (t: number, w: readonly number[]) =>
    u.map((x, i) => x + t * axis[i]! + others.reduce((s, b, k) => s + w[k]! * b[i]!, 0));
  const basis = others.length ? np.array(others, { dtype: "float32" }) : undefined; // [p − 1, p]
  const residualAt = jit(residual);
  // The residual at base + wᵀ·others: one function for every point, so Levenberg–Marquardt compiles it once.
  const across = (w: Array, base: Array) =>
    residual(np.add(base, np.reshape(np.matmul(np.reshape(w, [1, -1]), basis!), [p])));
  // The best loss at distance t along the axis, the other directions re-fitted from w.
  const profileLoss = async (t: number, w: number[]): Promise<{ loss: number; w: number[] }> => {
    const origin = w.map(() => 0);
    const base = np.array(pointAt(t, origin), { dtype: "float32" });
    if (basis) {
      const fit = await levenbergMarquardt(across, np.array(w, { dtype: "float32" }), {
        iterations: PROFILE_REFIT_STEPS,
        // A re-fit from the last point's starts near its minimum: few rejected steps say it is there.
        maxRejections: 3,
        progress: false,
        data: [base],
      });
      w = globalThis.Array.from(await fit.params.data());
    }
    return { loss: sumOfSquares(await residualAt(np.array(pointAt(t, w), { dtype: "float32" })).data()), w };
  };
  const points: ProfilePoint[] = [];
  for (const side of [-1, 1]) {
    let w = others.map(() => 0);
    const evaluated: ProfilePoint[] = []; // this side's, outward
    for (const k of PROFILE_STEPS) {
      let loss = Number.NaN;
      try {
        ({ loss, w } = await profileLoss(side * k * halfLength, w));
      } catch {
        // The residual is not finite there (a body thrown out of the model's range): nothing farther is tried.
      }
      const point = {
        step: side * k,
        u: pointAt(side * k * halfLength, w),
        loss,
        consistent: loss - lossAt <= allowance,
      };
      // Where the loss crosses the allowance after a consistent point (linearly between the two).
      const last = evaluated.at(-1);
      if (last?.consistent && !point.consistent && Number.isFinite(loss)) {
        const f = (lossAt + allowance - last.loss) / (loss - last.loss);
        points.push({
          step: last.step + f * (point.step - last.step),
          u: last.u.map((x, i) => x + f * (point.u[i]! - x)),
          loss: lossAt + allowance,
          consistent: true,
          interpolated: true,
        });
      }
      evaluated.push(point);
      points.push(point);
      // A side ends where the loss is not finite, or has risen twice in a row to beyond RIDGE_LIMIT allowances.
      const rising = last && !last.consistent && loss > last.loss && loss - lossAt > RIDGE_LIMIT * allowance;
      if (!Number.isFinite(loss) || rising) break;
    }
  }
  return { center: u, axis, halfLength, loss: lossAt, allowance, points };
}

/** The estimate (step 0) and the profile's points, in order along the axis. */
export const alongAxis = (profile: Profile): ProfilePoint[] =>
  [{ step: 0, u: profile.center, loss: profile.loss, consistent: true }, ...profile.points].sort(
    (a, b) => a.step - b.step,
  );
