/**
 * lax.scan and control flow. References are independent of the transforms under test:
 * the unrolled JS loop (run eagerly or differentiated op by op), central finite differences
 * in float64, and JS `if`/`while` for cond/whileLoop.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { grad, jvp, lax, makeIR, np, vjp, vmap, type Array } from "../src/index.js";
import { buildProgram, f64, randomArray, type Program } from "./gen/programs.js";
import { expectClose, sliceAt, stackAt } from "./gen/check.js";
import { dotAll, fdDirectional, fdDirectionalArgs, smoothAlong } from "./gen/fd.js";
import { bodyOf, fitTo, unrolled, type Body } from "./gen/scan-bodies.js";
import { exampleOf, insertAxis, randomAxis, stackResults } from "./gen/axes.js";
import { makeRng, type Rng } from "../src/core/host-rng.js";
import { useEvaluatorForProperties } from "./gen/runner.js";

useEvaluatorForProperties();
const RUNS = 25;
const exact = { rtol: 1e-9, atol: 1e-12 };
const fdTol = { rtol: 2e-5, atol: 1e-7 };
const range = (n: number): number[] => globalThis.Array.from({ length: n }, (_, i) => i);

function explain<T>(what: string, progs: readonly Program[], body: () => T): T {
  try {
    return body();
  } catch (e) {
    throw new Error(`${what}\n${progs.map((p) => p.text).join("\n--\n")}\n${(e as Error).message}`);
  }
}

/** A random scan problem: body program over (carry S, step input Sx), T steps, data and loss weights. */
interface ScanCase {
  readonly p: Program;
  readonly T: number;
  readonly c0: Array;
  readonly xs: Array;
  readonly theta: Array;
  readonly wc: Array;
  readonly wy: Array;
}
function scanCase(seed: number, T: number, rng: Rng = makeRng(seed)): ScanCase {
  const shape = () => range(rng.between(0, 2)).map(() => rng.between(1, 3));
  const S = shape(),
    Sx = shape();
  const p = buildProgram(rng.int(1e9), [S, Sx], rng.between(1, 5), { maxSize: 24 });
  return {
    p,
    T,
    c0: randomArray(rng.int(1e9), S),
    xs: randomArray(rng.int(1e9), [T, ...Sx]),
    theta: f64([rng.uniform(0.5, 1.5)], []),
    wc: randomArray(rng.int(1e9), S),
    wy: randomArray(rng.int(1e9), [T, ...p.outShape]),
  };
}
type Loss = (c0: Array, xs: Array, theta: Array) => Array;
const readout = (k: ScanCase, [cT, ys]: [Array, Array]): Array =>
  np.add(np.sum(np.mul(cT, k.wc)), np.sum(np.mul(ys, k.wy)));
const scanLoss =
  (k: ScanCase, opts: { reverse?: boolean; checkpoint?: boolean } = {}): Loss =>
  (c0, xs, th) =>
    readout(k, lax.scan(bodyOf(k.p, th), c0, xs, opts));
const loopLoss =
  (k: ScanCase, reverse = false): Loss =>
  (c0, xs, th) =>
    readout(k, unrolled(bodyOf(k.p, th), c0, xs, reverse));
const grads3 = (L: Loss, k: ScanCase) => grad(L, { argnums: [0, 1, 2] })(k.c0, k.xs, k.theta) as [Array, Array, Array];

describe("lax.scan: reverse mode", () => {
  it("grad through scan equals grad of the unrolled loop and central finite differences (float64)", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 8 }), fc.boolean(), (seed, T, reverse) => {
        const k = scanCase(seed, T);
        explain(`T=${T} reverse=${reverse}`, [k.p], () => {
          const L = scanLoss(k, { reverse }),
            Lref = loopLoss(k, reverse);
          expectClose(L(k.c0, k.xs, k.theta), Lref(k.c0, k.xs, k.theta), exact, "loss");
          const g = grads3(L, k),
            gRef = grads3(Lref, k);
          ["d/dc0", "d/dxs", "d/dtheta"].forEach((name, i) =>
            expectClose(g[i]!, gRef[i]!, exact, `${name} vs unrolled loop`),
          );
          const rng = makeRng(seed + 11);
          for (let d = 0; d < 2; d++) {
            const dirs = [k.c0, k.xs, k.theta].map((a) => randomArray(rng.int(1e9), a.shape));
            // On a kink: only the exact checks above apply.
            if (!smoothAlong(Lref, [k.c0, k.xs, k.theta], dirs)) continue;
            const fd = fdDirectionalArgs(Lref, [k.c0, k.xs, k.theta], dirs);
            expectClose(
              g.reduce((s, gi, i) => s + dotAll(gi, dirs[i]!), 0),
              fd,
              fdTol,
              "<grad, v> vs finite differences",
            );
          }
        });
      }),
      { numRuns: RUNS, examples: [[1006300883, 3, false]] },
    ); // a body on a kink (tied values under where(x > mean(x)))
  });

  it("checkpointed scan gives the values and gradients of plain scan (reverse too, T not a perfect square)", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 26 }), fc.boolean(), (seed, T, reverse) => {
        const k = scanCase(seed, T);
        explain(`T=${T} reverse=${reverse}`, [k.p], () => {
          const plain = scanLoss(k, { reverse }),
            ckpt = scanLoss(k, { reverse, checkpoint: true });
          const body = bodyOf(k.p, k.theta);
          const [cA, ysA] = lax.scan(body, k.c0, k.xs, { reverse }),
            [cB, ysB] = lax.scan(body, k.c0, k.xs, { reverse, checkpoint: true });
          expectClose(cB, cA, exact, "final carry");
          expectClose(ysB, ysA, exact, "ys");
          const g = grads3(ckpt, k),
            gRef = grads3(plain, k);
          ["d/dc0", "d/dxs", "d/dtheta"].forEach((name, i) => expectClose(g[i]!, gRef[i]!, exact, name));
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("a checkpointed scan's IR stores segment boundaries, not one residual per step", () => {
    // T = 100 → 10 segments of 10: the outer scan has length 10, each segment is a checkpoint of a 10-step scan.
    const body: Body = (c, x) => [np.sin(c).mul(x), c];
    const { ir } = makeIR((c: Array, xs: Array) => lax.scan(body, c, xs, { checkpoint: true })[0])(
      f64([1, 2], [2]),
      randomArray(1, [100, 2]),
    );
    const outer = ir.eqns.filter((e) => e.prim.name === "scan");
    expect(outer.map((e) => (e.params as { length: number }).length)).toEqual([10]);
    const segment = (outer[0]!.params as { body: typeof ir }).body.eqns.find((e) => e.prim.name === "checkpoint");
    expect(segment, "the outer scan's body is a checkpointed segment").toBeDefined();
    const inner = (segment!.params as { ir: typeof ir }).ir.eqns.find((e) => e.prim.name === "scan");
    expect((inner!.params as { length: number }).length).toBe(10);
  });

  it("scan of length 0 and 1 (edge cases) differentiates like the loop", () => {
    for (const T of [0, 1]) {
      const k = scanCase(7 + T, T);
      const g = grads3(scanLoss(k), k),
        gRef = grads3(loopLossSafe(k), k);
      ["d/dc0", "d/dxs", "d/dtheta"].forEach((name, i) =>
        explain(`T=${T}`, [k.p], () => expectClose(g[i]!, gRef[i]!, exact, name)),
      );
    }
  });
});

/** The loop reference also for T = 0 (np.stack of nothing is not defined): ys is then empty. */
const loopLossSafe =
  (k: ScanCase): Loss =>
  (c0, xs, th) => {
    if (k.T > 0) return loopLoss(k)(c0, xs, th);
    return np.sum(np.mul(c0, k.wc)).add(np.mul(0, th));
  };

describe("lax.scan: carry typing and errors", () => {
  const xs = f64([1, 2, 3], [3]);
  it("names the carry leaf and both types when the body changes a carry's dtype or shape", () => {
    expect(() => lax.scan((c: Array, x: Array) => [c.astype("float32"), x], f64([0], []), xs)).toThrow(
      /lax\.scan: carry leaf 0 enters as f64\[\] but leaves as f32\[\]; cast it/,
    );
    expect(() => lax.scan((c: Array, x: Array) => [np.stack([c, x]), x], f64([0], []), xs)).toThrow(
      /carry leaf 0 enters the body as f64\[\] but leaves it with shape \[2\]/,
    );
    expect(() => lax.scan((c: Array, x: Array) => [c, x], f64([0], []), xs, { length: 4 })).toThrow(
      /xs leaves have leading sizes 3 and length is 4/,
    );
  });
  it("a JS-number initial carry is promoted to the body's dtype (as in JAX); weak ys become arrays", () => {
    const small = f64([0.1, 0.2, 0.3], [3]);
    const zero = 0 as unknown as Array; // a JS number at runtime (the typings want the carry's type)
    const [c, ys] = lax.scan((cc: Array, x: Array) => [np.add(cc, x), 1.5 as unknown as Array], zero, small);
    expect(c.dtype).toBe("float64"); // not rounded through float32
    expect(c.item()).toBe(0.1 + 0.2 + 0.3);
    expect(ys.toList()).toEqual([1.5, 1.5, 1.5]);
    expect(
      grad((k: Array) => lax.scan((cc: Array, x: Array) => [np.add(cc, np.mul(k, x)), null], zero, small)[0])(
        f64([2], []),
      ).item(),
    ).toBeCloseTo(0.6, 14);
    const [n] = lax.scan((cc: Array, _: null) => [np.add(cc, 1), null], np.array(0, { dtype: "int32" }), null, {
      length: 3,
    }) as [Array, null];
    expect([n.dtype, n.item()]).toEqual(["int32", 3]);
  });
});

describe("lax.scan: forward mode and batching", () => {
  it("jvp of scan equals jvp of the unrolled loop", () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        fc.boolean(),
        (seed, T, reverse, checkpoint) => {
          const k = scanCase(seed, T);
          const rng = makeRng(seed + 3);
          const tans = [k.c0, k.xs, k.theta].map((a) => randomArray(rng.int(1e9), a.shape)) as [Array, Array, Array];
          const run = (body: (th: Array) => Body, loop: boolean) => (c0: Array, xs: Array, th: Array) =>
            loop ? unrolled(body(th), c0, xs, reverse) : lax.scan(body(th), c0, xs, { reverse, checkpoint });
          explain(`T=${T} reverse=${reverse} checkpoint=${checkpoint}`, [k.p], () => {
            const [out, tout] = jvp(
              run((th) => bodyOf(k.p, th), false),
              [k.c0, k.xs, k.theta],
              tans,
            ) as [Array[], Array[]];
            const [outR, toutR] = jvp(
              run((th) => bodyOf(k.p, th), true),
              [k.c0, k.xs, k.theta],
              tans,
            ) as [Array[], Array[]];
            expectClose(out[0]!, outR[0]!, exact, "carry");
            expectClose(out[1]!, outR[1]!, exact, "ys");
            expectClose(tout[0]!, toutR[0]!, exact, "carry tangent");
            expectClose(tout[1]!, toutR[1]!, exact, "ys tangent");
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("vmap of scan equals a loop, for any subset of batched carry / xs (any axis) / closed-over θ", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 3 }), (seed, T, B) => {
        const rng = makeRng(seed);
        const k = scanCase(seed, T, rng);
        let [ac, ax, at] = [
          randomAxis(rng, k.c0.ndim + 1, 0.4),
          randomAxis(rng, k.xs.ndim + 1, 0.4),
          randomAxis(rng, 1, 0.5),
        ];
        if (ac === null && ax === null && at === null) ax = 1 % (k.xs.ndim + 1);
        const c0 = ac === null ? k.c0 : randomArray(seed + 1, insertAxis(k.c0.shape, ac, B));
        const xs = ax === null ? k.xs : randomArray(seed + 2, insertAxis(k.xs.shape, ax, B));
        const th =
          at === null
            ? k.theta
            : f64(
                range(B).map((i) => 0.6 + 0.3 * i),
                [B],
              );
        const reverse = rng.chance(0.5),
          checkpoint = rng.chance(0.3);
        const f = (c: Array, x: Array, t: Array) => lax.scan(bodyOf(k.p, t), c, x, { reverse, checkpoint });
        explain(
          `inAxes ${JSON.stringify([ac, ax, at])} B=${B} T=${T} reverse=${reverse} checkpoint=${checkpoint}`,
          [k.p],
          () => {
            const [cT, ys] = vmap(f, { inAxes: [ac, ax, at] })(c0, xs, th) as [Array, Array];
            const loop = range(B).map((i) =>
              unrolled(bodyOf(k.p, exampleOf(th, at, i)), exampleOf(c0, ac, i), exampleOf(xs, ax, i), reverse),
            );
            expectClose(
              cT,
              stackResults(
                loop.map((r) => r[0]),
                0,
              ),
              exact,
              "carry",
            );
            expectClose(
              ys,
              stackResults(
                loop.map((r) => r[1]),
                0,
              ),
              exact,
              "ys",
            );
          },
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("pytree carries and null xs with { length }: values and gradients equal the loop and finite differences", () => {
    // A damped nonlinear spring: carry {pos, vel}, no per-step input, stiffness k closed over.
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 12 }), fc.boolean(), (seed, T, checkpoint) => {
        const rng = makeRng(seed);
        const pos = randomArray(rng.int(1e9), [3]),
          vel = randomArray(rng.int(1e9), [3]),
          stiff = f64([rng.uniform(0.5, 2)], []);
        type State = { pos: Array; vel: Array };
        const step =
          (kk: Array) =>
          (s: State, _x: null): [State, { e: Array; p0: Array }] => {
            const acc = np.neg(np.add(np.mul(kk, s.pos), np.mul(0.3, np.mul(s.vel, np.square(s.vel)))));
            const v = np.add(s.vel, np.mul(0.1, acc));
            const nxt = { vel: v, pos: np.add(s.pos, np.mul(0.1, v)) };
            return [
              nxt,
              { e: np.sum(np.square(v)).add(np.sum(np.mul(kk, np.square(nxt.pos)))), p0: np.take(nxt.pos, 0, 0) },
            ];
          };
        const readoutS = (s: State, ys: { e: Array; p0: Array }) =>
          np
            .sum(ys.e)
            .add(np.sum(ys.p0.mul(ys.p0)))
            .add(np.sum(s.pos.mul(s.vel)));
        const L = (p: Array, v: Array, kk: Array) => {
          const [s, ys] = lax.scan(step(kk), { pos: p, vel: v }, null, { length: T, checkpoint });
          return readoutS(s, ys);
        };
        const Lref = (p: Array, v: Array, kk: Array) => {
          let s: State = { pos: p, vel: v };
          const es: Array[] = [],
            ps: Array[] = [];
          for (let t = 0; t < T; t++) {
            const [s2, y] = step(kk)(s, null);
            s = s2;
            es.push(y.e);
            ps.push(y.p0);
          }
          return readoutS(s, { e: np.stack(es), p0: np.stack(ps) });
        };
        expectClose(L(pos, vel, stiff), Lref(pos, vel, stiff), exact, "loss");
        const g = grad(L, { argnums: [0, 1, 2] })(pos, vel, stiff) as Array[];
        const gRef = grad(Lref, { argnums: [0, 1, 2] })(pos, vel, stiff) as Array[];
        g.forEach((gi, i) => expectClose(gi, gRef[i]!, exact, `grad ${i}`));
        const dirs = [pos, vel, stiff].map((a) => randomArray(rng.int(1e9), a.shape));
        expectClose(
          g.reduce((s, gi, i) => s + dotAll(gi, dirs[i]!), 0),
          fdDirectionalArgs(Lref, [pos, vel, stiff], dirs),
          fdTol,
          "<grad, v> vs FD",
        );
        // grad with respect to the whole pytree initial carry at once
        const gTree = grad((s0: State) => readoutS(...lax.scan(step(stiff), s0, null, { length: T })))({
          pos,
          vel,
        }) as State;
        expectClose(gTree.pos, gRef[0]!, exact, "grad wrt pytree carry .pos");
        expectClose(gTree.vel, gRef[1]!, exact, "grad wrt pytree carry .vel");
      }),
      { numRuns: 15 },
    );
  });
});

describe("lax.cond", () => {
  /** Two branch programs with the same input and output shape. */
  function branches(seed: number) {
    const rng = makeRng(seed);
    const S = range(rng.between(0, 2)).map(() => rng.between(1, 3));
    const p1 = buildProgram(rng.int(1e9), [S], rng.between(1, 4), { maxSize: 24 });
    const p2 = buildProgram(rng.int(1e9), [S], rng.between(1, 4), { maxSize: 24 });
    const t = (x: Array) => fitTo(p1.fn(x), S),
      f = (x: Array) => fitTo(p2.fn(x), S);
    const w = randomArray(rng.int(1e9), S);
    return { S, p1, p2, t, f, w, rng };
  }

  it("is differentiable: value, grad and jvp equal the branch picked by a JS if (and FD)", () => {
    fc.assert(
      fc.property(fc.nat(), (seed) => {
        const { S, p1, p2, t, f, w, rng } = branches(seed);
        const x = randomArray(rng.int(1e9), S);
        const shift = rng.uniform(-1, 1);
        const pred = (v: Array) => np.greater(np.sum(v), shift);
        const L = (v: Array) => np.sum(np.mul(lax.cond(pred(v), t, f, v), w));
        const Lref = (v: Array) => np.sum(np.mul((pred(v).item() ? t : f)(v), w));
        explain(`pred=${pred(x).item()}`, [p1, p2], () => {
          expectClose(L(x), Lref(x), exact, "value");
          expectClose(grad(L)(x), grad(Lref)(x), exact, "grad");
          const v = randomArray(rng.int(1e9), S);
          expectClose(jvp(L, [x], [v])[1] as Array, fdDirectional(Lref, x, v), fdTol, "jvp vs FD");
          expectClose(dotAll(grad(L)(x), v), fdDirectional(Lref, x, v), fdTol, "<grad, v> vs FD");
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("under vmap, a batched predicate makes it a select that equals a loop; an unbatched one stays a cond", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 2, max: 4 }), (seed, B) => {
        const { S, p1, p2, t, f, w, rng } = branches(seed);
        const xs = randomArray(rng.int(1e9), [B, ...S]);
        const g = (v: Array) => lax.cond(np.greater(np.sum(v), 0), t, f, v);
        explain("vmap(cond)", [p1, p2], () => {
          const ref = stackAt(
            range(B).map((i) => {
              const v = sliceAt(xs, 0, i);
              return np.sum(v).item() > 0 ? t(v) : f(v);
            }),
            0,
          );
          expectClose(vmap(g)(xs), ref, exact, "vmap(cond)");
          // per-example gradients through a batched cond, and grad of the batched cond
          const Li = (v: Array) => np.sum(np.mul(g(v), w));
          const gRef = stackAt(
            range(B).map((i) => {
              const v = sliceAt(xs, 0, i);
              return grad((u: Array) => np.sum(np.mul((np.sum(v).item() > 0 ? t : f)(u), w)))(v);
            }),
            0,
          );
          expectClose(vmap(grad(Li))(xs), gRef, exact, "vmap(grad(cond))");
          expectClose(grad((u: Array) => np.sum(vmap(Li)(u)))(xs), gRef, exact, "grad(vmap(cond))");
        });
        const batchedIR = String(makeIR(vmap(g))(xs));
        expect(batchedIR).toMatch(/\bselect\b/);
        expect(batchedIR).not.toMatch(/\bcond\[/);
        // predicate from an unbatched argument: the cond survives batching
        const h = (v: Array, s: Array) => lax.cond(np.greater(s, 0), t, f, v);
        const s = f64([rng.uniform(-1, 1)], []);
        expect(String(makeIR(vmap(h, { inAxes: [0, null] }))(xs, s))).toMatch(/\bcond\[/);
        expectClose(
          vmap(h, { inAxes: [0, null] })(xs, s),
          stackAt(
            range(B).map((i) => (s.item() > 0 ? t : f)(sliceAt(xs, 0, i))),
            0,
          ),
          exact,
          "unbatched predicate",
        );
      }),
      { numRuns: 15 },
    );
  });

  it("takes several pytree operands and JS-boolean predicates", () => {
    const x = f64([0.3, -0.7], [2]),
      y = f64([1.5], []);
    const tf = (o: { a: Array; b: Array }) => ({ a: np.mul(o.a, o.b), b: np.sin(o.b) });
    const ff = (o: { a: Array; b: Array }) => ({ a: np.exp(o.a), b: np.mul(o.b, o.b) });
    const L = (a: Array, b: Array) => {
      const r = lax.cond(np.less(b, 1), tf, ff, { a, b });
      return np.sum(r.a).add(r.b);
    };
    // b = 1.5 ≥ 1 → false branch: L = Σ exp(a) + b²; dL/da = exp(a), dL/db = 2b (hand-derived)
    const [ga, gb] = grad(L, { argnums: [0, 1] })(x, y) as [Array, Array];
    expectClose(ga, np.exp(x), exact, "dL/da");
    expectClose(gb, f64([3], []), exact, "dL/db");
    expectClose(
      lax.cond(
        true,
        (v: Array) => v.mul(2),
        (v: Array) => v,
        x,
      ),
      x.mul(2),
      exact,
      "JS true",
    );
  });
});

describe("lax.switch", () => {
  const branches = [(x: Array) => np.mul(x, 2), (x: Array) => np.sin(x), (x: Array, y: Array) => np.mul(x, y)];
  const pick = (i: number) => Math.min(Math.max(i, 0), 2);
  const byHand = [
    (x: number, _y: number) => [2 * x, 2],
    (x: number) => [Math.sin(x), Math.cos(x)],
    (x: number, y: number) => [x * y, y],
  ];

  it("clamps the index, takes variadic operands, batches a per-example index and differentiates", () => {
    const idx = [-1, 0, 1, 2, 5];
    const xs = f64([0.1, 0.2, 0.3, 0.4, 0.5], [5]),
      y = f64([1.5], []);
    const f = (i: Array, x: Array) => lax.switch(i, branches, x, y);
    const want = idx.map((i, k) => byHand[pick(i)]!(0.1 * (k + 1), 1.5));
    const iv = np.array(idx, { dtype: "int32" });
    expectClose(
      vmap(f)(iv, xs),
      f64(
        want.map((w) => w[0]!),
        [5],
      ),
      exact,
      "vmap(switch) values",
    );
    expectClose(
      grad((x: Array) => np.sum(vmap(f)(iv, x)))(xs),
      f64(
        want.map((w) => w[1]!),
        [5],
      ),
      exact,
      "grad(vmap(switch))",
    );
    expectClose(f(np.array(7, { dtype: "int32" }), f64([3], [])), f64([4.5], []), exact, "unbatched index above range");
    expectClose(lax.switch(1, branches, f64([0.5], []), y), f64([Math.sin(0.5)], []), exact, "JS number index");
    expect(() => lax.switch(f64([1], []), branches, xs, y)).toThrow(
      /lax\.switch: the index must be an int32 scalar, got f64\[\]/,
    );
  });
});

describe("control flow nests inside control flow", () => {
  it("cond inside scan under vmap, scan inside cond, scan inside scan: values and grads equal loops / FD", () => {
    const step = (c: Array, x: Array) =>
      lax.cond(
        np.greater(c, 0.5),
        (u: Array) => np.mul(u, 0.5),
        (u: Array) => np.add(u, x),
        c,
      );
    const stepRef = (c: Array, x: Array) => (c.item() > 0.5 ? np.mul(c, 0.5) : np.add(c, x));
    const xs = f64([0.3, 0.15, 0.3], [3]); // no carry lands near the 0.5 switch (FD would straddle it)
    const roll = (c0: Array) => lax.scan((c: Array, x: Array) => [step(c, x), c], c0, xs)[0];
    const rollRef = (c0: Array) => {
      let c = c0;
      for (let t = 0; t < 3; t++) c = stepRef(c, np.take(xs, t));
      return c;
    };
    const c0s = f64([0.1, 0.9, 0.45], [3]);
    expectClose(
      vmap(roll)(c0s),
      stackAt(
        range(3).map((i) => rollRef(sliceAt(c0s, 0, i))),
        0,
      ),
      exact,
      "vmap(scan(cond))",
    );
    expectClose(
      grad((c: Array) => np.sum(vmap(roll)(c)))(c0s),
      stackAt(
        range(3).map((i) => fdDirectional(rollRef, sliceAt(c0s, 0, i), f64([1], []))),
        0,
      ),
      fdTol,
      "grad(vmap(scan(cond)))",
    );
    // scan inside a cond branch
    const inner = (u: Array) => lax.scan((c: Array, _: null) => [np.sin(np.mul(c, 1.3)), c], u, null, { length: 3 })[0];
    const innerRef = (u: Array) => {
      let c = u;
      for (let t = 0; t < 3; t++) c = np.sin(np.mul(c, 1.3));
      return c;
    };
    const g = (x: Array) => np.sum(lax.cond(np.greater(np.sum(x), 0), inner, np.square, x));
    const gRef = (x: Array) => np.sum(np.sum(x).item() > 0 ? innerRef(x) : np.square(x));
    const x = f64([0.3, 0.4], [2]),
      v = f64([1, -0.5], [2]);
    expectClose(dotAll(grad(g)(x), v), fdDirectional(gRef, x, v), fdTol, "grad(cond(scan))");
    // scan inside scan, checkpointed outer, per-example gradients
    const nested = (x: Array) =>
      np.sum(
        lax.scan(
          (c: Array, _: null) => [
            lax.scan((d: Array, __: null) => [np.tanh(np.add(np.mul(d, c), 0.2)), null], c, null, { length: 2 })[0],
            null,
          ],
          x,
          null,
          { length: 5, checkpoint: true },
        )[0],
      );
    const nestedRef = (x: Array) => {
      let c = x;
      for (let t = 0; t < 5; t++) {
        let d = c;
        for (let k = 0; k < 2; k++) d = np.tanh(np.add(np.mul(d, c), 0.2));
        c = d;
      }
      return np.sum(c);
    };
    const xs2 = f64([0.3, 0.8, -0.6, 1.2], [2, 2]);
    expectClose(
      vmap(grad(nested))(xs2),
      stackAt(
        range(2).map((i) => grad(nestedRef)(sliceAt(xs2, 0, i))),
        0,
      ),
      exact,
      "vmap(grad(scan(scan)))",
    );
    expectClose(
      dotAll(grad(nested)(sliceAt(xs2, 0, 1)), v),
      fdDirectional(nestedRef, sliceAt(xs2, 0, 1), v),
      fdTol,
      "grad(scan(scan)) vs FD",
    );
  });

  it("grad in a closed-over parameter only (constant initial carry and xs), with an int32 counter in the carry", () => {
    const xs = f64([0.1, 0.2, 0.3], [3, 1]);
    const body =
      (th: Array) =>
      ([i, c]: [Array, Array], x: Array): [[Array, Array], Array] => [
        [i.add(1), np.add(np.sin(np.mul(c, th)), np.mul(i.astype("float64"), x))],
        c,
      ];
    const L = (th: Array) => {
      const [[i, c], ys] = lax.scan(
        body(th),
        [np.array(0, { dtype: "int32" }), np.zeros([1], { dtype: "float64" })],
        xs,
      );
      return np.sum(c).add(np.sum(ys)).add(i.astype("float64"));
    };
    const Lref = (th: Array) => {
      let st: [Array, Array] = [np.array(0, { dtype: "int32" }), np.zeros([1], { dtype: "float64" })];
      let acc = np.zeros([], { dtype: "float64" });
      for (let t = 0; t < 3; t++) {
        const [s2, y] = body(th)(st, sliceAt(xs, 0, t));
        acc = np.add(acc, np.sum(y));
        st = s2;
      }
      return np.sum(st[1]).add(acc).add(st[0].astype("float64"));
    };
    const th = f64([1.3], []);
    expectClose(L(th), Lref(th), exact, "value");
    expectClose(grad(L)(th), grad(Lref)(th), exact, "grad vs unrolled");
    expectClose(grad(L)(th), fdDirectional(Lref, th, f64([1], [])), fdTol, "grad vs FD");
  });
});

describe("lax.foriLoop", () => {
  it("with static bounds is reverse-differentiable: grad equals the unrolled loop and FD", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: -2, max: 3 }), fc.integer({ min: 0, max: 7 }), (seed, lo, n) => {
        const rng = makeRng(seed);
        const x0 = randomArray(rng.int(1e9), [3]),
          a = f64([rng.uniform(0.5, 1.5)], []);
        const body = (i: Array, c: [Array, Array]): [Array, Array] => {
          const fi = i.astype("float64");
          return [
            np.add(np.mul(0.8, c[0]), np.sin(np.add(np.mul(a, c[1]), fi.mul(0.1)))),
            np.tanh(np.add(c[1], np.mul(c[0], fi))),
          ];
        };
        const L = (x: Array) => {
          const [u, v] = lax.foriLoop(lo, lo + n, body, [x, x.mul(0.5)]);
          return np.sum(u.mul(v)).add(np.sum(u));
        };
        const Lref = (x: Array) => {
          let c: [Array, Array] = [x, x.mul(0.5)];
          for (let i = lo; i < lo + n; i++) c = body(np.array(i, { dtype: "int32" }), c);
          return np.sum(c[0].mul(c[1])).add(np.sum(c[0]));
        };
        expectClose(L(x0), Lref(x0), exact, "value");
        expectClose(grad(L)(x0), grad(Lref)(x0), exact, "grad vs unrolled");
        const v = randomArray(rng.int(1e9), [3]);
        expectClose(dotAll(grad(L)(x0), v), fdDirectional(Lref, x0, v), fdTol, "<grad, v> vs FD");
      }),
      { numRuns: RUNS },
    );
  });

  it("with traced bounds runs as a whileLoop: forward and jvp work, reverse mode points to scan", () => {
    const x0 = f64([0.4, -0.2], [2]);
    const f = (x: Array, n: Array) => lax.foriLoop(0, n, (_i: Array, c: Array) => np.add(np.mul(0.9, c), np.sin(c)), x);
    const n = np.array(5, { dtype: "int32" });
    let ref = x0;
    for (let i = 0; i < 5; i++) ref = np.add(np.mul(0.9, ref), np.sin(ref));
    expectClose(f(x0, n), ref, exact, "value");
    const v = f64([1, 0.5], [2]);
    expectClose(
      jvp((x: Array) => f(x, n), [x0], [v])[1] as Array,
      fdDirectional((x) => f(x, n), x0, v),
      fdTol,
      "jvp vs FD",
    );
    expect(() => grad((x: Array) => np.sum(f(x, n)))(x0)).toThrow(
      /whileLoop is not reverse-differentiable; use lax\.scan/,
    );
  });
});

describe("lax.whileLoop", () => {
  /** Halve until small: the iteration count depends on the data. */
  const shrink = (x: Array) =>
    lax.whileLoop(
      (c: Array) => np.greater(np.sum(np.square(c)), 0.01),
      (c: Array) => np.add(np.mul(0.5, c), np.mul(0.05, np.sin(c))),
      x,
    );
  const shrinkRef = (x: Array) => {
    let c = x;
    while (np.sum(np.square(c)).item() > 0.01) c = np.add(np.mul(0.5, c), np.mul(0.05, np.sin(c)));
    return c;
  };

  it("forward and jvp equal a JS while loop and finite differences", () => {
    fc.assert(
      fc.property(fc.nat(), (seed) => {
        const rng = makeRng(seed);
        const x = randomArray(rng.int(1e9), [3], -3, 3),
          v = randomArray(rng.int(1e9), [3]);
        expectClose(shrink(x), shrinkRef(x), exact, "value");
        const [out, tout] = jvp(shrink, [x], [v]) as [Array, Array];
        expectClose(out, shrinkRef(x), exact, "jvp primal");
        expectClose(tout, jvp(shrinkRef, [x], [v])[1] as Array, exact, "jvp vs jvp of the JS loop");
        expectClose(tout, fdDirectional(shrinkRef, x, v), fdTol, "jvp vs FD");
        // carried counter + closed-over parameter (jvp with respect to the parameter)
        const k = (a: Array) =>
          lax.whileLoop(
            ([i]: [Array, Array]) => np.less(i, 4),
            ([i, c]: [Array, Array]) => [i.add(1), np.tanh(np.mul(a, c))] as [Array, Array],
            [np.array(0, { dtype: "int32" }), x] as [Array, Array],
          )[1];
        const a0 = f64([0.9], []),
          da = f64([1], []);
        expectClose(jvp(k, [a0], [da])[1] as Array, fdDirectional(k, a0, da), fdTol, "jvp wrt a closed-over parameter");
      }),
      { numRuns: 15 },
    );
  });

  it("under vmap, examples that need different iteration counts each stop at the right time", () => {
    const xs = f64([0.05, 0.05, 0, 2, -1, 0.5, 3, 3, 3], [3, 3]);
    expectClose(
      vmap(shrink)(xs),
      stackAt(
        range(3).map((i) => shrinkRef(sliceAt(xs, 0, i))),
        0,
      ),
      exact,
      "vmap(while)",
    );
    const vs = f64([1, 0, 0, 0, 1, 0, 0, 0, 1], [3, 3]);
    const [, t] = jvp(vmap(shrink), [xs], [vs]) as [Array, Array];
    expectClose(
      t,
      stackAt(
        range(3).map((i) => jvp(shrinkRef, [sliceAt(xs, 0, i)], [sliceAt(vs, 0, i)])[1] as Array),
        0,
      ),
      exact,
      "jvp(vmap(while))",
    );
  });

  it("reverse mode throws an error that points to lax.scan", () => {
    const x = f64([1, 2], [2]);
    const msg =
      "lax.whileLoop is not reverse-differentiable; use lax.scan with a fixed length, " +
      "or lax.foriLoop with static bounds";
    expect(() => grad((v: Array) => np.sum(shrink(v)))(x)).toThrow(msg);
    expect(() => vjp(shrink, x)[1](x)).toThrow(msg);
    expect(() => vmap(grad((v: Array) => np.sum(shrink(v))))(np.stack([x, x]))).toThrow(msg);
  });
});
