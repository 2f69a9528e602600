/**
 * RISP's training set (§3.2–3.3): images of the environment's states under random looks, each
 * with its exact ∂I/∂ψ columns (forward mode: one jvp per rendering parameter, vmapped), as RISP
 * precomputes them for its regulariser.
 */
import type { Array } from "../core/array.js";
import type { Rng } from "../core/host-rng.js";
import { np } from "../core/np/index.js";
import { jit, jvp, vmap } from "../transforms/index.js";
import { checkPosed, type RispEnv } from "./env.js";
import { backgroundLayers, randomGroundTexture, softImage, type GroundTexture, type SoftLook } from "./looks.js";
import { checkPsi, DEFAULT_PSI, hostLightDirection, PSI_NAMES, samplePsi, type PsiDistribution } from "./psi.js";

/** One training image's look: its rendering parameters ψ, its traced background and its sensor noise σ. */
export interface TrainingLook {
  readonly psi: number[];
  readonly background: Array;
  readonly noise: number;
}

/** A rendering configuration of the training domain: ψ and a ground texture. */
export interface TrainingConfiguration {
  readonly psi: number[];
  readonly texture: GroundTexture;
}

/** A random training configuration: ψ from its distribution, a random procedural ground. */
export const sampleTrainingConfiguration = (
  rng: Rng,
  psiDistribution: PsiDistribution = DEFAULT_PSI,
): TrainingConfiguration => ({ psi: samplePsi(rng, psiDistribution), texture: randomGroundTexture(rng) });

/**
 * Draw a training image's look for posed vertices [V·3]: ψ, a random ground texture shadowed by the object under ψ's
 * light, σ ∈ [0, maxNoise] — or, given `configurations`, one of those at random (RISP Fig. 6a's few configurations).
 */
export function sampleTrainingLook(
  env: RispEnv,
  R: number,
  vertices: ArrayLike<number>,
  rng: Rng,
  maxNoise: number,
  psiDistribution: PsiDistribution = DEFAULT_PSI,
  configurations?: readonly TrainingConfiguration[],
): TrainingLook {
  const { psi, texture } = configurations
    ? configurations[Math.min(configurations.length - 1, Math.floor(rng.uniform(0, configurations.length)))]!
    : sampleTrainingConfiguration(rng, psiDistribution);
  const background = backgroundLayers(env, R, { vertices, light: hostLightDirection(psi[1]!, psi[2]!), texture });
  return { psi, background, noise: rng.uniform(0, maxNoise) };
}

export interface TrainingSet {
  /** [N, S]. */
  readonly states: Array;
  /** [N, R, R, 3] and ∂I/∂ψ [N, 14, R, R, 3]. */
  readonly images: Array;
  readonly dImages: Array;
}

export interface TrainingSetOptions {
  /** Gaussian sensor noise: each image's σ is drawn from [0, noise]. */
  readonly noise: number;
  /** Images per compiled batch (default 16). */
  readonly chunk?: number;
  /**
   * SoftRas rasterizations a batch is drawn by (one at random per batch; default: SoftRas'
   * defaults only): the renderer itself randomised, e.g. faceted and with sharp silhouettes, as a
   * ray tracer's silhouettes are sharp and its faces flat.
   */
  readonly rasterizations?: readonly SoftLook[];
  /** The training distribution of ψ (default `DEFAULT_PSI`). */
  readonly psi?: PsiDistribution;
  /**
   * Draw every image's configuration from these (uniformly) instead of a fresh one per image: a training set of few
   * rendering configurations (RISP Fig. 6a).
   */
  readonly configurations?: readonly TrainingConfiguration[];
  /** Called after each batch with the number of images done. */
  readonly log?: (done: number) => void;
}

/**
 * Training images [N, R, R, 3] of posed `vertices` (the environment's sampled states) under random
 * looks (`sampleTrainingLook`), with their ∂I/∂ψ columns, in compiled batches, plus Gaussian
 * sensor noise.
 */
export function trainingSet(
  env: RispEnv,
  R: number,
  states: readonly (readonly number[])[],
  vertices: readonly Float64Array[],
  rng: Rng,
  o: TrainingSetOptions,
): TrainingSet {
  const n = states.length,
    chunk = o.chunk ?? 16,
    rasterizations = o.rasterizations ?? [{}],
    psiDistribution = checkPsi(o.psi ?? DEFAULT_PSI);
  if (n === 0 || vertices.length !== n)
    throw new Error(
      `risp: a training set needs one posed vertex array per state, ` +
        `got ${n} states and ${vertices.length} vertex arrays.`,
    );
  if (states.some((s) => s.length !== env.stateNames.length))
    throw new Error(
      `risp: ${env.name}'s states have ${env.stateNames.length} components (${env.stateNames.join(", ")}); ` +
        `a sampled state has another count.`,
    );
  if (!(Number.isInteger(R) && R >= 4))
    throw new Error(`risp: the image resolution must be a whole number ≥ 4, got ${R}.`);
  if (o.configurations && !o.configurations.length)
    throw new Error("risp: a training set drawn from fixed configurations needs at least one.");
  if (!rasterizations.length)
    throw new Error("risp: give at least one rasterization (an empty SoftLook {} is SoftRas' defaults).");
  checkPosed(env, vertices);
  const basis = np.eye(PSI_NAMES.length, undefined, { dtype: "float32" });
  const compiled = rasterizations.map((look) =>
    jit(
      vmap((v: Array, psi: Array, background: Array) => {
        const image = (p: Array) => softImage(env, R, v, p, background, look);
        const columns = vmap((e: Array) => jvp(image, [psi], [e])[1] as Array)(basis);
        return [image(psi), columns];
      }),
    ),
  );
  const images: Array[] = [],
    columns: Array[] = [];
  for (let start = 0; start < n; start += chunk) {
    const idx = globalThis.Array.from({ length: Math.min(chunk, n - start) }, (_, k) => start + k);
    // One rasterization draws nothing, so the training sets of runs before there were several stay the same.
    const withColumns =
      compiled.length === 1
        ? compiled[0]!
        : compiled[Math.min(compiled.length - 1, Math.floor(rng.uniform(0, compiled.length)))]!;
    const looks = idx.map((i) =>
      sampleTrainingLook(env, R, vertices[i]!, rng, o.noise, psiDistribution, o.configurations),
    );
    // Pad the last chunk to the compiled size.
    const padded = [...idx, ...globalThis.Array.from({ length: chunk - idx.length }, () => idx[0]!)];
    const look = (k: number) => looks[k < idx.length ? k : 0]!;
    const v = np.array(
      padded.map((i) =>
        globalThis.Array.from({ length: vertices[i]!.length / 3 }, (_, j) => [
          vertices[i]![3 * j]!,
          vertices[i]![3 * j + 1]!,
          vertices[i]![3 * j + 2]!,
        ]),
      ),
      { dtype: "float32" },
    );
    const psi = np.array(
      padded.map((_, k) => look(k).psi),
      { dtype: "float32" },
    );
    const background = np.stack(
      padded.map((_, k) => look(k).background),
      0,
    );
    const [im, dI] = withColumns(v, psi, background) as [Array, Array];
    const keep = np.arange(idx.length);
    const pixels = R * R * 3,
      data = im.dataSync();
    const noisy = Float32Array.from(data, (x, q) => x + look(Math.floor(q / pixels)).noise * rng.normal());
    images.push(np.take(np.array(noisy, { dtype: "float32" }).reshape(im.shape), keep, 0));
    columns.push(np.take(dI, keep, 0));
    o.log?.(start + idx.length);
  }
  return {
    states: np.array(
      states.map((s) => [...s]),
      { dtype: "float32" },
    ),
    images: np.concatenate(images, 0),
    dImages: np.concatenate(columns, 0),
  };
}
