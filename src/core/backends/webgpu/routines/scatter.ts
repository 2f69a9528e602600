/**
 * scatter_add without atomics: out[a, j, k] = t[a, j, k] + Σ_{p : idx[p] = j} u[a, p, k], one
 * thread per output element reducing by gather over the inverse incidence of the indices
 * (CSR: for each target row j, the update positions p in increasing order). Every output sums
 * in a fixed order, so results are bit-identical run to run.
 *
 * The CSR is built once per index array:
 *  - on the host when the indices are known there: an index array uploaded from the host keeps
 *    a host mirror, and indices the program computes from such arrays (reshape, add, ...) are
 *    recomputed on the host by the primitives' CPU implementations (cached per input buffers);
 *  - otherwise on the device by a bitonic sort of (row, position) pairs plus a binary search per
 *    row (deterministic, O(m log² m)); cached on the index buffer.
 */
import type { BufferSpec, RoutineStep } from "../../../compile/plan.js";
import type { HostArray } from "../../backend.js";
import type { Eqn, Var } from "../../../ir.js";
import type { GatherParams } from "../../../prims/indexing.js";
import { sizeOf } from "../../../shape.js";
import { BUF_COPY_DST, BUF_UNIFORM, type BufferDerived, type DeviceBuffer } from "../buffers.js";
import { gpu } from "../context.js";
import { grid, paramsStruct, uniformParams } from "../pipelines.js";
import type { ProgramIRInfo } from "../program.js";
import { float64Error, storageType } from "../wgsl-lib.js";
import type { Routine } from "./types.js";

/** The inverse incidence of an index array on the device. */
class Csr implements BufferDerived {
  constructor(
    readonly rowStart: DeviceBuffer,
    readonly positions: DeviceBuffer,
  ) {}
  release(): void {
    this.rowStart.release();
    this.positions.release();
  }
}

/** Host CSR; throws for out-of-range indices like the CPU implementation. */
function hostCsr(idx: Int32Array, n: number, axis: number): Csr {
  const m = idx.length;
  const rows = new Int32Array(m);
  const start = new Int32Array(n + 1);
  for (let p = 0; p < m; p++) {
    const i = idx[p]!;
    const j = i < 0 ? i + n : i;
    if (j < 0 || j >= n) throw new Error(`scatterAdd: index ${i} is out of bounds for axis ${axis} with size ${n}.`);
    rows[p] = j;
    start[j + 1]!++;
  }
  for (let j = 0; j < n; j++) start[j + 1]! += start[j]!;
  const cursor = start.slice(0, n);
  const pos = new Int32Array(m);
  for (let p = 0; p < m; p++) pos[cursor[rows[p]!]!++] = p;
  const ctx = gpu();
  const rs = ctx.pool.allocate(n + 1),
    ps = ctx.pool.allocate(m);
  ctx.stream.write(rs, start);
  ctx.stream.write(ps, pos);
  return new Csr(rs, ps);
}

// ---------------------------------------------------------------- device CSR (bitonic sort)

const sortParams = new Map<number, GPUBuffer>();
/** (j, k, M) of every bitonic pass for M elements, one 256-byte slot per pass (uniform offset alignment). */
function bitonicParams(M: number): { buffer: GPUBuffer; passes: number } {
  const pairs: [number, number][] = [];
  for (let k = 2; k <= M; k <<= 1) for (let j = k >> 1; j > 0; j >>= 1) pairs.push([j, k]);
  let buffer = sortParams.get(M);
  if (!buffer) {
    const data = new Uint32Array(Math.max(1, pairs.length) * 64);
    pairs.forEach(([j, k], i) => {
      data[i * 64] = j;
      data[i * 64 + 1] = k;
      data[i * 64 + 2] = M;
    });
    buffer = gpu().device.createBuffer({ size: data.byteLength, usage: BUF_UNIFORM | BUF_COPY_DST });
    gpu().device.queue.writeBuffer(buffer, 0, data);
    sortParams.set(M, buffer);
  }
  return { buffer, passes: pairs.length };
}

const HEAD = `@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * (nwg.x * 64u);`;
const CSR_FIELDS = ["M", "m", "n"];
const SORT_INIT = `${paramsStruct(CSR_FIELDS)}
@group(0) @binding(0) var<storage, read> idx: array<i32>;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> vals: array<u32>;
@group(0) @binding(3) var<uniform> P: Params;
${HEAD}
  if (i >= P.M) { return; }
  vals[i] = i;
  if (i >= P.m) { keys[i] = 0xffffffffu; return; }
  let raw = idx[i];
  let n = i32(P.n);
  let j = select(raw, raw + n, raw < 0i);
  keys[i] = u32(clamp(j, 0i, n - 1i));
}
`;
const SORT_PASS = `struct Pass { j: u32, k: u32, M: u32 }
@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> vals: array<u32>;
@group(0) @binding(2) var<uniform> S: Pass;
${HEAD}
  if (i >= S.M) { return; }
  let l = i ^ S.j;
  if (l <= i) { return; }
  let ka = keys[i]; let kb = keys[l];
  let va = vals[i]; let vb = vals[l];
  let aAfterB = ka > kb || (ka == kb && va > vb);
  if (aAfterB == ((i & S.k) == 0u)) { keys[i] = kb; keys[l] = ka; vals[i] = vb; vals[l] = va; }
}
`;
const ROW_BOUNDS = `${paramsStruct(CSR_FIELDS)}
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> rowStart: array<i32>;
@group(0) @binding(2) var<uniform> P: Params;
${HEAD}
  if (i > P.n) { return; }
  var lo = 0u;
  var hi = P.m;
  while (lo < hi) {
    let mid = (lo + hi) / 2u;
    if (keys[mid] < i) { lo = mid + 1u; } else { hi = mid; }
  }
  rowStart[i] = i32(lo);
}
`;

/** CSR of device-only indices: bitonic sort of (row, position), then a binary search per row. */
function deviceCsr(idx: DeviceBuffer, m: number, n: number): Csr {
  const ctx = gpu();
  const maxDim = ctx.limits.maxComputeWorkgroupsPerDimension;
  let M = 1;
  while (M < m) M <<= 1;
  const keys = ctx.pool.allocate(M),
    vals = ctx.pool.allocate(M);
  const params = uniformParams(ctx.device, [M, m, n]);
  const init = ctx.pipelines.get(SORT_INIT);
  ctx.stream.dispatch(
    init.pipeline,
    ctx.pipelines.bindGroup(init, [idx, keys, vals, params]),
    grid(Math.ceil(M / 64), maxDim),
  );
  const pass = ctx.pipelines.get(SORT_PASS);
  const sp = bitonicParams(M);
  for (let q = 0; q < sp.passes; q++) {
    const bg = ctx.pipelines.bindGroup(pass, [keys, vals, { uniform: sp.buffer, offset: q * 256, size: 16 }]);
    ctx.stream.dispatch(pass.pipeline, bg, grid(Math.ceil(M / 64), maxDim));
  }
  const rowStart = ctx.pool.allocate(n + 1);
  const bounds = ctx.pipelines.get(ROW_BOUNDS);
  ctx.stream.dispatch(
    bounds.pipeline,
    ctx.pipelines.bindGroup(bounds, [keys, rowStart, params]),
    grid(Math.ceil((n + 1) / 64), maxDim),
  );
  keys.release();
  return new Csr(rowStart, vals);
}

// ---------------------------------------------------------------- host recipes for computed indices

interface Recipe {
  readonly inputs: readonly number[];
  readonly inVars: readonly Var[];
  readonly eqns: readonly Eqn[];
  readonly out: Var;
}
const RECIPE_MAX_EQNS = 64;

/**
 * The equations computing `v` from program inputs, if all are int32/bool first-order primitives with CPU
 * implementations.
 */
function hostRecipe(v: Var, info: ProgramIRInfo): Recipe | null {
  const eqns: Eqn[] = [];
  const inVars: Var[] = [];
  const seen = new Set<Var>();
  const visit = (x: Var): boolean => {
    if (seen.has(x)) return true;
    seen.add(x);
    if (x.aval.dtype !== "int32" && x.aval.dtype !== "bool") return false;
    if (info.inputIndex.has(x)) {
      if (x.aval.dtype !== "int32") return false;
      inVars.push(x);
      return true;
    }
    const e = info.producer.get(x);
    if (!e?.prim.impl || (e.prim.evaluate && e.prim.name !== "literal") || eqns.length >= RECIPE_MAX_EQNS) return false;
    if (!e.inputs.every(visit)) return false;
    if (!eqns.includes(e)) eqns.push(e);
    return true;
  };
  if (!visit(v)) return null;
  return { inputs: inVars.map((x) => info.inputIndex.get(x)!), inVars, eqns, out: v };
}

function evalRecipe(r: Recipe, inputs: readonly Int32Array[]): Int32Array {
  const env = new Map<Var, HostArray>();
  r.inVars.forEach((v, i) => env.set(v, { data: inputs[i]!, shape: v.aval.shape, dtype: "int32" }));
  for (const e of r.eqns) {
    const outs = e.prim.impl!(
      e.inputs.map((x) => env.get(x)!),
      e.params,
      e.outs.map((o) => o.aval),
    );
    e.outs.forEach((o, i) => env.set(o, outs[i]!));
  }
  const d = env.get(r.out)!.data;
  return d instanceof Int32Array ? d : Int32Array.from(d);
}

// ---------------------------------------------------------------- the routine

export function scatterRoutine(step: RoutineStep, buffers: readonly BufferSpec[], info: ProgramIRInfo): Routine {
  const { axis } = step.eqn.params as GatherParams;
  const [tVar, idxVar] = step.eqn.inputs as [Var, Var];
  const T = tVar.aval.shape;
  const dtype = buffers[step.outputs[0]!]!.dtype;
  if (dtype === "float64") throw float64Error();
  const outer = sizeOf(T.slice(0, axis)),
    n = T[axis]!,
    inner = sizeOf(T.slice(axis + 1));
  const m = idxVar.aval.size;
  const total = outer * n * inner;
  const ctx = gpu();
  const t = storageType(dtype);
  const zero = t === "f32" ? "0.0f" : t === "i32" ? "0i" : "0u";
  const plus = (x: string, y: string) => (dtype === "bool" ? `(${x} | ${y})` : `(${x} + ${y})`);
  // Shapes are uniform parameters: one pipeline per dtype.
  const src = `${paramsStruct(["total", "n", "inner", "m"])}
@group(0) @binding(0) var<storage, read> tgt: array<${t}>;
@group(0) @binding(1) var<storage, read> updates: array<${t}>;
@group(0) @binding(2) var<storage, read> rowStart: array<i32>;
@group(0) @binding(3) var<storage, read> positions: array<i32>;
@group(0) @binding(4) var<storage, read_write> out: array<${t}>;
@group(0) @binding(5) var<uniform> P: Params;
${HEAD.replace("let i =", "let flat =")}
  if (flat >= P.total) { return; }
  let a = flat / (P.n * P.inner);
  let j = (flat / P.inner) % P.n;
  let k = flat % P.inner;
  var acc: ${t} = ${zero};
  let end = rowStart[j + 1u];
  for (var q = rowStart[j]; q < end; q++) {
    let p = u32(positions[q]);
    acc = ${plus("acc", "updates[(a * P.m + p) * P.inner + k]")};
  }
  out[flat] = ${plus("tgt[flat]", "acc")};
}
`;
  if (total === 0) return () => [ctx.pool.allocate(0)];
  const pipe = ctx.pipelines.get(src);
  const params = uniformParams(ctx.device, [total, n, inner, m]);
  const recipe = info.inputIndex.has(idxVar) ? null : hostRecipe(idxVar, info);
  const recipeCache = new Map<string, Csr>();
  const key = `csr:${n}:${axis}`;

  const csrFor = (idx: DeviceBuffer, programInputs: readonly DeviceBuffer[]): Csr => {
    const cached = idx.derived.get(key);
    if (cached) return cached as Csr;
    if (idx.host) {
      const c = hostCsr(idx.host, n, axis);
      idx.derived.set(key, c);
      return c;
    }
    if (recipe) {
      const ins = recipe.inputs.map((i) => programInputs[i]!);
      if (ins.every((b) => b.host)) {
        const rk = ins.map((b) => b.id).join(",");
        let c = recipeCache.get(rk);
        if (!c) {
          c = hostCsr(
            evalRecipe(
              recipe,
              ins.map((b) => b.host!),
            ),
            n,
            axis,
          );
          // A few entries: the buffers of one set of constants recur every call.
          if (recipeCache.size >= 8) {
            const [k0, v0] = recipeCache.entries().next().value!;
            v0.release();
            recipeCache.delete(k0);
          }
          recipeCache.set(rk, c);
        }
        return c;
      }
    }
    const c = deviceCsr(idx, m, n);
    idx.derived.set(key, c);
    return c;
  };

  return ([target, idx, updates], env) => {
    const csr = csrFor(idx!, env.programInputs);
    const out = ctx.pool.allocate(total);
    ctx.stream.dispatch(
      pipe.pipeline,
      ctx.pipelines.bindGroup(pipe, [target!, updates!, csr.rowStart, csr.positions, out, params]),
      grid(Math.ceil(total / 64), ctx.limits.maxComputeWorkgroupsPerDimension),
    );
    return [out];
  };
}
