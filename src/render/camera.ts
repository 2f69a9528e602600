/**
 * Perspective cameras (issue 7 item 1). All conventions are in src/render/CONVENTIONS.md; in short:
 * camera space has x right, y up, z forward (depth > 0 in front, SoftRas); NDC x right, y up in
 * [−1, 1] across the image; x_ndc = fx·x/z + cx, y_ndc = fy·y/z + cy with fy = 1/tan(fovY/2),
 * fx = fy/aspect. Every field is an Array, so cameras can be differentiated and vmapped.
 */
import { Array as ArrayClass, type Array, type ArrayLike } from "../core/array.js";
import type { DType } from "../core/dtype.js";
import { np } from "../core/np/index.js";

export interface Camera {
  /** [3] eye position in world space. */
  readonly eye: Array;
  /** [3, 3] world→camera rotation; its rows are the camera's right, up and forward axes in world space. */
  readonly rotation: Array;
  /** [2] NDC focal lengths (fx, fy). */
  readonly focal: Array;
  /** [2] NDC principal-point offset (cx, cy); 0 for a centred camera. */
  readonly center: Array;
  /** Depth range used by SoftRas colour aggregation (z̄ = (far − z)/(far − near)). */
  readonly near: number;
  readonly far: number;
  /** "orthographic": x_ndc = fx·x + cx, no division by depth (orthographicCamera). Absent: perspective. */
  readonly projection?: "perspective" | "orthographic";
}

/**
 * How the look-at frame is built:
 *  - "softras": forward = at − eye, right = up × forward, up' = forward × right (SoftRas/gradSim
 *    `look_at`; this is gradsim's default and what makes CCW-outward meshes appear clockwise).
 *  - "opengl": right-handed OpenGL/kaolin frame (back = eye − at, right = up × back, up' = back × right),
 *    stored with forward = −back so depth stays positive. Mirror image of "softras".
 */
export type LookAtConvention = "softras" | "opengl";

const EPS = 1e-5; // F.normalize eps used by SoftRas look_at

/** v / max(|v|, eps) over the last axis, safe under autodiff at v = 0. */
export function normalize(v: Array, eps = EPS): Array {
  const n2 = np.sum(np.mul(v, v), -1, { keepdims: true });
  return np.div(v, np.sqrt(np.maximum(n2, eps * eps)));
}

/** The [3,3] world→camera rotation looking from eye at `at` (anchors §0 "Camera helpers"). */
export function lookAtRotation(
  eye: ArrayLike,
  at: ArrayLike = [0, 0, 0],
  up: ArrayLike = [0, 1, 0],
  convention: LookAtConvention = "softras",
): Array {
  const e = toArray(eye);
  const a = toArray(at, e.dtype),
    u = toArray(up, e.dtype);
  if (convention === "softras") {
    const z = normalize(np.sub(a, e));
    const x = normalize(np.cross(u, z));
    const y = normalize(np.cross(z, x));
    return np.stack([x, y, z], 0);
  }
  const back = normalize(np.sub(e, a));
  const x = normalize(np.cross(u, back));
  const y = normalize(np.cross(back, x));
  return np.stack([x, y, np.neg(back)], 0);
}

const rad = (deg: Array): Array => np.mul(deg, Math.PI / 180);

/**
 * An ArrayLike as an Array: Arrays pass through (cast when dtype is given), JS numbers/lists become `dtype` (default
 * float32).
 */
export function toArray(x: ArrayLike, dtype?: DType): Array {
  if (x instanceof ArrayClass) return dtype && x.dtype !== dtype ? np.astype(x, dtype) : x;
  return np.array(x, { dtype: dtype ?? "float32" });
}

/**
 * SoftRas/gradSim `get_points_from_angles` (degrees): eye = (d·cos el·sin az, d·sin el, −d·cos el·cos az);
 * azimuth 0 puts the camera on −z. gradSim's rigid-body scenes use (8, 30, 0).
 */
export function eyeFromAngles(distance: ArrayLike, elevation: ArrayLike, azimuth: ArrayLike, dtype?: DType): Array {
  const d = toArray(distance, dtype),
    el = rad(toArray(elevation, dtype)),
    az = rad(toArray(azimuth, dtype));
  const ce = np.mul(d, np.cos(el));
  return np.stack([np.mul(ce, np.sin(az)), np.mul(d, np.sin(el)), np.neg(np.mul(ce, np.cos(az)))], 0);
}

/**
 * gradSim's DIB-R `set_look_at_parameters([90 − azimuth], [elevation], [distance])` (degrees):
 * θ = 90° − azimuth, eye = (d·cos el·cos θ, d·sin el, d·cos el·sin θ); azimuth 0 puts the camera on +z.
 */
export function dibrEyeFromAngles(distance: ArrayLike, elevation: ArrayLike, azimuth: ArrayLike, dtype?: DType): Array {
  const d = toArray(distance, dtype),
    el = rad(toArray(elevation, dtype)),
    th = np.sub(Math.PI / 2, rad(toArray(azimuth, dtype)));
  const ce = np.mul(d, np.cos(el));
  return np.stack([np.mul(ce, np.cos(th)), np.mul(d, np.sin(el)), np.mul(ce, np.sin(th))], 0);
}

export interface PerspectiveOptions {
  /**
   * Eye position; or give distance/elevation/azimuth (SoftRas angles, degrees). Default: SoftRas' (0, 0, −(1/tan 30° +
   * 1)).
   */
  readonly eye?: ArrayLike;
  readonly distance?: ArrayLike;
  readonly elevation?: ArrayLike;
  readonly azimuth?: ArrayLike;
  readonly at?: ArrayLike;
  readonly up?: ArrayLike;
  /** Full vertical field of view in degrees. Default 60 (SoftRas viewing_angle 30°); DIB-R uses 49.134. */
  readonly fovY?: ArrayLike;
  /** Image width / height. Default 1. */
  readonly aspect?: number;
  readonly near?: number;
  readonly far?: number;
  readonly convention?: LookAtConvention;
  /** dtype of the camera arrays. Default float32. */
  readonly dtype?: DType;
}

/** A look-at perspective camera. */
export function perspectiveCamera(opts: PerspectiveOptions = {}): Camera {
  // Host numbers are checked here; Array-valued (differentiable) camera parameters are the caller's.
  const bad = (what: string, v: unknown, want: string) =>
    new Error(`perspectiveCamera: ${what} must be ${want}, got ${JSON.stringify(v) ?? String(v)}.`);
  if (typeof opts.fovY === "number" && !(opts.fovY > 0 && opts.fovY < 180))
    throw bad("fovY", opts.fovY, "an angle in degrees between 0 and 180");
  if (opts.aspect !== undefined && !(opts.aspect > 0 && Number.isFinite(opts.aspect)))
    throw bad("aspect", opts.aspect, "a finite width/height > 0");
  if (opts.near !== undefined && !(opts.near > 0 && Number.isFinite(opts.near)))
    throw bad("near", opts.near, "a finite distance > 0");
  if (opts.far !== undefined && !(opts.far > (opts.near ?? 1) && Number.isFinite(opts.far)))
    throw bad("far", opts.far, `a finite distance beyond near (${opts.near ?? 1})`);
  for (const k of ["eye", "at", "up", "distance", "elevation", "azimuth"] as const) {
    const v = opts[k];
    const flat =
      typeof v === "number"
        ? [v]
        : globalThis.Array.isArray(v) && v.every((c) => typeof c === "number")
          ? (v as number[])
          : null;
    if (flat && !flat.every(Number.isFinite)) throw bad(k, v, "finite numbers");
  }
  const host3 = (v: unknown): number[] | null =>
    globalThis.Array.isArray(v) && v.length === 3 && v.every((c) => typeof c === "number") ? (v as number[]) : null;
  const [e3, a3, u3] = [host3(opts.eye), host3(opts.at ?? [0, 0, 0]), host3(opts.up ?? [0, 1, 0])];
  if (e3 && a3 && u3) {
    // A camera needs a viewing direction, and an up that is not along it: otherwise the image is blank and every
    // gradient zero.
    const v = [a3[0]! - e3[0]!, a3[1]! - e3[1]!, a3[2]! - e3[2]!];
    const n = Math.hypot(...v);
    if (!(n > 1e-9))
      throw bad(
        "eye",
        opts.eye,
        `a point other than at (${JSON.stringify(a3)}): the camera needs a direction to look in`,
      );
    const c = [v[1]! * u3[2]! - v[2]! * u3[1]!, v[2]! * u3[0]! - v[0]! * u3[2]!, v[0]! * u3[1]! - v[1]! * u3[0]!];
    if (!(Math.hypot(...c) > 1e-6 * n * Math.hypot(...u3)))
      throw bad(
        "up",
        opts.up ?? [0, 1, 0],
        "a direction not parallel to the view (e.g. [0, 0, 1] for a camera looking straight down)",
      );
  }
  const dtype = opts.dtype ?? "float32";
  const cast = (x: ArrayLike) => toArray(x, dtype);
  let eye: Array;
  if (opts.eye !== undefined) eye = cast(opts.eye);
  else if (opts.distance !== undefined)
    eye = eyeFromAngles(opts.distance, opts.elevation ?? 0, opts.azimuth ?? 0, dtype);
  else eye = cast([0, 0, -(1 / Math.tan(Math.PI / 6) + 1)]);
  const rotation = lookAtRotation(
    eye,
    cast(opts.at ?? [0, 0, 0]),
    cast(opts.up ?? [0, 1, 0]),
    opts.convention ?? "softras",
  );
  const fy = np.div(1, np.tan(np.mul(rad(cast(opts.fovY ?? 60)), 0.5)));
  const focal = np.stack([np.div(fy, opts.aspect ?? 1), fy], 0);
  return { eye, rotation, focal: cast(focal), center: cast([0, 0]), near: opts.near ?? 1, far: opts.far ?? 100 };
}

/** World points [..., 3] → camera coordinates [..., 3] (x right, y up, z forward). */
export function worldToCamera(camera: Camera, points: Array): Array {
  return np.matmul(np.sub(points, camera.eye), np.transpose(camera.rotation));
}

export interface Projected {
  /** [..., 2] NDC coordinates. */
  readonly xy: Array;
  /** [...] camera depth z (> 0 in front). */
  readonly depth: Array;
}

/**
 * Smallest depth used as a divisor: points at or behind the eye project to large finite values (faces with z ≤ 0 are
 * dropped).
 */
const MIN_DEPTH = 1e-9;

/** Project world points [..., 3]: x_ndc = fx·x/z + cx, y_ndc = fy·y/z + cy (orthographic: fx·x + cx, fy·y + cy). */
export function projectPoints(camera: Camera, points: Array): Projected {
  const pc = worldToCamera(camera, points);
  const [x, y, z] = np.split(pc, 3, -1) as [Array, Array, Array];
  if (camera.projection === "orthographic") {
    return { xy: np.add(np.mul(np.concatenate([x, y], -1), camera.focal), camera.center), depth: np.squeeze(z, -1) };
  }
  const zs = np.where(np.greater(z, MIN_DEPTH), z, MIN_DEPTH);
  const xy = np.add(np.mul(np.concatenate([np.div(x, zs), np.div(y, zs)], -1), camera.focal), camera.center);
  return { xy, depth: np.squeeze(z, -1) };
}

/**
 * Host K and [R|t] given as nested lists: focal lengths > 0 and R a rotation (not a mirror), or an error saying which.
 */
function checkHostMatrices(K: ArrayLike, Rt: ArrayLike): void {
  const rows = (m: unknown, cols: number): number[][] | null =>
    globalThis.Array.isArray(m) &&
    m.length === 3 &&
    m.every((r) => globalThis.Array.isArray(r) && r.length === cols && r.every((x) => typeof x === "number"))
      ? (m as number[][])
      : null;
  const k = rows(K, 3),
    rt = rows(Rt, 4);
  if (k && !(k[0]![0]! > 0 && k[1]![1]! > 0 && Number.isFinite(k[0]![0]!) && Number.isFinite(k[1]![1]!))) {
    throw new Error(
      `cameraFromMatrices: K's focal lengths fx = K[0][0] and fy = K[1][1] ` +
        `must be finite and > 0 pixels, got ${k[0]![0]} and ${k[1]![1]}.`,
    );
  }
  if (rt) {
    const R = rt.map((r) => r.slice(0, 3));
    const dot = (a: number[], b: number[]) => a[0]! * b[0]! + a[1]! * b[1]! + a[2]! * b[2]!;
    const orthonormal = [0, 1, 2].every((i) =>
      [0, 1, 2].every((j) => Math.abs(dot(R[i]!, R[j]!) - (i === j ? 1 : 0)) < 1e-4),
    );
    const det = dot(R[0]!, [
      R[1]![1]! * R[2]![2]! - R[1]![2]! * R[2]![1]!,
      R[1]![2]! * R[2]![0]! - R[1]![0]! * R[2]![2]!,
      R[1]![0]! * R[2]![1]! - R[1]![1]! * R[2]![0]!,
    ]);
    if (!orthonormal || !(det > 0))
      throw new Error(
        `cameraFromMatrices: R (the first three columns of [R|t]) must be a rotation — orthonormal ` +
          `rows, determinant +1${orthonormal ? `; its determinant is ${det.toFixed(3)}, a mirror` : ""}.`,
      );
  }
}

/**
 * OpenCV-style intrinsics K [3,3] for a width×height image: pixel (u, v) = (K·p_cv)/z with
 * u = column, v = row (down), integer values at pixel centres, p_cv = (x, −y, z) camera coordinates.
 */
export function intrinsics(camera: Camera, width: number, height: number): Array {
  if (camera.projection === "orthographic")
    throw new Error(
      "intrinsics: an orthographic camera has no pinhole matrix K (its projection does not divide by depth).",
    );
  const [fx, fy] = np.split(camera.focal, 2, 0) as [Array, Array];
  const [cx, cy] = np.split(camera.center, 2, 0) as [Array, Array];
  const s = (v: Array) => np.reshape(v, []);
  const z = np.zerosLike(s(fx)),
    o = np.onesLike(s(fx));
  return np.stack(
    [
      np.stack([s(np.mul(fx, width / 2)), z, s(np.add(np.mul(cx, width / 2), (width - 1) / 2))], 0),
      np.stack([z, s(np.mul(fy, height / 2)), s(np.sub((height - 1) / 2, np.mul(cy, height / 2)))], 0),
      np.stack([z, z, o], 0),
    ],
    0,
  );
}

/** OpenCV-style extrinsics [R_cv | t] [3,4] with R_cv = diag(1,−1,1)·rotation, t = −R_cv·eye. */
export function extrinsics(camera: Camera): Array {
  const Rcv = np.mul(camera.rotation, np.reshape(toArray([1, -1, 1], camera.rotation.dtype), [3, 1]));
  const t = np.neg(np.matmul(Rcv, camera.eye));
  return np.concatenate([Rcv, np.reshape(t, [3, 1])], 1);
}

/** Inverse of intrinsics/extrinsics: a Camera from OpenCV-style K [3,3] and [R|t] [3,4] (zero skew). */
export function cameraFromMatrices(
  K: ArrayLike,
  Rt: ArrayLike,
  width: number,
  height: number,
  opts: { near?: number; far?: number } = {},
): Camera {
  checkHostMatrices(K, Rt);
  const rt = toArray(Rt),
    k = toArray(K, rt.dtype);
  const [Rcv, t] = np.split(rt, [3], 1) as [Array, Array];
  const rotation = np.mul(Rcv, np.reshape(toArray([1, -1, 1], Rcv.dtype), [3, 1]));
  const eye = np.neg(np.matmul(np.transpose(Rcv), np.reshape(t, [3])));
  const kk = np.reshape(k, [9]);
  const at = (i: number) => np.reshape(np.split(kk, [i, i + 1], 0)[1]!, []);
  const focal = np.stack([np.div(at(0), width / 2), np.div(at(4), height / 2)], 0);
  const center = np.stack(
    [np.div(np.sub(at(2), (width - 1) / 2), width / 2), np.div(np.sub((height - 1) / 2, at(5)), height / 2)],
    0,
  );
  return { eye, rotation, focal, center, near: opts.near ?? 1, far: opts.far ?? 100 };
}
