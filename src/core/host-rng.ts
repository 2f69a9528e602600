/**
 * A small seeded PRNG (mulberry32) for host-side sampling: experiment datasets (scene
 * parameters, initial guesses) and generated test programs, reproducible from one integer on
 * every backend. Array randomness is `random` (counter-based threefry), not this.
 */
export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Integer in [0, n). */
  int(n: number): number;
  /** Integer in [lo, hi] (inclusive). */
  between(lo: number, hi: number): number;
  /** Uniform float in [lo, hi). */
  uniform(lo: number, hi: number): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
  shuffle<T>(xs: readonly T[]): T[];
  /** A uniformly random unit quaternion (x, y, z, w) (Shoemake 1992). */
  quaternion(): [number, number, number, number];
  /** A uniformly random unit vector. */
  direction(): [number, number, number];
}

export function makeRng(seed: number): Rng {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    between: (lo, hi) => lo + int(hi - lo + 1),
    uniform: (lo, hi) => lo + (hi - lo) * next(),
    normal: () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()),
    pick: (xs) => {
      if (xs.length === 0) throw new Error("rng.pick: empty list");
      return xs[int(xs.length)]!;
    },
    chance: (p) => next() < p,
    shuffle: (xs) => {
      const a = [...xs];
      for (let i = a.length - 1; i > 0; i--) {
        const j = int(i + 1);
        [a[i], a[j]] = [a[j]!, a[i]!];
      }
      return a;
    },
    quaternion: () => {
      const u1 = next(),
        u2 = 2 * Math.PI * next(),
        u3 = 2 * Math.PI * next();
      const s1 = Math.sqrt(1 - u1),
        s2 = Math.sqrt(u1);
      return [s1 * Math.sin(u2), s1 * Math.cos(u2), s2 * Math.sin(u3), s2 * Math.cos(u3)];
    },
    direction: () => {
      const z = 2 * next() - 1,
        phi = 2 * Math.PI * next(),
        r = Math.sqrt(1 - z * z);
      return [r * Math.cos(phi), r * Math.sin(phi), z];
    },
  };
}
