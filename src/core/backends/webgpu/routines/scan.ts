/**
 * lax.scan inside a webgpu program: the body is compiled once and recorded once per step into
 * the same command stream, with no host round trips: xs[t] is copied out of the stacked inputs
 * and y_t into the stacked outputs with buffer-to-buffer copies; carries move by reference.
 */
import type { BufferSpec, RoutineStep } from "../../../compile/plan.js";
import type { IR } from "../../../ir.js";
import type { DeviceBuffer } from "../buffers.js";
import { gpu } from "../context.js";
import type { GpuProgram } from "../program.js";
import type { Routine } from "./types.js";

export interface ScanParamsLike {
  readonly body: IR;
  readonly nConsts: number;
  readonly nCarry: number;
  readonly length: number;
  readonly reverse: boolean;
}

/** `programFor` compiles (and caches) the body; passed in to avoid an import cycle with program.ts. */
export function scanRoutine(
  step: RoutineStep,
  _buffers: readonly BufferSpec[],
  programFor: (ir: IR) => GpuProgram,
): Routine {
  const p = step.eqn.params as ScanParamsLike;
  const { nConsts: nc, nCarry: ncar, length, reverse } = p;
  const ny = p.body.outs.length - ncar;
  const xWords = p.body.inAvals.slice(nc + ncar).map((a) => a.size);
  const yWords = p.body.outAvals.slice(ncar).map((a) => a.size);
  let body: GpuProgram | null = null;
  return (inputs) => {
    const ctx = gpu();
    body ??= programFor(p.body);
    const consts = inputs.slice(0, nc);
    const xs = inputs.slice(nc + ncar);
    const ys = yWords.map((w) => ctx.pool.allocate(w * length));
    // Carries: borrowed initial inputs until the first step replaces them with owned buffers.
    let carry: DeviceBuffer[] = inputs.slice(nc, nc + ncar) as DeviceBuffer[];
    let ownCarry = false;
    try {
      for (let i = 0; i < length; i++) {
        const t = reverse ? length - 1 - i : i;
        const xt = xs.map((x, k) => {
          const b = ctx.pool.allocate(xWords[k]!);
          ctx.stream.copy(x, t * xWords[k]!, b, 0, xWords[k]!);
          return b;
        });
        let outs: DeviceBuffer[];
        try {
          outs = body.encode([...consts, ...carry, ...xt]);
        } finally {
          for (const b of xt) b.release();
        }
        for (let k = 0; k < ny; k++) {
          ctx.stream.copy(outs[ncar + k]!, 0, ys[k]!, t * yWords[k]!, yWords[k]!);
          outs[ncar + k]!.release();
        }
        if (ownCarry) for (const c of carry) c.release();
        carry = outs.slice(0, ncar);
        ownCarry = true;
      }
      const finalCarry = ownCarry ? carry : carry.map((c) => c.retain());
      ownCarry = false;
      return [...finalCarry, ...ys];
    } catch (e) {
      for (const y of ys) y.release();
      throw e;
    } finally {
      if (ownCarry) for (const c of carry) c.release();
    }
  };
}
