/**
 * L-BFGS (Liu & Nocedal 1989; Nocedal & Wright, Numerical Optimization, §7.2) as a pure
 * update. The curvature history lives in the state as fixed-size [memorySize, n] arrays
 * (newest pair last; empty slots have ρ = 0 and contribute nothing to the two-loop
 * recursion), so the update jits, vmaps and scans. Meant for small smooth problems such as
 * estimating a handful of physical parameters.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import type { GradientTransformation } from "./base.js";
import { chain, type ChainState } from "./combine.js";
import { scaleByBacktrackingLinesearch, type BacktrackingLinesearchOptions } from "./linesearch.js";
import { scale } from "./transform.js";
import { constLike, incrementCount, newCount, ravelTree } from "./tree-math.js";

export interface ScaleByLbfgsState {
  readonly count: Array;
  /** s_k = x_{k+1} − x_k for the last `memorySize` accepted pairs, [memorySize, n]. */
  readonly sMemory: Array;
  /** y_k = ∇f(x_{k+1}) − ∇f(x_k), [memorySize, n]. */
  readonly yMemory: Array;
  /** ρ_k = 1 / (s_k·y_k), [memorySize]; 0 marks an empty slot. */
  readonly rhoMemory: Array;
  /** Parameters and gradient seen by the previous update (raveled), to form the next pair. */
  readonly prevParams: Array;
  readonly prevGrad: Array;
}

export interface ScaleByLbfgsOptions {
  /** Number of curvature pairs kept (default 10). */
  readonly memorySize?: number;
  /** A pair is stored only when s·y > curvatureEps·‖s‖·‖y‖, which keeps H positive definite. */
  readonly curvatureEps?: number;
}

const dot = (a: Array, b: Array): Array => np.sum(np.mul(a, b));
const rows = (m: Array, n: number): Array[] => np.split(m, n, 0).map((r) => np.reshape(r, [-1]));
/** Drop the oldest entry along axis 0 and append `entry` (histories are ordered oldest → newest). */
const pushNewest = (memory: Array, entry: Array): Array =>
  np.concatenate([np.split(memory, [1], 0)[1]!, np.expandDims(entry, 0)], 0);

/**
 * The L-BFGS preconditioned gradient H·g by the two-loop recursion (Nocedal & Wright
 * Algorithm 7.4), with H₀ = γI, γ = s·y / y·y of the newest pair (eq. 7.20). Before any pair
 * exists γ = 1 / max(1, ‖g‖), so the first step has length at most 1. Like the other
 * `scaleBy*` links it returns an ascent direction: follow it with a negative scale
 * (and a line search), as `lbfgs()` does.
 */
export function scaleByLbfgs({
  memorySize = 10,
  curvatureEps = 1e-10,
}: ScaleByLbfgsOptions = {}): GradientTransformation<ScaleByLbfgsState> {
  if (!(Number.isInteger(memorySize) && memorySize > 0))
    throw new Error(`lbfgs: memorySize must be a positive integer, got ${memorySize}.`);
  const m = memorySize;
  return {
    init: (params) => {
      const { flat } = ravelTree(params, "lbfgs.init");
      const n = flat.shape[0]!;
      const zeros = (shape: number[]) => np.zeros(shape, { dtype: flat.dtype });
      return {
        count: newCount(),
        sMemory: zeros([m, n]),
        yMemory: zeros([m, n]),
        rhoMemory: zeros([m]),
        prevParams: zeros([n]),
        prevGrad: zeros([n]),
      };
    },
    update: (updates, state, params) => {
      if (params === undefined)
        throw new Error("lbfgs: update needs params (the history is built from parameter differences).");
      const { flat: x } = ravelTree(params, "lbfgs (params)");
      const { flat: g0, unravel } = ravelTree(updates, "lbfgs (updates)");
      const g = g0.dtype === x.dtype ? g0 : g0.astype(x.dtype);
      const c = (v: number) => constLike(v, x);

      // New curvature pair from the previous call; skipped when it would break positive definiteness.
      const s = np.sub(x, state.prevParams),
        y = np.sub(g, state.prevGrad);
      const sy = dot(s, y);
      const accept = np.logicalAnd(
        np.greater(state.count, 0),
        np.greater(sy, np.mul(c(curvatureEps), np.mul(np.norm(s), np.norm(y)))),
      );
      const sMemory = np.where(accept, pushNewest(state.sMemory, s), state.sMemory);
      const yMemory = np.where(accept, pushNewest(state.yMemory, y), state.yMemory);
      const rhoMemory = np.where(
        accept,
        pushNewest(state.rhoMemory, np.div(c(1), np.where(accept, sy, c(1)))),
        state.rhoMemory,
      );

      // Two-loop recursion; m is static, so the loops unroll into m dot products each way.
      const S = rows(sMemory, m),
        Y = rows(yMemory, m),
        rho = rows(np.reshape(rhoMemory, [m, 1]), m);
      let q = g;
      const alphas: Array[] = [];
      for (let i = m - 1; i >= 0; i--) {
        alphas[i] = np.mul(rho[i]!, dot(S[i]!, q));
        q = np.sub(q, np.mul(alphas[i]!, Y[i]!));
      }
      const sNew = S[m - 1]!,
        yNew = Y[m - 1]!;
      const hasPair = np.greater(rho[m - 1]!.reshape([]), c(0));
      const gamma = np.where(
        hasPair,
        np.div(dot(sNew, yNew), np.where(hasPair, dot(yNew, yNew), c(1))),
        np.div(c(1), np.maximum(c(1), np.norm(g))),
      );
      let r = np.mul(gamma, q);
      for (let i = 0; i < m; i++) {
        const beta = np.mul(rho[i]!, dot(Y[i]!, r));
        r = np.add(r, np.mul(S[i]!, np.sub(alphas[i]!, beta)));
      }
      // Rounding can spoil H·g's positivity on nearly flat problems: fall back to γ·g then.
      const direction = np.where(np.greater(dot(r, g), c(0)), r, np.mul(gamma, g));
      const next: ScaleByLbfgsState = {
        count: incrementCount(state.count),
        sMemory,
        yMemory,
        rhoMemory,
        prevParams: x,
        prevGrad: g,
      };
      return [unravel(direction), next];
    },
  };
}

export interface LbfgsOptions extends ScaleByLbfgsOptions {
  readonly linesearch?: BacktrackingLinesearchOptions;
}
export type LbfgsState = ChainState<
  [ReturnType<typeof scaleByLbfgs>, ReturnType<typeof scale>, ReturnType<typeof scaleByBacktrackingLinesearch>]
>;

/**
 * L-BFGS with a backtracking Armijo line search starting at the unit quasi-Newton step.
 * Its update needs the objective: `fit` passes it; by hand call
 * `opt.update(grads, state, params, { value, grad: grads, valueFn: loss })`.
 */
export const lbfgs = (opts: LbfgsOptions = {}): GradientTransformation<LbfgsState> =>
  chain(scaleByLbfgs(opts), scale(-1), scaleByBacktrackingLinesearch(opts.linesearch));
