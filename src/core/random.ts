/**
 * Counter-based random numbers (threefry2x32): a key is an int32 [2] array; the same key
 * gives the same numbers on every backend and under every transform.
 */
import type { Array } from "./array.js";
import { scalar } from "./constants.js";
import { fromTyped } from "./create.js";
import type { DType } from "./dtype.js";
import * as lax from "./prims/index.js";
import { checkShape } from "./shape.js";

export function key(seed: number): Array {
  if (!Number.isInteger(seed)) throw new Error(`random.key: seed must be an integer, got ${seed}.`);
  const hi = Math.floor(seed / 2 ** 32);
  return fromTyped(Int32Array.of(hi | 0, seed | 0), [2], "int32");
}
function checkKey(k: Array, op: string): Array {
  if (k.dtype !== "int32" || k.shape[k.ndim - 1] !== 2) throw new Error(`${op}: expected a key (int32 [2] from random.key), got ${k.aval}.`);
  return k;
}
/** split(key, n = 2) → keys [n, 2] (iterable: `const [k1, k2] = random.split(k)`). */
export function split(k: Array, n = 2): Array {
  return lax.randomBits(checkKey(k, "random.split"), [n, 2], "int32");
}
/** A new key from a key and an integer (e.g. a step counter). */
export function foldIn(k: Array, data: number): Array {
  if (!Number.isInteger(data)) throw new Error(`random.foldIn: data must be an integer, got ${data}.`);
  const salt = fromTyped(Int32Array.of(data | 0, Math.imul(data | 0, 0x9e3779b9 | 0)), [2], "int32");
  return lax.randomBits(lax.add(checkKey(k, "random.foldIn"), salt), [2], "int32");
}
export interface SampleOptions { readonly minval?: number; readonly maxval?: number; readonly dtype?: DType }
export function uniform(k: Array, shape: readonly number[] = [], opts: SampleOptions = {}): Array {
  const dtype = opts.dtype ?? "float32";
  const u = lax.randomBits(checkKey(k, "random.uniform"), checkShape("random.uniform", shape), dtype);
  const lo = opts.minval ?? 0, hi = opts.maxval ?? 1;
  if (lo === 0 && hi === 1) return u;
  return lax.add(lax.mul(u, scalar(hi - lo, dtype)), scalar(lo, dtype));
}
/** Standard normal samples (Box–Muller). */
export function normal(k: Array, shape: readonly number[] = [], opts: { dtype?: DType } = {}): Array {
  const dtype = opts.dtype ?? "float32";
  const ks = split(checkKey(k, "random.normal"), 2);
  const s = checkShape("random.normal", shape);
  const u1 = lax.sub(scalar(1, dtype), lax.randomBits(lax.reshape(lax.sliceAxis(ks, 0, 0, 1), [2]), s, dtype)); // (0, 1]
  const u2 = lax.randomBits(lax.reshape(lax.sliceAxis(ks, 0, 1, 2), [2]), s, dtype);
  const r = lax.sqrt(lax.mul(scalar(-2, dtype), lax.log(u1)));
  return lax.mul(r, lax.cos(lax.mul(u2, scalar(2 * Math.PI, dtype))));
}
/** Integers in [minval, maxval). */
export function randint(k: Array, shape: readonly number[], minval: number, maxval: number): Array {
  if (!(maxval > minval)) throw new Error(`random.randint: need maxval > minval, got [${minval}, ${maxval}).`);
  const u = uniform(k, shape);
  return lax.convert(lax.floor(lax.add(lax.mul(u, scalar(maxval - minval, "float32")), scalar(minval, "float32"))), "int32");
}
export function bernoulli(k: Array, p: number, shape: readonly number[] = []): Array {
  return lax.lt(uniform(k, shape), scalar(p, "float32"));
}

/**
 * Draws from categorical distributions with unnormalised log-probabilities `logits` along `axis`
 * (default the last), as `jax.random.categorical`: argmax(logits + Gumbel noise). int32 indices,
 * the logits' shape without `axis`.
 */
export function categorical(k: Array, logits: Array, axis = -1): Array {
  const ax = axis < 0 ? axis + logits.ndim : axis;
  if (!Number.isInteger(ax) || ax < 0 || ax >= logits.ndim) throw new Error(`random.categorical: axis ${axis} is out of range for logits of shape [${logits.shape}].`);
  const dtype = logits.dtype === "float64" ? "float64" : "float32";
  // u in (0, 1]: −log(−log u) is finite except at u = 1 (+∞ noise, a sure pick, with probability 2⁻²⁴).
  const u = lax.sub(scalar(1, dtype), uniform(checkKey(k, "random.categorical"), logits.shape, { dtype }));
  const gumbel = lax.neg(lax.log(lax.neg(lax.log(u))));
  return lax.argmax(lax.add(lax.convert(logits, dtype), gumbel), ax);
}
