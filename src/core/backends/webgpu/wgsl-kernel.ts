/**
 * KernelStep → WGSL compute shader(s). One invocation per iteration of the flattened parallel
 * loop nest; every node is one `let` (scopes.ts decides where reductions loop); outputs are
 * stored at flat·inner + u like the JS emitter.
 *
 * Reductions: short ones loop serially in their invocation. Long ones in a kernel with few
 * iterations run cooperatively ("group" mode): one workgroup per iteration, each thread folds
 * a strided share, then a fixed binary tree in workgroup memory combines the partials. A single
 * very long reduction (a full sum of a big array) is split over two passes: pass 1 has T
 * threads per iteration fold interleaved shares (no barriers) into a scratch buffer, pass 2 is
 * the group-mode kernel with the reduction replaced by a tree over those T partials. Shapes of
 * shares and trees depend only on sizes, so results are bit-identical run to run (no atomics).
 */
import type { BufferSpec, KernelStep } from "../../compile/plan.js";
import { buildScopes, topoOrder, type Scope } from "../../compile/scopes.js";
import type { DType } from "../../dtype.js";
import type { KGraph, KNode } from "../../kernel/expr.js";
import type { GpuLimits } from "./device.js";
import { argBetterFn, combine, reduceInit, wgslExpr } from "./wgsl-expr.js";
import { float64Error, fromStorage, HelperSet, literal, storageType, toStorage, wgslType } from "./wgsl-lib.js";

/** A slice of a packed binding: buffer `buf` lives at word `offset` of the pack. */
export interface PackedPart {
  readonly buf: number;
  readonly offset: number;
  readonly words: number;
}
export interface KernelBindings {
  /** Buffers bound one per binding, in binding order (after them: pack-in, pack-out, scratch). */
  readonly direct: readonly { readonly buf: number; readonly write: boolean }[];
  /** Inputs beyond the device's storage-binding limit, copied into one buffer before the dispatch. */
  readonly packIn: readonly PackedPart[];
  /** Outputs beyond the limit, written to one buffer and copied out after the dispatch. */
  readonly packOut: readonly PackedPart[];
  /** Whether the pass binds the split-reduction scratch buffer (last binding). */
  readonly scratch: boolean;
}
export interface KernelPass {
  readonly source: string;
  readonly bindings: KernelBindings;
  /** Linear workgroup count (the caller lays it out as a 2-D grid). */
  readonly groups: number;
}
export interface WgslKernel {
  /** One pass, or two for a split reduction (partials, then the rest). */
  readonly passes: readonly KernelPass[];
  /** Words of the scratch buffer the passes share (0: none). */
  readonly scratchWords: number;
  readonly mode: "thread" | "group" | "split";
  readonly workgroupSize: number;
}

/**
 * When reductions run cooperatively: a top-level reduction at least `minExtent` long in a loop of
 * at most `maxIterations` iterations; split over two passes from `splitExtent` (in a loop of at
 * most `splitMaxIterations`). CPU-emulated adapters pay a lot per barrier and per workgroup, so
 * there cooperative forms are only worth it for a few long reductions.
 */
export interface ReductionTuning {
  readonly minExtent: number;
  readonly maxIterations: number;
  readonly splitExtent: number;
  readonly splitMaxIterations: number;
  readonly splitThreads: number;
}
export const GPU_TUNING: ReductionTuning = {
  minExtent: 128,
  maxIterations: 4096,
  splitExtent: 16384,
  splitMaxIterations: 64,
  splitThreads: 4096,
};
export const SOFTWARE_TUNING: ReductionTuning = {
  minExtent: 2048,
  maxIterations: 16,
  splitExtent: 65536,
  splitMaxIterations: 16,
  splitThreads: 256,
};

const THREAD_WG = 64;

function chainOf(root: Scope): Scope[] {
  const chain = [root];
  for (let s = root; ; ) {
    const par = s.children.find((c) => c.reduce === null);
    if (!par) return chain;
    chain.push(par);
    s = par;
  }
}

function planBindings(
  loads: readonly number[],
  outs: readonly number[],
  buffers: readonly BufferSpec[],
  limit: number,
  scratch: boolean,
): KernelBindings {
  const words = (b: number) => Math.max(1, buffers[b]!.size);
  const lim = limit - (scratch ? 1 : 0);
  if (loads.length + outs.length <= lim) {
    return {
      direct: [...loads.map((buf) => ({ buf, write: false })), ...outs.map((buf) => ({ buf, write: true }))],
      packIn: [],
      packOut: [],
      scratch,
    };
  }
  const packOutputs = outs.length > Math.floor(lim / 2);
  const outBindings = packOutputs ? 1 : outs.length;
  const inDirectMax = loads.length <= lim - outBindings ? loads.length : lim - outBindings - 1;
  // Keep the biggest inputs bound directly: packing copies them.
  const bySize = [...loads].sort((x, y) => words(y) - words(x));
  const directIns = bySize.slice(0, inDirectMax);
  let off = 0;
  const packIn = bySize.slice(inDirectMax).map((buf) => {
    const p = { buf, offset: off, words: words(buf) };
    off += p.words;
    return p;
  });
  off = 0;
  const packOut = packOutputs
    ? outs.map((buf) => {
        const p = { buf, offset: off, words: words(buf) };
        off += p.words;
        return p;
      })
    : [];
  return {
    direct: [
      ...directIns.map((buf) => ({ buf, write: false })),
      ...(packOutputs ? [] : outs.map((buf) => ({ buf, write: true }))),
    ],
    packIn,
    packOut,
    scratch,
  };
}

interface Variant {
  /** "normal": the whole kernel; "partials": split pass 1; "final": split pass 2. */
  readonly kind: "normal" | "partials" | "final";
  readonly mode: "thread" | "group";
  readonly wg: number;
}

export function kernelToWgsl(
  k: KernelStep,
  buffers: readonly BufferSpec[],
  graph: KGraph,
  limits: GpuLimits,
  tuning: ReductionTuning = GPU_TUNING,
): WgslKernel {
  if (k.accumulators.length || k.outputs.some((o) => o.dest))
    throw new Error("internal: scatter accumulation is CPU-only; plan webgpu programs without fuseScatter.");
  const stores = k.outputs.flatMap((o) => o.nodes);
  const order = topoOrder(stores);
  const { root } = buildScopes(order, k.loopVars);
  const chain = chainOf(root);
  const iterations = k.loop.reduce((a, b) => a * b, 1);
  for (const b of new Set([
    ...order.filter((n) => n.op === "load").map((n) => Number(n.tag)),
    ...k.outputs.map((o) => o.buf),
  ])) {
    if (buffers[b]!.dtype === "float64") throw float64Error();
  }

  const topReduces = chain.flatMap((s) => s.nodes.filter((n) => n.op === "reduce"));
  const topExtent = Math.max(0, ...topReduces.map((n) => n.rvar!.value));
  const longOnes = topReduces.filter((n) => n.rvar!.value >= tuning.minExtent);
  // Split: one long reduction, huge, in a short loop, whose body needs no other long reduction
  // (pass 1 would recompute that one in every thread).
  const candidate =
    longOnes.length === 1 && longOnes[0]!.rvar!.value >= tuning.splitExtent && iterations <= tuning.splitMaxIterations
      ? longOnes[0]!
      : null;
  const split =
    candidate && !topoOrder([candidate.args[0]!]).some((n) => n.op === "reduce" && n.rvar!.value >= tuning.minExtent)
      ? candidate
      : null;
  const mode = topExtent >= tuning.minExtent && iterations <= tuning.maxIterations ? "group" : "thread";
  const groupWg = Math.min(topExtent >= 4096 ? 256 : 64, limits.maxComputeInvocationsPerWorkgroup);
  const ctx: EmitContext = { k, buffers, graph, limits, tuning, chain, iterations, split };
  if (split) {
    const T = tuning.splitThreads;
    const slots = split.tag === "argmax" || split.tag === "argmin" ? 2 : 1;
    const partials = emit(ctx, { kind: "partials", mode: "thread", wg: THREAD_WG });
    const final = emit(ctx, { kind: "final", mode: "group", wg: groupWg });
    return { passes: [partials, final], scratchWords: iterations * T * slots, mode: "split", workgroupSize: groupWg };
  }
  const pass = emit(ctx, { kind: "normal", mode, wg: mode === "thread" ? THREAD_WG : groupWg });
  return { passes: [pass], scratchWords: 0, mode, workgroupSize: mode === "thread" ? THREAD_WG : groupWg };
}

/** Nodes reachable from `roots` without looking into `stop`'s arguments. */
function reachableStoppingAt(roots: readonly KNode[], stop: KNode): Set<KNode> {
  const seen = new Set<KNode>();
  const stack = [...roots];
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    if (n !== stop) stack.push(...n.args);
  }
  return seen;
}

interface EmitContext {
  readonly k: KernelStep;
  readonly buffers: readonly BufferSpec[];
  readonly graph: KGraph;
  readonly limits: GpuLimits;
  readonly tuning: ReductionTuning;
  readonly chain: readonly Scope[];
  readonly iterations: number;
  readonly split: KNode | null;
}

/** Renders one pass: emission runs twice, first to learn which buffers it reads (bindings depend on that). */
function emit(c: EmitContext, v: Variant): KernelPass {
  const scratch = v.kind !== "normal";
  const outSlots = v.kind === "partials" ? [] : [...new Set(c.k.outputs.map((o) => o.buf))];
  const probe = render(c, v, null);
  const bindings = planBindings(
    [...probe.loads],
    outSlots,
    c.buffers,
    c.limits.maxStorageBuffersPerShaderStage,
    scratch,
  );
  const r = render(c, v, bindings);
  const groups =
    c.iterations === 0
      ? 0
      : v.kind === "partials"
        ? Math.ceil((c.iterations * c.tuning.splitThreads) / v.wg)
        : v.mode === "thread"
          ? Math.ceil(c.iterations / v.wg)
          : c.iterations;
  return { source: r.source, bindings, groups };
}

function render(c: EmitContext, v: Variant, bindings: KernelBindings | null): { source: string; loads: Set<number> } {
  const { k, buffers, graph, tuning, split } = c;
  const T = tuning.splitThreads;
  const helpers = new HelperSet();
  const need = helpers.need;
  const loads = new Set<number>();
  const packInOf = new Map(bindings?.packIn.map((p) => [p.buf, p]) ?? []);
  const packOutOf = new Map(bindings?.packOut.map((p) => [p.buf, p]) ?? []);
  const load = (slot: number, d: DType, index: string): string => {
    loads.add(slot);
    const p = packInOf.get(slot);
    if (!p) return fromStorage(d, `b${slot}[${index}]`);
    const w = `pack_in[${p.offset}i + ${index}]`;
    return d === "bool" ? `(${w} != 0u)` : `bitcast<${wgslType(d)}>(${w})`;
  };
  const name = (n: KNode): string =>
    n.op === "const" ? literal(n.value, n.dtype, need) : n.op === "var" ? `v_${n.tag}` : `t${n.id}`;
  const ectx = { name, load, need, graph };
  const wg = v.wg;
  const lines: string[] = [];
  const extraFns = new Map<string, string>();
  const workgroupArrays = new Map<string, string>(); // name → element type
  const redArray = (t: string, role: "val" | "idx"): string => {
    const nm = role === "idx" ? "red_idx" : `red_${t}`;
    workgroupArrays.set(nm, role === "idx" ? "i32" : t);
    return nm;
  };
  const coopAllowed = v.mode === "group";
  // Pass 1 emits only what the split reduction needs (nodes after it depend on its result);
  // pass 2 everything but the split reduction's body.
  const emitted =
    v.kind === "partials" && split
      ? new Set(topoOrder([split]))
      : v.kind === "final" && split
        ? reachableStoppingAt(
            k.outputs.flatMap((o) => o.nodes),
            split,
          )
        : null;

  const emitScope = (s: Scope, indent: string, top: boolean): void => {
    for (const n of s.nodes) {
      if (emitted && !emitted.has(n)) continue;
      if (n.op !== "reduce") {
        lines.push(`${indent}let ${name(n)} = ${wgslExpr(n, ectx)};`);
        continue;
      }
      const child = s.children.find((ch) => ch.reduce === n)!;
      if (n === split && v.kind === "partials") emitPartials(n, child, indent);
      else if (n === split && v.kind === "final") emitTree(n, indent, null);
      else emitReduce(n, child, indent, top && coopAllowed && n.rvar!.value >= tuning.minExtent);
    }
  };

  const argOf = (n: KNode) =>
    n.tag === "argmax" || n.tag === "argmin" ? argBetterFn(n.tag, n.args[0]!.dtype, need) : null;

  /**
   * Serial fold of n's body in a loop (`header`); `index` defines the reduction variable from the
   * loop counter and `guard` skips counters past the extent. Leaves the partial in acc (and accM).
   */
  const emitFold = (
    n: KNode,
    child: Scope,
    indent: string,
    header: string,
    index: string | null,
    guard: string | null,
    acc: string,
    accM: string,
  ): void => {
    const body = n.args[0]!;
    const bd = body.dtype;
    const better = argOf(n);
    if (better) extraFns.set(better.name, better.code);
    lines.push(`${indent}${header}`);
    let ind = indent + "  ";
    if (index) lines.push(`${ind}let ${name(n.rvar!)} = ${index};`);
    if (guard) {
      lines.push(`${ind}if (${guard}) {`);
      ind += "  ";
    }
    emitScope(child, ind, false);
    const b = name(body);
    if (better)
      lines.push(
        `${ind}if (${better.name}(${accM}, ${acc}, ${b}, ${name(n.rvar!)})) ` +
          `{ ${accM} = ${b}; ${acc} = ${name(n.rvar!)}; }`,
      );
    else lines.push(`${ind}${acc} = ${combine(n.tag, bd, acc, b, need)};`);
    if (guard) lines.push(`${indent}  }`);
    lines.push(`${indent}}`);
  };
  const declareAcc = (n: KNode, indent: string, acc: string, accM: string): void => {
    const bd = n.args[0]!.dtype;
    if (bd === "float64") throw float64Error();
    const bt = wgslType(bd);
    if (argOf(n)) {
      lines.push(`${indent}var ${accM}: ${bt} = ${bd === "float32" ? "0.0f" : "0i"};`);
      lines.push(`${indent}var ${acc}: i32 = -1;`);
    } else lines.push(`${indent}var ${acc}: ${bt} = ${reduceInit(n.tag, bd, need)};`);
  };

  const emitReduce = (n: KNode, child: Scope, indent: string, coop: boolean): void => {
    const rv = name(n.rvar!),
      ext = n.rvar!.value;
    const acc = coop ? `p${n.id}` : name(n),
      accM = `m${n.id}`;
    declareAcc(n, indent, acc, accM);
    if (!coop) {
      emitFold(n, child, indent, `for (var ${rv}: i32 = 0i; ${rv} < ${ext}i + zi; ${rv}++) {`, null, null, acc, accM);
      return;
    }
    // Cooperative: strided share per thread (the loop bound is uniform, the guard is not), then a tree.
    emitFold(
      n,
      child,
      indent,
      `for (var rb${n.id}: i32 = 0i; rb${n.id} < ${ext}i + zi; rb${n.id} += ${wg}i) {`,
      `rb${n.id} + i32(lid)`,
      `${rv} < ${ext}i`,
      acc,
      accM,
    );
    emitTree(n, indent, { acc, accM });
  };

  /** Pass 1 of a split reduction: thread t of T folds elements t, t + T, ... and stores its partial. */
  const emitPartials = (n: KNode, child: Scope, indent: string): void => {
    const rv = name(n.rvar!),
      ext = n.rvar!.value;
    const acc = `p${n.id}`,
      accM = `m${n.id}`;
    declareAcc(n, indent, acc, accM);
    emitFold(
      n,
      child,
      indent,
      `for (var rb${n.id}: i32 = 0i; rb${n.id} < ${ext}i + zi; rb${n.id} += ${T}i) {`,
      `rb${n.id} + part`,
      `${rv} < ${ext}i`,
      acc,
      accM,
    );
    if (argOf(n)) {
      lines.push(`${indent}scratch[2u * linear] = bitcast<u32>(${accM});`);
      lines.push(`${indent}scratch[2u * linear + 1u] = bitcast<u32>(${acc});`);
    } else lines.push(`${indent}scratch[linear] = bitcast<u32>(${acc});`);
  };

  /**
   * Workgroup tree for reduction n. With `own`, each thread contributes its partial; otherwise
   * (split pass 2) each thread first folds partials lid, lid + wg, ... of this iteration's T.
   */
  const emitTree = (n: KNode, indent: string, own: { acc: string; accM: string } | null): void => {
    const bd = n.args[0]!.dtype;
    const bt = wgslType(bd);
    const better = argOf(n);
    if (better) extraFns.set(better.name, better.code);
    const acc = own?.acc ?? `p${n.id}`,
      accM = own?.accM ?? `m${n.id}`;
    if (!own) {
      declareAcc(n, indent, acc, accM);
      lines.push(`${indent}for (var q = lid; q < ${T}u; q += ${wg}u) {`);
      if (better) {
        lines.push(`${indent}  let pm = bitcast<${bt}>(scratch[2u * (flat * ${T}u + q)]);`);
        lines.push(`${indent}  let pi = bitcast<i32>(scratch[2u * (flat * ${T}u + q) + 1u]);`);
        lines.push(`${indent}  if (${better.name}(${accM}, ${acc}, pm, pi)) { ${accM} = pm; ${acc} = pi; }`);
      } else {
        lines.push(
          `${indent}  ${acc} = ${combine(n.tag, bd, acc, `bitcast<${bt}>(scratch[flat * ${T}u + q])`, need)};`,
        );
      }
      lines.push(`${indent}}`);
    }
    const i2 = indent + "  ";
    if (better) {
      const rm = redArray(bt, "val"),
        ri = redArray(bt, "idx");
      lines.push(`${indent}${rm}[lid] = ${accM}; ${ri}[lid] = ${acc};`);
      lines.push(`${indent}workgroupBarrier();`);
      lines.push(`${indent}for (var s = ${wg / 2}u; s > 0u; s = s >> 1u) {`);
      lines.push(
        `${i2}if (lid < s && ${better.name}(${rm}[lid], ${ri}[lid], ${rm}[lid + ` +
          `s], ${ri}[lid + s])) { ${rm}[lid] = ${rm}[lid + s]; ${ri}[lid] = ${ri}[lid + s]; }`,
      );
      lines.push(`${i2}workgroupBarrier();`);
      lines.push(`${indent}}`);
      lines.push(`${indent}let ${name(n)} = ${ri}[0];`);
    } else {
      const r = redArray(bt, "val");
      lines.push(`${indent}${r}[lid] = ${acc};`);
      lines.push(`${indent}workgroupBarrier();`);
      lines.push(`${indent}for (var s = ${wg / 2}u; s > 0u; s = s >> 1u) {`);
      lines.push(`${i2}if (lid < s) { ${r}[lid] = ${combine(n.tag, bd, `${r}[lid]`, `${r}[lid + s]`, need)}; }`);
      lines.push(`${i2}workgroupBarrier();`);
      lines.push(`${indent}}`);
      lines.push(`${indent}let ${name(n)} = ${r}[0];`);
    }
    // Nobody may overwrite the tree until every thread has read the result.
    lines.push(`${indent}workgroupBarrier();`);
  };

  // Entry: flat iteration index (and for pass 1 the thread's share), loop variables from it.
  const ind = "  ";
  const head: string[] = [];
  if (v.kind === "partials") {
    head.push(`${ind}let linear = gid.x + gid.y * (nwg.x * ${wg}u);`);
    head.push(`${ind}if (linear >= ${c.iterations * T}u) { return; }`);
    head.push(`${ind}let flat = linear / ${T}u;`);
    head.push(`${ind}let part = i32(linear % ${T}u);`);
  } else {
    head.push(
      v.mode === "thread"
        ? `${ind}let flat = gid.x + gid.y * (nwg.x * ${wg}u);`
        : `${ind}let flat = wid.x + wid.y * nwg.x;`,
    );
    head.push(`${ind}if (flat >= ${c.iterations}u) { return; }`);
  }
  // Always 0, but unknown to the shader compiler: loops bounded by `n + zi` are not fully unrolled
  // (drivers unroll constant-trip loops, which made big reductions take tens of seconds to compile).
  head.push(`${ind}let zi = i32(nwg.z) - 1i;`);
  let rest = "flat";
  for (let i = k.loopVars.length - 1; i >= 0; i--) {
    const lv = k.loopVars[i]!;
    if (i === 0) head.push(`${ind}let v_${lv.tag} = i32(${rest});`);
    else {
      head.push(`${ind}let v_${lv.tag} = i32(${rest} % ${k.loop[i]!}u);`);
      head.push(`${ind}let q${i} = ${rest} / ${k.loop[i]!}u;`);
      rest = `q${i}`;
    }
  }
  for (const s of c.chain) emitScope(s, ind, true);

  if (v.kind !== "partials") {
    const storeLines: string[] = [];
    for (const o of k.outputs) {
      const d = buffers[o.buf]!.dtype;
      const p = packOutOf.get(o.buf);
      o.nodes.forEach((n, u) => {
        const pos = o.inner === 1 ? "flat" : `flat * ${o.inner}u + ${u}u`;
        const val = name(n);
        if (p)
          storeLines.push(
            `pack_out[${p.offset}u + ${pos}] = ${d === "bool" ? `select(0u, 1u, ${val})` : `bitcast<u32>(${val})`};`,
          );
        else storeLines.push(`b${o.buf}[${pos}] = ${toStorage(d, val)};`);
      });
    }
    if (v.mode === "group") {
      lines.push(`${ind}if (lid == 0u) {`);
      for (const s of storeLines) lines.push(`${ind}  ${s}`);
      lines.push(`${ind}}`);
    } else for (const s of storeLines) lines.push(`${ind}${s}`);
  }

  const decls: string[] = [];
  let binding = 0;
  if (bindings) {
    for (const { buf, write } of bindings.direct) {
      decls.push(
        `@group(0) @binding(${binding++}) var<storage, ${write ? "read_write" : "read"}> ` +
          `b${buf}: array<${storageType(buffers[buf]!.dtype)}>;`,
      );
    }
    if (bindings.packIn.length) decls.push(`@group(0) @binding(${binding++}) var<storage, read> pack_in: array<u32>;`);
    if (bindings.packOut.length)
      decls.push(`@group(0) @binding(${binding++}) var<storage, read_write> pack_out: array<u32>;`);
    if (bindings.scratch)
      decls.push(
        `@group(0) @binding(${binding++}) ` +
          `var<storage, ${v.kind === "partials" ? "read_write" : "read"}> scratch: array<u32>;`,
      );
  }
  const entry =
    v.mode === "thread"
      ? `@compute @workgroup_size(${wg})\nfn main(@builtin(global_invocation_id) ` +
        `gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {`
      : `@compute @workgroup_size(${wg})\nfn main(@builtin(workgroup_id) wid: vec3<u32>, ` +
        `@builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {`;
  const wgDecls = [...workgroupArrays].map(([nm, t]) => `var<workgroup> ${nm}: array<${t}, ${wg}>;`);
  const source = [
    ...decls,
    ...wgDecls,
    helpers.render(),
    ...extraFns.values(),
    "",
    entry,
    ...head,
    ...lines,
    "}",
    "",
  ].join("\n");
  return { source, loads };
}
