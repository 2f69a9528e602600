/**
 * Quaternions in (x, y, z, w) order, as dflex/warp (gradSim's own engine uses w, x, y, z),
 * batched over leading axes: [..., 4].
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { components, cross, squaredNorm } from "./vec.js";

const split4 = (q: Array): [Array, Array, Array, Array] =>
  np.split(q, 4, -1).map((p) => np.squeeze(p, -1)) as [Array, Array, Array, Array];
const vecPart = (q: Array): Array => np.concatenate(np.split(q, 4, -1).slice(0, 3), -1);

/** Hamilton product a ⊗ b. */
export function quatMul(a: Array, b: Array): Array {
  const [ax, ay, az, aw] = split4(a);
  const [bx, by, bz, bw] = split4(b);
  const x = np.add(np.add(np.mul(aw, bx), np.mul(ax, bw)), np.sub(np.mul(ay, bz), np.mul(az, by)));
  const y = np.add(np.add(np.mul(aw, by), np.mul(ay, bw)), np.sub(np.mul(az, bx), np.mul(ax, bz)));
  const z = np.add(np.add(np.mul(aw, bz), np.mul(az, bw)), np.sub(np.mul(ax, by), np.mul(ay, bx)));
  const w = np.sub(np.mul(aw, bw), np.add(np.add(np.mul(ax, bx), np.mul(ay, by)), np.mul(az, bz)));
  return np.stack([x, y, z, w], -1);
}

export const quatNormalize = (q: Array): Array => np.div(q, np.sqrt(squaredNorm(q, true)));

/** Rotation matrix [..., 3, 3] of a unit quaternion. */
export function quatToMatrix(q: Array): Array {
  const [x, y, z, w] = split4(q);
  const m = (a: Array, b: Array) => np.mul(2, np.mul(a, b));
  const one = np.onesLike(x);
  const r0 = [np.sub(one, np.add(m(y, y), m(z, z))), np.sub(m(x, y), m(z, w)), np.add(m(x, z), m(y, w))];
  const r1 = [np.add(m(x, y), m(z, w)), np.sub(one, np.add(m(x, x), m(z, z))), np.sub(m(y, z), m(x, w))];
  const r2 = [np.sub(m(x, z), m(y, w)), np.add(m(y, z), m(x, w)), np.sub(one, np.add(m(x, x), m(y, y)))];
  return np.stack([np.stack(r0, -1), np.stack(r1, -1), np.stack(r2, -1)], -2);
}

/** Rotate vectors v [..., 3] by q: v + 2w(u×v) + 2u×(u×v), u = vector part. */
export function quatRotate(q: Array, v: Array): Array {
  const u = vecPart(q);
  const w = np.squeeze(np.split(q, 4, -1)[3]!, -1);
  const uv = cross(u, v);
  return np.add(v, np.mul(2, np.add(np.mul(np.expandDims(w, -1), uv), cross(u, uv))));
}

/**
 * exp of a rotation vector φ [..., 3] (angle |φ| about φ/|φ|) as a unit quaternion, with a Taylor
 * branch near 0 so value and gradient are finite at φ = 0 (the "double where" trick).
 */
export function quatFromRotationVector(phi: Array): Array {
  const t2 = squaredNorm(phi);
  const small = np.less(t2, 1e-8);
  const t = np.sqrt(np.where(small, 1, t2));
  const half = np.mul(0.5, t);
  const k = np.where(small, np.sub(0.5, np.div(t2, 48)), np.div(np.sin(half), t));
  const w = np.where(small, np.sub(1, np.div(t2, 8)), np.cos(half));
  const [px, py, pz] = components(phi);
  return np.stack([np.mul(k, px), np.mul(k, py), np.mul(k, pz), w], -1);
}

/** Host-side quaternion (x, y, z, w) for a rotation of `angle` rad about `axis` (normalised here). */
export function quatFromAxisAngle(
  axis: readonly [number, number, number],
  angle: number,
): [number, number, number, number] {
  const l = Math.hypot(...axis);
  if (!(l > 0)) throw new Error(`quatFromAxisAngle: the axis must be non-zero, got [${axis}].`);
  const s = Math.sin(angle / 2) / l;
  return [axis[0] * s, axis[1] * s, axis[2] * s, Math.cos(angle / 2)];
}
