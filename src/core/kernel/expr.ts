/**
 * The kernel expression graph: scalar nodes (loads, ALU ops, loop variables, inner
 * reductions), hash-consed so equal subexpressions are one node (CSE for free), with
 * constant folding and affine simplification of integer index arithmetic (so reshapes
 * and transposes compile to plain strided loads). Backends render it as JS or WGSL.
 */
import type { DType } from "../dtype.js";
import { BINARY_OPS, binaryOp, isUnaryOp, UNARY_OPS, unaryOp, type BinaryOp, type UnaryOp } from "./scalar-ops.js";

export type { BinaryOp, UnaryOp } from "./scalar-ops.js";
export type ReduceOp = "add" | "mul" | "max" | "min" | "argmax" | "argmin";
export type Op = "const" | "var" | "load" | "cast" | "select" | "reduce" | "threefry" | UnaryOp | BinaryOp;

export interface KNode {
  readonly id: number;
  readonly op: Op;
  readonly dtype: DType;
  readonly args: readonly KNode[];
  /** const: the value; var: its extent; threefry: which output (0 = bits, 1 = f32 uniform, 2 = f64 uniform). */
  readonly value: number;
  /** load: input slot; reduce: op; var: name. */
  readonly tag: string;
  /** reduce: its loop variable and extent. */
  readonly rvar?: KNode;
}

/** Scalar semantics shared by constant folding and the reference interpreter (JS numbers; ints wrap to 32 bits). */
export function evalScalar(op: UnaryOp | BinaryOp | "select", dtype: DType, a: number, b = 0, c = 0): number {
  const i32 = dtype === "int32";
  if (op === "select") return a ? b : c;
  return isUnaryOp(op) ? unaryOp(op).eval(a, i32) : binaryOp(op).eval(a, b, i32);
}
const isCompare = (op: BinaryOp): boolean => "compare" in BINARY_OPS[op];
const boolOut = (op: UnaryOp): boolean => "boolOut" in UNARY_OPS[op];

export function castScalar(v: number, to: DType): number {
  if (to === "bool") return v !== 0 ? 1 : 0;
  if (to === "int32") return v | 0;
  if (to === "float32") return Math.fround(v);
  return v;
}

/** Affine form Σ coef·term + c over opaque integer terms (vars, loads, anything non-affine). */
interface Affine {
  readonly terms: Map<KNode, number>;
  readonly c: number;
}

export class KGraph {
  private readonly table = new Map<string, KNode>();
  private nextId = 0;

  private mk(op: Op, dtype: DType, args: readonly KNode[], value = 0, tag = "", rvar?: KNode): KNode {
    const key = `${op}|${dtype}|${value}|${tag}|${args.map((a) => a.id).join(",")}|${rvar?.id ?? ""}`;
    let n = this.table.get(key);
    if (!n) {
      n = { id: this.nextId++, op, dtype, args, value, tag, ...(rvar ? { rvar } : {}) };
      this.table.set(key, n);
    }
    return n;
  }

  const(v: number, dtype: DType): KNode {
    const val = castScalar(v, dtype);
    return this.mk("const", dtype, [], Object.is(val, -0) ? -0 : val);
  }
  /** A loop variable in [0, extent). Names must be unique per loop. */
  var(name: string, extent: number): KNode {
    return this.mk("var", "int32", [], extent, name);
  }
  load(slot: number, dtype: DType, index: KNode): KNode {
    return this.mk("load", dtype, [index], 0, String(slot));
  }
  cast(x: KNode, to: DType): KNode {
    if (x.dtype === to) return x;
    if (x.op === "const") return this.const(x.value, to);
    return this.mk("cast", to, [x]);
  }
  select(c: KNode, a: KNode, b: KNode): KNode {
    if (c.op === "const") return c.value ? a : b;
    if (a === b) return a;
    return this.mk("select", a.dtype, [c, a, b]);
  }
  /** An inner reduction: op over rvar ∈ [0, extent) of body (which refers to rvar). */
  reduce(op: ReduceOp, rvar: KNode, body: KNode): KNode {
    const dtype = op === "argmax" || op === "argmin" ? "int32" : body.dtype;
    if (!dependsOn(body, rvar)) {
      // Body independent of the loop variable: fold the loop away where exact.
      if (op === "max" || op === "min") return body;
      if (op === "argmax" || op === "argmin") return this.const(0, "int32");
      if (op === "add") return this.binary("mul", body, this.const(rvar.value, body.dtype));
    }
    return this.mk("reduce", dtype, [body], 0, op, rvar);
  }
  threefry(k0: KNode, k1: KNode, counter: KNode, which: 0 | 1 | 2): KNode {
    return this.mk("threefry", which === 0 ? "int32" : which === 1 ? "float32" : "float64", [k0, k1, counter], which);
  }

  unary(op: UnaryOp, x: KNode): KNode {
    const dtype = boolOut(op) ? "bool" : x.dtype;
    if (x.op === "const") return this.const(evalScalar(op, x.dtype, x.value), dtype);
    if (op === "neg" && x.dtype === "int32") return this.fromAffine(scaleAff(this.affine(x), -1));
    return this.mk(op, dtype, [x]);
  }

  binary(op: BinaryOp, a: KNode, b: KNode): KNode {
    const dtype = isCompare(op) ? "bool" : a.dtype;
    if (a.op === "const" && b.op === "const") return this.const(evalScalar(op, a.dtype, a.value, b.value), dtype);
    const isInt = a.dtype === "int32";
    if (isInt && (op === "add" || op === "sub")) {
      const fa = this.affine(a),
        fb = this.affine(b);
      return this.fromAffine(addAff(fa, op === "add" ? fb : scaleAff(fb, -1)));
    }
    if (isInt && op === "mul" && (a.op === "const" || b.op === "const")) {
      const [k, x] = a.op === "const" ? [a.value, b] : [b.value, a];
      return this.fromAffine(scaleAff(this.affine(x), k));
    }
    if (isInt && (op === "max" || op === "min" || isCompare(op))) {
      const folded = this.foldByRange(op, a, b);
      if (folded) return folded;
    }
    if (dtype === "bool" && (op === "and" || op === "or")) {
      // Boolean identities with a constant operand.
      const [k, x] = a.op === "const" ? [a, b] : b.op === "const" ? [b, a] : [null, null];
      if (k && x) return op === "and" ? (k.value ? x : this.const(0, "bool")) : k.value ? this.const(1, "bool") : x;
      if (a === b) return a;
    }
    if (isInt && (op === "floordiv" || op === "floormod") && b.op === "const" && b.value > 0) {
      const s = this.simplifyDivMod(op, a, b.value);
      if (s) return s;
    }
    // Float identities that are exact for every input.
    if (!isInt && b.op === "const") {
      if ((op === "add" || op === "sub") && b.value === 0 && !Object.is(b.value, -0)) return a;
      if ((op === "mul" || op === "div") && b.value === 1) return a;
    }
    if (!isInt && a.op === "const" && op === "mul" && a.value === 1) return b;
    if (!isInt && a.op === "const" && op === "add" && a.value === 0 && !Object.is(a.value, -0)) return b;
    // Commutative ops: canonical argument order so CSE sees a·b and b·a as one node.
    if (
      (op === "add" ||
        op === "mul" ||
        op === "max" ||
        op === "min" ||
        op === "eq" ||
        op === "ne" ||
        op === "and" ||
        op === "or") &&
      a.id > b.id
    ) {
      return this.mk(op, dtype, [b, a]);
    }
    return this.mk(op, dtype, [a, b]);
  }

  /** The same node with new arguments (and loop variable), through the simplifying constructors. */
  rebuild(n: KNode, args: readonly KNode[], rvar?: KNode): KNode {
    if (args.every((a, i) => a === n.args[i]) && (rvar ?? n.rvar) === n.rvar) return n;
    switch (n.op) {
      case "const":
      case "var":
        return n;
      case "load":
        return this.load(Number(n.tag), n.dtype, args[0]!);
      case "cast":
        return this.cast(args[0]!, n.dtype);
      case "select":
        return this.select(args[0]!, args[1]!, args[2]!);
      case "reduce":
        return this.reduce(n.tag as ReduceOp, rvar ?? n.rvar!, args[0]!);
      case "threefry":
        return this.threefry(args[0]!, args[1]!, args[2]!, n.value as 0 | 1 | 2);
      default:
        return isUnaryOp(n.op) ? this.unary(n.op, args[0]!) : this.binary(n.op, args[0]!, args[1]!);
    }
  }

  /** `n` with variable `from` replaced by `to` (memoised over the shared graph). */
  substitute(n: KNode, from: KNode, to: KNode, memo = new Map<KNode, KNode>()): KNode {
    if (n === from) return to;
    let r = memo.get(n);
    if (r) return r;
    r = n.args.length
      ? this.rebuild(
          n,
          n.args.map((a) => this.substitute(a, from, to, memo)),
        )
      : n;
    memo.set(n, r);
    return r;
  }

  // ------------------------------------------------------------ integer index algebra

  private affine(n: KNode): Affine {
    if (n.op === "const") return { terms: new Map(), c: n.value };
    if (n.dtype === "int32" && (n.op === "add" || n.op === "sub")) {
      const fa = this.affine(n.args[0]!),
        fb = this.affine(n.args[1]!);
      return addAff(fa, n.op === "add" ? fb : scaleAff(fb, -1));
    }
    if (n.dtype === "int32" && n.op === "mul") {
      const [a, b] = n.args as [KNode, KNode];
      if (a.op === "const") return scaleAff(this.affine(b), a.value);
      if (b.op === "const") return scaleAff(this.affine(a), b.value);
    }
    return { terms: new Map([[n, 1]]), c: 0 };
  }
  private fromAffine(f: Affine): KNode {
    const terms = [...f.terms.entries()].filter(([, k]) => k !== 0).sort((p, q) => p[0].id - q[0].id);
    let acc: KNode | null = null;
    for (const [t, k] of terms) {
      const term = k === 1 ? t : this.mk("mul", "int32", [t, this.const(k, "int32")]);
      acc = acc ? this.mk("add", "int32", [acc, term]) : term;
    }
    if (!acc) return this.const(f.c, "int32");
    return f.c === 0 ? acc : this.mk("add", "int32", [acc, this.const(f.c, "int32")]);
  }
  /** Integer max/min/comparisons decided by value ranges (index bounds checks that always hold). */
  private foldByRange(op: BinaryOp, a: KNode, b: KNode): KNode | null {
    const ra = this.range(a),
      rb = this.range(b);
    if (!ra || !rb) return null;
    const t = this.const(1, "bool"),
      f = this.const(0, "bool");
    switch (op) {
      case "max":
        return ra[0] >= rb[1] ? a : rb[0] >= ra[1] ? b : null;
      case "min":
        return ra[1] <= rb[0] ? a : rb[1] <= ra[0] ? b : null;
      case "lt":
        return ra[1] < rb[0] ? t : ra[0] >= rb[1] ? f : null;
      case "le":
        return ra[1] <= rb[0] ? t : ra[0] > rb[1] ? f : null;
      case "gt":
        return ra[0] > rb[1] ? t : ra[1] <= rb[0] ? f : null;
      case "ge":
        return ra[0] >= rb[1] ? t : ra[1] < rb[0] ? f : null;
      case "eq":
        return ra[1] < rb[0] || rb[1] < ra[0] ? f : ra[0] === ra[1] && rb[0] === rb[1] && ra[0] === rb[0] ? t : null;
      case "ne":
        return ra[1] < rb[0] || rb[1] < ra[0] ? t : null;
      default:
        return null;
    }
  }

  /** Value range of an integer node, when known (loop vars, mods, affine combinations). */
  range(n: KNode): [number, number] | null {
    if (n.op === "const") return [n.value, n.value];
    if (n.op === "var") return [0, n.value - 1];
    if (n.op === "floormod" && n.args[1]!.op === "const") return [0, n.args[1]!.value - 1];
    if (n.op === "floordiv" && n.args[1]!.op === "const") {
      const r = this.range(n.args[0]!);
      const d = n.args[1]!.value;
      return r ? [Math.floor(r[0] / d), Math.floor(r[1] / d)] : null;
    }
    if ((n.op === "max" || n.op === "min") && n.dtype === "int32") {
      const ra = this.range(n.args[0]!),
        rb = this.range(n.args[1]!);
      if (n.op === "max")
        return ra && rb
          ? [Math.max(ra[0], rb[0]), Math.max(ra[1], rb[1])]
          : ra
            ? [ra[0], Infinity]
            : rb
              ? [rb[0], Infinity]
              : null;
      return ra && rb
        ? [Math.min(ra[0], rb[0]), Math.min(ra[1], rb[1])]
        : ra
          ? [-Infinity, ra[1]]
          : rb
            ? [-Infinity, rb[1]]
            : null;
    }
    if (n.op === "select" && n.dtype === "int32") {
      const ra = this.range(n.args[1]!),
        rb = this.range(n.args[2]!);
      return ra && rb ? [Math.min(ra[0], rb[0]), Math.max(ra[1], rb[1])] : null;
    }
    if (n.op === "add" || n.op === "mul" || n.op === "sub") {
      const f = this.affine(n);
      if (f.terms.size === 1 && f.terms.has(n)) return null;
      return affRange(f, (t) => this.range(t));
    }
    return null;
  }
  /**
   * (G·x + r) // (G·m) = x // m and (G·x + r) % (G·m) = G·(x % m) + r when 0 ≤ r < G, where G
   * divides d and the coefficients of the "big" terms (e.g. unravelling p·12 + u by 12000).
   */
  private divModByCommonFactor(op: "floordiv" | "floormod", f: Affine, d: number): KNode | null {
    const terms = [...f.terms.entries()].sort((p, q) => Math.abs(p[1]) - Math.abs(q[1]));
    for (let split = 0; split < terms.length; split++) {
      const big = terms.slice(split),
        small = terms.slice(0, split);
      const G = big.reduce((g, [, k]) => gcdInt(g, k), d);
      if (G <= 1) continue;
      const cq = Math.floor(f.c / G),
        cr = f.c - cq * G;
      const rest: Affine = { terms: new Map(small), c: cr };
      const rr = affRange(rest, (t) => this.range(t));
      if (!rr || rr[0] < 0 || rr[1] >= G) continue;
      const x = this.fromAffine({ terms: new Map(big.map(([t, k]) => [t, k / G])), c: cq });
      const m = this.const(d / G, "int32");
      if (op === "floordiv") return this.binary("floordiv", x, m);
      return this.fromAffine(addAff(scaleAff(this.affine(this.binary("floormod", x, m)), G), rest));
    }
    return null;
  }

  private simplifyDivMod(op: "floordiv" | "floormod", a: KNode, d: number): KNode | null {
    if (d === 1) return op === "floordiv" ? a : this.const(0, "int32");
    const f = this.affine(a);
    // Split a = d·q + r where q collects the terms divisible by d (and the multiple of d in the constant).
    const qTerms = new Map<KNode, number>(),
      rTerms = new Map<KNode, number>();
    for (const [t, k] of f.terms) k % d === 0 ? qTerms.set(t, k / d) : rTerms.set(t, k);
    const cq = Math.floor(f.c / d),
      cr = f.c - cq * d;
    const rest: Affine = { terms: rTerms, c: cr };
    const rr = affRange(rest, (t) => this.range(t));
    if (rr && rr[0] >= 0 && rr[1] < d) {
      return op === "floordiv" ? this.fromAffine({ terms: qTerms, c: cq }) : this.fromAffine(rest);
    }
    if (rTerms.size === 0)
      return op === "floordiv" ? this.fromAffine({ terms: qTerms, c: cq }) : this.const(cr, "int32");
    const viaGcd = this.divModByCommonFactor(op, f, d);
    if (viaGcd) return viaGcd;
    // Nested: (x // a) // b = x // (a·b) for positive constants.
    if (op === "floordiv" && a.op === "floordiv" && a.args[1]!.op === "const") {
      return this.binary("floordiv", a.args[0]!, this.const(a.args[1]!.value * d, "int32"));
    }
    const canonical = this.fromAffine(f);
    if (qTerms.size > 0 || cq !== 0) {
      // (d·q + r) // d = q + r // d, (d·q + r) % d = r % d
      const rNode = this.fromAffine(rest);
      const inner = this.mk(op, "int32", [rNode, this.const(d, "int32")]);
      return op === "floordiv"
        ? this.fromAffine(addAff({ terms: qTerms, c: cq }, { terms: new Map([[inner, 1]]), c: 0 }))
        : inner;
    }
    return this.mk(op, "int32", [canonical, this.const(d, "int32")]);
  }
}

function addAff(a: Affine, b: Affine): Affine {
  const terms = new Map(a.terms);
  for (const [t, k] of b.terms) terms.set(t, (terms.get(t) ?? 0) + k);
  return { terms, c: a.c + b.c };
}
function scaleAff(a: Affine, k: number): Affine {
  const terms = new Map<KNode, number>();
  for (const [t, v] of a.terms) terms.set(t, v * k);
  return { terms, c: a.c * k };
}
function affRange(f: Affine, rangeOf: (t: KNode) => [number, number] | null): [number, number] | null {
  let lo = f.c,
    hi = f.c;
  for (const [t, k] of f.terms) {
    if (k === 0) continue;
    const r = rangeOf(t);
    if (!r) return null;
    lo += Math.min(k * r[0], k * r[1]);
    hi += Math.max(k * r[0], k * r[1]);
  }
  return [lo, hi];
}

function gcdInt(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Does node n (transitively) use variable v? */
export function dependsOn(n: KNode, v: KNode, memo = new Map<KNode, boolean>()): boolean {
  if (n === v) return true;
  const m = memo.get(n);
  if (m !== undefined) return m;
  const r = n.rvar === v ? false : n.args.some((a) => dependsOn(a, v, memo));
  memo.set(n, r);
  return r;
}
