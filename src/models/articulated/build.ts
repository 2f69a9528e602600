/** Building articulated systems from host descriptions, with their inputs checked. */
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import { requireParam } from "../common/params.js";
import type { ArticulatedState, ArticulatedSystem } from "./types.js";

type Vec3 = readonly [number, number, number];

export interface JointSpec {
  /** Parent joint's link (−1: the base); must come earlier in the list. */
  readonly parent: number;
  /** Joint position in the parent's frame (m) and rotation axis there (normalised here). */
  readonly offset: Vec3;
  readonly axis: Vec3;
  /** Point masses of the link: positions in its frame (m) and masses (kg). */
  readonly points: readonly { readonly at: Vec3; readonly mass: number }[];
  readonly stiffness?: number;
  readonly damping?: number;
  readonly rest?: number;
}

export interface ArticulatedOptions {
  readonly base?: Vec3;
  readonly gravity?: Vec3;
  /** Joint limits (rad, the same for every joint) enforced by a one-sided spring of `limitStiffness`. */
  readonly limits?: readonly [number, number] | null;
  readonly limitStiffness?: number;
  /** Initial joint angles and velocities (default 0). */
  readonly q?: readonly number[];
  readonly qd?: readonly number[];
  readonly dtype?: DType;
}

/** A 3-vector of finite numbers, else an error naming it (an infinite offset would give NaN poses). */
function finiteVec(name: string, v: readonly number[], unit: string): void {
  if (!globalThis.Array.isArray(v) || v.length !== 3)
    throw new Error(`articulated: ${name} must be 3 numbers, got ${JSON.stringify(v)}.`);
  v.forEach((x, i) => requireParam("articulated", `${name}[${i}]`, x, "finite", unit));
}

export function articulatedSystem(
  joints: readonly JointSpec[],
  o: ArticulatedOptions = {},
): { system: ArticulatedSystem; state: ArticulatedState } {
  const where = "articulated";
  if (!joints.length) throw new Error(`${where}: give at least one joint.`);
  const dtype = o.dtype ?? "float32";
  const f = (x: unknown) => np.array(x, { dtype });
  joints.forEach((j, i) => {
    if (!(Number.isInteger(j.parent) && j.parent >= -1 && j.parent < i))
      throw new Error(
        `${where}: joint ${i}'s parent must be −1 (the base) or an earlier joint (0…${i - 1}), got ${j.parent}.`,
      );
    finiteVec(`joint ${i} offset`, j.offset, "m");
    finiteVec(`joint ${i} axis`, j.axis, "");
    j.points.forEach((p, k) => finiteVec(`joint ${i} point ${k} position`, p.at, "m"));
    const n = Math.hypot(...j.axis);
    if (!(n > 1e-9)) throw new Error(`${where}: joint ${i}'s axis must be a non-zero vector, got [${j.axis}].`);
    if (!j.points.length) throw new Error(`${where}: joint ${i}'s link needs at least one point mass.`);
    j.points.forEach((p, k) => requireParam(where, `joint ${i} point ${k} mass`, p.mass, "positive", "kg"));
  });
  const J = joints.length;
  const vec = (name: string, xs: readonly number[] | undefined, fallback: number, range: "finite" | "nonnegative") => {
    const v = xs ?? globalThis.Array.from({ length: J }, () => fallback);
    if (v.length !== J) throw new Error(`${where}: ${name} needs one value per joint (${J}), got ${v.length}.`);
    return f(v.map((x, i) => requireParam(where, `${name}[${i}]`, x, range, "")));
  };
  if (o.gravity) finiteVec("gravity", o.gravity, "m/s²");
  if (o.base) finiteVec("base", o.base, "m");
  const limits = o.limits ?? null;
  if (limits) limits.forEach((x, i) => requireParam(where, `limits[${i}]`, x, "finite", "rad"));
  if (limits && !(limits[0] < limits[1]))
    throw new Error(`${where}: limits must be [lower, upper] with lower < upper, got [${limits}].`);
  return {
    system: {
      parent: joints.map((j) => j.parent),
      offset: f(joints.map((j) => [...j.offset])),
      axis: f(
        joints.map((j) => {
          const n = Math.hypot(...j.axis);
          return j.axis.map((x) => x / n);
        }),
      ),
      pointLink: joints.flatMap((j, i) => j.points.map(() => i)),
      points: f(joints.flatMap((j) => j.points.map((p) => [...p.at]))),
      mass: f(joints.flatMap((j) => j.points.map((p) => p.mass))),
      stiffness: vec(
        "stiffness",
        joints.map((j) => j.stiffness ?? 0),
        0,
        "nonnegative",
      ),
      damping: vec(
        "damping",
        joints.map((j) => j.damping ?? 0),
        0,
        "nonnegative",
      ),
      rest: vec(
        "rest",
        joints.map((j) => j.rest ?? 0),
        0,
        "finite",
      ),
      limits: limits
        ? {
            lower: f(globalThis.Array.from({ length: J }, () => limits[0])),
            upper: f(globalThis.Array.from({ length: J }, () => limits[1])),
            stiffness: f(requireParam(where, "limitStiffness", o.limitStiffness ?? 50, "positive", "N·m/rad")),
          }
        : null,
      gravity: f([...(o.gravity ?? [0, -9.8, 0])]),
      base: f([...(o.base ?? [0, 0, 0])]),
    },
    state: { q: vec("q", o.q, 0, "finite"), qd: vec("qd", o.qd, 0, "finite") },
  };
}
