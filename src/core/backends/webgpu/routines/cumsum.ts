/**
 * cumsum along an axis. Many rows: one thread scans each row. Few long rows: a three-phase
 * chunked scan (each thread scans a chunk and records its total; one thread per row turns the
 * totals into offsets; every element adds its chunk's offset). The chunking depends only on
 * the sizes, so the summation order (and the result) is the same on every run. Sizes are
 * uniform parameters: one pipeline per dtype and phase serves every shape.
 */
import type { BufferSpec, RoutineStep } from "../../../compile/plan.js";
import type { CumsumParams } from "../../../prims/reduce.js";
import { gpu } from "../context.js";
import { grid, paramsStruct, uniformParams } from "../pipelines.js";
import { float64Error, storageType } from "../wgsl-lib.js";
import type { Routine } from "./types.js";

const CHUNK = 256;
const FIELDS = ["R", "L", "inner", "nc", "total", "reverse", "chunk"];

// Row r = (outer index, inner index); logical position jl runs from the end when reversing.
const COMMON = `
fn rowBase(r: u32) -> u32 { return (r / P.inner) * P.L * P.inner + (r % P.inner); }
fn phys(jl: u32) -> u32 { return select(jl, P.L - 1u - jl, P.reverse != 0u); }`;
const entry = `@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let flat = gid.x + gid.y * (nwg.x * 64u);`;

const rowScan = (t: string, z: string) => `${paramsStruct(FIELDS)}
@group(0) @binding(0) var<storage, read> x: array<${t}>;
@group(0) @binding(1) var<storage, read_write> y: array<${t}>;
@group(0) @binding(2) var<uniform> P: Params;${COMMON}
${entry}
  if (flat >= P.R) { return; }
  let base = rowBase(flat);
  var acc: ${t} = ${z};
  for (var jl = 0u; jl < P.L; jl++) {
    let idx = base + phys(jl) * P.inner;
    acc += x[idx];
    y[idx] = acc;
  }
}
`;
const chunkScan = (t: string, z: string) => `${paramsStruct(FIELDS)}
@group(0) @binding(0) var<storage, read> x: array<${t}>;
@group(0) @binding(1) var<storage, read_write> y: array<${t}>;
@group(0) @binding(2) var<storage, read_write> totals: array<${t}>;
@group(0) @binding(3) var<uniform> P: Params;${COMMON}
${entry}
  if (flat >= P.R * P.nc) { return; }
  let r = flat / P.nc;
  let c = flat % P.nc;
  let base = rowBase(r);
  var acc: ${t} = ${z};
  let end = min(P.L, (c + 1u) * P.chunk);
  for (var jl = c * P.chunk; jl < end; jl++) {
    let idx = base + phys(jl) * P.inner;
    acc += x[idx];
    y[idx] = acc;
  }
  totals[flat] = acc;
}
`;
const offsets = (t: string, z: string) => `${paramsStruct(FIELDS)}
@group(0) @binding(0) var<storage, read_write> totals: array<${t}>;
@group(0) @binding(1) var<uniform> P: Params;
${entry}
  if (flat >= P.R) { return; }
  var acc: ${t} = ${z};
  for (var c = 0u; c < P.nc; c++) {
    let i = flat * P.nc + c;
    let v = totals[i];
    totals[i] = acc;
    acc += v;
  }
}
`;
const addOffsets = (t: string) => `${paramsStruct(FIELDS)}
@group(0) @binding(0) var<storage, read> totals: array<${t}>;
@group(0) @binding(1) var<storage, read_write> y: array<${t}>;
@group(0) @binding(2) var<uniform> P: Params;${COMMON}
${entry}
  if (flat >= P.total) { return; }
  let r = flat / P.L;
  let jl = flat % P.L;
  let c = jl / P.chunk;
  if (c == 0u) { return; }
  let idx = rowBase(r) + phys(jl) * P.inner;
  y[idx] = y[idx] + totals[r * P.nc + c];
}
`;

export function cumsumRoutine(step: RoutineStep, buffers: readonly BufferSpec[]): Routine {
  const { axis, reverse } = step.eqn.params as CumsumParams;
  const shape = step.eqn.inputs[0]!.aval.shape;
  const dtype = buffers[step.outputs[0]!]!.dtype;
  if (dtype === "float64") throw float64Error();
  const t = storageType(dtype);
  const z = t === "f32" ? "0.0f" : "0i";
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const L = shape[axis]!;
  const inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
  const R = outer * inner;
  const total = R * L;
  const ctx = gpu();
  if (total === 0) return () => [ctx.pool.allocate(0)];
  const maxDim = ctx.limits.maxComputeWorkgroupsPerDimension;
  const nc = Math.ceil(L / CHUNK);
  const params = uniformParams(ctx.device, [R, L, inner, nc, total, reverse ? 1 : 0, CHUNK]);

  if (R >= 256 || L < 2048) {
    const pipe = ctx.pipelines.get(rowScan(t, z));
    return ([x]) => {
      const y = ctx.pool.allocate(total);
      ctx.stream.dispatch(
        pipe.pipeline,
        ctx.pipelines.bindGroup(pipe, [x!, y, params]),
        grid(Math.ceil(R / 64), maxDim),
      );
      return [y];
    };
  }
  const p1 = ctx.pipelines.get(chunkScan(t, z)),
    p2 = ctx.pipelines.get(offsets(t, z)),
    p3 = ctx.pipelines.get(addOffsets(t));
  return ([x]) => {
    const y = ctx.pool.allocate(total);
    const totals = ctx.pool.allocate(R * nc);
    ctx.stream.dispatch(
      p1.pipeline,
      ctx.pipelines.bindGroup(p1, [x!, y, totals, params]),
      grid(Math.ceil((R * nc) / 64), maxDim),
    );
    ctx.stream.dispatch(p2.pipeline, ctx.pipelines.bindGroup(p2, [totals, params]), grid(Math.ceil(R / 64), maxDim));
    ctx.stream.dispatch(
      p3.pipeline,
      ctx.pipelines.bindGroup(p3, [totals, y, params]),
      grid(Math.ceil(total / 64), maxDim),
    );
    totals.release();
    return [y];
  };
}
