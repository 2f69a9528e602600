/** A backtracking (Armijo) line search as a gradient transformation. */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { tree } from "../core/tree.js";
import { whileLoop } from "../transforms/control.js";
import { applyUpdates, type GradientTransformation } from "./base.js";
import { constLike, requireArray } from "./tree-math.js";

export interface BacktrackingLinesearchOptions {
  /** Most trial points after the first (default 20, so the smallest step is 0.5²⁰ of the first). */
  readonly maxSteps?: number;
  /** Armijo's sufficient-decrease constant c₁ (default 1e-4, Nocedal & Wright §3.1). */
  readonly c1?: number;
  /** Step shrink factor per failed trial (default 0.5). */
  readonly decreaseFactor?: number;
  /** First trial step, as a multiple of the incoming update (default 1: the quasi-Newton step). */
  readonly initialStepSize?: number;
}

export interface BacktrackingLinesearchState {
  /** The step size accepted at the last update (0 when no trial decreased the loss). */
  readonly stepSize: Array;
  /** The loss at the accepted point. */
  readonly value: Array;
}

const vdot = (a: unknown, b: unknown, like: Array): Array => {
  const [la] = tree.flatten(a),
    [lb] = tree.flatten(b);
  return la.reduce<Array>(
    (acc, x, i) => {
      const xa = requireArray(x, "linesearch"),
        ya = requireArray(lb[i], "linesearch");
      return np.add(acc, np.sum(np.mul(xa, ya)).astype(like.dtype));
    },
    constLike(0, like),
  );
};

/**
 * Scale the incoming update u (a descent direction) by the largest α in
 * {α₀, α₀·ρ, α₀·ρ², …} with f(p + α·u) ≤ f(p) + c₁·α·∇f(p)·u (Armijo backtracking,
 * Nocedal & Wright Algorithm 3.1). The search is a `lax.whileLoop`, so it jits and vmaps
 * (under vmap each lane stops at its own step). Needs `extras.valueFn` and the gradient
 * (`extras.grad`, which `chain` supplies). If no trial satisfies the condition, the last
 * trial is taken when it lowers the loss at all, otherwise the step is 0.
 */
export function scaleByBacktrackingLinesearch(
  opts: BacktrackingLinesearchOptions = {},
): GradientTransformation<BacktrackingLinesearchState> {
  const { maxSteps = 20, c1 = 1e-4, decreaseFactor = 0.5, initialStepSize = 1 } = opts;
  if (!(decreaseFactor > 0 && decreaseFactor < 1))
    throw new Error(`linesearch: decreaseFactor must be in (0, 1), got ${decreaseFactor}.`);
  const firstLeaf = (params: unknown): Array => {
    const [leaves] = tree.flatten(params);
    if (!leaves.length) throw new Error("linesearch: the parameter tree has no leaves.");
    return requireArray(leaves[0], "linesearch");
  };
  return {
    init: (params) => {
      const like = firstLeaf(params);
      return { stepSize: constLike(0, like), value: constLike(0, like) };
    },
    update: (updates, state, params, extras) => {
      const valueFn = extras?.valueFn;
      if (params === undefined || valueFn === undefined || extras?.grad === undefined) {
        throw new Error(
          "linesearch (lbfgs): update needs params and extras { valueFn, grad } — " +
            "call opt.update(grads, state, params, { value, grad: " +
            "grads, valueFn: loss }), or use fit(), which passes them.",
        );
      }
      const like = state.stepSize;
      const f0 = (extras.value ?? valueFn(params)).astype(like.dtype);
      const slope = vdot(extras.grad, updates, like);
      const trial = (alpha: Array): Array =>
        valueFn(
          applyUpdates(
            params,
            tree.map((u: Array) => np.mul(u, alpha.astype(u.dtype)), updates),
          ),
        ).astype(like.dtype);
      const armijo = (alpha: Array, f: Array): Array =>
        np.lessEqual(f, np.add(f0, np.mul(np.mul(constLike(c1, like), alpha), slope)));
      const alpha0 = constLike(initialStepSize, like);
      const [alpha, fAlpha] = whileLoop(
        ([a, f, i]: [Array, Array, Array]) => np.logicalAnd(np.less(i, maxSteps), np.logicalNot(armijo(a, f))),
        ([a, , i]: [Array, Array, Array]): [Array, Array, Array] => {
          const a1 = np.mul(a, constLike(decreaseFactor, like));
          return [a1, trial(a1), np.add(i, 1)];
        },
        [alpha0, trial(alpha0), np.zeros([], { dtype: "int32" })] as [Array, Array, Array],
      );
      // NaN losses fail both comparisons, so a step into a NaN region is never taken.
      const accepted = np.logicalOr(armijo(alpha, fAlpha), np.less(fAlpha, f0));
      const stepSize = np.where(accepted, alpha, constLike(0, like));
      const out = tree.map((u: Array) => np.mul(u, stepSize.astype(u.dtype)), updates);
      return [out, { stepSize, value: np.where(accepted, fAlpha, f0) }];
    },
  };
}
