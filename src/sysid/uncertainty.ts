/**
 * How well the data pin down each unknown: a Gauss–Newton (Laplace) covariance at the estimate,
 * from the residual's Jacobian J (forward mode, one tangent per scalar unknown — the Jacobian
 * Levenberg–Marquardt uses).
 *
 * Pixels are not independent measurements: neighbouring pixels of a frame share their error (an
 * edge a pixel off, a shading mismatch), so the textbook σ²(JᵀJ)⁻¹ with one degree of freedom per
 * pixel is far too confident, and so are frames: a misfit (another renderer's edges, a slightly
 * wrong camera) persists over consecutive frames. The covariance here is the cluster-robust
 * (sandwich) one with runs of consecutive frames as clusters, H⁻¹(Σ_c g_c g_cᵀ)H⁻¹·C/(C − 1) with
 * H = JᵀJ and g_c = J_cᵀ r_c a run's share of the gradient: it widens with the misfit that
 * remains and stays valid when errors are correlated within a run. Runs of ⌈√T⌉ frames: on the
 * shipped example (another renderer's video, 40 frames) single-frame clusters gave a ±0.1%
 * interval that missed the 0.18% error; runs of 7 frames cover it.
 * With C runs the sum has C − 1 degrees of freedom: its share of the interval is ±t(0.975, C − 1)
 * of its standard deviation (2.45 for 7 runs, not 1.96). Intervals are in the unknown's own (log or
 * box) coordinates, mapped back to physical units, so a log unknown's interval is multiplicative.
 *
 * The residual's spread says nothing of a bias that every frame shares: the same video, compared
 * through another reasonable definition of its foreground or with the model's outline drawn a
 * little sharper or softer, moves the minimiser — on the outside validation set by several per
 * cent, far beyond the sandwich's interval. Such choices enter as `alternatives` (the minimiser
 * re-found under each variant): the largest move counts as a 95% bound and is added to the
 * covariance. (The first-order move −H⁻¹J_θᵀ(r_alt − r) underestimates it 100-fold there: the
 * loss valley along which mass and friction trade is long and curved.)
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { jit, jvp, vmap } from "../transforms/index.js";
import { invertHost } from "./host-linalg.js";
import type { Profile } from "./profile.js";
import type { Layout, Values } from "./unknowns.js";

export interface UnknownUncertainty {
  readonly name: string;
  /** Standard deviation in the unknown's unconstrained coordinate (log units for a log unknown). */
  readonly sd: number;
  /** The 95% interval in physical units. */
  readonly interval: readonly [number, number];
  /** Half the interval's width relative to the estimate (∞ when the data do not constrain it). */
  readonly relativeHalfWidth: number;
}

/**
 * Parameters the model fixes at a guess the data do not pin down (a scene's contact stiffness,
 * damping and friction stiffness at their defaults): the last `count` entries of u, each with a
 * standard deviation in u's units. Their effect on the estimate, S·σ with the sensitivity
 * S = (J_θᵀJ_θ)⁻¹J_θᵀJ_φ (how the minimiser moves when a fixed parameter does, to first order), is
 * added to the covariance: an estimate that leans on a guessed model detail says so.
 */
export interface Nuisance {
  readonly count: number;
  readonly sd: readonly number[];
}

/**
 * A measurement or modelling choice the estimate should not hinge on: the minimiser u (the same
 * unconstrained coordinates, without nuisance entries) re-found under each of its plausible variants.
 * The largest move counts as the 95% bound of this choice's effect.
 */
export interface Alternative {
  readonly name: string;
  readonly estimates: readonly (readonly number[])[];
  /** How many of the estimates were not converged when their search stopped (their moves are lower bounds). */
  readonly unconverged?: number;
}

export interface Uncertainty {
  readonly unknowns: readonly UnknownUncertainty[];
  /** Per unknown, the standard deviation (u units) from the fixed model parameters alone (absent without nuisance). */
  readonly modelSd?: readonly number[];
  /**
   * Per alternative, per unknown, the standard deviation (u units) its choice alone adds (absent without alternatives).
   */
  readonly alternativesSd?: Readonly<Record<string, readonly number[]>>;
  /** The alternatives with an estimate not converged: their shares of the intervals are lower bounds. */
  readonly unconverged?: readonly string[];
  /** The runs' share of the interval, in its standard deviations: t(0.975, runs − 1), or 1.96 without runs. */
  readonly runsQuantile: number;
  /** Runs of consecutive frames (clusters) the covariance summed over (1: the plain Gauss–Newton estimate). */
  readonly clusters: number;
  /** Condition number of JᵀJ (∞ when an unknown does not change the residual at all). */
  readonly condition: number;
  /** The covariance (u units, every part above summed; absent when JᵀJ is singular). */
  readonly covariance?: readonly (readonly number[])[];
  /** The loss's profile along the covariance's principal axis, when it widened the intervals (`widenedByProfile`). */
  readonly profile?: Profile;
}

/** Component j of unknown `name` in physical values (the value itself for a scalar unknown). */
const componentOf = (x: Values, name: string, j: number): number => {
  const v = x[name]!;
  return typeof v === "number" ? v : v[j]!;
};

/** Jacobian [N, p] of residual at u (host vector), by batched forward-mode tangents. */
function jacobian(residual: (u: Array) => Array, u: readonly number[]): { r: Float64Array; J: Float64Array[] } {
  const p = u.length;
  const at = np.array([...u], { dtype: "float32" });
  const both = jit((x: Array): [Array, Array] => {
    const basis = np.eye(p, undefined, { dtype: x.dtype });
    const [values, tangents] = vmap((t: Array) => jvp(residual, [x], [t]) as [Array, Array])(basis) as [Array, Array];
    return [np.split(values, p, 0)[0]!, tangents];
  });
  const [r, J] = both(at);
  const n = r.size;
  const jd = J.dataSync();
  return {
    r: Float64Array.from(r.dataSync()),
    J: globalThis.Array.from({ length: p }, (_, k) => Float64Array.from(jd.subarray(k * n, (k + 1) * n))),
  };
}

/** t(0.975, dof): the 95% two-sided quantile of Student's t (1.96 beyond 30 degrees of freedom). */
export function tQuantile975(dof: number): number {
  const table = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
    2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
  ];
  if (!(dof >= 1)) throw new Error(`tQuantile975: degrees of freedom must be ≥ 1, got ${dof}.`);
  return dof <= 30 ? table[Math.floor(dof) - 1]! : 1.96;
}

/** Eigenvalue ratio bound of a small symmetric matrix (power iterations on it and on its inverse). */
function condition(a: number[][], inv: number[][] | null): number {
  if (!inv) return Infinity;
  const norm = (m: number[][]) => Math.max(...m.map((row) => row.reduce((s, x) => s + Math.abs(x), 0)));
  return norm(a) * norm(inv);
}

/**
 * The uncertainty of each scalar unknown at u (host, unconstrained): `residual` is the objective's
 * residual (Σ r² = the loss) and `clusters` the number of frames it is made of, in order (its
 * length must divide evenly; otherwise, or with fewer than 4 frames, the plain Gauss–Newton
 * covariance with the residual's mean square as the noise variance is used).
 */
export function laplaceUncertainty(
  residual: (u: Array) => Array,
  layout: Layout,
  u: readonly number[],
  clusters: number,
  nuisance?: Nuisance,
  alternatives: readonly Alternative[] = [],
): Uncertainty {
  const q = nuisance?.count ?? 0;
  const p = u.length - q;
  if (q && nuisance!.sd.length !== q)
    throw new Error(`laplaceUncertainty: ${q} nuisance parameters but ${nuisance!.sd.length} standard deviations.`);
  const { r, J: all } = jacobian(residual, u);
  const J = all.slice(0, p),
    Jn = all.slice(p);
  u = u.slice(0, p);
  const n = r.length;
  const H = globalThis.Array.from({ length: p }, (_, i) =>
    globalThis.Array.from({ length: p }, (_, j) => {
      let s = 0;
      for (let k = 0; k < n; k++) s += J[i]![k]! * J[j]![k]!;
      return s;
    }),
  );
  const Hinv = invertHost(H);
  let cov: number[][] | null = null;
  const frames = clusters >= 2 && n % clusters === 0 ? clusters : 0;
  const run = Math.ceil(Math.sqrt(frames)),
    T = frames ? Math.ceil(frames / run) : 0;
  if (Hinv && T >= 2) {
    const per = (n / frames) * run;
    const meat: number[][] = globalThis.Array.from({ length: p }, () => globalThis.Array.from({ length: p }, () => 0));
    for (let t = 0; t < T; t++) {
      const g = globalThis.Array.from({ length: p }, (_, i) => {
        let s = 0;
        for (let k = t * per; k < Math.min(n, (t + 1) * per); k++) s += J[i]![k]! * r[k]!;
        return s;
      });
      for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) meat[i]![j]! += g[i]! * g[j]!;
    }
    // Small-sample correction T/(T − 1) of the cluster sum, and Student's t for its T − 1 degrees of
    // freedom folded in, so that every part of the covariance is read at 1.96.
    const c = (T / (T - 1)) * (tQuantile975(T - 1) / 1.96) ** 2;
    cov = Hinv.map((row) =>
      Hinv.map((_, j) => c * row.reduce((s, h, a) => s + h * meat[a]!.reduce((q, m, b) => q + m * Hinv[b]![j]!, 0), 0)),
    );
  } else if (Hinv) {
    let rss = 0;
    for (const x of r) rss += x * x;
    const s2 = rss / Math.max(1, n - p);
    cov = Hinv.map((row) => row.map((h) => s2 * h));
  }
  // The fixed parameters' share: S = H⁻¹·J_θᵀJ_φ, Cov_model = S·diag(σ²)·Sᵀ.
  let modelSd: number[] | undefined;
  if (q && Hinv) {
    const cross = J.map((Ji) =>
      Jn.map((Jk) => {
        let s = 0;
        for (let k = 0; k < n; k++) s += Ji[k]! * Jk[k]!;
        return s;
      }),
    );
    const S = Hinv.map((row) => Jn.map((_, j) => row.reduce((s, h, a) => s + h * cross[a]![j]!, 0)));
    const model = S.map((si) => S.map((sj) => si.reduce((s, x, k) => s + x * sj[k]! * nuisance!.sd[k]! ** 2, 0)));
    modelSd = model.map((row, i) => Math.sqrt(Math.max(row[i]!, 0)));
    if (cov) cov = cov.map((row, i) => row.map((c, j) => c + model[i]![j]!));
  }
  // Each alternative's move of the minimiser, the largest of its variants as a 95% bound.
  let alternativesSd: Record<string, number[]> | undefined;
  if (alternatives.length) {
    alternativesSd = {};
    for (const a of alternatives) {
      const moves = a.estimates.map((ua) => {
        if (ua.length !== p || !ua.every(Number.isFinite))
          throw new Error(
            `laplaceUncertainty: alternative "${a.name}" gives [${ua.join(", ")}]; it needs ${p} finite values.`,
          );
        return ua.map((x, i) => x - u[i]!);
      });
      const norm = (v: readonly number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
      const worst = moves.reduce(
        (m, d) => (norm(d) > norm(m) ? d : m),
        u.map(() => 0),
      );
      const sd = worst.map((d) => d / 1.96);
      alternativesSd[a.name] = sd.map(Math.abs);
      if (cov) cov = cov.map((row, i) => row.map((c, j) => c + sd[i]! * sd[j]!));
    }
  }
  const estimate = layout.fromU(u);
  const unknowns: UnknownUncertainty[] = [];
  layout.unknowns.forEach((k) => {
    layout.indicesOf(k.name).forEach((i, j) => {
      const sd = cov ? Math.sqrt(Math.max(cov[i]![i]!, 0)) : Infinity;
      const name = k.size === undefined ? k.name : `${k.name}[${j}]`;
      const value = (x: Values) => componentOf(x, k.name, j);
      const shifted = (d: number) => value(layout.fromU(u.map((x, m) => (m === i ? x + d : x))));
      const mid = value(estimate);
      if (!Number.isFinite(sd)) {
        unknowns.push({ name, sd, interval: [-Infinity, Infinity], relativeHalfWidth: Infinity });
        return;
      }
      const lo = shifted(-1.96 * sd),
        hi = shifted(1.96 * sd);
      unknowns.push({
        name,
        sd,
        interval: [Math.min(lo, hi), Math.max(lo, hi)],
        relativeHalfWidth: Math.abs(hi - lo) / 2 / Math.max(Math.abs(mid), 1e-300),
      });
    });
  });
  return {
    unknowns,
    clusters: T >= 2 ? T : 1,
    runsQuantile: T >= 2 && Hinv ? tQuantile975(T - 1) : 1.96,
    condition: condition(H, Hinv),
    ...(cov ? { covariance: cov } : {}),
    ...(modelSd ? { modelSd } : {}),
    ...(alternativesSd ? { alternativesSd } : {}),
    ...(alternatives.length
      ? { unconverged: alternatives.filter((a) => (a.unconverged ?? 0) > 0).map((a) => a.name) }
      : {}),
  };
}

/**
 * The intervals widened to hold every point of `profile` that fits as well as the alternatives allow (profile.ts);
 * the standard deviations stay the Laplace ones.
 */
export function widenedByProfile(uncertainty: Uncertainty, layout: Layout, profile: Profile): Uncertainty {
  const inside = profile.points.filter((x) => x.consistent).map((x) => layout.fromU(x.u));
  const estimate = layout.fromU(profile.center);
  let i = 0;
  const unknowns = layout.unknowns.flatMap((k) =>
    layout.indicesOf(k.name).map((_, j) => {
      const u = uncertainty.unknowns[i++]!;
      const value = (x: Values) => componentOf(x, k.name, j);
      const values = inside.map(value);
      const interval: [number, number] = [Math.min(u.interval[0], ...values), Math.max(u.interval[1], ...values)];
      const mid = Math.max(Math.abs(value(estimate)), 1e-300);
      return {
        ...u,
        interval,
        relativeHalfWidth: Math.max(u.relativeHalfWidth, (interval[1] - interval[0]) / 2 / mid),
      };
    }),
  );
  return { ...uncertainty, unknowns, profile };
}
