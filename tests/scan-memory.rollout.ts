/** The 10,000-step rollout shared by the scan memory test and its child process: 256 float64 state values. */
import { lax, np, type Array } from "../src/index.js";

export const STEPS = 10_000;
export const STATE = 256;

export function rollout(checkpoint: boolean) {
  const c0 = np.array(
    Float64Array.from({ length: STATE }, (_, i) => Math.sin(i)),
    { dtype: "float64" },
  );
  const xs = np.array(
    Float64Array.from({ length: STEPS }, (_, t) => 0.001 * t),
    { dtype: "float64" },
  );
  // A slowly damped nonlinear map; y_t = mean(c_t) keeps every step in the loss (gradients are O(1)).
  const body = (c: Array, x: Array): [Array, Array] => {
    const next = np.add(np.mul(0.999, c), np.mul(0.01, np.sin(np.add(c, x))));
    return [next, np.mean(next)];
  };
  const loss = (c: Array) => {
    const [cT, ys] = lax.scan(body, c, xs, { checkpoint });
    return np.add(np.sum(ys), np.sum(np.square(cT)));
  };
  return { c0, loss };
}
