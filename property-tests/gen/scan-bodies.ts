/**
 * Scan bodies built from random programs, plus the unrolled JS loop they must agree with.
 * body(c, x) = [0.5·c + tanh(θ · fit(p(c, x))), p(c, x)]: the carry keeps its shape, stays
 * bounded over many steps, and depends on the carry, the step input and a closed-over θ.
 */
import { np, type Array } from "../../src/index.js";
import { i32, type Program } from "./programs.js";

const sizeOf = (s: readonly number[]): number => s.reduce((a, b) => a * b, 1);

/** Any array as `shape`: its flattened values gathered cyclically (keeps every element's dependence). */
export function fitTo(v: Array, shape: readonly number[]): Array {
  const n = v.size;
  const idx = i32(
    globalThis.Array.from({ length: sizeOf(shape) }, (_, k) => k % n),
    shape,
  );
  return np.take(np.reshape(v, [n]), idx, 0);
}

export type Body = (c: Array, x: Array) => [Array, Array];

/** The scan body of a two-input program (inputs: carry shape, step-input shape), closed over θ (a scalar). */
export const bodyOf =
  (p: Program, theta: Array): Body =>
  (c, x) => {
    const out = p.fn(c, x);
    return [np.add(np.mul(0.5, c), np.tanh(np.mul(theta, fitTo(out, p.inShapes[0]!)))), out];
  };

/** The reference: a plain JS loop over the steps (reverse walks t = T-1 … 0; ys[t] is step t's output). */
export function unrolled(body: Body, c0: Array, xs: Array, reverse = false): [Array, Array] {
  const T = xs.shape[0]!;
  let c = c0;
  const ys: Array[] = new globalThis.Array(T);
  for (let k = 0; k < T; k++) {
    const t = reverse ? T - 1 - k : k;
    const [c2, y] = body(c, np.take(xs, t, 0));
    c = c2;
    ys[t] = y;
  }
  return [c, np.stack(ys, 0)];
}
