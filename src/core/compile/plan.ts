/**
 * Fusion planning: decide which IR values become buffers and group the rest into kernels.
 *
 * Every value starts lazy (a View inlined into its consumers). Buffers are forced for program
 * inputs/outputs, for the operands and results of routines (primitives without `lower`, big
 * contractions, cumsum, scatter_add, loops), and for the results of big reductions. A lazy
 * value with real work that several kernels would inline either makes those kernels one
 * multi-output kernel (same loop extent, no dependency between them) or becomes a buffer;
 * when a big reduction is one of the sharers, its input becomes the buffer instead (so the
 * per-element work joins the other per-element kernel and the reduction only loads). Kernels
 * too big for V8 to optimise quickly are split, and horizontal fusion stops short of that size.
 */
import type { Array } from "../array.js";
import type { DType } from "../dtype.js";
import type { IR, Eqn, Var } from "../ir.js";
import { range, sizeOf } from "../shape.js";
import { KGraph, type KNode } from "../kernel/expr.js";
import { clampIndex, loadView, ravel, unravel, type View } from "../kernel/view.js";
import { fuseSiblingReductions } from "./fuse-reductions.js";
import { topoOrder } from "./scopes.js";
import { LANE_FUNCTIONS } from "./wasm-math.js";

export const UNROLL_MAX = 16;
export const INLINE_REDUCE_MAX = 64;
/**
 * Kernels beyond SPLIT_NODES_MAX expression nodes are split (a value inside becomes a buffer),
 * and horizontal fusion stops adding kernels to one at KERNEL_NODES_MAX: V8's time and memory to
 * optimise a function grow faster than its size (a 13-joint hand's gradient compiled to kernels of
 * up to 45,000 nodes, 1.4 MB of source: optimising them took 30–40 s per call and 7 GB).
 */
const KERNEL_NODES_MAX = 4000,
  SPLIT_NODES_MAX = 8000,
  MAX_SPLIT_ROUNDS = 8;
interface Oversize {
  readonly roots: readonly Var[];
  readonly nodes: number;
}

export interface BufferSpec {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly size: number;
}
export interface KernelOutput {
  readonly buf: number;
  readonly inner: number;
  readonly nodes: readonly KNode[];
  /** Scatter-accumulate mode (CPU): node u is added at flat index dest[u] of `buf` instead of stored. */
  readonly dest?: readonly KNode[];
}
/** A float64 accumulator `acc` initialised from `target` before the kernel and rounded into `out` after it. */
export interface Accumulator {
  readonly acc: number;
  readonly target: number;
  readonly out: number;
}
export interface KernelStep {
  readonly kind: "kernel";
  /** Nested loop extents (outermost first) and their variables. */
  readonly loop: readonly number[];
  readonly loopVars: readonly KNode[];
  readonly outputs: readonly KernelOutput[];
  readonly accumulators: readonly Accumulator[];
}
export interface RoutineStep {
  readonly kind: "routine";
  readonly eqn: Eqn;
  readonly inputs: readonly number[];
  readonly outputs: readonly number[];
}
export type Step = KernelStep | RoutineStep;
export interface ProgramSpec {
  readonly buffers: readonly BufferSpec[];
  readonly inputs: readonly number[];
  readonly consts: readonly (readonly [number, Array])[];
  readonly steps: readonly Step[];
  readonly outputs: readonly number[];
  readonly graph: KGraph;
}

const REDUCERS = new Set(["reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin"]);
/** Inner reduction extent of an equation (1 if none). */
function reduceExtent(e: Eqn): number {
  const n = e.prim.name;
  if (REDUCERS.has(n)) {
    const p = e.params as { axes?: readonly number[]; axis?: number };
    const axes = p.axes ?? [p.axis!];
    return sizeOf(axes.map((a) => e.inputs[0]!.aval.shape[a]!));
  }
  if (n === "dot_general")
    return sizeOf(
      (e.params as { contract: readonly [readonly number[]] }).contract[0].map((d) => e.inputs[0]!.aval.shape[d]!),
    );
  if (n === "conv2d") {
    const w = e.inputs[1]!.aval.shape;
    return w[1]! * w[2]! * w[3]!;
  }
  return 1;
}
/**
 * Contractions that are matrix products (long K, or big outputs with K ≥ 8) run as the CPU GEMM
 * routine; short ones (3×3 per-element matrices) are inlined and fused. Big convolutions too,
 * where the plan asks for it (`convGemm`).
 */
const isBigContraction = (e: Eqn): boolean => {
  const k = reduceExtent(e);
  return k > INLINE_REDUCE_MAX || (k >= 8 && e.outs[0]!.aval.size * k >= 2 ** 18);
};
/** How many times each element of input `v` is read to compute all of `e`'s outputs. */
function readsPerElement(e: Eqn, v: Var): number {
  const out = e.outs[0]!.aval.size;
  const k = e.prim.name === "dot_general" || e.prim.name === "conv2d" ? reduceExtent(e) : 1;
  return REDUCERS.has(e.prim.name) ? 1 : (out * k) / Math.max(1, v.aval.size);
}
const isRoutine = (e: Eqn, opts: PlanOptions): boolean =>
  !e.prim.lower ||
  ((e.prim.name === "dot_general" || (opts.convGemm === true && e.prim.name === "conv2d")) && isBigContraction(e));
const isBigReduce = (e: Eqn, opts: PlanOptions): boolean => !isRoutine(e, opts) && reduceExtent(e) > INLINE_REDUCE_MAX;
/** Pure index remaps: free to inline anywhere. */
const FREE = new Set([
  "broadcast_in_dim",
  "reshape",
  "transpose",
  "slice",
  "rev",
  "convert_element_type",
  "stop_gradient",
  "iota",
  "concatenate",
  "pad",
]);

export interface PlanOptions {
  /**
   * Fuse scatter_add into the kernel producing its updates, accumulating in program order
   * (CPU: sequential and deterministic). Off for devices that run iterations in parallel.
   */
  readonly fuseScatter?: boolean;
  /** Run sibling inner reductions as one loop (see kernel/fuse-reductions.ts); CPU code generation supports it. */
  readonly fuseReductions?: boolean;
  /**
   * Unroll the small trailing dims of big-reduction results into each iteration (default true,
   * CPU). Devices that reduce cooperatively (one workgroup per output) turn it off, so every
   * output element is its own parallel iteration.
   */
  readonly unrollBigReductions?: boolean;
  /** Big conv2d as a routine — the host's GEMM on its windows (backends/cpu/conv.ts) — not a fused kernel (CPU). */
  readonly convGemm?: boolean;
  /**
   * A big reduction's operand whose elements cost real work (a transcendental function, or many ops) becomes a
   * buffer, computed by a parallel kernel of its own, rather than inside the reduction's loop (CPU: the WebAssembly
   * kernels, in lanes and on threads, take no inner reductions; the reduction then only sums).
   */
  readonly bufferHeavyReduceOperands?: boolean;
}

/** Each value's producing equation, and how often it is read (a program output counts once). */
export function producersAndUses(ir: IR): { producer: Map<Var, Eqn>; uses: Map<Var, number> } {
  const producer = new Map<Var, Eqn>();
  for (const e of ir.eqns) for (const o of e.outs) producer.set(o, e);
  const uses = new Map<Var, number>();
  for (const e of ir.eqns) for (const v of e.inputs) uses.set(v, (uses.get(v) ?? 0) + 1);
  for (const v of ir.outs) uses.set(v, (uses.get(v) ?? 0) + 1);
  return { producer, uses };
}

/** Per element cost from which a big reduction's operand is worth a parallel kernel of its own. */
const HEAVY_OPERAND_COST = 16;
/**
 * Whether lazy value v costs real work per element: in its lazy cone a function the CPU kernels compute in their lanes
 * at the cost of tens of operations (LANE_FUNCTIONS), or many ops.
 */
function heavy(v: Var, producer: ReadonlyMap<Var, Eqn>, M: ReadonlySet<Var>, cost: (v: Var) => number): boolean {
  if (cost(v) >= HEAVY_OPERAND_COST) return true;
  const seen = new Set<Var>(),
    stack = [v];
  while (stack.length) {
    const e = producer.get(stack.pop()!)!;
    if (LANE_FUNCTIONS.has(e.prim.name)) return true;
    for (const i of e.inputs)
      if (!M.has(i) && producer.has(i) && !seen.has(i)) {
        seen.add(i);
        stack.push(i);
      }
  }
  return false;
}

/** A scatter_add's updates are computed by a kernel and read only by it: plan() fuses the two (with fuseScatter). */
export function scatterFusesWithUpdates(
  e: Eqn,
  producer: ReadonlyMap<Var, Eqn>,
  uses: ReadonlyMap<Var, number>,
  opts: PlanOptions,
): boolean {
  const u = e.inputs[2];
  if (e.prim.name !== "scatter_add" || !u) return false;
  const pe = producer.get(u);
  return pe !== undefined && !isRoutine(pe, opts) && uses.get(u) === 1 && u !== e.inputs[0] && u.aval.dtype !== "bool";
}

export function plan(ir: IR, constVals: ReadonlyMap<Var, Array>, opts: PlanOptions = {}): ProgramSpec {
  const forced = new Set<Var>();
  let previous: { spec: ProgramSpec; largest: number } | null = null;
  for (let round = 0; ; round++) {
    const { spec, oversize, buffers, producer } = planWith(ir, constVals, opts, forced);
    const largest = Math.max(0, ...oversize.map((o) => o.nodes));
    // A split that did not shrink the largest kernel only added buffers: keep the plan before it.
    if (previous && largest >= previous.largest) return previous.spec;
    const splits = oversize.map((o) => halfwayValue(ir, producer, o.roots, buffers)).filter((v) => v !== null);
    if (!splits.length || round === MAX_SPLIT_ROUNDS) return spec;
    splits.forEach((v) => forced.add(v));
    previous = { spec, largest };
  }
}

/**
 * A value about halfway through the lazy cone of an oversized kernel's roots (by elements
 * computed: half of the cone's work before it, half after), to become a buffer; null if none.
 */
function halfwayValue(
  ir: IR,
  producer: ReadonlyMap<Var, Eqn>,
  roots: readonly Var[],
  buffers: ReadonlySet<Var>,
): Var | null {
  const edge = new Set<Var>([...roots, ...ir.inVars]);
  const lazy = (v: Var) => producer.has(v) && !buffers.has(v) && !edge.has(v);
  const coneOf = (from: readonly Var[]): Set<Var> => {
    const seen = new Set<Var>(),
      stack = [...from];
    while (stack.length) {
      for (const i of producer.get(stack.pop()!)?.inputs ?? [])
        if (lazy(i) && !seen.has(i)) {
          seen.add(i);
          stack.push(i);
        }
    }
    return seen;
  };
  const weight = (vs: Iterable<Var>) => {
    let w = 0;
    for (const v of vs) w += v.aval.size;
    return w;
  };
  const cone = coneOf(roots),
    total = weight(cone);
  let best: Var | null = null,
    bestScore = 0;
  for (const v of cone) {
    if (FREE.has(producer.get(v)!.prim.name)) continue;
    const before = v.aval.size + weight(coneOf([v]));
    const score = Math.min(before, total - before);
    if (score > bestScore) {
      best = v;
      bestScore = score;
    }
  }
  return best;
}

/**
 * The plan with `forced` values as buffers, its kernels beyond SPLIT_NODES_MAX, its buffered values and each value's
 * producer.
 */
function planWith(
  ir: IR,
  constVals: ReadonlyMap<Var, Array>,
  opts: PlanOptions,
  forced: ReadonlySet<Var>,
): { spec: ProgramSpec; oversize: Oversize[]; buffers: ReadonlySet<Var>; producer: ReadonlyMap<Var, Eqn> } {
  const { producer, uses } = producersAndUses(ir);
  const fusedScatter = new Map<Var, Eqn>();
  if (opts.fuseScatter)
    for (const e of ir.eqns) if (scatterFusesWithUpdates(e, producer, uses, opts)) fusedScatter.set(e.inputs[2]!, e);
  const M = new Set<Var>([...ir.inVars, ...ir.outs, ...constVals.keys(), ...forced]);
  for (const e of ir.eqns) {
    if (isRoutine(e, opts)) {
      e.inputs.forEach((v) => M.add(v));
      e.outs.forEach((v) => M.add(v));
    } else if (isBigReduce(e, opts)) e.outs.forEach((v) => M.add(v));
  }
  // Cost of recomputing a lazy value per element (rough: real ops in its lazy cone).
  const costMemo = new Map<Var, number>();
  const cost = (v: Var): number => {
    if (M.has(v)) return 0;
    let c = costMemo.get(v);
    if (c !== undefined) return c;
    const e = producer.get(v)!;
    c = (FREE.has(e.prim.name) ? 0 : 1) * Math.max(1, reduceExtent(e)) + e.inputs.reduce((s, i) => s + cost(i), 0);
    c = Math.min(c, 1e6);
    costMemo.set(v, c);
    return c;
  };
  if (opts.bufferHeavyReduceOperands)
    for (const e of ir.eqns)
      if (REDUCERS.has(e.prim.name) && isBigReduce(e, opts))
        for (const v of e.inputs) if (!M.has(v) && heavy(v, producer, M, cost)) M.add(v);
  // Gathering from a costly lazy value re-evaluates it per gathered element.
  for (const e of ir.eqns) if (e.prim.name === "gather" && cost(e.inputs[0]!) > 0) M.add(e.inputs[0]!);
  // A costly lazy value that a consumer reads many times over (broadcast along a long axis, a
  // contraction) would be recomputed per read: beyond what unrolling and CSE absorb, make it a buffer.
  for (const e of ir.eqns) {
    if (isRoutine(e, opts) || e.prim.name === "gather") continue;
    e.inputs.forEach((v) => {
      if (M.has(v) || cost(v) < 3) return;
      if (readsPerElement(e, v) > UNROLL_MAX) M.add(v);
    });
  }

  let groups: Var[][] = [];
  for (let iter = 0; iter < 1000; iter++) {
    costMemo.clear();
    const roots = [...M].filter((v) => producer.has(v) && !isRoutine(producer.get(v)!, opts) && !constVals.has(v));
    const cones = new Map<Var, Set<Var>>(); // root → lazy vars it inlines
    const loadsOf = new Map<Var, Set<Var>>(); // root → buffers it reads
    for (const r of roots) {
      const cone = new Set<Var>(),
        loads = new Set<Var>();
      const visit = (e: Eqn) =>
        e.inputs.forEach((v) => {
          if (M.has(v)) {
            loads.add(v);
            return;
          }
          if (cone.has(v)) return;
          cone.add(v);
          visit(producer.get(v)!);
        });
      visit(producer.get(r)!);
      cones.set(r, cone);
      loadsOf.set(r, loads);
    }
    const inlinedBy = new Map<Var, Var[]>();
    for (const [r, cone] of cones) for (const v of cone) (inlinedBy.get(v) ?? inlinedBy.set(v, []).get(v)!).push(r);
    // Root dependencies: direct (the roots whose buffers a root's kernel reads, also through routines), and
    // transitive.
    const rootSet = new Set(roots);
    const directMemo = new Map<Var, readonly Var[]>();
    const directDeps = (r: Var): readonly Var[] => {
      let d = directMemo.get(r);
      if (d) return d;
      const found = new Set<Var>(),
        seen = new Set<Var>();
      const visitBuf = (b: Var) => {
        if (seen.has(b)) return;
        seen.add(b);
        if (rootSet.has(b)) found.add(b);
        else if (producer.has(b))
          producer.get(b)!.inputs.forEach((i) => {
            if (M.has(i)) visitBuf(i);
          });
      };
      loadsOf.get(r)!.forEach(visitBuf);
      // A fused scatter's kernel also reads its target (the accumulator's initial value) and its indices.
      const sc = fusedScatter.get(r);
      if (sc) for (const v of sc.inputs.slice(0, 2)) if (M.has(v)) visitBuf(v);
      directMemo.set(r, (d = [...found]));
      return d;
    };
    const depMemo = new Map<Var, Set<Var>>();
    const deps = (r: Var): Set<Var> => {
      let d = depMemo.get(r);
      if (d) return d;
      d = new Set();
      depMemo.set(r, d);
      for (const b of directDeps(r)) {
        d.add(b);
        deps(b).forEach((x) => d!.add(x));
      }
      return d;
    };
    // Kernels: groups of roots sharing real work.
    const kernels = new KernelGroups(roots, directDeps);
    const members = (x: Var) => kernels.members(x);
    let changed = false;
    for (const [v, rs] of inlinedBy) {
      if (rs.length < 2 || cost(v) < 2) continue;
      const union = [...new Set(rs.flatMap(members))];
      if (mergeable(union, deps) && kernels.unite(union)) continue;
      const bigs = rs.filter((r) => isBigReduce(producer.get(r)!, opts));
      const lazyIns = bigs.flatMap((r) => producer.get(r)!.inputs.filter((i) => !M.has(i)));
      if (lazyIns.length) lazyIns.forEach((i) => M.add(i));
      else M.add(v);
      changed = true;
      break;
    }
    if (!changed) {
      groups = kernels.groups();
      break;
    }
  }
  return { ...emitProgram(ir, constVals, M, producer, groups, fusedScatter, opts), buffers: M, producer };
}

/**
 * Roots grouped into kernels (union-find), with the groups kept in a topological order of their
 * dependencies (a group depends on another if one of its roots reads a buffer computed by one of
 * the other's, directly or through routines), so that whether a union would close a cycle is
 * decided exactly by searching only the groups placed between the union's own. Merging groups
 * into one kernel closes a cycle if a root of the union depends on another through a group
 * outside it: a → x and y → b, with x and y already sharing a kernel, would make the union's
 * kernel both before and after that one. Each such path runs downhill in the order, from a member
 * to a group below it; groups below the lowest member cannot lead back to a member, so the search
 * never leaves the span of the union's positions (Pearce and Kelly's dynamic topological order,
 * for the contraction of several nodes rather than the insertion of an edge). An unbounded search
 * of every group's dependencies took 70 s of the 76 s that planning the gradient of a rigid step
 * with an implicit contact solve (3,592 equations) cost.
 */
export class KernelGroups {
  private readonly parent = new Map<Var, Var>();
  private readonly memberList = new Map<Var, Var[]>();
  /** Each group's place in a topological order (keyed by the group's representative root). */
  private readonly pos = new Map<Var, number>();
  /** The roots that directly depend on each root. */
  private readonly users = new Map<Var, Var[]>();

  constructor(
    private readonly roots: readonly Var[],
    private readonly directDeps: (r: Var) => readonly Var[],
  ) {
    for (const r of roots) {
      this.parent.set(r, r);
      this.memberList.set(r, [r]);
      this.users.set(r, []);
    }
    for (const r of roots) for (const d of directDeps(r)) this.users.get(d)!.push(r);
    // Dependencies first (depth-first, post-order; a stack rather than recursion for long chains).
    let next = 0;
    for (const r0 of roots) {
      if (this.pos.has(r0)) continue;
      this.pos.set(r0, -1);
      const stack: [Var, number][] = [[r0, 0]];
      while (stack.length) {
        const top = stack[stack.length - 1]!;
        const ds = directDeps(top[0]);
        if (top[1] < ds.length) {
          const d = ds[top[1]++]!;
          if (!this.pos.has(d)) {
            this.pos.set(d, -1);
            stack.push([d, 0]);
          }
        } else {
          this.pos.set(top[0], next++);
          stack.pop();
        }
      }
    }
  }

  find(x: Var): Var {
    let p = this.parent.get(x)!;
    while (p !== x) {
      const g = this.parent.get(p)!;
      this.parent.set(x, g);
      x = p;
      p = g;
    }
    return x;
  }
  members(x: Var): readonly Var[] {
    return this.memberList.get(this.find(x))!;
  }
  /** The groups, each in the order of `roots`, ordered by their first root. */
  groups(): Var[][] {
    const byRep = new Map<Var, Var[]>();
    for (const r of this.roots) {
      const g = this.find(r);
      (byRep.get(g) ?? byRep.set(g, []).get(g)!).push(r);
    }
    return [...byRep.values()];
  }

  /**
   * Merge the groups of `union` into one kernel, unless that closes a cycle (then false and
   * nothing changes). The roots of the union must not depend on each other (`mergeable`).
   */
  unite(union: readonly Var[]): boolean {
    const reps = [...new Set(union.map((r) => this.find(r)))];
    if (reps.length < 2) return true;
    const inUnion = new Set(reps);
    const at = (g: Var) => this.pos.get(g)!;
    let lo = Infinity,
      hi = -Infinity;
    for (const g of reps) {
      lo = Math.min(lo, at(g));
      hi = Math.max(hi, at(g));
    }
    // The groups the union depends on, placed above its lowest member (all others are below every member); a path
    // through them back to a member is a cycle.
    const below = this.reach(reps, inUnion, this.directDeps, (p) => p > lo);
    if (!below) return false;
    // The groups depending on the union, below its highest member (no cycle: none is in `below`).
    const above = this.reach(
      reps,
      inUnion,
      (r) => this.users.get(r)!,
      (p) => p < hi,
    )!;
    // Reorder the affected groups within their own places: `below`, then the union, then `above`. Each of `below`
    // moves down or stays, each of `above` up or stays, so the groups they depend on, or that depend on them, and
    // are not moved stay on the right side (Pearce and Kelly's argument).
    const byPos = (a: Var, b: Var) => at(a) - at(b);
    below.sort(byPos);
    above.sort(byPos);
    const places = [...below, ...reps, ...above].map(at).sort((a, b) => a - b);
    below.forEach((g, i) => this.pos.set(g, places[i]!));
    above.forEach((g, i) => this.pos.set(g, places[places.length - above.length + i]!));
    const rep = reps[0]!,
      list = this.memberList.get(rep)!;
    for (const g of reps.slice(1)) {
      this.parent.set(g, rep);
      list.push(...this.memberList.get(g)!);
      this.memberList.delete(g);
    }
    this.pos.set(rep, places[below.length]!);
    return true;
  }

  /**
   * The groups outside the union reached from its members along `edges` through groups whose
   * place passes `inSpan`, or null if such a path leads back into the union.
   */
  private reach(
    reps: readonly Var[],
    inUnion: ReadonlySet<Var>,
    edges: (r: Var) => readonly Var[],
    inSpan: (place: number) => boolean,
  ): Var[] | null {
    const seen = new Set<Var>(),
      found: Var[] = [],
      stack = [...reps];
    while (stack.length) {
      for (const m of this.memberList.get(stack.pop()!)!)
        for (const d of edges(m)) {
          const g = this.find(d);
          if (inUnion.has(g)) return null;
          if (seen.has(g) || !inSpan(this.pos.get(g)!)) continue;
          seen.add(g);
          found.push(g);
          stack.push(g);
        }
    }
    return found;
  }
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}
/**
 * Do the blocks of n consecutive elements of `shape` (row-major) each lie at one position of the
 * leading dims — whole rows of the trailing dims, a whole number of them within one dim?
 */
function blockAligned(shape: readonly number[], n: number): boolean {
  let s = 1;
  for (let k = shape.length; k >= 0; k--) {
    if (n % s === 0 && (n === s || (k > 0 && shape[k - 1]! % (n / s) === 0))) return true;
    if (k > 0) s *= shape[k - 1]!;
    if (s > n) return false;
  }
  return false;
}
/**
 * The loop extent P for kernels computing several roots together: each iteration computes a block
 * of size/P ≤ UNROLL_MAX consecutive elements of every root. The largest P (a divisor of the sizes'
 * gcd) whose blocks are aligned in every root, or null. Aligned, an iteration computes one leading
 * position of each root; with any common divisor ([16, N, 3] beside [N, 3] at P = 3N) a block
 * straddles rows, no work lines up across roots, each unrolled element recomputes its whole cone,
 * and the shared value is better a buffer.
 */
function commonLoop(shapes: readonly (readonly number[])[]): number | null {
  const sizes = shapes.map(sizeOf);
  const g = sizes.reduce(gcd);
  if (g === 0) return null;
  for (let d = 1; d <= UNROLL_MAX; d++) {
    if (g % d !== 0) continue;
    const p = g / d;
    if (sizes.every((n, i) => n / p <= UNROLL_MAX && blockAligned(shapes[i]!, n / p))) return p;
  }
  return null;
}
function mergeable(rs: readonly Var[], deps: (r: Var) => Set<Var>): boolean {
  if (commonLoop(rs.map((r) => r.aval.shape)) === null) return false;
  return rs.every((a) => rs.every((b) => a === b || !deps(a).has(b)));
}

// ---------------------------------------------------------------- building kernels

function emitProgram(
  ir: IR,
  constVals: ReadonlyMap<Var, Array>,
  M: ReadonlySet<Var>,
  producer: ReadonlyMap<Var, Eqn>,
  groups: readonly Var[][],
  fusedScatter: ReadonlyMap<Var, Eqn>,
  opts: PlanOptions,
): { spec: ProgramSpec; oversize: Oversize[] } {
  const g = new KGraph();
  const buffers: BufferSpec[] = [];
  const bufOf = new Map<Var, number>();
  const newBuf = (v: Var) => {
    buffers.push({ dtype: v.aval.dtype, shape: v.aval.shape, size: v.aval.size });
    return buffers.length - 1;
  };
  // Reshapes/stop_gradients of buffers alias them (same row-major data).
  const aliasOf = (v: Var): Var => {
    const e = producer.get(v);
    if (e && (e.prim.name === "reshape" || e.prim.name === "stop_gradient") && M.has(e.inputs[0]!))
      return aliasOf(e.inputs[0]!);
    return v;
  };
  const buf = (v: Var): number => {
    const a = aliasOf(v);
    let b = bufOf.get(a);
    if (b === undefined) bufOf.set(a, (b = newBuf(a)));
    return b;
  };
  const inputs = ir.inVars.map(buf);
  const consts: [number, Array][] = [];
  for (const [v, c] of constVals) if (M.has(v)) consts.push([buf(v), c]);

  const views = new Map<Var, View>();
  const viewOfVar = (v: Var): View => {
    let w = views.get(v);
    if (w) return w;
    if (M.has(v)) w = loadView(g, buf(v), v.aval.shape, v.aval.dtype);
    else {
      const e = producer.get(v)!;
      const outs = e.prim.lower!(
        e.inputs.map(viewOfVar),
        e.params,
        e.outs.map((o) => o.aval),
        g,
      );
      e.outs.forEach((o, i) => views.set(o, outs[i]!));
      w = views.get(v)!;
    }
    views.set(v, w);
    return w;
  };
  /** The lazy (computed) view of a buffer var, from its producer's lowering. */
  const computedView = (v: Var): View => {
    const e = producer.get(v)!;
    const outs = e.prim.lower!(
      e.inputs.map(viewOfVar),
      e.params,
      e.outs.map((o) => o.aval),
      g,
    );
    return outs[e.outs.indexOf(v)]!;
  };

  // Steps: one per routine equation and one per kernel group, then sorted by buffer dependencies.
  const unsorted: Step[] = [];
  const oversize: Oversize[] = [];
  const fusedEqns = new Set(fusedScatter.values());
  for (const e of ir.eqns) {
    if (isRoutine(e, opts) && !fusedEqns.has(e))
      unsorted.push({ kind: "routine", eqn: e, inputs: e.inputs.map(buf), outputs: e.outs.map(buf) });
  }
  const scatterInfo = (u: Var): ScatterInfo | undefined => {
    const e = fusedScatter.get(u);
    if (!e) return undefined;
    const [t, idx] = e.inputs as [Var, Var];
    buffers.push({ dtype: "float64", shape: t.aval.shape, size: t.aval.size });
    return {
      acc: buffers.length - 1,
      target: buf(t),
      out: buf(e.outs[0]!),
      idx: viewOfVar(idx),
      idxShape: idx.aval.shape,
      targetShape: t.aval.shape,
      axis: (e.params as { axis: number }).axis,
    };
  };
  for (const grp of groups) {
    // Aliases need no kernel, except updates of a fused scatter: their kernel is the scatter.
    const roots = grp.filter((r) => aliasOf(r) === r || fusedScatter.has(r));
    const unroll = (opts.unrollBigReductions ?? true) || !roots.some((r) => isBigReduce(producer.get(r)!, opts));
    if (!roots.length) continue;
    const k = buildKernel(g, roots, computedView, buf, scatterInfo, unroll ? UNROLL_MAX : 1);
    const nodes = kernelNodes(k);
    if (nodes > SPLIT_NODES_MAX) oversize.push({ roots, nodes });
    unsorted.push(opts.fuseReductions ? withFusedReductions(g, k) : k);
  }
  const steps = fuseHorizontally(sortSteps(unsorted));
  return { spec: { buffers, inputs, consts, steps, outputs: ir.outs.map(buf), graph: g }, oversize };
}

/**
 * Horizontal fusion: kernels with the same loop nest that do not depend on each other (directly
 * or through other steps) run as one loop — fewer passes over memory, shared loads and index math.
 * Works on the dependency-sorted steps, so merging can never create a cycle.
 */
function fuseHorizontally(sorted: readonly Step[]): Step[] {
  const steps = [...sorted];
  const size = new Map<Step, number>();
  const nodes = (st: KernelStep): number => {
    let n = size.get(st);
    if (n === undefined) size.set(st, (n = kernelNodes(st)));
    return n;
  };
  const writer = new Map<number, number>();
  const rebuildWriters = () => {
    writer.clear();
    steps.forEach((st, i) => outputsOf(st).forEach((b) => writer.set(b, i)));
  };
  rebuildWriters();
  /** Is step `to` reachable from step `from` by following buffer reads forward? */
  const dependsOnStep = (later: number, earlier: number): boolean => {
    const seen = new Set<number>();
    const stack = [later];
    while (stack.length) {
      const i = stack.pop()!;
      if (i === earlier) return true;
      if (seen.has(i) || i < earlier) continue;
      seen.add(i);
      for (const b of inputsOf(steps[i]!)) {
        const w = writer.get(b);
        if (w !== undefined && w !== i) stack.push(w);
      }
    }
    return false;
  };
  for (let k = 1; k < steps.length; k++) {
    const sk = steps[k]!;
    if (sk.kind !== "kernel") continue;
    for (let j = 0; j < k; j++) {
      const sj = steps[j]!;
      if (
        sj.kind !== "kernel" ||
        sj.loop.length !== sk.loop.length ||
        !sj.loopVars.every((v, i) => v === sk.loopVars[i])
      )
        continue;
      if (nodes(sj) + nodes(sk) > KERNEL_NODES_MAX) continue;
      if (dependsOnStep(k, j)) continue;
      // Everything k reads must be ready before j runs.
      if (
        inputsOf(sk).some((b) => {
          const w = writer.get(b);
          return w !== undefined && w >= j && w !== k;
        })
      )
        continue;
      steps[j] = {
        ...sj,
        outputs: [...sj.outputs, ...sk.outputs],
        accumulators: [...sj.accumulators, ...sk.accumulators],
      };
      steps.splice(k, 1);
      k--;
      rebuildWriters();
      break;
    }
  }
  return steps;
}

/** Expression nodes a kernel's code evaluates (its size, roughly one line each). */
const kernelNodes = (k: KernelStep): number =>
  topoOrder(k.outputs.flatMap((o) => [...o.nodes, ...(o.dest ?? [])])).length;

/** The kernel with its sibling inner reductions sharing loops. */
function withFusedReductions(g: KGraph, k: KernelStep): KernelStep {
  const all = k.outputs.flatMap((o) => [...o.nodes, ...(o.dest ?? [])]);
  const fused = fuseSiblingReductions(g, all);
  let i = 0;
  const outputs = k.outputs.map((o) => {
    const nodes = o.nodes.map(() => fused[i++]!);
    const dest = o.dest?.map(() => fused[i++]!);
    return dest ? { ...o, nodes, dest } : { ...o, nodes };
  });
  return { ...k, outputs };
}

/** Order steps so every buffer is written before it is read. */
function sortSteps(steps: readonly Step[]): Step[] {
  const writer = new Map<number, Step>();
  for (const st of steps) for (const b of outputsOf(st)) writer.set(b, st);
  const out: Step[] = [];
  const state = new Map<Step, number>(); // 1 = visiting, 2 = done
  const visit = (st: Step): void => {
    const s0 = state.get(st);
    if (s0 === 2) return;
    if (s0 === 1) {
      const desc = (x: Step) =>
        x.kind === "kernel"
          ? `kernel(outs ${outputsOf(x)} reads ${inputsOf(x)})`
          : `${x.eqn.prim.name}(outs ${x.outputs} reads ${x.inputs})`;
      throw new Error(
        `internal: cyclic kernel dependencies in the fusion plan: ${[...state.keys()]
          .filter((k) => state.get(k) === 1)
          .map(desc)
          .join(" -> ")}`,
      );
    }
    state.set(st, 1);
    for (const b of inputsOf(st)) {
      const w = writer.get(b);
      if (w && w !== st) visit(w);
    }
    state.set(st, 2);
    out.push(st);
  };
  steps.forEach(visit);
  return out;
}
const outputsOf = (st: Step): number[] =>
  st.kind === "kernel" ? [...st.outputs.map((o) => o.buf), ...st.accumulators.map((a) => a.out)] : [...st.outputs];
function inputsOf(st: Step): number[] {
  if (st.kind === "routine") return [...st.inputs];
  const bufs = new Set<number>(st.accumulators.map((a) => a.target));
  const seen = new Set<KNode>();
  const stack = st.outputs.flatMap((o) => [...o.nodes, ...(o.dest ?? [])]);
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    if (n.op === "load") bufs.add(Number(n.tag));
    stack.push(...n.args);
  }
  return [...bufs];
}

interface ScatterInfo {
  readonly acc: number;
  readonly target: number;
  readonly out: number;
  readonly idx: View;
  readonly idxShape: readonly number[];
  readonly targetShape: readonly number[];
  readonly axis: number;
}

function buildKernel(
  g: KGraph,
  roots: readonly Var[],
  computedView: (v: Var) => View,
  buf: (v: Var) => number,
  scatterInfo: (u: Var) => ScatterInfo | undefined,
  unrollMax = UNROLL_MAX,
): KernelStep {
  let loop: number[];
  let loopVars: KNode[];
  let indexFor: (shape: readonly number[], inner: number, u: number) => KNode[];
  // Nested loops over the leading dims; the trailing dims (≤ UNROLL_MAX elements) are unrolled.
  // Roots that share those leading dims loop over them together: with the trailing indices
  // constants, work per leading index (a triangle's force, read by its 3×3 corner components) is
  // CSE'd across the unrolled elements instead of recomputed per element of a flat loop.
  const leadDims = (shape: readonly number[]): number => {
    let k = shape.length;
    while (k > 0 && sizeOf(shape.slice(k - 1)) <= unrollMax) k--;
    return k;
  };
  const k = Math.max(...roots.map((r) => leadDims(r.aval.shape)));
  const lead = roots[0]!.aval.shape.slice(0, k);
  if (roots.every((r) => r.aval.shape.length >= k && lead.every((n, i) => r.aval.shape[i] === n))) {
    loop = lead;
    loopVars = loop.map((n, i) => g.var(`i${i}`, n));
    indexFor = (sh, _inner, u) => [...loopVars, ...unravel(g, g.const(u, "int32"), sh.slice(k))];
  } else {
    const P = commonLoop(roots.map((r) => r.aval.shape))!;
    loop = [P];
    loopVars = [g.var("i0", P)];
    indexFor = (sh, inner, u) =>
      unravel(g, g.binary("add", g.binary("mul", loopVars[0]!, g.const(inner, "int32")), g.const(u, "int32")), sh);
  }
  const P = sizeOf(loop);
  const accumulators: Accumulator[] = [];
  const outputs = roots.map((r): KernelOutput => {
    const v = computedView(r);
    const inner = r.aval.size / P;
    const idxs = range(inner).map((u) => indexFor(r.aval.shape, inner, u));
    const nodes = idxs.map((ix) => v.at(ix));
    const sc = scatterInfo(r);
    if (!sc) return { buf: buf(r), inner, nodes };
    // updates[pre..., j..., post...] goes to target[pre..., norm(indices[j...]), post...].
    accumulators.push({ acc: sc.acc, target: sc.target, out: sc.out });
    const { axis } = sc;
    const m = sc.idxShape.length,
      n = sc.targetShape[axis]!;
    const pre = sc.targetShape.slice(0, axis),
      post = sc.targetShape.slice(axis + 1);
    const dest = idxs.map((ix) => {
      const raw = sc.idx.at(ix.slice(axis, axis + m));
      const norm = g.select(g.binary("lt", raw, g.const(0, "int32")), g.binary("add", raw, g.const(n, "int32")), raw);
      const row = g.binary(
        "add",
        g.binary("mul", ravel(g, ix.slice(0, axis), pre), g.const(n, "int32")),
        clampIndex(g, norm, n),
      );
      return g.binary("add", g.binary("mul", row, g.const(sizeOf(post), "int32")), ravel(g, ix.slice(axis + m), post));
    });
    return { buf: sc.acc, inner, nodes, dest };
  });
  return { kind: "kernel", loop, loopVars, outputs, accumulators };
}
