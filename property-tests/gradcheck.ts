/**
 * Float64 gradient checking in the style of JAX's `public_test_util.py`:
 * - `numericalJvp`: central finite differences along one direction,
 * - `checkJvp`: forward mode against finite differences,
 * - `checkVjp`: reverse mode against finite differences, via ⟨vjp(u), t⟩ = ⟨u, FD(t)⟩,
 * - `checkDotProduct`: forward against reverse mode with no FD at all, ⟨vjp(u), t⟩ = ⟨u, jvp(t)⟩,
 * - `checkGrads`: all of the above, recursing on the first derivatives for higher orders.
 *
 * The checked function maps float64 Arrays to an Array or a list of Arrays. Perturbed inputs
 * are built from host data, so the finite differences never run through the code under test
 * except for `f` itself.
 */
import type { Array } from "../src/core/array.js";
import { fromTyped } from "../src/core/create.js";
import { jvp, vjp } from "../src/index.js";

export type Fn = (...xs: Array[]) => Array | Array[];

/** Deterministic PRNG (mulberry32): directions are reproducible from a fast-check seed. */
export function makeRng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
export type Rng = () => number;

export const hostOf = (x: Array): Float64Array => Float64Array.from(x.dataSync());
export const f64 = (data: ArrayLike<number>, shape: readonly number[]): Array =>
  fromTyped(Float64Array.from(data), shape, "float64");
const outList = (y: Array | Array[]): Array[] => (globalThis.Array.isArray(y) ? y : [y]);

/** A random direction with x's shape: entries uniform in [-1, 1] (never all tiny). */
export const randomLike = (x: Array, rng: Rng): Array =>
  f64(
    Float64Array.from({ length: x.size }, () => 2 * rng() - 1),
    x.shape,
  );

/** x + s·t computed on the host (independent of the primitives under test). */
const axpy = (x: Array, s: number, t: Array): Array => {
  const a = hostOf(x),
    b = hostOf(t);
  return f64(
    a.map((v, i) => v + s * b[i]!),
    x.shape,
  );
};

const dot = (a: Float64Array, b: Float64Array): number => a.reduce((acc, v, i) => acc + v * b[i]!, 0);
const absDot = (a: Float64Array, b: Float64Array): number => a.reduce((acc, v, i) => acc + Math.abs(v * b[i]!), 0);
const maxAbs = (a: Float64Array): number => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

/** (f(x + eps·t) − f(x − eps·t)) / (2 eps), per output. */
export function numericalJvp(f: Fn, xs: readonly Array[], ts: readonly Array[], eps: number): Float64Array[] {
  const plus = outList(f(...xs.map((x, i) => axpy(x, eps, ts[i]!)))).map(hostOf);
  const minus = outList(f(...xs.map((x, i) => axpy(x, -eps, ts[i]!)))).map(hostOf);
  return plus.map((p, k) => p.map((v, i) => (v - minus[k]![i]!) / (2 * eps)));
}

/**
 * Central differences with an estimate of their truncation error: D(h) − D(2h) ≈ −3ch², so
 * |D(2h) − D(h)|/3 estimates D(h)'s O(h²) error from f alone (never from the AD result under
 * test). It matters where the derivative is ~0 but the third derivative is not (prod with zeros).
 */
function numericalJvpWithError(
  f: Fn,
  xs: readonly Array[],
  ts: readonly Array[],
  eps: number,
): { fd: Float64Array[]; err: number } {
  const fd = numericalJvp(f, xs, ts, eps);
  const fd2 = numericalJvp(f, xs, ts, 2 * eps);
  let err = 0;
  fd.forEach((d, k) =>
    d.forEach((v, i) => {
      err = Math.max(err, Math.abs(fd2[k]![i]! - v) / 3);
    }),
  );
  return { fd, err };
}

export interface Tolerance {
  /** Finite-difference step. */
  readonly eps: number;
  /** Normwise relative tolerance against finite differences. */
  readonly rtol: number;
}
/**
 * First order: eps = 1e-6 in float64 leaves truncation error ~eps²·|f'''| ≈ 1e-12 and rounding
 * error ~2e-16·|f|/eps ≈ 2e-10·|f|, so a relative tolerance of 1e-6 has three orders of margin.
 */
export const FIRST_ORDER: Tolerance = { eps: 1e-6, rtol: 1e-6 };
/**
 * Second order differentiates a computed derivative, whose own rounding noise (~1e-16 times
 * the condition of the chain of rules) is amplified by 1/eps; eps = 1e-5 balances that
 * against truncation (~1e-10), and 1e-5 relative still catches any wrong rule (those are O(1)).
 */
export const SECOND_ORDER: Tolerance = { eps: 1e-5, rtol: 1e-5 };

/** Absolute floor for FD comparisons: the FD rounding error ≈ 2.2e-16·|f|/eps, with a 10× margin. */
const fdFloor = (fx: readonly Float64Array[], eps: number): number =>
  (1e-15 / eps) * (1 + Math.max(0, ...fx.map(maxAbs)));

function fail(what: string, detail: string): never {
  throw new Error(`${what}: ${detail}`);
}

/** Normwise comparison ‖a − e‖∞ ≤ rtol·‖e‖∞ + atol over a list of outputs. */
export function expectClose(
  what: string,
  actual: readonly Float64Array[],
  expected: readonly Float64Array[],
  rtol: number,
  atol: number,
): void {
  if (actual.length !== expected.length) fail(what, `${actual.length} outputs vs ${expected.length} expected`);
  actual.forEach((a, k) => {
    const e = expected[k]!;
    if (a.length !== e.length) fail(what, `output ${k} has ${a.length} elements, expected ${e.length}`);
    let err = 0;
    a.forEach((v, i) => {
      err = Math.max(err, Math.abs(v - e[i]!));
    });
    if (!(err <= rtol * maxAbs(e) + atol)) {
      fail(
        what,
        `output ${k}: max error ${err.toExponential(3)} > ${rtol}·${maxAbs(e).toExponential(3)} ` +
          `+ ${atol.toExponential(2)}\n` +
          `  actual   [${[...a].slice(0, 12).map((v) => v.toPrecision(10))}]` +
          `\n  expected [${[...e].slice(0, 12).map((v) => v.toPrecision(10))}]`,
      );
    }
  });
}

/** |a − b| ≤ rtol·scale + atol, where scale is Σ|terms| of the inner products (their rounding scale). */
function expectCloseScalar(what: string, a: number, b: number, rtol: number, scale: number, atol = 0): void {
  if (!(Math.abs(a - b) <= rtol * scale + atol)) {
    fail(
      what,
      `${a} vs ${b} (|diff| ${Math.abs(a - b).toExponential(3)} ` +
        `> ${rtol}·${scale.toExponential(3)} + ${atol.toExponential(2)})`,
    );
  }
}

/** Forward mode against central differences along random tangents; the primal output must equal f(x). */
export function checkJvp(f: Fn, xs: readonly Array[], rng: Rng, tol: Tolerance = FIRST_ORDER): void {
  const ts = xs.map((x) => randomLike(x, rng));
  const fx = outList(f(...xs)).map(hostOf);
  const [y, ty] = jvp((...a: Array[]) => f(...a), [...xs], ts);
  expectClose("jvp primal output vs f(x)", outList(y).map(hostOf), fx, 1e-14, 1e-300);
  const { fd, err } = numericalJvpWithError(f, xs, ts, tol.eps);
  expectClose("jvp vs finite differences", outList(ty).map(hostOf), fd, tol.rtol, fdFloor(fx, tol.eps) + 2 * err);
}

/** Reverse mode against central differences: ⟨vjp(u), t⟩ = ⟨u, FD(t)⟩ for random u, t. */
export function checkVjp(f: Fn, xs: readonly Array[], rng: Rng, tol: Tolerance = FIRST_ORDER): void {
  const [y, back] = vjp((...a: Array[]) => f(...a), ...xs);
  const ys = outList(y);
  const us = ys.map((o) => randomLike(o, rng));
  const cts = back(globalThis.Array.isArray(y) ? us : us[0]) as Array[];
  if (cts.length !== xs.length) fail("vjp", `returned ${cts.length} cotangents for ${xs.length} inputs`);
  cts.forEach((c, i) => {
    if (c.shape.join() !== xs[i]!.shape.join())
      fail("vjp", `cotangent ${i} has shape [${c.shape}], input has [${xs[i]!.shape}]`);
  });
  const ts = xs.map((x) => randomLike(x, rng));
  const { fd, err } = numericalJvpWithError(f, xs, ts, tol.eps);
  const lhs = cts.reduce((s, c, i) => s + dot(hostOf(c), hostOf(ts[i]!)), 0);
  const rhs = us.reduce((s, u, k) => s + dot(hostOf(u), fd[k]!), 0);
  const scale =
    cts.reduce((s, c, i) => s + absDot(hostOf(c), hostOf(ts[i]!)), 0) +
    us.reduce((s, u, k) => s + absDot(hostOf(u), fd[k]!), 0);
  // FD rounding enters ⟨u, FD⟩ once per output element (|u| ≤ 1).
  const atol = (fdFloor(ys.map(hostOf), tol.eps) + 2 * err) * us.reduce((s, u) => s + u.size, 0);
  expectCloseScalar("⟨vjp(u), t⟩ vs ⟨u, finite differences(t)⟩", lhs, rhs, tol.rtol, scale, atol);
}

/** Forward against reverse mode, no FD: ⟨vjp(u), t⟩ = ⟨u, jvp(t)⟩ to rounding. */
export function checkDotProduct(f: Fn, xs: readonly Array[], rng: Rng): void {
  const ts = xs.map((x) => randomLike(x, rng));
  const [y, ty] = jvp((...a: Array[]) => f(...a), [...xs], ts);
  const us = outList(y).map((o) => randomLike(o, rng));
  const [, back] = vjp((...a: Array[]) => f(...a), ...xs);
  const cts = back(globalThis.Array.isArray(y) ? us : us[0]) as Array[];
  const tys = outList(ty).map(hostOf);
  const lhs = cts.reduce((s, c, i) => s + dot(hostOf(c), hostOf(ts[i]!)), 0);
  const rhs = us.reduce((s, u, k) => s + dot(hostOf(u), tys[k]!), 0);
  const scale =
    cts.reduce((s, c, i) => s + absDot(hostOf(c), hostOf(ts[i]!)), 0) +
    us.reduce((s, u, k) => s + absDot(hostOf(u), tys[k]!), 0);
  expectCloseScalar("⟨vjp(u), t⟩ vs ⟨u, jvp(t)⟩", lhs, rhs, 1e-10, scale, 1e-300);
}

export type Mode = "fwd" | "rev";
export interface CheckOptions {
  /** Which modes the function supports (customVjp is reverse-only, whileLoop forward-only). */
  readonly modes?: readonly Mode[];
}

/**
 * JAX's check_grads: first-order checks of f in every supported mode, then (order ≥ 2) the same
 * checks on its first derivatives x ↦ jvp(f)(x; t) and x ↦ vjp(f)(x)(u), i.e. jvp-of-jvp,
 * vjp-of-jvp, jvp-of-grad (Hessian-vector products) and grad-of-grad, all against FD of the
 * first derivative (at the looser SECOND_ORDER tolerance).
 */
export function checkGrads(
  f: Fn,
  xs: readonly Array[],
  order: number,
  rng: Rng,
  opts: CheckOptions = {},
  isDerivative = false,
): void {
  const modes = opts.modes ?? ["fwd", "rev"];
  const tol = isDerivative ? SECOND_ORDER : FIRST_ORDER;
  const ctx = (label: string, body: () => void) => {
    try {
      body();
    } catch (e) {
      throw new Error(`[${label}] ${(e as Error).message}`, { cause: e });
    }
  };
  if (modes.includes("fwd")) ctx("jvp", () => checkJvp(f, xs, rng, tol));
  if (modes.includes("rev")) ctx("vjp", () => checkVjp(f, xs, rng, tol));
  if (modes.includes("fwd") && modes.includes("rev")) ctx("jvp·vjp dot product", () => checkDotProduct(f, xs, rng));
  if (order < 2) return;
  if (modes.includes("fwd")) {
    const ts = xs.map((x) => randomLike(x, rng));
    const fJvp: Fn = (...a) => outList(jvp((...b: Array[]) => f(...b), a, ts)[1]);
    ctx("derivative = jvp", () => checkGrads(fJvp, xs, order - 1, rng, opts, true));
  }
  if (modes.includes("rev")) {
    const us = outList(f(...xs)).map((o) => randomLike(o, rng));
    const fVjp: Fn = (...a) => {
      const [out, back] = vjp((...b: Array[]) => f(...b), ...a);
      return back(globalThis.Array.isArray(out) ? us : us[0]) as Array[];
    };
    ctx("derivative = vjp", () => checkGrads(fVjp, xs, order - 1, rng, opts, true));
  }
}

const toF32 = (x: Array): Array => fromTyped(Float32Array.from(x.dataSync()), x.shape, "float32");

/**
 * The same function on float32 inputs: outputs, jvp tangents and vjp cotangents must be float32
 * and agree with the float64 results to float32 accuracy (normwise 1e-4, floor 1e-5·max(1, ‖·‖∞));
 * catches rules that hard-code float64 constants or break under float32's weak-type promotion.
 */
export function checkFloat32Agrees(
  f: Fn,
  xs: readonly Array[],
  rng: Rng,
  modes: readonly Mode[] = ["fwd", "rev"],
): void {
  const xs32 = xs.map(toF32);
  const near = (what: string, a: readonly Array[], b: readonly Array[]) => {
    a.forEach((v) => {
      if (v.dtype !== "float32") fail(what, `expected float32, got ${v.aval}`);
    });
    const e = b.map(hostOf);
    expectClose(what, a.map(hostOf), e, 1e-4, 1e-5 * Math.max(1, ...e.map(maxAbs)));
  };
  near("float32 output vs float64", outList(f(...xs32)), outList(f(...xs)));
  if (modes.includes("fwd")) {
    const ts = xs.map((x) => randomLike(x, rng));
    near(
      "float32 jvp vs float64",
      outList(jvp((...a: Array[]) => f(...a), xs32, ts.map(toF32))[1]),
      outList(jvp((...a: Array[]) => f(...a), [...xs], ts)[1]),
    );
  }
  if (modes.includes("rev")) {
    const [y, back] = vjp((...a: Array[]) => f(...a), ...xs);
    const us = outList(y).map((o) => randomLike(o, rng));
    const [y32, back32] = vjp((...a: Array[]) => f(...a), ...xs32);
    const ct = (isList: boolean, u: Array[]) => (isList ? u : u[0]);
    near(
      "float32 vjp vs float64",
      back32(ct(globalThis.Array.isArray(y32), us.map(toF32))) as Array[],
      back(ct(globalThis.Array.isArray(y), us)) as Array[],
    );
  }
}
