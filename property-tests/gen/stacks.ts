/**
 * Random stacks of transforms (jit, vmap, grad, vjp, jvp, checkpoint, scan, cond) applied to
 * a program, paired with a reference built from transform-free counterparts: jit/checkpoint →
 * the function itself, vmap/scan → a JS loop that slices and stacks, cond → a JS if,
 * grad/vjp → central finite-difference gradients, jvp → a finite-difference directional derivative.
 */
import { checkpoint, grad, jit, jvp, lax, np, vjp, vmap, type Array } from "../../src/index.js";
import { exampleOf, insertAxis, randomAxis, stackResults } from "./axes.js";
import { fdDirectional, fdGrad } from "./fd.js";
import { randomArray } from "./programs.js";
import { fitTo } from "./scan-bodies.js";
import type { Rng } from "../../src/core/host-rng.js";

export type LevelKind = "jit" | "vmap" | "grad" | "vjp" | "jvp" | "checkpoint" | "scan" | "iterate" | "cond";
export const DIFF_LEVELS: readonly LevelKind[] = ["grad", "vjp", "jvp"];

export interface Stage {
  /** The transformed function. */
  readonly f: (x: Array) => Array;
  /** Its reference (no transforms of the library involved beyond eager np ops). */
  readonly ref: (x: Array) => Array;
  readonly inShape: readonly number[];
  readonly outShape: readonly number[];
  /** e.g. jit(vmap[in 1, out -1](grad(f))) */
  readonly text: string;
}

const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);

/** Wraps `s` in one more transform. `h` is the finite-difference step for differentiation levels. */
export function applyLevel(s: Stage, kind: LevelKind, rng: Rng, h: number): Stage {
  switch (kind) {
    case "jit":
      return { ...s, f: jit(s.f), text: `jit(${s.text})` };
    case "checkpoint":
      return { ...s, f: checkpoint(s.f), text: `checkpoint(${s.text})` };
    case "vmap": {
      const B = rng.between(1, 2);
      const a = randomAxis(rng, s.inShape.length + 1)!,
        o = randomAxis(rng, s.outShape.length + 1)!;
      return {
        f: vmap(s.f, { inAxes: a, outAxes: o }),
        ref: (x) =>
          stackResults(
            range(B).map((i) => s.ref(exampleOf(x, a, i))),
            o,
          ),
        inShape: insertAxis(s.inShape, a, B),
        outShape: insertAxis(s.outShape, o, B),
        text: `vmap[in ${a}, out ${o}](${s.text})`,
      };
    }
    case "scan": {
      // Map over a new leading axis with a carried scalar that feeds back into the outputs.
      const T = rng.between(1, 3);
      const step =
        (g: (x: Array) => Array) =>
        (c: Array, xi: Array): [Array, Array] => {
          const y = g(xi);
          return [np.add(np.mul(0.5, c), np.mul(0.1, np.sum(np.tanh(y)))), np.mul(y, np.add(1, np.mul(0.3, c)))];
        };
      const zero = np.zeros([], { dtype: "float64" });
      return {
        f: (x) => lax.scan(step(s.f), zero, x)[1],
        ref: (x) => {
          let c = zero;
          const ys: Array[] = [];
          for (let t = 0; t < T; t++) {
            const [c2, y] = step(s.ref)(c, np.take(x, t, 0));
            c = c2;
            ys.push(y);
          }
          return np.stack(ys, 0);
        },
        inShape: [T, ...s.inShape],
        outShape: [T, ...s.outShape],
        text: `scan(${s.text})`,
      };
    }
    case "iterate": {
      // Apply the function repeatedly to a pytree carry (scan with xs = null and a length).
      const T = rng.between(1, 3),
        ckpt = rng.chance(0.3);
      const step =
        (g: (x: Array) => Array) =>
        (c: { v: Array }): { v: Array } => ({
          v: np.add(np.mul(0.5, c.v), np.mul(0.3, np.tanh(fitTo(g(c.v), s.inShape)))),
        });
      return {
        f: (x) =>
          lax.scan((c: { v: Array }, _: null) => [step(s.f)(c), null], { v: x }, null, {
            length: T,
            checkpoint: ckpt,
          })[0].v,
        ref: (x) => {
          let c = { v: x };
          for (let t = 0; t < T; t++) c = step(s.ref)(c);
          return c.v;
        },
        inShape: s.inShape,
        outShape: s.inShape,
        text: `iterate${T}${ckpt ? "[checkpoint]" : ""}(${s.text})`,
      };
    }
    case "cond": {
      // A data-dependent branch; under vmap the predicate is batched and the cond becomes a select.
      const other = (g: (x: Array) => Array) => (x: Array) => np.sin(g(x));
      const pred = (x: Array) => np.greater(np.sum(x), 0);
      return {
        f: (x) => lax.cond(pred(x), s.f, other(s.f), x),
        ref: (x) => (pred(x).item() ? s.ref : other(s.ref))(x),
        inShape: s.inShape,
        outShape: s.outShape,
        text: `cond(${s.text})`,
      };
    }
    case "grad":
    case "vjp": {
      const w = randomArray(rng.int(1e9), s.outShape);
      const scalarOf = (g: (x: Array) => Array) => (x: Array) => np.sum(np.mul(g(x), w));
      const f = kind === "grad" ? grad(scalarOf(s.f)) : (x: Array) => vjp(s.f, x)[1](w)[0] as Array;
      return {
        f,
        ref: (x) => fdGrad(scalarOf(s.ref), x, h),
        inShape: s.inShape,
        outShape: s.inShape,
        text: `${kind}(${s.text})`,
      };
    }
    case "jvp": {
      const t = randomArray(rng.int(1e9), s.inShape);
      return {
        f: (x) => jvp(s.f, [x], [t])[1] as Array,
        ref: (x) => fdDirectional(s.ref, x, t, h),
        inShape: s.inShape,
        outShape: s.outShape,
        text: `jvp(${s.text})`,
      };
    }
  }
}

/** A random list of `depth` levels (innermost first) with at most `maxDiff` differentiation levels. */
export function randomLevels(rng: Rng, depth: number, maxDiff: number): LevelKind[] {
  const all: LevelKind[] = ["jit", "vmap", "grad", "vjp", "jvp", "checkpoint", "scan", "iterate", "cond"];
  const out: LevelKind[] = [];
  let diff = 0;
  while (out.length < depth) {
    const k = rng.pick(all);
    if (DIFF_LEVELS.includes(k)) {
      if (diff >= maxDiff) continue;
      diff++;
    }
    out.push(k);
  }
  return out;
}
