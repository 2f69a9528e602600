/**
 * Forward kinematics of an articulated tree: link frames from joint angles, and world positions of points fixed in
 * links.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import type { ArticulatedSystem, LinkFrames } from "./types.js";

/** Rodrigues' rotation by angle θ [] about the unit axis a [3]: I cosθ + sinθ [a]× + (1 − cosθ) a aᵀ. */
function rotation(a: Array, theta: Array): Array {
  const [x, y, z] = [0, 1, 2].map((k) => np.index(a, k)) as [Array, Array, Array];
  const zero = np.zerosLike(x);
  const cross = np.stack([
    np.stack([zero, np.neg(z), y]),
    np.stack([z, zero, np.neg(x)]),
    np.stack([np.neg(y), x, zero]),
  ]);
  const eye = np.eye(3, undefined, { dtype: a.dtype });
  return np.add(
    np.add(np.mul(eye, np.cos(theta)), np.mul(cross, np.sin(theta))),
    np.mul(np.outer(a, a), np.sub(1, np.cos(theta))),
  );
}

/** Every link's world rotation and origin for joint angles q [J] (parents before children). */
export function linkFrames(sys: ArticulatedSystem, q: Array): LinkFrames {
  const J = sys.parent.length;
  if (q.ndim !== 1 || q.shape[0] !== J)
    throw new Error(`articulated: joint angles must be [${J}] (one per joint), got [${q.shape}].`);
  const eye = np.eye(3, undefined, { dtype: q.dtype });
  const R: Array[] = [],
    t: Array[] = [];
  for (let j = 0; j < J; j++) {
    const p = sys.parent[j]!;
    const [Rp, tp] = p < 0 ? [eye, sys.base] : [R[p]!, t[p]!];
    t.push(np.add(tp, np.matmul(Rp, np.index(sys.offset, j))));
    R.push(np.matmul(Rp, rotation(np.index(sys.axis, j), np.index(q, j))));
  }
  return { rotation: np.stack(R), origin: np.stack(t) };
}

/** World positions [N, 3] of points [N, 3] given in the frames of the links `link` (host, length N). */
export function pointsInWorld(frames: LinkFrames, link: readonly number[], points: Array): Array {
  const idx = np.array(link, { dtype: "int32" });
  const R = np.take(frames.rotation, idx, 0),
    t = np.take(frames.origin, idx, 0);
  return np.add(np.einsum("nij,nj->ni", R, points), t);
}

/** World positions of the system's point masses [P, 3]. */
export const massPositions = (sys: ArticulatedSystem, q: Array): Array =>
  pointsInWorld(linkFrames(sys, q), sys.pointLink, sys.points);
