/** Assembling particle systems and initial states from host data. */
import type { Array } from "../../core/array.js";
import { requireParam } from "../common/params.js";
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import type { ParticleState, ParticleSystem } from "./types.js";

type Numbers = readonly number[] | Float64Array;

export interface ParticleSystemOptions extends Omit<Partial<ParticleSystem>, "mass" | "fixed" | "radius" | "gravity"> {
  /** Masses [N] (host numbers or an Array). */
  readonly mass: Numbers | Array;
  /** Indices of pinned (kinematic) particles. */
  readonly pinned?: readonly number[];
  readonly radius?: number;
  /** Default (0, −9.8, 0) as dflex. */
  readonly gravity?: readonly [number, number, number];
  readonly dtype?: DType;
}

const isNumbers = (m: Numbers | Array): m is Numbers => globalThis.Array.isArray(m) || m instanceof Float64Array;

export function particleSystem(o: ParticleSystemOptions): ParticleSystem {
  const dtype = o.dtype ?? "float32";
  if (isNumbers(o.mass)) o.mass.forEach((m, i) => requireParam("particleSystem", `mass[${i}]`, m, "positive", "kg"));
  const mass = isNumbers(o.mass) ? np.array(Float64Array.from(o.mass), { dtype }) : o.mass;
  const n = mass.shape[0]!;
  const fixed = new Float64Array(n);
  for (const i of o.pinned ?? []) {
    if (!Number.isInteger(i) || i < 0 || i >= n)
      throw new Error(`particleSystem: pinned index ${i} is out of range [0, ${n - 1}].`);
    fixed[i] = 1;
  }
  const { pinned: _p, radius, gravity, dtype: _d, mass: _m, ...elements } = o;
  return {
    ...elements,
    mass,
    fixed: np.array(fixed, { dtype }),
    radius: np.array(radius ?? 0, { dtype }),
    gravity: np.array([...(gravity ?? [0, -9.8, 0])], { dtype }),
  };
}

/** Initial state from host positions [N·3] and an optional uniform velocity. */
export function particleState(
  positions: Float64Array | readonly number[],
  opts: { velocity?: readonly [number, number, number]; dtype?: DType } = {},
): ParticleState {
  const dtype = opts.dtype ?? "float32";
  const x = np.array(Float64Array.from(positions), { dtype }).reshape([-1, 3]);
  const v0 = opts.velocity ?? [0, 0, 0];
  return { x, v: np.add(np.zerosLike(x), np.array([...v0], { dtype })) };
}
