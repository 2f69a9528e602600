/**
 * dot_general as a batched matmul C[b, m, n] = Σ_k A[b, m, k] · B[b, k, n] over strided views
 * of the operands (a transposed copy only when a dimension group is not one stride). Sizes and
 * strides are uniform parameters, so each kernel compiles once per dtype, whatever the shapes.
 *
 * Kernels by shape and device:
 *  - tiled: 64×64 output tiles through workgroup memory (16×16 threads, 4×4 outputs each),
 *    for GPUs;
 *  - blocked: no workgroup memory or barriers, 8 rows per workgroup (uniform A loads) × 4
 *    columns per thread, for CPU-emulated adapters (lavapipe), where barriers turn each
 *    invocation into a coroutine and cost far more than they save;
 *  - cooperative: one workgroup per output with a fixed reduction tree (few outputs, long k);
 *  - one thread per output (small matrices).
 * Every output sums k in a fixed order, so results are identical run to run.
 */
import type { BufferSpec, RoutineStep } from "../../../compile/plan.js";
import type { DotParams } from "../../../prims/linalg.js";
import { range } from "../../../shape.js";
import { gpu } from "../context.js";
import { grid, paramsStruct, uniformParams } from "../pipelines.js";
import { float64Error, storageType } from "../wgsl-lib.js";
import { groupStride, transposer } from "./layout.js";
import type { Routine } from "./types.js";

export type MatmulKernel = "tiled" | "blocked" | "cooperative" | "per-output";

const FIELDS = ["B", "M", "N", "K", "aB", "aM", "aK", "bB", "bN", "bK", "tilesM", "tilesN", "tk"];
const TILE = 64,
  TK = 16,
  BLOCK_ROWS = 8,
  BLOCK_COLS = 128,
  COOP_WG = 64;

const header = (t: string) => `${paramsStruct(FIELDS)}
@group(0) @binding(0) var<storage, read> A: array<${t}>;
@group(0) @binding(1) var<storage, read> Bm: array<${t}>;
@group(0) @binding(2) var<storage, read_write> C: array<${t}>;
@group(0) @binding(3) var<uniform> P: Params;`;
const zeroOf = (t: string) => (t === "f32" ? "0.0f" : "0i");

function tiledSource(t: string): string {
  const z = zeroOf(t);
  const accDecl = range(16)
    .map((i) => `  var c${i}: ${t} = ${z};`)
    .join("\n");
  const fma = range(4)
    .flatMap((i) => range(4).map((j) => `      c${i * 4 + j} += a${i} * b${j};`))
    .join("\n");
  const stores = range(4)
    .flatMap((i) =>
      range(4).map(
        (j) =>
          `  if (m0 + ty * 4u + ${i}u < P.M && n0 + tx * 4u + ${j}u < P.N) { C[cBase ` +
          `+ (m0 + ty * 4u + ${i}u) * P.N + n0 + tx * 4u + ${j}u] = c${i * 4 + j}; }`,
      ),
    )
    .join("\n");
  return `${header(t)}
var<workgroup> As: array<${t}, ${TK * TILE}>;
var<workgroup> Bs: array<${t}, ${TK * TILE}>;
@compute @workgroup_size(16, 16)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_id) l: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>
) {
  let g = wid.x + wid.y * nwg.x;
  let perBatch = P.tilesM * P.tilesN;
  if (g >= P.B * perBatch) { return; }
  let bi = g / perBatch;
  let tile = g % perBatch;
  let m0 = (tile / P.tilesN) * ${TILE}u;
  let n0 = (tile % P.tilesN) * ${TILE}u;
  let tx = l.x;
  let ty = l.y;
  let lid = ty * 16u + tx;
  let aBase = bi * P.aB;
  let bBase = bi * P.bB;
  let cBase = bi * P.M * P.N;
${accDecl}
  for (var k0 = 0u; k0 < P.K; k0 += ${TK}u) {
    for (var r = 0u; r < ${(TK * TILE) / 256}u; r++) {
      let e = lid + r * 256u;
      let kk = e / ${TILE}u;
      let x = e % ${TILE}u;
      let k = k0 + kk;
      let m = m0 + x;
      let n = n0 + x;
      As[e] = select(${z}, A[aBase + min(m, P.M - 1u) * P.aM + min(k, P.K - 1u) * P.aK], m < P.M && k < P.K);
      Bs[e] = select(${z}, Bm[bBase + min(k, P.K - 1u) * P.bK + min(n, P.N - 1u) * P.bN], n < P.N && k < P.K);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < P.tk; kk++) {
      let ar = kk * ${TILE}u + ty * 4u;
      let br = kk * ${TILE}u + tx * 4u;
      let a0 = As[ar]; let a1 = As[ar + 1u]; let a2 = As[ar + 2u]; let a3 = As[ar + 3u];
      let b0 = Bs[br]; let b1 = Bs[br + 1u]; let b2 = Bs[br + 2u]; let b3 = Bs[br + 3u];
${fma}
    }
    workgroupBarrier();
  }
${stores}
}
`;
}

function blockedSource(t: string): string {
  const z = zeroOf(t);
  const R = BLOCK_ROWS;
  const acc = range(R * 4)
    .map((i) => `  var c${i}: ${t} = ${z};`)
    .join("\n");
  const rows = range(R)
    .map((i) => `  let ra${i} = aBase + min(m0 + ${i}u, P.M - 1u) * P.aM;`)
    .join("\n");
  const cols = range(4)
    .map((j) => `  let cb${j} = bBase + min(n0 + ${j}u, P.N - 1u) * P.bN;`)
    .join("\n");
  const la = range(R)
    .map((i) => `let a${i} = A[ra${i} + k * P.aK];`)
    .join(" ");
  const lb = range(4)
    .map((j) => `let b${j} = Bm[cb${j} + k * P.bK];`)
    .join(" ");
  const fma = range(R)
    .flatMap((i) => range(4).map((j) => `    c${i * 4 + j} += a${i} * b${j};`))
    .join("\n");
  const stores = range(R)
    .flatMap((i) =>
      range(4).map(
        (j) =>
          `  if (m0 + ${i}u < P.M && n0 + ${j}u < P.N) { C[cBase + (m0 + ${i}u) * P.N + n0 + ${j}u] = c${i * 4 + j}; }`,
      ),
    )
    .join("\n");
  return `${header(t)}
@compute @workgroup_size(${BLOCK_COLS / 4})
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
  @builtin(num_workgroups) nwg: vec3<u32>
) {
  let g = wid.x + wid.y * nwg.x;
  let perBatch = P.tilesM * P.tilesN;
  if (g >= P.B * perBatch) { return; }
  let bi = g / perBatch;
  let blk = g % perBatch;
  // Rows come from the workgroup id (uniform loads of A); columns from the lane.
  let m0 = (blk / P.tilesN) * ${R}u;
  let n0 = (blk % P.tilesN) * ${BLOCK_COLS}u + lid * 4u;
  let aBase = bi * P.aB;
  let bBase = bi * P.bB;
  let cBase = bi * P.M * P.N;
${rows}
${cols}
${acc}
  for (var k = 0u; k < P.K; k++) {
    ${la}
    ${lb}
${fma}
  }
${stores}
}
`;
}

/** WGSL: output element g of C → batch bi, row m, column n; A's row and B's column offsets; a zeroed accumulator. */
const outputElement = (t: string): string => `  if (g >= P.B * P.M * P.N) { return; }
  let bi = g / (P.M * P.N);
  let m = (g / P.N) % P.M;
  let n = g % P.N;
  let aRow = bi * P.aB + m * P.aM;
  let bCol = bi * P.bB + n * P.bN;
  var acc: ${t} = ${zeroOf(t)};`;

function cooperativeSource(t: string): string {
  return `${header(t)}
var<workgroup> red: array<${t}, ${COOP_WG}>;
@compute @workgroup_size(${COOP_WG})
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
  @builtin(num_workgroups) nwg: vec3<u32>
) {
  let g = wid.x + wid.y * nwg.x;
${outputElement(t)}
  for (var k0 = 0u; k0 < P.K; k0 += ${COOP_WG}u) {
    let k = k0 + lid;
    if (k < P.K) { acc += A[aRow + k * P.aK] * Bm[bCol + k * P.bK]; }
  }
  red[lid] = acc;
  workgroupBarrier();
  for (var s = ${COOP_WG / 2}u; s > 0u; s = s >> 1u) {
    if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { C[g] = red[0]; }
}
`;
}

function perOutputSource(t: string): string {
  return `${header(t)}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = gid.x + gid.y * (nwg.x * 64u);
${outputElement(t)}
  for (var k = 0u; k < P.K; k++) { acc += A[aRow + k * P.aK] * Bm[bCol + k * P.bK]; }
  C[g] = acc;
}
`;
}

const remaining = (n: number, ...used: (readonly number[])[]): number[] =>
  range(n).filter((d) => !used.some((u) => u.includes(d)));

/** Which kernel a [B, M, K] × [B, K, N] product uses on this device (tests may force one). */
export function chooseMatmulKernel(B: number, M: number, N: number, K: number, softwareDevice: boolean): MatmulKernel {
  if (softwareDevice) {
    // Barriers are costly on CPU emulation: the tree kernel only for a handful of outputs.
    if (B * M * N <= 16 && K >= 4096) return "cooperative";
    return M * N >= 256 ? "blocked" : "per-output";
  }
  if (B * M * N <= 4096 && K >= 256) return "cooperative";
  return M >= 32 && N >= 32 ? "tiled" : "per-output";
}
let forcedKernel: MatmulKernel | null = null;
/** Tests: use one kernel for every matmul (null restores the automatic choice). */
export function forceMatmulKernel(k: MatmulKernel | null): void {
  forcedKernel = k;
}

export function matmulRoutine(step: RoutineStep, buffers: readonly BufferSpec[]): Routine {
  const p = step.eqn.params as DotParams;
  const [ls, rs] = [step.eqn.inputs[0]!.aval.shape, step.eqn.inputs[1]!.aval.shape];
  const dtype = buffers[step.outputs[0]!]!.dtype;
  if (dtype === "float64") throw float64Error();
  const t = storageType(dtype);
  const [lc, rc] = p.contract,
    [lb, rb] = p.batch;
  const lf = remaining(ls.length, lc, lb),
    rf = remaining(rs.length, rc, rb);
  // Operand views: [batch, free, contract] groups, each one stride, or a transposed copy first.
  const view = (shape: readonly number[], bd: readonly number[], fd: readonly number[], cd: readonly number[]) => {
    const g = [groupStride(shape, bd), groupStride(shape, fd), groupStride(shape, cd)];
    if (g.every((x) => x !== null))
      return { perm: null, s: [g[0]!.stride, g[1]!.stride, g[2]!.stride], sizes: g.map((x) => x!.size) };
    const sizes = [bd, fd, cd].map((d) => d.reduce((q, a) => q * shape[a]!, 1));
    return { perm: [...bd, ...fd, ...cd], s: [sizes[1]! * sizes[2]!, sizes[2]!, 1], sizes };
  };
  const lv = view(ls, lb, lf, lc),
    rv = view(rs, rb, rf, rc);
  const [B, M, K] = lv.sizes as [number, number, number];
  const N = rv.sizes[1]!;
  const ctx = gpu();
  if (B * M * N === 0) return () => [ctx.pool.allocate(0)];
  const kernel = forcedKernel ?? chooseMatmulKernel(B, M, N, K, ctx.software);
  let source: string,
    groups: number,
    tilesM = 1,
    tilesN = 1;
  switch (kernel) {
    case "tiled":
      tilesM = Math.ceil(M / TILE);
      tilesN = Math.ceil(N / TILE);
      source = tiledSource(t);
      groups = B * tilesM * tilesN;
      break;
    case "blocked":
      tilesM = Math.ceil(M / BLOCK_ROWS);
      tilesN = Math.ceil(N / BLOCK_COLS);
      source = blockedSource(t);
      groups = B * tilesM * tilesN;
      break;
    case "cooperative":
      source = cooperativeSource(t);
      groups = B * M * N;
      break;
    case "per-output":
      source = perOutputSource(t);
      groups = Math.ceil((B * M * N) / 64);
      break;
  }
  const pipe = ctx.pipelines.get(source);
  const params = uniformParams(ctx.device, [
    B,
    M,
    N,
    K,
    lv.s[0]!,
    lv.s[1]!,
    lv.s[2]!,
    rv.s[0]!,
    rv.s[1]!,
    rv.s[2]!,
    tilesM,
    tilesN,
    TK,
  ]);
  const dims = grid(groups, ctx.limits.maxComputeWorkgroupsPerDimension);
  const copyL = lv.perm ? transposer(ls, lv.perm) : null,
    copyR = rv.perm ? transposer(rs, rv.perm) : null;
  return ([lhs, rhs]) => {
    const out = ctx.pool.allocate(B * M * N);
    const a = copyL ? copyL(lhs!) : lhs!;
    const b = copyR ? copyR(rhs!) : rhs!;
    // K = 0: every kernel stores zeros (empty sums).
    ctx.stream.dispatch(pipe.pipeline, ctx.pipelines.bindGroup(pipe, [a, b, out, params]), dims);
    if (a !== lhs) a.release();
    if (b !== rhs) b.release();
    return [out];
  };
}
