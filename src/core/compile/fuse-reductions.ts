/**
 * Sibling inner reductions (same extent, same free loop variables, independent of each other)
 * are rewritten onto one shared loop variable. Hash-consing then makes the work their bodies
 * have in common one set of nodes, and code generators run them as one loop with several
 * accumulators — e.g. the 30 cotangent sums a rasterizer's backward pass takes over the same
 * pixels of a tile become one pass over those pixels instead of thirty.
 */
import { dependsOn, type KGraph, type KNode } from "../kernel/expr.js";
import { freeVariables, topoOrder } from "./scopes.js";

let fusedVarId = 0;

export function fuseSiblingReductions(g: KGraph, roots: readonly KNode[]): KNode[] {
  const order = topoOrder(roots);
  const free = freeVariables(order);
  const groups: KNode[][] = [];
  const byKey = new Map<string, KNode[][]>();
  for (const n of order) {
    if (n.op !== "reduce") continue;
    const key = `${n.rvar!.value}|${[...free.get(n)!]
      .map((v) => v.id)
      .sort((a, b) => a - b)
      .join(",")}`;
    const candidates = byKey.get(key) ?? byKey.set(key, []).get(key)!;
    // Members must not depend on each other: a fused loop computes all of them at once.
    const home = candidates.find((grp) => grp.every((m) => !dependsOn(n, m) && !dependsOn(m, n)));
    if (home) home.push(n);
    else {
      const grp = [n];
      candidates.push(grp);
      groups.push(grp);
    }
  }
  const common = new Map<KNode, KNode>();
  for (const grp of groups) {
    if (grp.length < 2) continue;
    const v = g.var(`f${fusedVarId++}`, grp[0]!.rvar!.value);
    for (const m of grp) common.set(m, v);
  }
  if (!common.size) return [...roots];
  const memo = new Map<KNode, KNode>();
  const rewrite = (n: KNode): KNode => {
    let r = memo.get(n);
    if (r) return r;
    if (!n.args.length) r = n;
    else if (n.op === "reduce" && common.has(n)) {
      const v = common.get(n)!;
      r = g.reduce(n.tag as Parameters<KGraph["reduce"]>[0], v, g.substitute(rewrite(n.args[0]!), n.rvar!, v));
    } else r = g.rebuild(n, n.args.map(rewrite));
    memo.set(n, r);
    return r;
  };
  return roots.map(rewrite);
}
