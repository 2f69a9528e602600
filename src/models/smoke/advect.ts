/**
 * Semi-Lagrangian advection with bilinear sampling (Stam 1999 §3): the value at cell (i, j) is
 * read at the departure point (i − dt·vx, j − dt·vy). Periodic grids wrap indices; closed grids
 * clamp the departure point into the box. Gradients reach the velocities through the bilinear
 * weights (floor is piecewise constant) and the field through the gathers.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import type { SmokeSystem } from "./types.js";

function wrapOrClamp(sys: SmokeSystem, i: Array, n: number): Array {
  return np.where(sys.periodic, np.mod(i, n), np.clip(i, 0, n - 1));
}

/** f advected by (vx, vy) over dt; all fields [N, N]. */
export function advect(sys: SmokeSystem, f: Array, vx: Array, vy: Array, dt: number): Array {
  const n = f.shape[0]!;
  const gi = np.arange(n).astype(f.dtype).reshape([n, 1]);
  const gj = np.arange(n).astype(f.dtype).reshape([1, n]);
  const clampPos = (p: Array) => np.where(sys.periodic, p, np.clip(p, 0, n - 1));
  const pi = clampPos(np.sub(gi, np.mul(vx, dt)));
  const pj = clampPos(np.sub(gj, np.mul(vy, dt)));
  const fi = np.floor(pi),
    fj = np.floor(pj);
  const s1 = np.sub(pi, fi),
    t1 = np.sub(pj, fj);
  const s0 = np.sub(1, s1),
    t0 = np.sub(1, t1);
  const i0 = fi.astype("int32"),
    j0 = fj.astype("int32");
  const [ia, ib] = [wrapOrClamp(sys, i0, n), wrapOrClamp(sys, np.add(i0, 1), n)];
  const [ja, jb] = [wrapOrClamp(sys, j0, n), wrapOrClamp(sys, np.add(j0, 1), n)];
  const flat = np.reshape(f, [n * n]);
  const sample = (i: Array, j: Array) => np.take(flat, np.add(np.mul(i, n), j));
  return np.add(
    np.mul(s0, np.add(np.mul(t0, sample(ia, ja)), np.mul(t1, sample(ia, jb)))),
    np.mul(s1, np.add(np.mul(t0, sample(ib, ja)), np.mul(t1, sample(ib, jb)))),
  );
}
