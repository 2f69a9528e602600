import type { Array } from "./array.js";
import type { ShapedArray } from "./aval.js";
import type { HostArray } from "./backends/backend.js";
import type { Tangent, UndefPrimal } from "./tangent.js";
import type { KGraph } from "./kernel/expr.js";
import type { View } from "./kernel/view.js";
import type { Routine } from "./backends/webgpu/routines/types.js";

/** Batch dimension of a vmapped value; null = not batched. */
export type BDim = number | null;

export type ShapeRule<P> = (avals: readonly ShapedArray[], params: P) => ShapedArray[];
/** CPU reference implementation over host typed arrays (float64-capable; the oracle for jit and webgpu). */
export type ImplRule<P> = (inputs: readonly HostArray[], params: P, outAvals: readonly ShapedArray[]) => HostArray[];
/**
 * Forward-mode rule. Primal outputs must be computed from primals only; tangent outputs must be linear in the tangents.
 */
export type JvpRule<P> = (primals: readonly Array[], tangents: readonly Tangent[], params: P) => [Array[], Tangent[]];
/** Transpose of a linear primitive: cotangents for the UndefPrimal arguments (null for the others). */
export type TransposeRule<P> = (
  cts: readonly Tangent[],
  args: readonly (Array | UndefPrimal)[],
  params: P,
) => (Tangent | null)[];
/** Batching rule: called only when at least one argument is batched. */
export type VmapRule<P> = (
  args: readonly Array[],
  dims: readonly BDim[],
  params: P,
  axisSize: number,
) => [Array[], BDim[]];

/**
 * Lowering for fused jit code: input views → output views, as scalar expression graphs that
 * both the CPU (JavaScript) and WebGPU (WGSL) code generators render.
 */
export type LowerRule<P> = (inputs: readonly View[], params: P, outAvals: readonly ShapedArray[], g: KGraph) => View[];

/**
 * Hand-written WebGPU implementation for primitives the kernel compiler cannot express (the
 * fused rasterizers): built once per compiled program from the params and avals, it records its
 * own WGSL kernels into the command stream.
 */
export type GpuRule<P> = (params: P, inAvals: readonly ShapedArray[], outAvals: readonly ShapedArray[]) => Routine;

/**
 * One primitive = one entry holding all of its rules. `transpose` is present for primitives
 * that are linear in some operand. Higher-order primitives (scan, cond, jit) supply `evaluate`
 * instead of `impl`: it runs on Arrays and is used on every backend.
 */
export interface Primitive<P = any> {
  readonly name: string;
  readonly shape: ShapeRule<P>;
  readonly impl?: ImplRule<P>;
  readonly evaluate?: (args: readonly Array[], params: P) => Array[];
  readonly jvp: JvpRule<P>;
  readonly transpose?: TransposeRule<P>;
  readonly vmap: VmapRule<P>;
  /** Kernel lowering for fused jit code; absent = the compiler runs it as a routine. */
  readonly lower?: LowerRule<P>;
  /** Own WebGPU kernels (a routine), for primitives without a lowering. */
  readonly gpu?: GpuRule<P>;
  /**
   * Runs for its side effect (debug.print): tracing and dead-code elimination keep it although
   * nothing reads its outputs, and a program containing it is interpreted op by op (never compiled).
   */
  readonly effect?: boolean;
  /** How params print in IR; default JSON of the params. */
  readonly printParams?: (p: P) => string;
}

const registry = new Map<string, Primitive>();

export function definePrimitive<P>(prim: Primitive<P>): Primitive<P> {
  if (registry.has(prim.name)) throw new Error(`internal: primitive ${prim.name} defined twice.`);
  registry.set(prim.name, prim as Primitive);
  return prim;
}

/** All primitives defined so far (for tests, printing and IR parsing). */
export const allPrimitives = (): Primitive[] => [...registry.values()];
export const primitiveByName = (name: string): Primitive | undefined => registry.get(name);
