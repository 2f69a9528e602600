export { jvp, vjp, linearize, grad, valueAndGrad, jacfwd, jacrev, hessian, type JacobianOptions } from "./vjp.js";
export type {
  Arrayed,
  ArrayedArgs,
  ArgAt,
  ArgnumsOf,
  Carry,
  GradOf,
  GradOptions,
  Leaf,
  ScalarOut,
  TreeLike,
  TreeLikeArgs,
} from "./types.js";
export { vmap, type VmapOptions } from "./vmap.js";
export { customVjp, checkpoint } from "./custom.js";
export { customJvp } from "./custom-jvp.js";
export { debug } from "./debug.js";
export { evalShape, type Shaped } from "./eval-shape.js";
export { jit, makeIR, type JitOptions, type Jitted } from "./jit.js";
import { cond, foriLoop, switchIndex, whileLoop } from "./control.js";
import { scan, type ScanOptions } from "./scan.js";
import { map } from "./map.js";
import { stopGradient } from "../core/np/math.js";
export type { ScanOptions };

/** Control flow and other lax-level operations. */
export const lax = { scan, map, cond, switch: switchIndex, whileLoop, foriLoop, stopGradient };
