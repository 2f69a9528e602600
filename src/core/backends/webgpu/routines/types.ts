/** The contract between programs and GPU routines (steps that are not fused kernels). */
import type { DeviceBuffer } from "../buffers.js";

export interface RoutineEnv {
  /** The running program's input buffers (routines may derive host-side data from them). */
  readonly programInputs: readonly DeviceBuffer[];
}
/** Records a routine into the command stream; returns one new reference per output. Inputs are borrowed. */
export type Routine = (inputs: readonly DeviceBuffer[], env: RoutineEnv) => DeviceBuffer[];
