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
  /** For reduce scopes: the (first) reduction node whose loop this is. */
  readonly reduce: KNode | null;
  /** For reduce scopes: every reduction sharing this loop (fused siblings; usually just `reduce`). */
  readonly reduces: KNode[];
  readonly children: Scope[];
  readonly parent?: Scope;
}

/**
 * Free loop variables of each node (the variables it depends on, minus those its reductions bind); `order` is
 * topological.
 */
export function freeVariables(order: readonly KNode[]): Map<KNode, Set<KNode>> {
  const free = new Map<KNode, Set<KNode>>();
  for (const n of order) {
    const s = new Set<KNode>();
    if (n.op === "var") s.add(n);
    for (const a of n.args) for (const v of free.get(a)!) s.add(v);
    if (n.op === "reduce") s.delete(n.rvar!);
    free.set(n, s);
  }
  return free;
}

/** Nodes reachable from `roots`, arguments before users. */
export function topoOrder(roots: readonly KNode[]): KNode[] {
  const out: KNode[] = [];
  const seen = new Set<KNode>();
  const stack: [KNode, number][] = roots.map((r) => [r, 0]);
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const [n, i] = top;
    if (seen.has(n)) {
      stack.pop();
      continue;
    }
    if (i < n.args.length) {
      top[1]++;
      stack.push([n.args[i]!, 0]);
      continue;
    }
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
export function buildScopes(
  order: readonly KNode[],
  loopVars: readonly KNode[],
): { root: Scope; inner: Scope; scopeOf: Map<KNode, Scope> } {
  const root: Scope = { depth: 0, variable: null, nodes: [], reduce: null, reduces: [], children: [] };
  const varScope = new Map<KNode, Scope>();
  let cur = root;
  for (const v of loopVars) {
    const s: Scope = { depth: cur.depth + 1, variable: v, nodes: [], reduce: null, reduces: [], children: [] };
    cur.children.push(s);
    varScope.set(v, s);
    cur = s;
  }
  const inner = cur;
  const reducesOfVar = new Map<KNode, KNode[]>();
  for (const n of order)
    if (n.op === "reduce") (reducesOfVar.get(n.rvar!) ?? reducesOfVar.set(n.rvar!, []).get(n.rvar!)!).push(n);
  const free = freeVariables(order);
  const scopeOf = new Map<KNode, Scope>();
  const deepest = (vars: Set<KNode>): Scope => {
    let best = root;
    for (const v of vars) {
      const s = scopeOfVar(v);
      if (s.depth > best.depth) best = s;
    }
    return best;
  };
  function scopeOfVar(v: KNode): Scope {
    const s = varScope.get(v);
    if (s) return s;
    const rs = reducesOfVar.get(v);
    if (!rs) throw new Error(`internal: loop variable ${v.tag} has no loop.`);
    const allFree = new Set<KNode>();
    for (const r of rs) for (const f of free.get(r)!) allFree.add(f);
    const parent = deepest(allFree);
    const child: Scope = {
      depth: parent.depth + 1,
      variable: v,
      nodes: [],
      reduce: rs[0]!,
      reduces: rs,
      children: [],
      parent,
    };
    parent.children.push(child);
    varScope.set(v, child);
    return child;
  }
  for (const n of order) {
    if (n.op === "var" || n.op === "const") continue;
    // Fused sibling reductions all live in their shared loop's parent scope.
    const s = n.op === "reduce" ? scopeOfVar(n.rvar!).parent! : deepest(free.get(n)!);
    s.nodes.push(n);
    scopeOf.set(n, s);
  }
  orderFusedLoops(root, scopeOf);
  return { root, inner, scopeOf };
}

/**
 * A loop shared by several reductions is emitted once, where the last of them is: nodes of the
 * same scope that use an earlier one must come after that loop. Stable topological order of the
 * scope's nodes with each fused group as one item.
 */
function orderFusedLoops(s: Scope, scopeOf: Map<KNode, Scope>): void {
  for (const c of s.children) orderFusedLoops(c, scopeOf);
  const fused = s.children.filter((c) => c.reduces.length > 1);
  if (!fused.length) return;
  const groupOf = new Map<KNode, Scope>();
  for (const c of fused) for (const r of c.reduces) groupOf.set(r, c);
  // Nodes of this scope each item needs (through nodes of deeper scopes, i.e. loop bodies).
  const inScopeDeps = (n: KNode): Set<KNode> => {
    const out = new Set<KNode>(),
      seen = new Set<KNode>();
    const visit = (m: KNode): void => {
      for (const a of m.args) {
        if (seen.has(a)) continue;
        seen.add(a);
        const sa = scopeOf.get(a);
        if (sa === s) out.add(a);
        else if (sa && sa.depth > s.depth) visit(a);
      }
    };
    visit(n);
    return out;
  };
  type Item = { nodes: KNode[]; deps: Set<KNode> };
  const items: Item[] = [];
  const itemOf = new Map<KNode, Item>();
  const groupItem = new Map<Scope, Item>();
  for (const n of s.nodes) {
    const gScope = groupOf.get(n);
    let item = gScope ? groupItem.get(gScope) : undefined;
    if (!item) {
      item = { nodes: [], deps: new Set() };
      items.push(item);
      if (gScope) groupItem.set(gScope, item);
    }
    item.nodes.push(n);
    itemOf.set(n, item);
    for (const d of inScopeDeps(n)) item.deps.add(d);
  }
  const done = new Set<Item>();
  const sorted: KNode[] = [];
  while (done.size < items.length) {
    const next = items.find(
      (it) => !done.has(it) && [...it.deps].every((d) => it.nodes.includes(d) || done.has(itemOf.get(d)!)),
    );
    if (!next) throw new Error("internal: cyclic dependencies between fused reductions.");
    done.add(next);
    sorted.push(...next.nodes);
  }
  s.nodes.splice(0, s.nodes.length, ...sorted);
}
