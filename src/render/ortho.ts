/**
 * pytorch3d's camera vocabulary: `lookAtViewTransform` (look_at_view_transform) gives the batched
 * (R, T) with X_view = X_world·R + T (row vectors); `orthographicCamera` is FoVOrthographicCameras
 * (min/max x and y, scale_xyz, znear/zfar) as a gradsim Camera, from a look-at or from (R, T);
 * `cameraFromViewTransform` turns (R, T) into a perspective Camera. Camera space is the same as
 * pytorch3d's (x = normalize(up × forward), y up, z forward), so projectPoints' NDC values equal
 * pytorch3d's transform_points; only the image differs: pytorch3d draws NDC +x on the left,
 * gradsim on the right (SoftRas' convention, CONVENTIONS.md), so rendered images are mirrors.
 */
import type { Array, ArrayLike } from "../core/array.js";
import type { DType } from "../core/dtype.js";
import { np } from "../core/np/index.js";
import { lookAtRotation, toArray, type Camera } from "./camera.js";

export interface LookAtViewOptions {
  /**
   * Distance(s) from the origin (pytorch3d: the angles place the camera about the origin; `at` sets where it looks);
   * default 1. Lists give a batch (dist, elev, azim broadcast together).
   */
  readonly dist?: number | readonly number[];
  /** Elevation(s) above the xz plane; default 0. */
  readonly elev?: number | readonly number[];
  /** Azimuth(s) about +y from +z towards +x; default 0 (the camera on +z). */
  readonly azim?: number | readonly number[];
  /** Angles in degrees (default) or radians. */
  readonly degrees?: boolean;
  /** Camera position(s) [3] or [N, 3] instead of dist/elev/azim. */
  readonly eye?: ArrayLike;
  readonly at?: ArrayLike;
  readonly up?: ArrayLike;
  readonly dtype?: DType;
}

/** pytorch3d's (R, T): R [N, 3, 3] whose columns are the camera axes in world space, T [N, 3]. */
export interface ViewTransform {
  readonly R: Array;
  readonly T: Array;
}

const list = (v: number | readonly number[] | undefined, d: number): number[] =>
  v === undefined ? [d] : typeof v === "number" ? [v] : [...v];

/** Camera position(s) [N, 3] from pytorch3d's spherical angles: (d·cos e·sin a, d·sin e, d·cos e·cos a). */
function eyesFromAngles(o: LookAtViewOptions, dtype: DType): Array {
  const dist = list(o.dist, 1),
    elev = list(o.elev, 0),
    azim = list(o.azim, 0);
  const n = Math.max(dist.length, elev.length, azim.length);
  for (const [k, v] of [
    ["dist", dist],
    ["elev", elev],
    ["azim", azim],
  ] as const) {
    if (v.length !== 1 && v.length !== n)
      throw new Error(`lookAtViewTransform: ${k} has ${v.length} values but the batch has ${n}; give 1 or ${n}.`);
    if (!v.every(Number.isFinite))
      throw new Error(`lookAtViewTransform: ${k} must be finite numbers, got ${JSON.stringify(v)}.`);
  }
  const toRad = o.degrees === false ? 1 : Math.PI / 180;
  const at = (v: number[], i: number) => v[v.length === 1 ? 0 : i]!;
  return np.array(
    globalThis.Array.from({ length: n }, (_, i) => {
      const d = at(dist, i),
        e = at(elev, i) * toRad,
        a = at(azim, i) * toRad;
      return [d * Math.cos(e) * Math.sin(a), d * Math.sin(e), d * Math.cos(e) * Math.cos(a)];
    }),
    { dtype },
  );
}

/**
 * pytorch3d's look_at_view_transform: batched (R, T) with X_view = X_world·R + T, the camera at
 * `eye` (or at dist/elev/azim about the origin) looking at `at` with `up`. Differentiable in eye/at/up
 * given as Arrays.
 */
export function lookAtViewTransform(opts: LookAtViewOptions = {}): ViewTransform {
  const dtype = opts.dtype ?? "float32";
  let eyes = opts.eye !== undefined ? toArray(opts.eye, dtype) : eyesFromAngles(opts, dtype);
  if (eyes.ndim === 1) eyes = np.reshape(eyes, [1, 3]);
  if (eyes.ndim !== 2 || eyes.shape[1] !== 3)
    throw new Error(`lookAtViewTransform: eye must be [3] or [N, 3], got ${eyes.aval}.`);
  const at = toArray(opts.at ?? [0, 0, 0], dtype),
    up = toArray(opts.up ?? [0, 1, 0], dtype);
  const n = eyes.shape[0]!;
  const row = (v: Array, i: number) => (v.ndim === 2 ? np.take(v, v.shape[0] === 1 ? 0 : i, 0) : v);
  // Rows of lookAtRotation are the camera axes (SoftRas' look-at = pytorch3d's look_at_rotation); R is its transpose.
  const R = np.stack(
    globalThis.Array.from({ length: n }, (_, i) =>
      np.transpose(lookAtRotation(np.take(eyes, i, 0), row(at, i), row(up, i), "softras")),
    ),
    0,
  );
  // T = −Rᵀ·C for each camera.
  const T = np.neg(np.einsum("nji,nj->ni", R, eyes));
  return { R, T };
}

/** The one camera of (R, T): [3, 3] and [3], or batches of one. */
function single(vt: ViewTransform, what: string): { rotation: Array; eye: Array } {
  const R = vt.R.ndim === 3 && vt.R.shape[0] === 1 ? np.reshape(vt.R, [3, 3]) : vt.R;
  const T = vt.T.ndim === 2 && vt.T.shape[0] === 1 ? np.reshape(vt.T, [3]) : vt.T;
  if (R.shape.join() !== "3,3" || T.shape.join() !== "3") {
    throw new Error(
      `${what}: R must be [3, 3] (or [1, 3, 3]) and T [3] (or [1, 3]), got ${R.aval} and ${T.aval}; ` +
        `for a batch, vmap over (R, T) or build one camera per row.`,
    );
  }
  // X_view = Rᵀ(X − C) with C = −R·T: gradsim's rotation is Rᵀ and its eye is C.
  return { rotation: np.transpose(R), eye: np.neg(np.matmul(R, T)) };
}

export interface OrthographicOptions extends LookAtViewOptions {
  /** pytorch3d's (R, T) instead of a look-at (one camera). */
  readonly R?: ArrayLike;
  readonly T?: ArrayLike;
  /** The view volume's x and y extents in camera units (FoVOrthographicCameras' min_x … max_y); default ±1. */
  readonly minX?: number;
  readonly maxX?: number;
  readonly minY?: number;
  readonly maxY?: number;
  /** scale_xyz: [sx, sy, sz] multiplying the camera coordinates; default [1, 1, 1]. */
  readonly scale?: ArrayLike;
  /** Depth range (znear, zfar); default 1 and 100. */
  readonly near?: number;
  readonly far?: number;
}

/**
 * pytorch3d's FoVOrthographicCameras as a gradsim Camera: x_ndc = sx·2/(maxX − minX)·x −
 * (maxX + minX)/(maxX − minX), likewise y; depth is camera z (projectPoints' `depth`). Render it
 * like any camera (`render.render(meshes, { camera })`): parallel projection, no foreshortening.
 */
export function orthographicCamera(opts: OrthographicOptions = {}): Camera {
  const dtype = opts.dtype ?? "float32";
  const [minX, maxX, minY, maxY] = [opts.minX ?? -1, opts.maxX ?? 1, opts.minY ?? -1, opts.maxY ?? 1];
  if (!(maxX > minX) || !(maxY > minY) || ![minX, maxX, minY, maxY].every(Number.isFinite)) {
    throw new Error(
      `orthographicCamera: the view volume needs finite minX < maxX and minY < maxY, ` +
        `got x [${minX}, ${maxX}], y [${minY}, ${maxY}].`,
    );
  }
  const near = opts.near ?? 1,
    far = opts.far ?? 100;
  if (!(far > near) || !Number.isFinite(far) || !Number.isFinite(near))
    throw new Error(`orthographicCamera: need finite near < far, got ${near} and ${far}.`);
  if ((opts.R === undefined) !== (opts.T === undefined))
    throw new Error("orthographicCamera: give both R and T (pytorch3d's view transform), or neither (a look-at).");
  const pose =
    opts.R !== undefined
      ? single({ R: toArray(opts.R, dtype), T: toArray(opts.T!, dtype) }, "orthographicCamera")
      : single(lookAtViewTransform(opts), "orthographicCamera");
  const s = toArray(opts.scale ?? [1, 1, 1], dtype);
  if (s.shape.join() !== "3") throw new Error(`orthographicCamera: scale must be [sx, sy, sz], got ${s.aval}.`);
  const sxy = np.reshape(np.take(s, [0, 1], 0), [2]);
  const focal = np.mul(sxy, toArray([2 / (maxX - minX), 2 / (maxY - minY)], dtype));
  const center = toArray([-(maxX + minX) / (maxX - minX), -(maxY + minY) / (maxY - minY)], dtype);
  return { ...pose, focal, center, near, far, projection: "orthographic" };
}

/**
 * A perspective Camera from pytorch3d's (R, T) (one camera) with a vertical field of view in degrees
 * (FoVPerspectiveCameras' fov).
 */
export function cameraFromViewTransform(
  vt: { R: ArrayLike; T: ArrayLike },
  opts: { fovY?: number; aspect?: number; near?: number; far?: number; dtype?: DType } = {},
): Camera {
  const dtype = opts.dtype ?? "float32";
  const fov = opts.fovY ?? 60;
  if (!(fov > 0 && fov < 180))
    throw new Error(`cameraFromViewTransform: fovY must be an angle in degrees between 0 and 180, got ${fov}.`);
  const pose = single({ R: toArray(vt.R, dtype), T: toArray(vt.T, dtype) }, "cameraFromViewTransform");
  const fy = 1 / Math.tan((fov * Math.PI) / 360);
  return {
    ...pose,
    focal: toArray([fy / (opts.aspect ?? 1), fy], dtype),
    center: toArray([0, 0], dtype),
    near: opts.near ?? 1,
    far: opts.far ?? 100,
  };
}
