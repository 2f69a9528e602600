/**
 * Stable-step advice for explicit particle rollouts (host arithmetic on the system's values,
 * only when a rollout has diverged). Semi-implicit Euler is stable for a spring of stiffness k
 * between masses m while dt < 2·√(m/k), and for a damper c while dt < 2·m/c; each element set
 * maps to such a k or c: membranes (λ + 2μ), tets (λ + 2μ)·V^(1/3), springs and ground contact
 * their stiffness, each element's damping likewise. The advice names the most restrictive one.
 */
import type { Array } from "../../core/array.js";
import type { ParticleSystem } from "./types.js";

interface Limit {
  readonly dt: number;
  readonly what: string;
}

const host = (a: Array | undefined): ArrayLike<number> | undefined => (a ? a.dataSync() : undefined);

/** The most restrictive element's stable step, or undefined when nothing limits it. */
export function stableStep(sys: ParticleSystem): Limit | undefined {
  const mass = host(sys.mass)!,
    fixed = host(sys.fixed);
  const massOf = (i: number) => (fixed && fixed[i]! > 0 ? Infinity : mass.length === 1 ? mass[0]! : mass[i]!);
  let best: Limit | undefined;
  const consider = (dt: number, what: () => string) => {
    if (Number.isFinite(dt) && (!best || dt < best.dt)) best = { dt, what: what() };
  };
  const elements = (indices: Array, k: number, each: (e: number, m: number) => void) => {
    const idx = indices.dataSync(),
      n = idx.length / k;
    for (let e = 0; e < n; e++) {
      let m = Infinity;
      for (let j = 0; j < k; j++) m = Math.min(m, massOf(idx[k * e + j]!));
      each(e, m);
    }
  };
  const at = (a: ArrayLike<number>, e: number) => (a.length === 1 ? a[0]! : a[e]!);
  if (sys.triangles) {
    const t = sys.triangles,
      mu = host(t.mu)!,
      la = host(t.lambda)!,
      kd = host(t.damping)!;
    elements(t.indices, 3, (e, m) => {
      const k = at(la, e) + 2 * at(mu, e),
        c = at(kd, e);
      if (k > 0)
        consider(
          2 * Math.sqrt(m / k),
          () => `membrane triangle ${e} (λ + 2μ = ${k} N/m, lightest corner ${m.toPrecision(3)} kg)`,
        );
      if (c > 0)
        consider((2 * m) / c, () => `membrane damping ${c} of triangle ${e} (lightest corner ${m.toPrecision(3)} kg)`);
    });
  }
  if (sys.tets) {
    const t = sys.tets,
      mu = host(t.mu)!,
      la = host(t.lambda)!,
      kd = host(t.damping)!,
      vol = host(t.restVolume)!;
    elements(t.indices, 4, (e, m) => {
      const h = Math.cbrt(Math.abs(at(vol, e))),
        k = (at(la, e) + 2 * at(mu, e)) * h,
        c = at(kd, e) * h;
      if (k > 0)
        consider(
          2 * Math.sqrt(m / k),
          () => `tet ${e} ((λ + 2μ)·V^(1/3) = ${k.toPrecision(3)} N/m, lightest vertex ${m.toPrecision(3)} kg)`,
        );
      if (c > 0)
        consider(
          (2 * m) / c,
          () => `damping of tet ${e} (${c.toPrecision(3)} N·s/m, lightest vertex ${m.toPrecision(3)} kg)`,
        );
    });
  }
  if (sys.springs) {
    const s = sys.springs,
      ks = host(s.stiffness)!,
      kd = host(s.damping)!;
    elements(s.indices, 2, (e, m) => {
      if (at(ks, e) > 0)
        consider(
          2 * Math.sqrt(m / at(ks, e)),
          () => `spring ${e} (stiffness ${at(ks, e)} N/m, lighter end ${m.toPrecision(3)} kg)`,
        );
      if (at(kd, e) > 0) consider((2 * m) / at(kd, e), () => `damping of spring ${e} (${at(kd, e)} N·s/m)`);
    });
  }
  if (sys.bending) {
    const b = sys.bending,
      kb = host(b.stiffness)!,
      kd = host(b.damping)!;
    elements(b.indices, 4, (e, m) => {
      if (at(kb, e) > 0)
        consider(
          2 * Math.sqrt(m / at(kb, e)),
          () => `bending hinge ${e} (stiffness ${at(kb, e)}, lightest vertex ${m.toPrecision(3)} kg)`,
        );
      if (at(kd, e) > 0) consider((2 * m) / at(kd, e), () => `bending damping of hinge ${e} (${at(kd, e)})`);
    });
  }
  if (sys.ground) {
    const ke = host(sys.ground.ke)![0]!,
      lightest = Math.min(...globalThis.Array.from({ length: mass.length }, (_, i) => massOf(i)));
    if (ke > 0)
      consider(
        2 * Math.sqrt(lightest / ke),
        () => `ground contact (ke ${ke} N/m, lightest particle ${lightest.toPrecision(3)} kg)`,
      );
  }
  return best;
}

/** Advice for a diverged particle rollout at step dt (undefined if the system's values cannot be read here). */
export function particleAdvice(sys: ParticleSystem, dt: number): string | undefined {
  let limit: Limit | undefined;
  try {
    limit = stableStep(sys);
  } catch {
    return undefined;
  }
  if (!limit) return undefined;
  const verdict =
    dt > limit.dt
      ? `dt = ${dt} s exceeds it`
      : `dt = ${dt} s is within that single-element estimate, but elements sharing particles lower the limit`;
  return (
    `by a per-element estimate the most restrictive element is ${limit.what}, ` +
    `stable for dt below about ${limit.dt.toPrecision(3)} s, and ${verdict}; ` +
    "lower dt (more substeps), lower that stiffness or damping, or make its particles heavier."
  );
}
