/**
 * Pressure projection (Stam 1999 §3, "project"): central-difference divergence, Jacobi sweeps for
 * the pressure Poisson equation (each sweep a lax.scan iteration), and subtraction of the
 * pressure gradient. Grid spacing is one cell (gradSim's h factors cancel). With clamped
 * neighbour indices the pressure gets zero-gradient (Neumann) walls.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { lax } from "../../transforms/index.js";
import type { SmokeSystem } from "./types.js";

/** Neighbour values along an axis: f[i+1] / f[i−1] by the system's index maps. */
const next = (sys: SmokeSystem, f: Array, axis: 0 | 1): Array => np.take(f, sys.next, axis);
const prev = (sys: SmokeSystem, f: Array, axis: 0 | 1): Array => np.take(f, sys.prev, axis);

/** ∇·v by central differences [N, N]. */
export const divergence = (sys: SmokeSystem, vx: Array, vy: Array): Array =>
  np.mul(0.5, np.add(np.sub(next(sys, vx, 0), prev(sys, vx, 0)), np.sub(next(sys, vy, 1), prev(sys, vy, 1))));

/** Make (vx, vy) (approximately) divergence-free. */
export function project(sys: SmokeSystem, vx: Array, vy: Array): [Array, Array] {
  const rhs = np.neg(divergence(sys, vx, vy));
  const sweep = (p: Array, w: Array): [Array, null] => {
    const neighbours = np.add(np.add(next(sys, p, 0), prev(sys, p, 0)), np.add(next(sys, p, 1), prev(sys, p, 1)));
    const jacobi = np.div(np.add(rhs, neighbours), 4);
    return [np.add(p, np.mul(w, np.sub(jacobi, p))), null];
  };
  const [p] = lax.scan(sweep, np.zerosLike(rhs), sys.relaxation);
  const ux = np.sub(vx, np.mul(0.5, np.sub(next(sys, p, 0), prev(sys, p, 0))));
  const uy = np.sub(vy, np.mul(0.5, np.sub(next(sys, p, 1), prev(sys, p, 1))));
  return [np.mul(ux, sys.maskX), np.mul(uy, sys.maskY)];
}
