/**
 * Visuomotor control from a single target image (gradSim §4.2, Figs. 5–6): a `ControlScene` is a
 * system whose rollout depends on control parameters (a policy's weights, an initial velocity),
 * a renderer of its frames, and the image of the goal. This file: the scene's description, the
 * paper's sinusoidal policies, the centre-of-mass goal, and a user's target image resampled.
 */
import type { Array } from "../core/array.js";
import type { DType } from "../core/dtype.js";
import { makeRng } from "../core/host-rng.js";
import { np } from "../core/np/index.js";
import { resizeInto } from "../io/resample.js";

export interface ControlScene {
  readonly name: string;
  readonly describe: string;
  readonly fps: number;
  readonly frames: number;
  /** The control parameters for a seed (the same for every method). */
  initialParams(seed: number): Array;
  /** Positions [frames, N, 3] of the rollout under parameters (traced: jit and grad run through it). */
  positions(params: Array): Array;
  /** One rendered frame [H, W, C] of positions [N, 3]. */
  frame(x: Array): Array;
  /** The target image [H, W, C]. */
  readonly target: Array;
  /**
   * gradsim's objective on the last frame [H, W, C] and the target (default: the pixelwise MSE, which the curves report
   * for every method).
   */
  imageLoss?(frame: Array, target: Array): Array;
  /** The 3-D supervision of diffphysics: a scalar loss of the positions [frames, N, 3]. */
  stateLoss(x: Array): Array;
  /** Distance (m) of the final positions [N, 3] to the goal state (scalar): the reported metric. */
  goalDistance(last: Array): Array;
  /** What goalDistance measures, in a few words with its unit (the reports' label). */
  readonly goalDistanceMeaning: string;
  /**
   * The goal's centre of mass [3]; every method's final centre-of-mass distance to it is reported beside goalDistance.
   */
  readonly goalCom: Array;
}

/**
 * Phase inputs [T, P] of the policies: P sinusoids of angular frequency ω spread over one period,
 * φ_p(t) = sin(ω t + 2πp/P).
 */
export const phaseInputs = (frames: number, fps: number, P: number, omega: number, dtype: DType = "float32"): Array => {
  if (!(Number.isInteger(P) && P >= 2))
    throw new Error(`control: a policy needs a whole number of phases ≥ 2, got ${P}.`);
  return np.array(
    globalThis.Array.from({ length: frames }, (_, t) =>
      globalThis.Array.from({ length: P }, (_, p) => Math.sin(omega * (t / fps) + (2 * Math.PI * p) / P)),
    ),
    { dtype },
  );
};

/** Per-frame actuations [T, A] = amplitude·tanh(φ Wᵀ) of policy weights W [A, P]. */
export const sinusoidPolicy = (W: Array, phases: Array, amplitude: number): Array =>
  np.mul(amplitude, np.tanh(np.matmul(phases, np.transpose(W))));

/** Policy weights [A, P] as torch.nn.Linear initialises them: U(−1/√P, 1/√P), seeded. */
export function linearPolicyInit(A: number, P: number, seed: number): Array {
  const rng = makeRng(seed + 1);
  return np.array(
    globalThis.Array.from({ length: A }, () =>
      globalThis.Array.from({ length: P }, () => rng.uniform(-1, 1) / Math.sqrt(P)),
    ),
    { dtype: "float32" },
  );
}

/** |COM(positions [N, 3]) − goal [3]| (m). */
export const centreOfMassDistance = (x: Array, goalCom: Array): Array =>
  np.sqrt(np.sum(np.square(np.sub(np.mean(x, 0), goalCom))));

/**
 * diffphysics' 3-D supervision and the reported distance, for a goal given as a centre of mass [3]:
 * |COM(final) − goal|.
 */
export function centreOfMassGoal(
  goalCom: Array,
  frames: number,
): Pick<ControlScene, "stateLoss" | "goalDistance" | "goalDistanceMeaning" | "goalCom"> {
  const goalDistance = (last: Array) => centreOfMassDistance(last, goalCom);
  return {
    goalCom,
    goalDistance,
    goalDistanceMeaning: "centre-of-mass distance to the goal (m)",
    stateLoss: (x) => np.square(goalDistance(np.index(x, frames - 1))),
  };
}

/**
 * A dense centre-of-mass loss over a rollout's positions [T, N, 3]: Σ_t mean_k (COM_t,k − goal_k)²,
 * what control_cloth.py's physics-only method sums (torch's mse_loss of the COM, at every sampled step).
 */
export const centreOfMassTrackingLoss = (x: Array, goalCom: Array): Array =>
  np.sum(np.mean(np.square(np.sub(np.mean(x, 1), goalCom)), 1));

/** Where a target image is transparent: an RGB colour, or an image [R, R, 3] (the scene's own background). */
export type TargetBackground = Array | readonly [number, number, number];

/**
 * A target image (RGBA in [0, 1], [h, w, 4], any size) area-resampled to resolution² RGB and
 * composited over the scene's background where it is transparent, as the scene's own frames are.
 */
export function targetImage(rgbaImage: Array, resolution: number, background: TargetBackground): Array {
  if (rgbaImage.ndim !== 3 || rgbaImage.shape[2] !== 4)
    throw new Error(`control: a target image is RGBA [h, w, 4], got [${rgbaImage.shape}].`);
  const [h, w] = rgbaImage.shape as [number, number, number];
  const rgba = Uint8ClampedArray.from(rgbaImage.dataSync(), (x) => Math.round(255 * x));
  const n = resolution * resolution;
  const premultiplied = new Float32Array(n * 3),
    coverage = new Float32Array(n * 3);
  resizeInto({ width: w, height: h, rgba }, [0, 0, w, h], resolution, resolution, premultiplied, 0);
  // The resampled alpha: the same resampling of a white image with this alpha.
  const white = Uint8ClampedArray.from(rgba, (v, i) => (i % 4 === 3 ? v : 255));
  resizeInto({ width: w, height: h, rgba: white }, [0, 0, w, h], resolution, resolution, coverage, 0);
  const bg = "shape" in background ? background.dataSync() : null;
  const out = premultiplied.map(
    (c, i) => c + (1 - coverage[i]!) * (bg ? bg[i]! : (background as readonly number[])[i % 3]!),
  );
  return np.reshape(np.array(out, { dtype: "float32" }), [resolution, resolution, 3]);
}
