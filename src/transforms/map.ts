/**
 * lax.map(f, xs): f applied to each slice of xs along its leading axis, one after another (a scan
 * with no carry) — JAX's lax.map. Unlike vmap it runs the slices sequentially, so memory holds one
 * slice's intermediates at a time; it differentiates and batches like any scan.
 */
import { scan } from "./scan.js";

export function map<X, Y>(f: (x: X) => Y, xs: X): Y {
  if (typeof f !== "function")
    throw new Error("lax.map: the first argument must be the function to apply to each slice.");
  const [, ys] = scan((carry: null, x: X) => [carry, f(x)] as const, null, xs);
  return ys;
}
