/**
 * A nonlinear primitive with hand-written forward, tangent and adjoint kernels, as three
 * registry entries (reverse mode = linearize + transpose, as everywhere else):
 *   name        inputs → outputs
 *   name_jvp    (inputs, aux outputs, tangents of the differentiable inputs)
 *                 → tangents of the differentiable outputs
 *   name_vjp    (inputs, aux outputs, cotangents of the differentiable outputs)
 *                 → cotangents of the differentiable inputs
 * `aux` outputs (e.g. which face is visible) are what the derivative kernels need from the forward
 * pass; integer outputs get zero tangents. name_jvp and name_vjp are linear in their last
 * operands and each other's transposes, so forward-over-reverse works. Their derivatives with
 * respect to the primal inputs (second derivatives) differentiate the spec's `reference`: the
 * same outputs as an array program with the forward pass's discrete choices (the aux outputs)
 * fixed — first order keeps the kernels' speed, second order goes through ordinary primitives
 * (and so through every transform, to any order). Batching
 * (a video's frames) is a scan over the batch: one compiled body whatever the batch size.
 */
import type { Array } from "../../core/array.js";
import { ShapedArray } from "../../core/aval.js";
import type { HostArray } from "../../core/backends/backend.js";
import { scalar } from "../../core/constants.js";
import { definePrimitive, type BDim, type GpuRule, type JvpRule, type Primitive } from "../../core/primitive.js";
import { broadcastTo } from "../../core/prims/movement.js";
import { moveaxis } from "../../core/np/shape.js";
import { scan } from "../../transforms/scan.js";
import { isUndef, isZero, Zero, type Tangent } from "../../core/tangent.js";
import { bind } from "../../core/trace.js";
import { jvpFlat } from "../../transforms/jvp.js";
import { instantiate, linearizeFlat, transposeLinear } from "../../transforms/vjp.js";

export interface LinearizedSpec<P> {
  readonly name: string;
  /** Output avals for the inputs' avals (also validates them). */
  outputs(inputs: readonly ShapedArray[], params: P): ShapedArray[];
  /** Indices of the differentiable inputs and outputs, and of the outputs the derivative kernels read. */
  readonly diffInputs: readonly number[];
  readonly diffOutputs: readonly number[];
  readonly aux: readonly number[];
  forward(inputs: readonly HostArray[], params: P, out: readonly ShapedArray[]): HostArray[];
  /** Tangents of the differentiable outputs for tangents of the differentiable inputs. */
  jvp(
    inputs: readonly HostArray[],
    aux: readonly HostArray[],
    tangents: readonly HostArray[],
    params: P,
    out: readonly ShapedArray[],
  ): HostArray[];
  /** Cotangents of the differentiable inputs for cotangents of the differentiable outputs. */
  vjp(
    inputs: readonly HostArray[],
    aux: readonly HostArray[],
    cotangents: readonly HostArray[],
    params: P,
    out: readonly ShapedArray[],
  ): HostArray[];
  /**
   * The differentiable outputs (in diffOutputs order) as an array program of the inputs, with the
   * aux outputs of the forward pass fixed: equal to the kernels to first order, so its derivatives
   * are theirs. Second derivatives differentiate it.
   */
  reference(inputs: readonly Array[], aux: readonly Array[], params: P): Array[];
  /** WebGPU kernels of the three primitives (same operand layouts), where written. */
  readonly gpu?: { readonly forward: GpuRule<P>; readonly jvp: GpuRule<P>; readonly vjp: GpuRule<P> };
}

const zerosOf = (a: ShapedArray): Array => broadcastTo(scalar(0, a.dtype), a.shape);

/**
 * vmap of a primitive as lax.scan over the batch: the batched operands become the scanned inputs,
 * the others are closed over. (A loop of slices would bake every item's offsets into its own
 * kernels: 60 frames, 60 variants of each to compile on WebGPU.)
 */
function vmapByScan<P>(
  prim: Primitive<P>,
  args: readonly Array[],
  dims: readonly BDim[],
  params: P,
  n: number,
): [Array[], BDim[]] {
  const xs = args.flatMap((a, i) => (dims[i] === null || dims[i] === undefined ? [] : [moveaxis(a, dims[i]!, 0)]));
  const [, ys] = scan(
    (_carry: null, slices: Array[]): [null, Array[]] => {
      let k = 0;
      const item = args.map((a, i) => (dims[i] === null || dims[i] === undefined ? a : slices[k++]!));
      return [null, bind(prim, item, params)];
    },
    null,
    xs,
    { length: n },
  );
  return [ys, ys.map(() => 0)];
}
const strong = (a: ShapedArray) => new ShapedArray(a.shape, a.dtype);

export function defineLinearized<P>(s: LinearizedSpec<P>): {
  primal: Primitive<P>;
  jvp: Primitive<P>;
  vjp: Primitive<P>;
} {
  // Primal inputs at the front of the derivative primitives' operands: (inputs, aux, tangents) and (inputs, aux,
  // cotangents).
  const jvpIn = (args: readonly unknown[]) => args.length - s.aux.length - s.diffInputs.length;
  const vjpIn = (args: readonly unknown[]) => args.length - s.aux.length - s.diffOutputs.length;
  const inst = (t: Tangent, like: ShapedArray): Array => (isZero(t) ? zerosOf(like) : t);

  const primal: Primitive<P> = definePrimitive<P>({
    name: s.name,
    shape: (avals, p) => s.outputs(avals, p).map(strong),
    impl: (inputs, p, out) => s.forward(inputs, p, out),
    ...(s.gpu ? { gpu: s.gpu.forward } : {}),
    jvp: (primals, tangents, p) => {
      const outs = bind(primal, primals, p);
      const zeros = outs.map((o) => new Zero(o.aval.strong()));
      if (s.diffInputs.every((i) => isZero(tangents[i]))) return [outs, zeros];
      const tOut = bind(
        jvpP,
        [...primals, ...s.aux.map((i) => outs[i]!), ...s.diffInputs.map((i) => inst(tangents[i]!, primals[i]!.aval))],
        p,
      );
      const result: Tangent[] = [...zeros];
      s.diffOutputs.forEach((o, k) => {
        result[o] = tOut[k]!;
      });
      return [outs, result];
    },
    vmap: (args, dims, p, n) => vmapByScan(primal, args, dims, p, n),
  });

  /** The reference program as a function of the differentiable inputs alone (the others and aux fixed). */
  const referenceOf =
    (inputs: readonly Array[], aux: readonly Array[], p: P) =>
    (...diff: Array[]): Array[] => {
      const all = [...inputs];
      s.diffInputs.forEach((i, k) => {
        all[i] = diff[k]!;
      });
      return s.reference(all, aux, p);
    };
  /** name_jvp's value as the reference's jvp: (diff inputs, input tangents) → output tangents. */
  const referenceJvp =
    (inputs: readonly Array[], aux: readonly Array[], p: P) =>
    (...xs: Array[]): Array[] => {
      const n = s.diffInputs.length;
      return jvpFlat(referenceOf(inputs, aux, p), xs.slice(0, n), xs.slice(n))[1].map(instantiate);
    };
  /** name_vjp's value as the reference's vjp: (diff inputs, output cotangents) → input cotangents. */
  const referenceVjp =
    (inputs: readonly Array[], aux: readonly Array[], p: P) =>
    (...xs: Array[]): Array[] => {
      const n = s.diffInputs.length;
      const { lin } = linearizeFlat(referenceOf(inputs, aux, p), xs.slice(0, n));
      return transposeLinear(lin, xs.slice(n)).map(instantiate);
    };

  /**
   * jvp of a derivative primitive. Linear in its last operands, so tangents of those alone map
   * the same way (forward-over-reverse: the kernels). Tangents of the primal operands are second
   * derivatives: the jvp of the reference's jvp or vjp, in (inputs, last operands) jointly.
   */
  const linearJvp =
    (
      prim: () => Primitive<P>,
      inputsOf: (args: readonly unknown[]) => number,
      viaReference: typeof referenceJvp,
    ): JvpRule<P> =>
    (args, tans, p) => {
      const inputs = inputsOf(args),
        known = inputs + s.aux.length;
      if (tans.slice(0, inputs).some((t) => !isZero(t))) {
        const outs = bind(prim(), args, p);
        const ins = args.slice(0, inputs),
          aux = args.slice(inputs, known),
          last = args.slice(known);
        const primals = [...s.diffInputs.map((i) => ins[i]!), ...last];
        const tangents = [...s.diffInputs.map((i) => tans[i]!), ...tans.slice(known)];
        return [outs, jvpFlat(viaReference(ins, aux, p), primals, tangents)[1]];
      }
      const outs = bind(prim(), args, p);
      const lin = tans.slice(known);
      if (lin.every(isZero)) return [outs, outs.map((o) => new Zero(o.aval.strong()))];
      return [outs, bind(prim(), [...args.slice(0, known), ...lin.map((t, k) => inst(t, args[known + k]!.aval))], p)];
    };

  /** Avals of the primal's outputs for the primal inputs at the front of a derivative primitive's operands. */
  const primalOuts = (avals: readonly ShapedArray[], p: P, inputs: number) => s.outputs(avals.slice(0, inputs), p);

  const jvpP: Primitive<P> = definePrimitive<P>({
    name: `${s.name}_jvp`,
    shape: (avals, p) => {
      const inputs = jvpIn(avals);
      const outs = primalOuts(avals, p, inputs);
      return s.diffOutputs.map((o) => strong(outs[o]!));
    },
    impl: (args, p, out) => {
      const inputs = jvpIn(args);
      return s.jvp(
        args.slice(0, inputs),
        args.slice(inputs, inputs + s.aux.length),
        args.slice(inputs + s.aux.length),
        p,
        out,
      );
    },
    ...(s.gpu ? { gpu: s.gpu.jvp } : {}),
    jvp: linearJvp(() => jvpP, jvpIn, referenceJvp),
    transpose: (cts, args, p) => {
      const inputs = jvpIn(args);
      const known = args.slice(0, inputs + s.aux.length);
      if (known.some(isUndef)) throw new Error(`internal: ${s.name}_jvp is linear only in its tangents.`);
      const outAvals = primalOuts(
        known.slice(0, inputs).map((a) => (a as Array).aval),
        p,
        inputs,
      );
      const ct = cts.map((c, k) => inst(c, strong(outAvals[s.diffOutputs[k]!]!)));
      const g = bind(vjpP, [...(known as Array[]), ...ct], p);
      return [
        ...known.map(() => null),
        ...args.slice(inputs + s.aux.length).map((a, k) => (isUndef(a) ? g[k]! : null)),
      ];
    },
    vmap: (args, dims, p, n) => vmapByScan(jvpP, args, dims, p, n),
  });

  const vjpP: Primitive<P> = definePrimitive<P>({
    name: `${s.name}_vjp`,
    shape: (avals) => {
      const inputs = vjpIn(avals);
      return s.diffInputs.map((i) => strong(avals.slice(0, inputs)[i]!));
    },
    impl: (args, p, out) => {
      const inputs = vjpIn(args);
      return s.vjp(
        args.slice(0, inputs),
        args.slice(inputs, inputs + s.aux.length),
        args.slice(inputs + s.aux.length),
        p,
        out,
      );
    },
    ...(s.gpu ? { gpu: s.gpu.vjp } : {}),
    jvp: linearJvp(() => vjpP, vjpIn, referenceVjp),
    transpose: (cts, args, p) => {
      const inputs = vjpIn(args);
      const known = args.slice(0, inputs + s.aux.length) as Array[];
      const ct = cts.map((c, k) => inst(c, strong(known[s.diffInputs[k]!]!.aval)));
      const t = bind(jvpP, [...known, ...ct], p);
      return [
        ...known.map(() => null),
        ...args.slice(inputs + s.aux.length).map((a, k) => (isUndef(a) ? t[k]! : null)),
      ];
    },
    vmap: (args, dims, p, n) => vmapByScan(vjpP, args, dims, p, n),
  });

  return { primal, jvp: jvpP, vjp: vjpP };
}
