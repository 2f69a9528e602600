/**
 * The CPU jit's fusion plan (src/core/compile/plan.ts): kernels whose outputs broadcast per-row
 * work over small trailing dims loop over the rows and unroll the trailing elements, so the row's
 * work runs once per row, not once per output element (a cloth triangle's force read by its 3×3
 * corner components was recomputed 9× in the forward-mode Jacobian of a rollout); outputs whose
 * elements do not line up on a common loop are not fused together at all. A scatter_add always
 * runs in a kernel, even when its updates are an input or shared (a routine call per scan step
 * otherwise). Kernels too big for V8 to optimise quickly are split (a value halfway through
 * their work becomes a buffer), and horizontal fusion stops growing a kernel at that size: a
 * 13-joint hand's gradient compiled to kernels of up to 1.4 MB of source, and its risp-tasks run
 * peaked at 13 GB while V8 optimised them.
 */
import { describe, expect, it } from "vitest";
import { ShapedArray } from "../src/core/aval.js";
import { compileCpu } from "../src/core/compile/cpu-program.js";
import { KernelGroups } from "../src/core/compile/plan.js";
import { Var } from "../src/core/ir.js";
import { grad, jacfwd, makeIR, np, jit, type Array } from "../src/index.js";

/** An elementwise value with real work per element (one Math.sin each in a kernel's source). */
const costly = (x: Array): Array => np.sin(np.mul(np.exp(np.cos(x)), np.tanh(x)));

/** Two outputs [R, C, 3, 3] that both broadcast the same costly per-(row, column) value. */
function twoBroadcasts(x: Array, ramp: Array): [Array, Array] {
  const wide = np.broadcastTo(np.reshape(costly(x), [...x.shape, 1, 1]), [...x.shape, 3, 3]);
  return [np.mul(wide, ramp), np.add(wide, ramp)];
}

const ramp = np.reshape(np.arange(0, 9, 1, { dtype: "float32" }), [3, 3]);

/** [16, N, 3] and [N, 3] reading the same costly [N, 3] value: no loop lines them up. */
function batchedAndPlain(x: Array, w: Array): [Array, Array] {
  const c = costly(x);
  return [np.mul(c, w), np.add(c, 1)];
}

/**
 * Both outputs of the jitted f agree with op by op (the kernel keeps intermediates in float64, op by op rounds each to
 * float32).
 */
async function expectMatchesEager(f: (a: Array, b: Array) => [Array, Array], a: Array, b: Array): Promise<void> {
  const compiled = jit(f)(a, b),
    eager = f(a, b);
  for (const k of [0, 1]) {
    const got = await compiled[k]!.data(),
      want = await eager[k]!.data();
    got.forEach((g, i) => expect(g).toBeCloseTo(want[i]!, 5));
  }
}

/** Loop extents of the `for` statements of a generated kernel's source. */
const loopExtents = (src: string): number[] =>
  [...src.matchAll(/for \(let \w+ = 0; \w+ < (\d+);/g)].map((m) => Number(m[1]));

describe("fusion plan", () => {
  it("a multi-output kernel loops over the shared leading dims and unrolls the trailing ones", () => {
    const x = np.reshape(
      np.array(
        globalThis.Array.from({ length: 8 * 5 }, (_, i) => Math.sin(i) * 2),
        { dtype: "float32" },
      ),
      [8, 5],
    );
    const { ir } = makeIR(twoBroadcasts)(x, ramp);
    const kernels = compileCpu(ir)
      .kernelSources()
      .filter((s) => s.includes("Math.sin("));
    expect(kernels).toHaveLength(1);
    // One iteration per (row, column): the costly value is computed 40 times, not 40·9.
    expect(loopExtents(kernels[0]!)).toEqual([8, 5]);
    expect(kernels[0]!.match(/Math\.sin\(/g)).toHaveLength(1);
  });

  it("roots whose elements share no common loop get their own kernels, and the shared value a buffer", async () => {
    const x = np.reshape(
      np.array(
        globalThis.Array.from({ length: 30 * 3 }, (_, i) => Math.cos(i)),
        { dtype: "float32" },
      ),
      [30, 3],
    );
    const w = np.reshape(np.arange(0, 16, 1, { dtype: "float32" }), [16, 1, 1]);
    const { ir } = makeIR(batchedAndPlain)(x, w);
    const kernels = compileCpu(ir)
      .kernelSources()
      .filter((s) => s.includes("Math.sin("));
    // Computed once per element of x (a loop over its 30 rows, 3 per row), not once per element of each output.
    expect(kernels).toHaveLength(1);
    expect(loopExtents(kernels[0]!)).toEqual([30]);
    expect(kernels[0]!.match(/Math\.sin\(/g)).toHaveLength(3);
    await expectMatchesEager(batchedAndPlain, x, w);
  });

  it("computes the same values as the op-by-op program (to float32 rounding)", async () => {
    const x = np.reshape(
      np.array(
        globalThis.Array.from({ length: 6 * 7 }, (_, i) => Math.cos(3 * i)),
        { dtype: "float32" },
      ),
      [6, 7],
    );
    await expectMatchesEager(twoBroadcasts, x, ramp);
  });

  it("a scatter_add whose updates are an input or shared runs in a kernel, not as a routine", async () => {
    const idx = np.array([0, 2, 0, 1, 2], { dtype: "int32" });
    // u is a program input (first output) and, squared, read twice (second output).
    const scatters = (u: Array, t: Array): [Array, Array] => {
      const sq = np.square(u);
      return [np.scatterAdd(t, idx, u), np.add(np.scatterAdd(t, idx, sq), np.sum(sq, 0))];
    };
    const u = np.reshape(np.arange(0, 10, 1, { dtype: "float32" }), [5, 2]),
      t = np.ones([3, 2], { dtype: "float32" });
    const steps = compileCpu(makeIR(scatters)(u, t).ir).spec.steps;
    expect(steps.filter((s) => s.kind === "routine")).toEqual([]);
    expect(steps.flatMap((s) => (s.kind === "kernel" ? s.accumulators : []))).toHaveLength(2);
    await expectMatchesEager(scatters, u, t);
  });

  it("an oversized kernel is split: a chain Jacobian's gradient compiles to small kernels, same values", async () => {
    // A kinematic chain R_k = R_{k−1}·rot_z(θ_k), 10 links deep; reverse mode through its forward-mode Jacobian (as the
    // articulated model's dynamics).
    const chain = (theta: Array): Array => {
      let R = np.eye(3, undefined, { dtype: theta.dtype });
      for (let k = 0; k < 10; k++) {
        const c = np.cos(np.index(theta, k)),
          s = np.sin(np.index(theta, k)),
          zero = np.zerosLike(c),
          one = np.onesLike(c);
        R = np.matmul(
          R,
          np.stack([np.stack([c, np.neg(s), zero]), np.stack([s, c, zero]), np.stack([zero, zero, one])]),
        );
      }
      return R;
    };
    const f = (theta: Array, w: Array): [Array, Array] => {
      const g = grad((x: Array) => np.sum(np.mul(w, jacfwd(chain)(x) as Array)))(theta);
      return [g, np.sum(g)];
    };
    const theta = np.array(
      globalThis.Array.from({ length: 10 }, (_, i) => 0.3 * i - 1),
      { dtype: "float32" },
    );
    const w = np.reshape(np.linspace(0.5, 1.5, 90, { dtype: "float32" }), [3, 3, 10]);
    const kernels = compileCpu(jit(f).lower(theta, w).ir).kernelSources();
    // Measured: 175 KB at most (splits stop under 8,000 nodes); 586 KB in one kernel without them.
    expect(Math.max(...kernels.map((k) => k.length))).toBeLessThan(200_000);
    // Same gradient as op by op, to float32 rounding of a 10-deep product (relative to its largest entry).
    const [got, want] = [await jit(f)(theta, w)[0].data(), await f(theta, w)[0].data()];
    const scale = Math.max(...globalThis.Array.from(want, Math.abs));
    got.forEach((g, i) => expect(Math.abs(g - want[i]!)).toBeLessThan(1e-4 * scale));
  });

  it("horizontal fusion does not merge independent kernels beyond a few thousand nodes", () => {
    // 400 independent scalar formulas of ~20 ops each: one kernel would hold ~8000 nodes.
    const many = (x: Array, y: Array): [Array, Array] => {
      const outs = globalThis.Array.from({ length: 400 }, (_, k) => {
        let v = np.index(x, k);
        for (let j = 0; j < 10; j++) v = np.add(np.mul(v, np.index(y, (k + j) % 400)), np.sin(v));
        return v;
      });
      return [np.stack(outs), np.sum(np.stack(outs))];
    };
    const x = np.array(
      globalThis.Array.from({ length: 400 }, (_, i) => Math.sin(i)),
      { dtype: "float32" },
    );
    const kernels = compileCpu(makeIR(many)(x, x).ir).kernelSources();
    expect(Math.max(...kernels.map((k) => k.split("\n").length))).toBeLessThan(6000);
  });

  /** Inputs of the long-chain programs: x [97] feeds the shared costly values, z [89] the chain of reductions. */
  const chainInputs = () => ({
    x: np.array(
      globalThis.Array.from({ length: 97 }, (_, i) => Math.cos(i)),
      { dtype: "float32" },
    ),
    z: np.array(
      globalThis.Array.from({ length: 89 }, (_, i) => 0.01 * Math.sin(i)),
      { dtype: "float32" },
    ),
  });

  it("shares a value between two kernels when one of them depends on a chain of more than 64 kernels", async () => {
    // out1 reads the end of a chain of 71 reductions (each its own kernel), out2 does not: one kernel computes the
    // shared costly value for both, no cycle. (The search that gave up after 64 groups made it a buffer.)
    const chained = (x: Array, z: Array): [Array, Array] => {
      const v = costly(x);
      let s = np.sum(np.sin(z));
      for (let k = 0; k < 70; k++) s = np.sum(np.sin(np.mul(z, s)));
      return [np.mul(v, s), np.add(v, 1)];
    };
    const { x, z } = chainInputs();
    const { spec } = compileCpu(makeIR(chained)(x, z).ir);
    // x and the two outputs, no buffer for the shared value.
    expect(spec.buffers.filter((b) => b.size === 97)).toHaveLength(3);
    await expectMatchesEager(chained, x, z);
  });

  it("keeps a shared value a buffer when sharing it would close a cycle through 70 other kernels", async () => {
    // a reads xr, which shares w with y; y reads the end of a chain of 70 reductions that starts at b; a and b
    // share v. One kernel for a and b would run both before and after the xr–y kernel: v is a buffer.
    const cyclic = (x: Array, z: Array): Array[] => {
      const v = costly(x),
        w = costly(np.mul(x, 0.5));
      const b = np.add(v, 1),
        xr = np.add(w, 2);
      let s = np.sum(np.sin(np.mul(b, 0.01)));
      for (let k = 0; k < 69; k++) s = np.sum(np.sin(np.mul(z, s)));
      return [xr, np.mul(w, s), np.mul(v, xr), b];
    };
    const { x, z } = chainInputs();
    const { spec } = compileCpu(makeIR(cyclic)(x, z).ir);
    // x, the four outputs, v, and the first sum's operand (a sine: a parallel kernel of its own on the CPU).
    expect(spec.buffers.filter((b) => b.size === 97)).toHaveLength(7);
    const got = jit(cyclic)(x, z),
      want = cyclic(x, z);
    for (const [k, g] of got.entries()) {
      const w = await want[k]!.data();
      (await g.data()).forEach((e, i) => expect(e).toBeCloseTo(w[i]!, 5));
    }
  });

  it("KernelGroups refuses exactly the unions that close a cycle and keeps its groups in dependency order", () => {
    // Random DAGs of roots (edges from later to earlier roots) and random unions, against a search of every group.
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    const united: number[] = [],
      refused: number[] = [];
    for (let trial = 0; trial < 100; trial++) {
      const n = 10 + rand(60);
      const shuffled = globalThis.Array.from({ length: n }, () => new Var(new ShapedArray([1], "float32")));
      const deps = new Map(shuffled.map((r) => [r, [] as Var[]]));
      shuffled.forEach((r, i) => {
        for (let j = 0; j < i; j++) if (rand(100) < 5) deps.get(r)!.push(shuffled[j]!);
      });
      // The groups' roots in another order than the dependencies'.
      const roots = [...shuffled].sort(() => rand(3) - 1);
      const kg = new KernelGroups(roots, (r) => deps.get(r)!);
      /** The roots reached from `from` along dependencies, also through the groups' other roots if `grouped`. */
      const closure = (from: readonly Var[], grouped = true): Set<Var> => {
        const seen = new Set<Var>(),
          stack = grouped ? from.flatMap((r) => kg.members(r)) : [...from];
        while (stack.length)
          for (const d of deps.get(stack.pop()!)!)
            for (const m of grouped ? kg.members(d) : [d])
              if (!seen.has(m)) {
                seen.add(m);
                stack.push(m);
              }
        return seen;
      };
      for (let u = 0; u < 100; u++) {
        const union = [...new Set([roots[rand(n)]!, roots[rand(n)]!, roots[rand(n)]!].flatMap((r) => kg.members(r)))];
        // As in the planner, no root of a union depends on another (a group's roots never do).
        const reach = new Map(union.map((r) => [r, closure([r], false)]));
        if (union.some((a) => union.some((b) => reach.get(a)!.has(b)))) continue;
        // It closes a cycle iff the union's groups, taken together, reach one of their own roots.
        const cycle = [...closure(union)].some((r) => union.includes(r));
        expect(kg.unite(union)).toBe(!cycle);
        (cycle ? refused : united).push(union.length);
        if (!cycle) expect(kg.members(union[0]!)).toHaveLength(union.length);
      }
      // The kernels still run in some order: no group reaches itself.
      for (const g of kg.groups()) expect(closure(g).has(g[0]!)).toBe(false);
    }
    // Both kinds, many times (measured: 1,837 unions made and 813 refused).
    expect(Math.min(united.length, refused.length)).toBeGreaterThan(100);
  });
});
