/**
 * Loop placement for code generation: every node is emitted in the innermost loop whose
 * variable it depends on (loop-invariant code motion), and each inner reduction gets its
 * own loop scope nested where its free variables live. Shared by the JS and WGSL emitters.
 */
import type { KNode } from "../kernel/expr.js";

export interface Scope {
  readonly depth: number;
  /** The loop variable introduced by this scope (null for the root). */
  readonly variable: KNode | null;
  /** Nodes to emit in this scope, in dependency order. */
  readonly nodes: KNode[];
  /** For reduce scopes: the reduction node whose loop this is. */
  readonly reduce: KNode | null;
  readonly children: Scope[];
}

/** Nodes reachable from `roots`, arguments before users. */
export function topoOrder(roots: readonly KNode[]): KNode[] {
  const out: KNode[] = [];
  const seen = new Set<KNode>();
  const stack: [KNode, number][] = roots.map((r) => [r, 0]);
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const [n, i] = top;
    if (seen.has(n)) { stack.pop(); continue; }
    if (i < n.args.length) { top[1]++; stack.push([n.args[i]!, 0]); continue; }
    stack.pop();
    seen.add(n);
    out.push(n);
  }
  return out;
}

/**
 * Assign nodes to scopes. `loopVars` are the kernel's parallel loop variables, outermost first
 * (scope depth 1..k); reductions add deeper scopes. Returns the root scope and the innermost
 * parallel scope (where stores go).
 */
export function buildScopes(order: readonly KNode[], loopVars: readonly KNode[]): { root: Scope; inner: Scope; scopeOf: Map<KNode, Scope> } {
  const root: Scope = { depth: 0, variable: null, nodes: [], reduce: null, children: [] };
  const varScope = new Map<KNode, Scope>();
  let cur = root;
  for (const v of loopVars) {
    const s: Scope = { depth: cur.depth + 1, variable: v, nodes: [], reduce: null, children: [] };
    cur.children.push(s);
    varScope.set(v, s);
    cur = s;
  }
  const inner = cur;
  const reduceOfVar = new Map<KNode, KNode>();
  for (const n of order) if (n.op === "reduce") reduceOfVar.set(n.rvar!, n);
  // Free variables of each node (loop vars it depends on, minus variables its reductions bind).
  const free = new Map<KNode, Set<KNode>>();
  for (const n of order) {
    const s = new Set<KNode>();
    if (n.op === "var") s.add(n);
    for (const a of n.args) for (const v of free.get(a)!) s.add(v);
    if (n.op === "reduce") s.delete(n.rvar!);
    free.set(n, s);
  }
  const scopeOf = new Map<KNode, Scope>();
  const deepest = (vars: Set<KNode>): Scope => {
    let best = root;
    for (const v of vars) { const s = scopeOfVar(v); if (s.depth > best.depth) best = s; }
    return best;
  };
  function scopeOfVar(v: KNode): Scope {
    const s = varScope.get(v);
    if (s) return s;
    const r = reduceOfVar.get(v);
    if (!r) throw new Error(`internal: loop variable ${v.tag} has no loop.`);
    const parent = deepest(free.get(r)!);
    const child: Scope = { depth: parent.depth + 1, variable: v, nodes: [], reduce: r, children: [] };
    parent.children.push(child);
    varScope.set(v, child);
    return child;
  }
  for (const n of order) {
    if (n.op === "var" || n.op === "const") continue;
    const s = deepest(free.get(n)!);
    s.nodes.push(n);
    scopeOf.set(n, s);
  }
  return { root, inner, scopeOf };
}
