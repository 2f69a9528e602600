/**
 * System identification on a user's own video: a video file (PNG frames, GIF, or MP4 & co.
 * through ffmpeg) and a scene file (see ../scene-file.ts) in, estimates of the chosen unknowns
 * with their units, the fit's loss curve and a side-by-side comparison out.
 *
 *   const r = await fitVideo({ video: "clip.gif", scene: "scene.json", unknowns: ["mass"] });
 *   r.estimate.mass  // kg
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import * as E from "fp-ts/lib/Either.js";
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import { parseObj } from "../../models/meshes/formats.js";
import type { TriMesh } from "../../models/meshes/types.js";
import { levenbergMarquardt } from "../../optim/least-squares.js";
import { jit } from "../../transforms/index.js";
import { estimate, paramsOf, type EstimateResult, type EstimateSettings } from "../estimate.js";
import { buildObjective, compileRender, type Problem } from "../objective.js";
import { alongAxis, PROFILE_STEPS, profileAlongAxis } from "../profile.js";
import { laplaceUncertainty, widenedByProfile, type Alternative } from "../uncertainty.js";
import { colourNoise, judge, missedFrames, silhouetteFloor, type Verdict } from "../verdict.js";
import { parseVideoScene, sceneFileMotion, type VideoSceneFile } from "../scene-file.js";
import { hostCamera, type CalibratedCamera, type CameraSpec } from "../scenes/camera.js";
import {
  buildRigidScene,
  measureTiling,
  POSITIVE_RIGID_UNKNOWNS,
  rigidProblem,
  rigidVertices,
  RIGID_UNITS,
  sceneValues,
  type RigidSceneSpec,
  type RigidUnknown,
} from "../scenes/rigid.js";
import { formatValues, Layout, type Unknown, type Values } from "../unknowns.js";
import { writeComparison, writeLossCurves, writeProfile, writeResidualMaps } from "./report.js";
import { probeVideo, readBackgroundPlate, readVideo, type VideoFile } from "./video-file.js";

/**
 * The prior searched for an unknown the scene file gives none for: ×/÷ 4 around a positive first
 * guess; ±0.25 m for a position, ±30° for the heading, ±1 m/s for a velocity, ±0.1 s for the push's start,
 * ±20 ms for the frame offset (under a frame period at 30 fps and more).
 */
function defaultPrior(k: RigidUnknown, initial: number): readonly [number, number] {
  if (POSITIVE_RIGID_UNKNOWNS.includes(k)) return [initial / 4, initial * 4];
  const half =
    k === "yaw0" ? Math.PI / 6 : k.startsWith("v") ? 1 : k === "pushStart" ? 0.1 : k === "frameOffset" ? 0.02 : 0.25;
  return [initial - half, initial + half];
}

/** How the log names the alternatives' shares of an interval. */
const ALTERNATIVE_WORDS: Readonly<Record<string, string>> = {
  foreground: "foreground's thresholds",
  outline: "outline's softness",
  contacts: "contact points' spread",
  load: "friction's load split",
  place: "initial place on the floor",
};

/**
 * How far a defaulted contact coefficient may be from the world's (log units, 95% bounds): ke a
 * factor 2; kd a factor 4; kf a factor 10. The friction stiffness kf regularises Coulomb's law (a
 * real floor, like MuJoCo's and Bullet's, has none: kf → ∞). Measured on the outside set's engine
 * trajectories at the truths (largest distance over the clip, 30 substeps): with the defaults kf 1500
 * and kd 600 (implicit in the step) the boxes, cylinders and frustum pushed straight come within
 * 0.1–4.2 mm of the engines', where kf = kd = 150 left up to 40 mm; kf 5000 moves them by under 2.5 mm.
 * The diagonally pushed and yawed MuJoCo boxes stay 10–13 mm off (MuJoCo's sliding friction there is
 * 2–3% under Coulomb's μ·g), the spun box 38 mm and the tipping boxes 10–20 mm.
 */
export const GUESSED_CONTACT_SD: Readonly<Record<"ke" | "kd" | "kf", number>> = {
  ke: Math.log(2) / 1.96,
  kd: Math.log(4) / 1.96,
  kf: Math.log(10) / 1.96,
};

/** A scene file read from disk: validated, with its mesh loaded and paths resolved against the file. */
export interface LoadedScene {
  readonly file: VideoSceneFile;
  readonly path: string | null;
  readonly mesh: TriMesh | null;
}

/** Read and validate a scene file; errors name the file and the field. */
export function loadVideoScene(path: string): LoadedScene {
  if (!existsSync(path))
    throw new Error(
      `scene: "${path}" does not exist; write a scene file as described in src/sysid/README.md ("The scene file").`,
    );
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`scene: ${path} is not valid JSON (${(e as Error).message}).`);
  }
  return resolveScene(raw, path);
}

/** Validate a parsed scene (paths relative to `path`'s directory, or to the working directory). */
export function resolveScene(raw: unknown, path: string | null = null): LoadedScene {
  const parsed = parseVideoScene(raw);
  if (E.isLeft(parsed)) throw new Error(`scene${path ? ` ${path}` : ""}: ${parsed.left}.`);
  const file = parsed.right;
  const at = (p: string) => (isAbsolute(p) || !path ? p : join(dirname(path), p));
  let mesh: TriMesh | null = null;
  if ("obj" in file.mesh) {
    const objPath = at(file.mesh.obj);
    if (!existsSync(objPath)) throw new Error(`scene: "mesh.obj" names ${objPath}, which does not exist.`);
    const m = parseObj(readFileSync(objPath, "utf8"));
    if (E.isLeft(m))
      throw new Error(
        `scene: the mesh ${objPath} cannot be read: ${m.left
          .map((i) => `line ${i.line}: ${i.message}`)
          .slice(0, 3)
          .join("; ")}.`,
      );
    mesh = m.right;
  }
  const bg = file.background;
  if (typeof bg === "object" && "image" in bg) {
    const img = at(bg.image);
    if (!existsSync(img)) throw new Error(`scene: "background.image" names ${img}, which does not exist.`);
    return { file: { ...file, background: { image: img } }, path, mesh };
  }
  return { file, path, mesh };
}

/** The camera of a cropped video as calibrated intrinsics of the crop (a field of view refers to the whole frame). */
function croppedCamera(
  c: CameraSpec,
  width: number,
  height: number,
  crop: readonly [number, number, number, number] | null,
): CameraSpec {
  if (!crop) return c;
  const h = hostCamera(c, width, height);
  const [x0, y0, w, hh] = crop;
  const fx = (h.focal[0] * width) / 2,
    fy = (h.focal[1] * height) / 2;
  const cx = (h.center[0] * width) / 2 + (width - 1) / 2,
    cy = (height - 1) / 2 - (h.center[1] * height) / 2;
  const R = [h.right, [-h.up[0], -h.up[1], -h.up[2]], h.forward];
  const t = R.map(
    (r) => -(r[0]! * h.eye[0] + r[1]! * h.eye[1] + r[2]! * h.eye[2]),
  ) as unknown as CalibratedCamera["pose"]["t"];
  return { intrinsics: { fx, fy, cx: cx - x0, cy: cy - y0, width: w, height: hh }, pose: { R, t } };
}

/**
 * The estimator's resolution for a source crop: a height (width follows the aspect) or [width, height] of the same
 * aspect.
 */
function outputSize(resolution: VideoSceneFile["resolution"], cropW: number, cropH: number): [number, number] {
  const aspect = cropW / cropH;
  if (typeof resolution === "number") return [Math.max(1, Math.round(resolution * aspect)), resolution];
  const [w, h] = resolution;
  if (Math.abs(w / h - aspect) > 0.02 * aspect) {
    throw new Error(
      `scene: "resolution" [${w}, ${h}] has aspect ${(w / h).toFixed(3)}, but the ` +
        `video${cropW !== cropH ? " (cropped)" : ""} is ${cropW}×${cropH} (aspect ${aspect.toFixed(3)}); ` +
        `give a height alone ("resolution": ${h}) or ` +
        `[${Math.round(h * aspect)}, ${h}], or crop the video to that aspect.`,
    );
  }
  return [w, h];
}

/** The background image [H, W, 3] (or colour) behind the object, at the estimator's resolution and crop. */
function backgroundOf(
  bg: VideoSceneFile["background"],
  video: Array,
  width: number,
  height: number,
  crop: readonly [number, number, number, number] | null,
): RigidSceneSpec["background"] {
  if (bg === "ground") {
    throw new Error(
      `scene: "background": "ground" is gradsim's own checkerboard floor, which ` +
        `is not what your camera saw; give a clean plate ({ "image": "plate.png" }: ` +
        `a photo of the scene without the object), "median" (the video's per-pixel ` +
        `median, for an object that keeps moving), "first-frame", or a colour [r, g, b].`,
    );
  }
  if (globalThis.Array.isArray(bg)) return bg as readonly [number, number, number];
  if (bg === "first-frame") return np.reshape(np.split(video, [1], 0)[0]!, [height, width, 3]);
  if (bg === "median") {
    // Per pixel, the median over the frames: the static background where the object moves through.
    const d = video.dataSync(),
      T = video.shape[0]!,
      n = width * height * 3;
    const out = new Float32Array(n),
      column = new Float64Array(T);
    for (let i = 0; i < n; i++) {
      for (let t = 0; t < T; t++) column[t] = d[t * n + i]!;
      column.sort();
      out[i] = T % 2 ? column[(T - 1) / 2]! : (column[T / 2 - 1]! + column[T / 2]!) / 2;
    }
    return np.reshape(np.array(out, { dtype: "float32" }), [height, width, 3]);
  }
  // A background plate: a photo of the scene without the object, cropped and resampled like the video.
  return readBackgroundPlate((bg as { image: string }).image, { width, height, ...(crop ? { crop } : {}) });
}

/** The background as an image [H, W, 3] (a colour broadcast). */
function backgroundFrame(bg: NonNullable<RigidSceneSpec["background"]>, width: number, height: number): Array {
  if (typeof bg === "object" && "shape" in (bg as object)) return bg as Array;
  if (bg === "ground")
    throw new Error("scene: internal: the ground background is drawn by the scene, not read from the video.");
  return np.broadcastTo(np.array([...(bg as readonly number[])], { dtype: "float32" }), [height, width, 3]);
}

/**
 * Where a pixel's largest channel difference from the background starts to count as foreground (low) and fully counts
 * (high).
 */
export interface ForegroundThresholds {
  readonly low: number;
  readonly high: number;
}
export const FOREGROUND_THRESHOLDS: ForegroundThresholds = { low: 0.05, high: 0.15 };

/**
 * Other reasonable definitions of a video's foreground and of the model's outline — thresholds
 * halved and doubled, the soft rasterizer's edge half and twice as wide. On the outside validation
 * set the estimate re-found under them moves by up to 16% (a diagonally pushed box's μ; 3–5% for
 * most boxes), which the residual's spread never shows: the verdict's intervals include it.
 */
export const FOREGROUND_ALTERNATIVES: readonly ForegroundThresholds[] = [
  { low: 0.025, high: 0.075 },
  { low: 0.1, high: 0.3 },
];
export const OUTLINE_ALTERNATIVES: readonly number[] = [0.5, 2];
/** The edge width factor of the model drawn sharp (the verdict's floor measures the soft outline against it). */
const SHARP_OUTLINE = 0.02;
/** Meshes up to this many vertices get the contact-points alternative (a finer mesh already samples its faces). */
const CONTACT_ALTERNATIVE_MAX_VERTICES = 64;
/**
 * Most Levenberg–Marquardt steps that re-find the minimiser under an alternative, from the estimate; a re-fit stops
 * earlier where no step lowers the loss. Capped at 8 the re-fits stopped short along the long mass–friction valley:
 * the spun box's move under the contact points' spread grew 14% when they could go on to convergence.
 */
const ALTERNATIVE_STEPS = 40;

/**
 * The soft foreground mask [T, H, W, 1] of a video against its background (an image [H, W, 3] or
 * a colour): 0 where a pixel matches the background, 1 where it differs by more than 0.15 in some
 * channel, a ramp between (noise below 0.05 is ignored). A cast shadow darkens the background by
 * about the same factor in every channel (same chromaticity): such pixels are background, not
 * object. `thresholds` moves the ramp's ends (the verdict asks how far the estimate hangs on them).
 */
export function foregroundMask(
  video: Array,
  background: RigidSceneSpec["background"],
  thresholds: ForegroundThresholds = FOREGROUND_THRESHOLDS,
): Array {
  const { low, high } = thresholds;
  if (!(low >= 0 && high > low))
    throw new Error(`foregroundMask: thresholds need 0 ≤ low < high, got low ${low}, high ${high}.`);
  const [T, H, W] = video.shape as [number, number, number, number];
  const v = video.dataSync(),
    n = H * W;
  const bg =
    typeof background === "object" && "shape" in (background as object)
      ? (background as Array).dataSync()
      : Float32Array.from({ length: 3 * n }, (_, i) => (background as readonly number[])[i % 3]!);
  const out = new Float32Array(T * n);
  for (let t = 0; t < T; t++)
    for (let p = 0; p < n; p++) {
      let d = 0,
        rmin = Infinity,
        rmax = 0;
      for (let c = 0; c < 3; c++) {
        const I = v[3 * (t * n + p) + c]!,
          B = bg[3 * p + c]!;
        d = Math.max(d, Math.abs(I - B));
        const r = (I + 0.02) / (B + 0.02);
        rmin = Math.min(rmin, r);
        rmax = Math.max(rmax, r);
      }
      const shadow = rmin >= 0.25 && rmax <= 0.97 && rmax - rmin < 0.12;
      out[t * n + p] = shadow ? 0 : Math.min(1, Math.max(0, (d - low) / (high - low)));
    }
  return np.reshape(np.array(out, { dtype: "float32" }), [T, H, W, 1]);
}

/**
 * The model's object at frame 0 (its soft silhouette) against the video's foreground there: where
 * they barely overlap, the camera, the initial state or the background is wrong, and no fit can
 * say anything — an error that says which to check (for a median background: an object resting
 * in one place for half the clip is part of the median, and so vanishes from the foreground).
 */
function checkFirstFrame(
  alpha0: ArrayLike<number>,
  mask0: ArrayLike<number>,
  background: VideoSceneFile["background"],
): void {
  let drawn = 0,
    shared = 0,
    seen = 0;
  for (let i = 0; i < alpha0.length; i++) {
    drawn += alpha0[i]!;
    shared += alpha0[i]! * mask0[i]!;
    seen += mask0[i]!;
  }
  if (!(drawn > 0)) {
    throw new Error(
      `scene: at frame 0 the object is not in view of the camera (it projects outside ` +
        `the image or behind the camera); check "camera" and "initialState.position".`,
    );
  }
  const overlap = shared / drawn;
  if (overlap >= 0.3) return;
  if (background === "median" && seen < 0.3 * drawn) {
    throw new Error(
      `scene: with "background": "median", frame 0 shows almost no foreground ` +
        `where the object starts (${(100 * overlap).toFixed(0)}% of its silhouette): ` +
        `the object rests there for at least half the clip, so the per-pixel median shows the object itself; ` +
        `give a clean plate ({ "image": "plate.png" }) or "first-frame" of a clip that starts without it.`,
    );
  }
  throw new Error(
    `scene: at frame 0 only ${(100 * overlap).toFixed(0)}% of the model's silhouette lies on the ` +
      `video's foreground: the scene file's camera, initial state or background does not match the video ` +
      `(frame 0 must show the initial state; an eye/at camera is a physical camera at that pose). Check ` +
      `"camera", "initialState" and "background", e.g. by rendering the scene's frame 0 beside the video's.`,
  );
}

export interface FitVideoOptions {
  /** A directory of PNG frames, a .gif, or a video file ffmpeg reads. */
  readonly video: string;
  /** A scene file path, or an already parsed scene object. */
  readonly scene: string | unknown;
  /** Which unknowns to fit (default: every entry of the scene's "unknowns"). */
  readonly unknowns?: readonly string[];
  /** Descent settings (default: Adam 60 steps, then 10 L-BFGS steps; see DEFAULT_VIDEO_FIT). */
  readonly settings?: Partial<EstimateSettings>;
  /** Write the report files here (videos, frame strip, loss curve); none when absent. */
  readonly out?: string;
  readonly log?: (line: string) => void;
  /**
   * The precision asked of every unknown: the largest 95% half-width, as a share of its value, for the verdict to be
   * "fits" (0.02: within ±2%; wider is "imprecise"). Default VERDICT_LIMITS.relativeHalfWidth (25%).
   */
  readonly precision?: number;
}

export interface FitVideoResult {
  readonly video: {
    readonly path: string;
    readonly format: VideoFile["source"]["format"];
    readonly sourceSize: readonly [number, number];
    readonly sourceFrames: number;
    readonly crop: readonly [number, number, number, number] | null;
    readonly resolution: readonly [number, number];
    readonly framesUsed: number;
    readonly fps: number;
    readonly fileFps: number | null;
  };
  readonly scene: string | null;
  /** The fitted unknowns, with units. */
  readonly unknowns: readonly { readonly name: string; readonly unit: string }[];
  readonly initial: Values;
  readonly estimate: Values;
  /** Where the scene gives the truth: it and the relative errors. */
  readonly truth?: Values;
  readonly relError?: Values;
  readonly finalLoss: number;
  readonly loss: string;
  readonly iterations: number;
  readonly fitSeconds: number;
  /** How good the answer is: floors, coverage, an interval per unknown, and a status with its reasons. */
  readonly verdict: Verdict;
  readonly files: string[];
  readonly fit: EstimateResult;
}

/**
 * The prior is searched first — 12 starts spread over it, scored with the initial guess, the fit
 * descending from the best — and after the descent each unknown is scanned over 12 points of its
 * prior: a video's loss has flat traps (a mass that slides the model's object out of view scores
 * lower than one beside the truth) that a descent from one guess walks into. Then Adam with a
 * decaying step in log space, then up to 40 L-BFGS steps from its best iterate.
 */
export const DEFAULT_VIDEO_FIT: EstimateSettings = {
  optimizer: "adam",
  steps: 60,
  adam: { lr: 0.1, lrEnd: 1e-3, b1: 0.5 },
  // L-BFGS stops itself when the line search finds no lower loss; 10 steps stopped 8 of the outside set's 17 fits
  // while the loss still fell by up to 3× (a diagonally pushed box: 4.4e-3 → 1.5e-3 in its 10).
  refine: 40,
  frames: "every",
  restarts: 12,
  scan: { points: 12 },
  seed: 0,
};

export async function fitVideo(o: FitVideoOptions): Promise<FitVideoResult> {
  const log = o.log ?? ((l: string) => console.error(l));
  const scene = typeof o.scene === "string" ? loadVideoScene(o.scene) : resolveScene(o.scene);
  const f = scene.file;
  const probe = probeVideo(o.video);
  const [sw, sh] = [probe.width, probe.height];
  const crop = f.crop;
  const [cw, ch] = crop ? [crop[2], crop[3]] : [sw, sh];
  const [width, height] = outputSize(f.resolution, cw, ch);
  const frames = f.frames ?? probe.frames;
  if (frames > probe.frames)
    throw new Error(`scene: "frames" is ${frames}, but ${o.video} has ${probe.frames} frames.`);
  const video = readVideo(o.video, { width, height, ...(crop ? { crop } : {}), frames });
  // (GIF stores frame times in hundredths of a second, so 30 fps is written as 33 or 30 ms.)
  if (video.fps && Math.abs(1000 / video.fps - 1000 / f.fps) > 10)
    log(`note: the scene file says ${f.fps} fps, the video file ${video.fps.toFixed(2)} fps; using the scene file's.`);

  const names = (o.unknowns ?? Object.keys(f.unknowns)) as string[];
  if (!names.length)
    throw new Error(
      `scene: nothing to estimate; name the unknowns with --unknowns (e.g. mass,mu) or in the scene's "unknowns".`,
    );
  const known = sceneValues({
    mass: f.mass,
    contact: f.ground,
    position: f.initialState.position,
    velocity: f.initialState.velocity,
    impulses: f.impulses,
  });
  const unknowns: Unknown[] = names.map((n) => {
    if (!(n in known))
      throw new Error(
        `--unknowns: "${n}" is not something a rigid scene can estimate; choose from ${Object.keys(known).join(", ")}.`,
      );
    const k = n as RigidUnknown;
    const initial = f.unknowns[k]?.initial ?? known[k];
    if (initial === undefined) {
      throw new Error(
        k.startsWith("push")
          ? `scene: "${k}" is an unknown of the scene's pushes, but it has no ` +
              `"impulses"; add the push you know of (its force and start are first guesses).`
          : `scene: "${k}" is an unknown of the ground contact, but the scene ` +
              `has no "ground"; add "ground": { "mu": 0.5 } (a first guess).`,
      );
    }
    const positive = POSITIVE_RIGID_UNKNOWNS.includes(k);
    return {
      name: k,
      transform: positive ? "log" : "identity",
      unit: RIGID_UNITS[k],
      prior: f.unknowns[k]?.prior ?? defaultPrior(k, initial),
    };
  });
  const initial: Values = Object.fromEntries(
    unknowns.map((u) => [u.name, f.unknowns[u.name as RigidUnknown]?.initial ?? known[u.name as RigidUnknown]!]),
  );

  const spec: RigidSceneSpec = {
    ...sceneFileMotion(f, scene.mesh),
    mass: f.mass,
    contact: f.ground,
    frames,
    fps: f.fps,
    substeps: f.substeps,
    camera: croppedCamera(f.camera, sw, sh, crop),
    resolution: [width, height],
    background: backgroundOf(f.background, video.frames, width, height, crop),
    channels: "rgb",
  };
  // Silhouettes: the estimator renders the object's soft coverage and compares it with the video's foreground mask.
  const silhouette = f.compare === "silhouette";
  const rigid = buildRigidScene(silhouette ? { ...spec, channels: "alpha" } : spec);
  const trajectory = jit((p: ReturnType<typeof paramsOf>) => rigidVertices(rigid, p, frames));
  const problem = rigidProblem(rigid, { tiling: measureTiling(rigid, [trajectory(paramsOf(unknowns, initial))], 4) });
  const observed = silhouette ? foregroundMask(video.frames, spec.background!) : video.frames;
  const layout = new Layout(unknowns);
  log(
    `video ${o.video}: ${probe.frames} frames of ${sw}×${sh}` +
      `${crop ? `, cropped to ${cw}×${ch} at (${crop[0]}, ${crop[1]})` : ""}` +
      `, fitting ${frames} frames at ${width}×${height} ` +
      `(${silhouette ? "silhouettes against the video's foreground" : "colours"}); ` +
      `unknowns ${names.join(", ")}, initial ${formatValues(layout, initial)}`,
  );
  // The model's soft silhouette as the estimator draws it, or with another edge width (the floor's sharp drawing).
  const alphaRenderer = (edgeSoftness?: number) =>
    compileRender(
      rigidProblem(
        buildRigidScene({ ...spec, channels: "alpha", ...(edgeSoftness === undefined ? {} : { edgeSoftness }) }),
      ).render!,
    );
  // Frame 0 is the scene's initial state: the video's object must be where the scene file puts it.
  const alphaOf = alphaRenderer();
  const mask = silhouette ? observed : foregroundMask(video.frames, spec.background!);
  checkFirstFrame(
    np.split(alphaOf(trajectory(paramsOf(unknowns, initial))), [1], 0)[0]!.dataSync(),
    np.split(mask, [1], 0)[0]!.dataSync(),
    f.background,
  );
  const settings: EstimateSettings = { ...DEFAULT_VIDEO_FIT, ...o.settings };
  const r = await estimate({
    ...problem,
    observed: { video: observed },
    unknowns,
    initial,
    method: "pixels",
    settings: { ...settings, label: settings.label ?? "fit" },
    log,
  });
  const truthGiven = names.every((n) => f.truth[n as RigidUnknown] !== undefined);
  const truth = truthGiven ? Object.fromEntries(names.map((n) => [n, f.truth[n as RigidUnknown]!])) : undefined;
  const relError = truth
    ? Object.fromEntries(
        names.map((n) => [
          n,
          Math.abs((r.estimate[n] as number) - (truth[n] as number)) / Math.max(Math.abs(truth[n] as number), 1e-12),
        ]),
      )
    : undefined;
  const errors = relError
    ? ` (relative error ${names.map((n) => `${n} ${(relError[n] as number).toExponential(2)}`).join(", ")})`
    : "";
  log(`estimate ${formatValues(layout, r.estimate)}${errors}`);
  const loss = silhouette
    ? "silhouette loss (pixelwise MSE against the foreground mask)"
    : "image loss (pixelwise MSE, RGB in [0, 1])";

  // The verdict: the loss against the video's floor and an empty frame, coverage, and intervals.
  const estimateVertices = trajectory(paramsOf(unknowns, r.estimate));
  const sharpOf = alphaRenderer(SHARP_OUTLINE);
  const estimateAlpha = alphaOf(estimateVertices);
  const n = width * height,
    maskData = mask.dataSync(),
    alphaData = estimateAlpha.dataSync();
  const edges = silhouetteFloor(maskData, alphaData, sharpOf(estimateVertices).dataSync(), frames, n);
  let floor = edges,
    emptyLoss: number;
  if (silhouette) {
    emptyLoss = np.mean(np.square(mask)).item();
  } else {
    // Colours: sensor noise, and the outlines' softness weighted by the object's contrast with its background.
    const diff = np.square(
      np.sub(video.frames, np.broadcastTo(backgroundFrame(spec.background!, width, height), video.frames.shape)),
    );
    emptyLoss = np.mean(diff).item();
    const contrast = np.sum(np.mul(diff, mask)).item() / Math.max(1e-9, 3 * np.sum(mask).item());
    floor = { noise: colourNoise(video.frames.dataSync(), maskData, frames, n), edges: edges.edges * contrast };
  }
  // The contact's coefficients the scene leaves at their defaults are guesses about another world's
  // floor: the intervals include how far the estimate moves when they are off (GUESSED_CONTACT_SD).
  const guessed = f.ground ? (["ke", "kd", "kf"] as const).filter((k) => !names.includes(k)) : [];
  const nuisance: Unknown[] = guessed.map((k) => ({ name: k, transform: "log", unit: RIGID_UNITS[k] }));
  const withNuisance = new Layout([...unknowns, ...nuisance]);
  const objective = buildObjective({ ...problem }, { video: observed }, withNuisance, {
    kind: "pixels",
    frames: "every",
  });
  const uFit = layout.toU(r.estimate);
  const uAll = [...uFit, ...guessed.map((k) => Math.log(f.ground![k]))];
  // How far the estimate hangs on the measurement's and the model's choices: the minimiser re-found from the
  // estimate under each variant (Levenberg–Marquardt), with `extra` unknowns (at the scene file's values) freed
  // beside the fitted ones; the fitted ones' values, and whether the re-fit converged (rather than ran out of steps).
  const refit = async (
    p: Problem<Array>,
    video: Array,
    extra: readonly { name: RigidUnknown; value: number }[] = [],
  ) => {
    const lm = await levenbergMarquardt(
      buildObjective(
        p,
        { video },
        extra.length
          ? new Layout([...unknowns, ...extra.map((e) => ({ name: e.name, transform: "identity" as const }))])
          : layout,
        { kind: "pixels", frames: "every" },
      ).residual,
      np.array([...uFit, ...extra.map((e) => e.value)], { dtype: "float32" }),
      { iterations: ALTERNATIVE_STEPS, progress: false },
    );
    return {
      u: globalThis.Array.from(await lm.params.data()).slice(0, uFit.length),
      converged: lm.stopReason === "stalled",
    };
  };
  const alternativeOf = (name: string, fits: readonly { u: number[]; converged: boolean }[]): Alternative => ({
    name,
    estimates: fits.map((x) => x.u),
    unconverged: fits.filter((x) => !x.converged).length,
  });
  // The re-fits and the profile below take about as long as a few hundred descent steps: say what is running.
  const place = (["x0", "z0"] as const).filter((k) => !names.includes(k));
  const spreadContacts =
    spec.contact && rigid.contactRadius === 0 && rigid.contactPoints.length / 3 <= CONTACT_ALTERNATIVE_MAX_VERTICES;
  const choices = [
    silhouette && "foreground",
    "outline",
    place.length && "place",
    spreadContacts && "contacts",
    spreadContacts && "load",
  ]
    .filter((x): x is string => typeof x === "string")
    .map((x) => ALTERNATIVE_WORDS[x]);
  const verdictStart = performance.now();
  log(
    `verdict: re-finding the estimate under other reasonable choices of the ${choices.join(", the ")} ` +
      `(at most ${ALTERNATIVE_STEPS} Levenberg–Marquardt steps each)`,
  );
  const alternatives: Alternative[] = [];
  if (silhouette)
    alternatives.push(
      alternativeOf(
        "foreground",
        await Promise.all(
          FOREGROUND_ALTERNATIVES.map((t) => refit(problem, foregroundMask(video.frames, spec.background!, t))),
        ),
      ),
    );
  alternatives.push(
    alternativeOf(
      "outline",
      await Promise.all(
        OUTLINE_ALTERNATIVES.map((k) =>
          refit(rigidProblem(buildRigidScene({ ...rigid.spec, edgeSoftness: k })), observed),
        ),
      ),
    ),
  );
  // The scene file's initial position is a measurement too: the estimate re-found with the object's place on the
  // floor (x0, z0) free as well says how much it hangs on that place — to the pixel, where the video pins it.
  if (place.length)
    alternatives.push(
      alternativeOf("place", [
        await refit(
          problem,
          observed,
          place.map((k) => ({ name: k, value: known[k]! })),
        ),
      ]),
    );
  // A flat face's load over its contacts (statically indeterminate): a mesh with few vertices touches at its
  // corners; one alternative spreads the load over its edges' midpoints too, another bounds each corner's friction by
  // an even share of the body's load rather than its own (a box that turns while it slides ends in different places
  // under the two, and the engines differ here as well).
  if (spreadContacts)
    alternatives.push(
      alternativeOf("contacts", [
        await refit(rigidProblem(buildRigidScene({ ...rigid.spec, contactSampling: "edges" })), observed),
      ]),
      alternativeOf("load", [
        await refit(rigidProblem(buildRigidScene({ ...rigid.spec, frictionLoad: "shared" })), observed),
      ]),
    );
  let uncertainty = laplaceUncertainty(
    (u) => objective.residual(u),
    layout,
    uAll,
    frames,
    guessed.length ? { count: guessed.length, sd: guessed.map((k) => GUESSED_CONTACT_SD[k]) } : undefined,
    alternatives,
  );
  // Along the interval's long axis, values that fit as well as the alternatives' minimisers do under the default
  // choices widen it (profile.ts): a long flat valley or a second basin the curvature at the estimate does not see.
  if (uncertainty.covariance) {
    const nuisanceU = uAll.slice(uFit.length);
    const [estimateLoss, ...alternativeLosses] = await objective.values(
      [uFit, ...alternatives.flatMap((a) => a.estimates)].map((x) => [...x, ...nuisanceU]),
    );
    const allowance = Math.max(0, ...alternativeLosses.filter(Number.isFinite).map((x) => x - estimateLoss!));
    const fixed = np.array(nuisanceU, { dtype: "float32" });
    log(
      `verdict: the loss along the interval's long axis, at most ${2 * PROFILE_STEPS.length} points ` +
        `(${((performance.now() - verdictStart) / 1000).toFixed(0)} s so far)`,
    );
    const profile = await profileAlongAxis(
      (x) => objective.residual(nuisanceU.length ? np.concatenate([x, fixed]) : x),
      uFit,
      uncertainty.covariance,
      estimateLoss!,
      allowance,
    );
    const before = uncertainty;
    uncertainty = widenedByProfile(uncertainty, layout, profile);
    const widened = uncertainty.unknowns.filter((u, i) => u.relativeHalfWidth > before.unknowns[i]!.relativeHalfWidth);
    const stretch = alongAxis(profile).filter((x) => x.consistent);
    const reach = (x: { u: readonly number[] }) => formatValues(layout, layout.fromU(x.u));
    if (widened.length)
      log(
        `  along the interval's long axis the loss stays within the alternatives' cost ` +
          `(+${allowance.toExponential(2)}) from ${reach(stretch[0]!)} to ${reach(stretch.at(-1)!)}: ` +
          `the intervals of ${widened.map((u) => u.name).join(", ")} hold that stretch`,
      );
  }
  const verdict = judge({
    finalLoss: r.finalLoss,
    emptyLoss,
    floor,
    framesMissed: missedFrames(maskData, alphaData, frames, n),
    uncertainty,
    units: RIGID_UNITS,
    ...(o.precision !== undefined ? { precision: o.precision } : {}),
  });
  uncertainty.unknowns.forEach((u, i) => {
    const share = (sd: number) => `±${(100 * (Math.exp(1.96 * sd) - 1)).toPrecision(2)}%`;
    const parts = [
      ...(uncertainty.modelSd ? [`the contact's defaults ${share(uncertainty.modelSd[i]!)}`] : []),
      ...Object.entries(uncertainty.alternativesSd ?? {}).map(
        ([name, sd]) => `the ${ALTERNATIVE_WORDS[name] ?? name} ${share(sd[i]!)}`,
      ),
    ];
    log(
      `  ${u.name}: 95% interval ${u.interval[0].toPrecision(4)} … ${u.interval[1].toPrecision(4)} ` +
        `${RIGID_UNITS[u.name as RigidUnknown] ?? ""}` +
        `${parts.length ? ` (of which ${parts.join(", ")})` : ""}`,
    );
  });
  if (uncertainty.unconverged?.length)
    log(
      `  the re-fits under the ${uncertainty.unconverged.map((x) => ALTERNATIVE_WORDS[x] ?? x).join(", ")} stopped ` +
        `at ${ALTERNATIVE_STEPS} steps before converging: their shares above are lower bounds`,
    );
  log(
    `verdict: ${verdict.status} — loss ${r.finalLoss.toExponential(2)}, ${verdict.floorRatio.toFixed(2)}× ` +
      `the video's floor, ${(100 * verdict.explained).toFixed(1)}% of the empty-frame loss above it explained` +
      (verdict.reasons.length ? `\n${verdict.reasons.map((x) => `  - ${x}`).join("\n")}` : ""),
  );
  let files: string[] = [];
  if (o.out) {
    // What people look at: the object in colour over the background, whatever the loss compared.
    const colour = rigidProblem(buildRigidScene(spec));
    const render = compileRender((v: Array) => colour.render!(v));
    const videoOf = (v: Values) => render(trajectory(paramsOf(unknowns, v)));
    files = [
      ...(
        await writeComparison(
          o.out,
          { truth: video.frames, estimate: videoOf(r.estimate), initial: videoOf(initial) },
          f.fps,
          { composited: true },
          { truth: "video" },
        )
      ).files,
      ...writeLossCurves(o.out, r.losses, r.gradNorms, { title: `fit: ${formatValues(layout, r.estimate)}`, loss }),
      ...writeResidualMaps(o.out, silhouette ? np.sub(estimateAlpha, mask) : np.sub(videoOf(r.estimate), video.frames)),
      ...(uncertainty.profile ? writeProfile(o.out, uncertainty.profile, layout) : []),
    ];
  }
  return {
    video: {
      path: o.video,
      format: video.source.format,
      sourceSize: [sw, sh],
      sourceFrames: probe.frames,
      crop,
      resolution: [width, height],
      framesUsed: frames,
      fps: f.fps,
      fileFps: video.fps,
    },
    scene: scene.path,
    unknowns: unknowns.map((u) => ({ name: u.name, unit: u.unit ?? "" })),
    initial,
    estimate: r.estimate,
    ...(truth ? { truth, relError } : {}),
    finalLoss: r.finalLoss,
    loss,
    iterations: r.steps,
    fitSeconds: Number(r.seconds.toFixed(2)),
    verdict,
    files,
    fit: r,
  };
}
