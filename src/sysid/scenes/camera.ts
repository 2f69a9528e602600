/**
 * Cameras of system-identification scenes, described in any of the ways people have them:
 * SoftRas angles around a point, an eye and a look-at point, or calibrated OpenCV intrinsics and a
 * pose. Each becomes both a `render.Camera` and a host-side frame (for background images cast by
 * rays, computed once without touching the device).
 */
import { np } from "../../core/np/index.js";
import * as render from "../../render/index.js";

export type Vec3 = readonly [number, number, number];

/** SoftRas angles (degrees) around the point `at`; fovY in degrees. */
export interface AngleCamera {
  readonly distance: number;
  readonly elevation: number;
  readonly azimuth: number;
  readonly at: Vec3;
  readonly fovY: number;
}
/** An eye looking at a point (up defaults to +y); fovY in degrees. */
export interface LookAtCamera {
  readonly eye: Vec3;
  readonly at: Vec3;
  readonly up?: Vec3;
  readonly fovY: number;
  /**
   * "physical" (default): the camera a photographer has at that pose. "softras-mirror": SoftRas'
   * look-at (right = up × forward), the mirror image of that camera — what gradsim's scenes drew
   * before, kept for RISP's environments, whose committed predictors were trained on it.
   */
  readonly convention?: "physical" | "softras-mirror";
}
/**
 * OpenCV calibration: intrinsics in pixels of an image `width`×`height` (u right, v down, pixel
 * centres at integers) and the world→camera pose x_cam = R·x + t (camera x right, y down, z forward).
 */
export interface CalibratedCamera {
  readonly intrinsics: {
    readonly fx: number;
    readonly fy: number;
    readonly cx: number;
    readonly cy: number;
    readonly width: number;
    readonly height: number;
  };
  readonly pose: { readonly R: readonly (readonly number[])[]; readonly t: Vec3 };
}
export type CameraSpec = AngleCamera | LookAtCamera | CalibratedCamera;

/** Near and far planes of the scenes' cameras (m). */
const NEAR = 1,
  FAR = 30;

/** The camera as host numbers: eye, orthonormal right/up/forward, and NDC focal lengths and centre. */
export type HostCamera = render.PinholeFrame;

const sub = (a: Vec3, b: Vec3): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const cross = (a: Vec3, b: Vec3): Vec3 => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const unit = (v: Vec3): Vec3 => {
  const n = Math.hypot(...v);
  return [v[0] / n, v[1] / n, v[2] / n];
};

/** The eye of SoftRas angles around `at` (src/render/CONVENTIONS.md: azimuth 0 puts the camera on −z). */
export function eyeOfAngles(c: AngleCamera): Vec3 {
  const el = (c.elevation * Math.PI) / 180,
    az = (c.azimuth * Math.PI) / 180;
  return [
    c.at[0] + c.distance * Math.cos(el) * Math.sin(az),
    c.at[1] + c.distance * Math.sin(el),
    c.at[2] - c.distance * Math.cos(el) * Math.cos(az),
  ];
}

const isCalibrated = (c: CameraSpec): c is CalibratedCamera => "intrinsics" in c;
const isMirror = (c: CameraSpec): c is LookAtCamera => "eye" in c && c.convention === "softras-mirror";

/**
 * Any camera form as OpenCV intrinsics and pose for an image `width`×`height`: the physical
 * pinhole camera at `eye` looking at `at` with `up` towards the top of the image, so world points
 * to the camera's right land on the image's right (right = forward × up; SoftRas' look-at uses
 * up × forward, which is the mirror image of a real camera at that pose). Square pixels, principal
 * point at the image centre. Degenerate cameras are errors naming what to change.
 */
export function calibratedCamera(c: CameraSpec, width: number, height: number): CalibratedCamera {
  if (isCalibrated(c)) {
    const { fx, fy, width: W, height: H } = c.intrinsics;
    if (!(fx > 0 && fy > 0 && Number.isFinite(fx) && Number.isFinite(fy)))
      throw new Error(`camera: the focal lengths fx, fy must be finite and > 0 pixels, got ${fx}, ${fy}.`);
    if (!(W >= 1 && H >= 1)) throw new Error(`camera: the calibrated image size must be ≥ 1 pixel, got ${W}×${H}.`);
    const R = c.pose.R;
    const dot = (a: readonly number[], b: readonly number[]) => a[0]! * b[0]! + a[1]! * b[1]! + a[2]! * b[2]!;
    const orthonormal = [0, 1, 2].every((i) =>
      [0, 1, 2].every((j) => Math.abs(dot(R[i]!, R[j]!) - (i === j ? 1 : 0)) < 1e-4),
    );
    const det = dot(R[0]!, cross(R[1]! as unknown as Vec3, R[2]! as unknown as Vec3));
    if (!orthonormal || !(det > 0))
      throw new Error(
        `camera: pose.R must be a rotation (orthonormal rows, determinant ` +
          `+1)${orthonormal ? `; its determinant is ${det.toFixed(3)}, a mirror — negate one row` : ""}.`,
      );
    return c;
  }
  const eye = "eye" in c ? c.eye : eyeOfAngles(c);
  const view = sub(c.at, eye);
  if (!(Math.hypot(...view) > 1e-9))
    throw new Error(
      `camera: eye [${eye}] and at [${c.at}] are the same point; the camera needs a direction to look in.`,
    );
  const forward = unit(view);
  const upHint: Vec3 = "up" in c && c.up ? c.up : [0, 1, 0];
  const side = cross(forward, upHint);
  if (!(Math.hypot(...side) > 1e-6 * Math.max(Math.hypot(...upHint), 1e-30))) {
    throw new Error(
      `camera: up [${upHint}] is parallel to the viewing direction [${forward.map((x) => x.toFixed(3))}]; ` +
        `give an "up" that is not (e.g. [0, 0, 1] for a camera looking straight down).`,
    );
  }
  if (isMirror(c))
    throw new Error(
      `camera: a "softras-mirror" look-at camera is a mirror image and ` +
        `has no OpenCV intrinsics and pose; use hostCamera or renderCamera.`,
    );
  const right = unit(side),
    down = cross(forward, right);
  const f = height / 2 / Math.tan((c.fovY * Math.PI) / 180 / 2);
  if (!(f > 0 && Number.isFinite(f))) throw new Error(`camera: fovY must be in (0, 180) degrees, got ${c.fovY}.`);
  const R = [right, down, forward].map((r) => [...r]);
  const t = R.map((r) => -(r[0]! * eye[0] + r[1]! * eye[1] + r[2]! * eye[2])) as unknown as Vec3;
  return { intrinsics: { fx: f, fy: f, cx: (width - 1) / 2, cy: (height - 1) / 2, width, height }, pose: { R, t } };
}

/** Host frame of a camera for an image `width`×`height` (aspect = width/height). */
export function hostCamera(c: CameraSpec, width: number, height: number): HostCamera {
  if (isMirror(c)) {
    // SoftRas' look-at, as gradsim's scenes computed it before (bit for bit: RISP's predictors were trained on it).
    const forward = unit(sub(c.at, c.eye));
    const right = unit(cross(c.up ?? [0, 1, 0], forward)),
      up = cross(forward, right);
    const fy = 1 / Math.tan((c.fovY * Math.PI) / 180 / 2);
    return { eye: c.eye, right, up, forward, focal: [fy / (width / height), fy], center: [0, 0] };
  }
  const {
    intrinsics: { fx, fy, cx, cy, width: W, height: H },
    pose: { R, t },
  } = calibratedCamera(c, width, height);
  const row = (i: number): Vec3 => [R[i]![0]!, R[i]![1]!, R[i]![2]!];
  // eye = −Rᵀ t; rows of R are the camera's x (right), y (down), z (forward) axes in world space.
  const eye: Vec3 = [0, 1, 2].map((j) => -(R[0]![j]! * t[0] + R[1]![j]! * t[1] + R[2]![j]! * t[2])) as unknown as Vec3;
  const down = row(1);
  // Intrinsics of the calibrated image, rescaled to the rendered one (same field of view).
  const sx = width / W,
    sy = height / H;
  return {
    eye,
    right: row(0),
    up: [-down[0], -down[1], -down[2]],
    forward: row(2),
    focal: [(fx * sx) / (width / 2), (fy * sy) / (height / 2)],
    center: [
      ((cx + 0.5) * sx - 0.5 - (width - 1) / 2) / (width / 2),
      ((height - 1) / 2 - ((cy + 0.5) * sy - 0.5)) / (height / 2),
    ],
  };
}

/**
 * The renderer's camera for an image `width`×`height` (every form through its OpenCV intrinsics
 * and pose), built from host numbers: the renderer's frame has y up, so its rotation is R with the
 * camera's down row negated (what render.cameraFromMatrices computes on the device).
 */
export function renderCamera(c: CameraSpec, width: number, height: number): render.Camera {
  if (isMirror(c))
    return render.perspectiveCamera({
      eye: [...c.eye],
      at: [...c.at],
      up: c.up ? [...c.up] : [0, 1, 0],
      fovY: c.fovY,
      aspect: width / height,
      near: NEAR,
      far: FAR,
    });
  const h = hostCamera(c, width, height);
  const f32 = (x: unknown) => np.array(x, { dtype: "float32" });
  return {
    eye: f32([...h.eye]),
    rotation: f32([[...h.right], [...h.up], [...h.forward]]),
    focal: f32([...h.focal]),
    center: f32([...h.center]),
    near: NEAR,
    far: FAR,
  };
}

/** The world-space ray direction (not normalised) through the centre of pixel (column, row). */
export const pixelRay = render.pinholeRay;
