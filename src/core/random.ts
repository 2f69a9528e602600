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
import { argsort } from "./np/sort.js";
import { take } from "./np/indexing.js";

export function key(seed: number): Array {
  if (!Number.isInteger(seed)) throw new Error(`random.key: seed must be an integer, got ${seed}.`);
  const hi = Math.floor(seed / 2 ** 32);
  return fromTyped(Int32Array.of(hi | 0, seed | 0), [2], "int32");
}
function checkKey(k: Array, op: string): Array {
  if (k.dtype !== "int32" || k.shape[k.ndim - 1] !== 2)
    throw new Error(`${op}: expected a key (int32 [2] from random.key), got ${k.aval}.`);
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
export interface SampleOptions {
  readonly minval?: number;
  readonly maxval?: number;
  readonly dtype?: DType;
}
export function uniform(k: Array, shape: readonly number[] = [], opts: SampleOptions = {}): Array {
  const dtype = opts.dtype ?? "float32";
  const u = lax.randomBits(checkKey(k, "random.uniform"), checkShape("random.uniform", shape), dtype);
  const lo = opts.minval ?? 0,
    hi = opts.maxval ?? 1;
  if (lo === 0 && hi === 1) return u;
  return lax.add(lax.mul(u, scalar(hi - lo, dtype)), scalar(lo, dtype));
}
/** Standard normal samples (Box–Muller). */
export function normal(k: Array, shape: readonly number[] = [], opts: { dtype?: DType } = {}): Array {
  const dtype = opts.dtype ?? "float32";
  const ks = split(checkKey(k, "random.normal"), 2);
  const s = checkShape("random.normal", shape);
  // u1 in (0, 1]
  const u1 = lax.sub(scalar(1, dtype), lax.randomBits(lax.reshape(lax.sliceAxis(ks, 0, 0, 1), [2]), s, dtype));
  const u2 = lax.randomBits(lax.reshape(lax.sliceAxis(ks, 0, 1, 2), [2]), s, dtype);
  const r = lax.sqrt(lax.mul(scalar(-2, dtype), lax.log(u1)));
  return lax.mul(r, lax.cos(lax.mul(u2, scalar(2 * Math.PI, dtype))));
}
/** Integers in [minval, maxval). */
export function randint(k: Array, shape: readonly number[], minval: number, maxval: number): Array {
  if (!(maxval > minval)) throw new Error(`random.randint: need maxval > minval, got [${minval}, ${maxval}).`);
  const u = uniform(k, shape);
  return lax.convert(
    lax.floor(lax.add(lax.mul(u, scalar(maxval - minval, "float32")), scalar(minval, "float32"))),
    "int32",
  );
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
  if (!Number.isInteger(ax) || ax < 0 || ax >= logits.ndim)
    throw new Error(`random.categorical: axis ${axis} is out of range for logits of shape [${logits.shape}].`);
  const dtype = logits.dtype === "float64" ? "float64" : "float32";
  // u in (0, 1]: −log(−log u) is finite except at u = 1 (+∞ noise, a sure pick, with probability 2⁻²⁴).
  const u = lax.sub(scalar(1, dtype), uniform(checkKey(k, "random.categorical"), logits.shape, { dtype }));
  const gumbel = lax.neg(lax.log(lax.neg(lax.log(u))));
  return lax.argmax(lax.add(lax.convert(logits, dtype), gumbel), ax);
}

/**
 * A random permutation of 0 … n − 1 (int32), or of x along its first axis, as
 * `jax.random.permutation`: the order that sorts n uniform draws.
 */
export function permutation(k: Array, n: number | Array): Array {
  if (typeof n === "number") {
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`random.permutation: n must be a non-negative integer, got ${n}.`);
    return argsort(uniform(checkKey(k, "random.permutation"), [n]), 0);
  }
  if (n.ndim === 0) throw new Error(`random.permutation: x must have an axis to permute, got a scalar ${n.aval}.`);
  return take(n, permutation(k, n.shape[0]!), 0);
}

export interface ChoiceOptions {
  /** Draw with replacement (default true, as in JAX). */
  readonly replace?: boolean;
  /** Probabilities of the n values (with replacement only); default uniform. */
  readonly p?: Array;
}
/** `shape` draws from 0 … n − 1 (int32), as `jax.random.choice(key, n, shape, replace, p)`. */
export function choice(k: Array, n: number, shape: readonly number[] = [], opts: ChoiceOptions = {}): Array {
  if (!Number.isInteger(n) || n < 1) throw new Error(`random.choice: n must be a positive integer, got ${n}.`);
  const s = checkShape("random.choice", shape);
  const count = s.reduce((a, b) => a * b, 1);
  if (opts.replace === false) {
    if (opts.p) throw new Error("random.choice: probabilities p are supported with replacement only (replace: true).");
    if (count > n) throw new Error(`random.choice: cannot draw ${count} values from ${n} without replacement.`);
    return lax.reshape(lax.sliceAxis(permutation(k, n), 0, 0, count), s);
  }
  if (opts.p) {
    if (opts.p.ndim !== 1 || opts.p.shape[0] !== n)
      throw new Error(`random.choice: p must have shape [${n}], got ${opts.p.aval}.`);
    return categorical(k, lax.broadcastInDim(lax.log(opts.p), [...s, n], [s.length]), -1);
  }
  return randint(k, s, 0, n);
}
