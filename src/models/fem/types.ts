import type { Array } from "../../core/array.js";

/**
 * Linear tetrahedra with the stable Neo-Hookean material of Smith et al. 2018 (paper eq. 1/6),
 * every material parameter per element, so heterogeneous bodies and per-element gradients work.
 */
export interface TetElements {
  /** int32 [T, 4]: vertex indices, positively oriented. */
  readonly indices: Array;
  /** Dm = [X1−X0, X2−X0, X3−X0]⁻¹ [T, 3, 3] (rest shape, row-major). */
  readonly invRest: Array;
  /** Rest volume V0 [T]. */
  readonly restVolume: Array;
  /** Shear parameter μ [T] (Pa), used raw as in dflex/warp (no Lamé remapping; see energy.ts). */
  readonly mu: Array;
  /** Volume parameter λ [T] (Pa), > 0. */
  readonly lambda: Array;
  /** Rayleigh damping kd [T] (Pa·s) on the Green strain rate and the volume rate. */
  readonly damping: Array;
  /** Activation a [T]: the volumetric target becomes J = α − a (a > 0 contracts). */
  readonly activation: Array;
}
