/** Kernel → JavaScript source (the CPU jit): nested loops over typed arrays, one `const` per node. */
import type { DType } from "../dtype.js";
import { threefry2x32 } from "../prims/indexing.js";
import type { KNode } from "../kernel/expr.js";
import { binaryOp, isUnaryOp, UNARY_OPS, unaryOp } from "../kernel/scalar-ops.js";
import type { KernelStep } from "./plan.js";
import { constValue, roundsToFloat32 } from "./float32.js";
import { buildScopes, topoOrder, type Scope } from "./scopes.js";

const lit = (v: number): string =>
  Number.isNaN(v)
    ? "NaN"
    : v === Infinity
      ? "Infinity"
      : v === -Infinity
        ? "-Infinity"
        : Object.is(v, -0)
          ? "-0"
          : String(v);

const INIT: Record<string, (d: DType) => string> = {
  add: () => "0",
  mul: () => "1",
  max: (d) => (d === "int32" ? "-2147483648" : "-Infinity"),
  min: (d) => (d === "int32" ? "2147483647" : "Infinity"),
};

/** Helpers the generated code calls (kept out of the hot path where possible). */
export const JS_HELPERS = {
  /** The scalar ops without their own JS source (scalar-ops.ts): the generated code calls their `eval`. */
  unary: Object.fromEntries(Object.entries(UNARY_OPS).map(([op, u]) => [op, u.eval])),
  tf: (k0: number, k1: number, c: number, which: number): number => {
    const [y0, y1] = threefry2x32(k0, k1, c, 0);
    return which === 0 ? y0 | 0 : which === 1 ? (y0 >>> 9) / 8388608 : (y0 * 2097152 + (y1 >>> 11)) / 9007199254740992;
  },
};

function expr(n: KNode, name: (n: KNode) => string, offset: (buf: string) => string): string {
  const a = (i: number) => name(n.args[i]!);
  const i32 = n.args[0]?.dtype === "int32";
  const op = n.op;
  switch (op) {
    case "load":
      return `b${n.tag}[${offset(n.tag)}${a(0)}]`;
    case "cast":
      if (n.dtype === "int32") return `(${a(0)} | 0)`;
      if (n.dtype === "bool") return `(${a(0)} !== 0 ? 1 : 0)`;
      if (n.dtype === "float32") return `Math.fround(${a(0)})`;
      return a(0);
    case "select":
      return `(${a(0)} ? ${a(1)} : ${a(2)})`;
    case "threefry":
      return `H.tf(${a(0)}, ${a(1)}, ${a(2)}, ${n.value})`;
    case "const":
    case "var":
    case "reduce":
      throw new Error(`internal: a ${op} node is named by the kernel emitter, not rendered as an expression.`);
  }
  if (!isUnaryOp(op)) return binaryOp(op).js(a(0), a(1), i32);
  const js = unaryOp(op).js;
  return js ? js(a(0), i32) : `H.unary.${op}(${a(0)}, ${i32})`;
}

/**
 * Render a kernel step as the body of `function (B, O)` where B[id] are the buffers. Buffers in
 * `offsetBufs` (a program's inputs and outputs) are read and written from element O[id] on, so a
 * scan step can use its slice of a stacked array in place.
 */
export function kernelToJs(k: KernelStep, offsetBufs: ReadonlySet<number> = new Set()): string {
  const stores = k.outputs.flatMap((o) => [...o.nodes, ...(o.dest ?? [])]);
  const order = topoOrder(stores);
  const { root, inner } = buildScopes(order, k.loopVars);
  const name = (n: KNode): string =>
    n.op === "const" ? lit(constValue(n)) : n.op === "var" ? `v_${n.tag}` : `t${n.id}`;
  const lines: string[] = [];
  const bufs = new Set<string>();
  for (const n of order) if (n.op === "load") bufs.add(n.tag);
  for (const o of k.outputs) bufs.add(String(o.buf));
  for (const b of bufs)
    lines.push(offsetBufs.has(Number(b)) ? `const b${b} = B[${b}], o${b} = O[${b}];` : `const b${b} = B[${b}];`);
  // Float32 results are rounded op by op (float32.ts); a short name keeps big kernels' source small.
  if (order.some(roundsToFloat32)) lines.push("const F = Math.fround;");
  const offset = (b: string | number): string => (offsetBufs.has(Number(b)) ? `o${b} + ` : "");
  const emitted = new Set<Scope>();
  /** One loop for every reduction sharing the child scope's variable: one accumulator each. */
  const emitReduceLoop = (child: Scope, indent: string): void => {
    const v = name(child.variable!);
    const accs = child.reduces;
    for (const n of accs) {
      if (n.tag === "argmax" || n.tag === "argmin") lines.push(`${indent}let t${n.id} = -1, m${n.id} = 0;`);
      else lines.push(`${indent}let t${n.id} = ${INIT[n.tag]!(n.dtype)};`);
    }
    lines.push(`${indent}for (let ${v} = 0; ${v} < ${child.variable!.value}; ${v}++) {`);
    emit(child, indent + "  ");
    for (const n of accs) {
      const b = name(n.args[0]!);
      if (n.tag === "argmax" || n.tag === "argmin") {
        const cmp = n.tag === "argmax" ? ">" : "<";
        lines.push(
          `${indent}  if (t${n.id} < 0 || (m${n.id} === m${n.id} && (${b} !== ${b} ` +
            `|| ${b} ${cmp} m${n.id}))) { m${n.id} = ${b}; t${n.id} = ${v}; }`,
        );
        continue;
      }
      const i32 = n.dtype === "int32";
      const comb =
        n.tag === "add"
          ? i32
            ? `(t${n.id} + ${b}) | 0`
            : `t${n.id} + ${b}`
          : n.tag === "mul"
            ? i32
              ? `Math.imul(t${n.id}, ${b})`
              : `t${n.id} * ${b}`
            : `Math.${n.tag}(t${n.id}, ${b})`;
      lines.push(`${indent}  t${n.id} = ${comb};`);
    }
    lines.push(`${indent}}`);
    for (const n of accs) if (roundsToFloat32(n)) lines.push(`${indent}t${n.id} = F(t${n.id});`);
  };
  const emit = (s: Scope, indent: string): void => {
    for (const n of s.nodes) {
      if (n.op === "reduce") {
        const child = s.children.find((c) => c.reduces.includes(n))!;
        if (!emitted.has(child)) {
          emitted.add(child);
          emitReduceLoop(child, indent);
        }
      } else {
        const e = expr(n, name, offset);
        lines.push(`${indent}const t${n.id} = ${roundsToFloat32(n) ? `F(${e})` : e};`);
      }
    }
    // Parallel child loop (at most one), after this scope's own nodes.
    const par = s.children.find((c) => c.reduce === null);
    if (par) {
      const v = name(par.variable!);
      lines.push(`${indent}for (let ${v} = 0; ${v} < ${par.variable!.value}; ${v}++) {`);
      emit(par, indent + "  ");
      lines.push(`${indent}}`);
    }
    if (s === inner) {
      // Flat output position: row-major over the loop dims, times the unrolled inner count.
      let flat = "0";
      k.loopVars.forEach((lv, i) => {
        flat = i === 0 ? name(lv) : `(${flat}) * ${lv.value} + ${name(lv)}`;
      });
      for (const o of k.outputs) {
        o.nodes.forEach((n, u) => {
          if (o.dest) {
            lines.push(`${indent}b${o.buf}[${name(o.dest[u]!)}] += ${name(n)};`);
            return;
          }
          const pos = o.inner === 1 ? flat : `(${flat}) * ${o.inner} + ${u}`;
          lines.push(`${indent}b${o.buf}[${offset(o.buf)}${k.loopVars.length ? pos : u}] = ${name(n)};`);
        });
      }
    }
  };
  emit(root, "");
  return lines.join("\n");
}
