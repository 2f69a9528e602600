/**
 * Bounded parameters by reparametrization: optimize an unconstrained u and map it into the
 * feasible set, x = forward(u). Gradient steps on u can never leave the set, unlike
 * clipping x after each step (which stalls on the boundary with a zero gradient).
 *
 * @example
 * const bounds = { mass: logSpace(), friction: sigmoidBox(0, 1) };
 * const u0 = unconstrain(bounds, { mass: np.array(2.0), friction: np.array(0.3) });
 * const { params } = await fit((u) => loss(constrain(bounds, u)), u0, { optimizer: adam(0.05), steps: 200 });
 * const estimate = constrain(bounds, params);
 */
import type { Array } from "../core/array.js";
import { sigmoid } from "../core/nn.js";
import { np } from "../core/np/index.js";
import { tree } from "../core/tree.js";
import type { PyTree } from "./base.js";
import { constLike, requireArray } from "./tree-math.js";

/** An invertible map from unconstrained values (forward) and back (inverse). A class, so it is a pytree leaf. */
export class Bijector {
  constructor(
    readonly name: string,
    readonly forward: (u: Array) => Array,
    readonly inverse: (x: Array) => Array,
  ) {}
  toString(): string {
    return `Bijector(${this.name})`;
  }
}

/**
 * x = exp(u) > 0; u = log(x). Steps on u are relative changes of x, which suits scale parameters like mass or
 * stiffness.
 */
export const logSpace = (): Bijector => new Bijector("logSpace", np.exp, np.log);

/**
 * x = lo + (hi − lo)·sigmoid(u) ∈ (lo, hi); u = logit((x − lo)/(hi − lo)). The inverse clips its
 * input a hair inside the interval (1e-6 of the width in float32, 1e-12 in float64), so a value
 * on the boundary such as friction 0 maps to a large finite u instead of ±Infinity.
 */
export function sigmoidBox(lo: number, hi: number): Bijector {
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && hi > lo))
    throw new Error(`sigmoidBox: need finite lo < hi, got [${lo}, ${hi}].`);
  return new Bijector(
    `sigmoidBox(${lo}, ${hi})`,
    (u) => np.add(constLike(lo, u), np.mul(constLike(hi - lo, u), sigmoid(u))),
    (x) => {
      const eps = x.dtype === "float64" ? 1e-12 : 1e-6;
      const frac = np.clip(
        np.div(np.sub(x, constLike(lo, x)), constLike(hi - lo, x)),
        constLike(eps, x),
        constLike(1 - eps, x),
      );
      return np.sub(np.log(frac), np.log1p(np.neg(frac)));
    },
  );
}

/** One bijector per leaf of `t`: `spec` is a pytree prefix of `t` whose leaves are Bijectors or null (identity). */
function perLeaf(spec: PyTree, t: unknown, what: string): (Bijector | null)[] {
  return tree.broadcastPrefix(spec, t, what).map((b, i) => {
    if (b !== null && !(b instanceof Bijector))
      throw new Error(
        `${what}: entry for leaf ${i} is ${String(b)}; expected a Bijector (logSpace(), sigmoidBox(lo, hi)) or null.`,
      );
    return b;
  });
}

function mapWith<P>(spec: PyTree, t: P, what: string, pick: (b: Bijector) => (x: Array) => Array): P {
  const bs = perLeaf(spec, t, what);
  const [leaves, def] = tree.flatten(t);
  return tree.unflatten(
    def,
    leaves.map((l, i) => {
      const b = bs[i];
      return b ? pick(b)(requireArray(l, what)) : l;
    }),
  ) as P;
}

/** The constrained parameters x = forward(u), leafwise. */
export const constrain = <P>(spec: PyTree, unconstrained: P): P =>
  mapWith(spec, unconstrained, "constrain", (b) => b.forward);
/** The unconstrained parameters u = inverse(x), leafwise (the starting point for an optimizer). */
export const unconstrain = <P>(spec: PyTree, constrained: P): P =>
  mapWith(spec, constrained, "unconstrain", (b) => b.inverse);
