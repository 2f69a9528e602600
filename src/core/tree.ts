/**
 * Pytrees: nested JS arrays and plain objects whose leaves are Arrays, numbers or other
 * values; `null`/`undefined` are empty nodes. Object keys are sorted, so `{a, b}` and
 * `{b, a}` have the same structure (scan carries built by spreads keep their treedef).
 */
export type TreeDef =
  | { readonly kind: "leaf" }
  | { readonly kind: "none"; readonly value: null | undefined }
  | { readonly kind: "list"; readonly children: readonly TreeDef[] }
  | { readonly kind: "dict"; readonly keys: readonly string[]; readonly children: readonly TreeDef[] };

const LEAF: TreeDef = { kind: "leaf" };

export const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" &&
  x !== null &&
  (Object.getPrototypeOf(x) === Object.prototype || Object.getPrototypeOf(x) === null);

export function flatten(tree: unknown): [unknown[], TreeDef] {
  const leaves: unknown[] = [];
  const rec = (t: unknown): TreeDef => {
    if (t === null || t === undefined) return { kind: "none", value: t };
    if (globalThis.Array.isArray(t)) return { kind: "list", children: t.map(rec) };
    if (isPlainObject(t)) {
      const keys = Object.keys(t).sort();
      return { kind: "dict", keys, children: keys.map((k) => rec(t[k])) };
    }
    leaves.push(t);
    return LEAF;
  };
  const def = rec(tree);
  return [leaves, def];
}

export function unflatten(def: TreeDef, leaves: readonly unknown[]): any {
  let i = 0;
  const rec = (d: TreeDef): unknown => {
    switch (d.kind) {
      case "leaf":
        if (i >= leaves.length)
          throw new Error(`tree.unflatten: too few leaves (${leaves.length}) for the structure ${treedefString(def)}.`);
        return leaves[i++];
      case "none":
        return d.value;
      case "list":
        return d.children.map(rec);
      case "dict": {
        const o: Record<string, unknown> = {};
        d.keys.forEach((k, j) => (o[k] = rec(d.children[j]!)));
        return o;
      }
    }
  };
  const out = rec(def);
  if (i !== leaves.length)
    throw new Error(`tree.unflatten: ${leaves.length} leaves given, the structure ${treedefString(def)} has ${i}.`);
  return out;
}

export const numLeaves = (def: TreeDef): number =>
  def.kind === "leaf" ? 1 : def.kind === "none" ? 0 : def.children.reduce((a, c) => a + numLeaves(c), 0);

export function treedefEqual(a: TreeDef, b: TreeDef): boolean {
  if (a.kind !== b.kind) return a.kind === "none" && b.kind === "none";
  if (a.kind === "leaf" || a.kind === "none") return true;
  const bb = b as typeof a;
  if (a.children.length !== bb.children.length) return false;
  if (a.kind === "dict" && a.keys.some((k, i) => k !== (bb as typeof a).keys[i])) return false;
  return a.children.every((c, i) => treedefEqual(c, bb.children[i]!));
}

export function treedefString(d: TreeDef): string {
  switch (d.kind) {
    case "leaf":
      return "*";
    case "none":
      return String(d.value);
    case "list":
      return `[${d.children.map(treedefString).join(", ")}]`;
    case "dict":
      return `{${d.keys.map((k, i) => `${k}: ${treedefString(d.children[i]!)}`).join(", ")}}`;
  }
}

/** Apply fn leafwise over one or more trees of the same structure. */
export function map(fn: (...leaves: any[]) => unknown, tree: unknown, ...rest: unknown[]): any {
  const [leaves, def] = flatten(tree);
  const others = rest.map((r, k) => {
    const [l, d] = flatten(r);
    if (!treedefEqual(d, def)) {
      throw new Error(
        `tree.map: tree ${k + 2} has structure ${treedefString(d)}, expected ${treedefString(def)} (the first tree's).`,
      );
    }
    return l;
  });
  return unflatten(
    def,
    leaves.map((l, i) => fn(l, ...others.map((o) => o[i]))),
  );
}

/**
 * Broadcast a prefix tree (e.g. vmap's inAxes: one number for a whole subtree) to the
 * leaves of `full`; returns one entry per leaf of `full`.
 */
export function broadcastPrefix(prefix: unknown, full: unknown, what: string): unknown[] {
  const out: unknown[] = [];
  const rec = (p: unknown, f: unknown): void => {
    const [fl] = flatten(f);
    if (p === null || p === undefined || typeof p === "number" || !(globalThis.Array.isArray(p) || isPlainObject(p))) {
      for (let i = 0; i < fl.length; i++) out.push(p ?? null);
      return;
    }
    if (globalThis.Array.isArray(p)) {
      if (!globalThis.Array.isArray(f) || f.length !== p.length) {
        throw new Error(
          `${what}: a list of ${p.length} entries does not match ` +
            `the argument structure ${treedefString(flatten(f)[1])}.`,
        );
      }
      p.forEach((pc, i) => rec(pc, f[i]));
      return;
    }
    if (!isPlainObject(f))
      throw new Error(`${what}: an object does not match the argument structure ${treedefString(flatten(f)[1])}.`);
    for (const k of Object.keys(f).sort()) {
      if (!(k in p)) throw new Error(`${what}: key "${k}" of the argument is missing from the axes object.`);
      rec(p[k], f[k]);
    }
  };
  rec(prefix, full);
  return out;
}

/** The leaves of a pytree, in flatten order (`jax.tree_util.tree_leaves`). */
export const leaves = (tree: unknown): unknown[] => flatten(tree)[0];
/**
 * The structure of a pytree without its leaves (`jax.tree_util.tree_structure`); `unflatten` rebuilds a tree from it.
 */
export const structure = (tree: unknown): TreeDef => flatten(tree)[1];

export const tree = {
  flatten,
  unflatten,
  map,
  leaves,
  structure,
  treedefEqual,
  treedefString,
  numLeaves,
  broadcastPrefix,
};
