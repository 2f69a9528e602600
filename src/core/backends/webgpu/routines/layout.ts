/**
 * Strided views of operands for routines: a group of axes can be addressed with one stride
 * when its axes are consecutive and in order (size-1 axes aside); otherwise the operand is
 * first copied into the needed axis order by a small transpose kernel.
 */
import { stridesOf } from "../../../shape.js";
import type { DeviceBuffer } from "../buffers.js";
import { gpu } from "../context.js";
import { grid, paramsStruct, uniformParams } from "../pipelines.js";

/** Size and single stride of the row-major flattening of `axes` (in that order), or null if not expressible. */
export function groupStride(
  shape: readonly number[],
  axes: readonly number[],
): { size: number; stride: number } | null {
  const st = stridesOf(shape);
  const live = axes.filter((a) => shape[a] !== 1);
  const size = axes.reduce((p, a) => p * shape[a]!, 1);
  if (live.length === 0) return { size, stride: 0 };
  for (let i = 0; i + 1 < live.length; i++) {
    if (st[live[i]!] !== st[live[i + 1]!]! * shape[live[i + 1]!]!) return null;
  }
  return { size, stride: st[live[live.length - 1]!]! };
}

const MAX_RANK = 8;
/** One shader for every transpose: shapes and strides are uniform parameters (any 32-bit element). */
const TRANSPOSE_PARAMS = paramsStruct([
  "n",
  ...Array.from({ length: MAX_RANK }, (_, d) => `o${d}`),
  ...Array.from({ length: MAX_RANK }, (_, d) => `s${d}`),
]);
const TRANSPOSE_SOURCE = `${TRANSPOSE_PARAMS}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * (nwg.x * 64u);
  if (i >= P.n) { return; }
  var rest = i;
  var addr = 0u;
${Array.from({ length: MAX_RANK }, (_, k) => MAX_RANK - 1 - k)
  .map((d) => `  addr += (rest % P.o${d}) * P.s${d}; rest = rest / P.o${d};`)
  .join("\n")}
  dst[i] = src[addr];
}
`;

/**
 * A copier of arrays of \`shape\` into row-major order of the permuted axes \`perm\` (each call returns a new buffer,
 * one reference).
 */
export function transposer(shape: readonly number[], perm: readonly number[]): (src: DeviceBuffer) => DeviceBuffer {
  const ctx = gpu();
  const n = shape.reduce((a, b) => a * b, 1);
  if (shape.length > MAX_RANK)
    throw new Error(`webgpu: transposes of rank ${shape.length} > ${MAX_RANK} are not supported.`);
  const inSt = stridesOf(shape);
  const pad = MAX_RANK - shape.length;
  // Output dims right-aligned in the 8 slots (leading slots are size 1, stride 0).
  const dims = [...new globalThis.Array<number>(pad).fill(1), ...perm.map((p) => shape[p]!)];
  const strides = [...new globalThis.Array<number>(pad).fill(0), ...perm.map((p) => inSt[p]!)];
  const p = ctx.pipelines.get(TRANSPOSE_SOURCE);
  const params = uniformParams(ctx.device, [n, ...dims, ...strides]);
  const groups = grid(Math.ceil(n / 64), ctx.limits.maxComputeWorkgroupsPerDimension);
  return (src) => {
    const out = ctx.pool.allocate(n);
    if (n > 0) ctx.stream.dispatch(p.pipeline, ctx.pipelines.bindGroup(p, [src, out, params]), groups);
    return out;
  };
}
