/**
 * What a scan's reverse mode stores per step. Storing every residual of a fused elementwise body
 * (an FEM substep emits ~60 per-tet arrays) costs far more memory traffic than recomputing them
 * from the step's carry inside the backward step, where they fuse into the same kernels. So a
 * body whose primal is cheap to recompute (every equation fusible: elementwise, gathers,
 * scatter-adds, small per-element contractions; no loops, conditionals, matrix products or user
 * rules) stores only its inputs; any other body stores its residuals as usual.
 */
import type { IR } from "../core/ir.js";
import { UNROLL_MAX } from "../core/compile/plan.js";

export type ScanResiduals = "auto" | "store" | "recompute";
let policy: ScanResiduals = "auto";
/** Override the choice (benchmarks and tests compare the two); returns the previous setting. */
export function setScanResiduals(p: ScanResiduals): ScanResiduals {
  const prev = policy;
  policy = p;
  return prev;
}

const ROUTINES_CHEAP_TO_REPEAT = new Set(["scatter_add"]);
const cheapMemo = new WeakMap<IR, boolean>();
/** Every equation (through nested jit calls) fuses into kernels and none is a real contraction. */
export function cheapToRecompute(ir: IR): boolean {
  let c = cheapMemo.get(ir);
  if (c === undefined) {
    c = ir.eqns.every((e) => {
      const name = e.prim.name;
      if (name === "jit_call") return cheapToRecompute((e.params as { ir: IR }).ir);
      if (name === "dot_general" || name === "conv2d") {
        const [lc] = (e.params as { contract?: readonly [readonly number[], readonly number[]] }).contract ?? [[]];
        const k = lc.reduce((n, d) => n * e.inputs[0]!.aval.shape[d]!, 1);
        return name === "dot_general" && k <= UNROLL_MAX;
      }
      return e.prim.lower !== undefined || ROUTINES_CHEAP_TO_REPEAT.has(name);
    });
    cheapMemo.set(ir, c);
  }
  return c;
}

/** Whether reverse mode through a scan of `body` recomputes its residuals from the step inputs. */
/**
 * Bodies whose intermediates add up to fewer scalars than this store them ("auto"): recomputing pays
 * off for the FEM step's per-tet arrays (1k tets: ~130k scalars a step), not for a rigid body's few
 * dozen, whose float32-rounded stored residuals RISP's committed quick-run results were made with
 * (recomputed in float64, the quadrotor's ours-exact error moved from 0.016 to 0.021 over a 0.02 bar).
 */
export const REMAT_MIN_SCALARS = 4096;

const sizeMemo = new WeakMap<IR, number>();
/** Scalars of every equation's outputs in a body (through nested jit calls): what storing residuals would keep. */
function intermediateScalars(ir: IR): number {
  let n = sizeMemo.get(ir);
  if (n === undefined) {
    n = 0;
    for (const e of ir.eqns) {
      n +=
        e.prim.name === "jit_call"
          ? intermediateScalars((e.params as { ir: IR }).ir)
          : e.outs.reduce((s, v) => s + v.aval.size, 0);
    }
    sizeMemo.set(ir, n);
  }
  return n;
}

export const recomputeResiduals = (body: IR): boolean =>
  policy === "auto" ? cheapToRecompute(body) && intermediateScalars(body) >= REMAT_MIN_SCALARS : policy === "recompute";
