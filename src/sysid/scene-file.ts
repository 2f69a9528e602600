/**
 * The scene file of a user's video (`gradsim fit --scene scene.json`): what gradsim needs to know
 * about a rigid object filmed by a camera to estimate its unknowns from the video. Validated field
 * by field (fp-ts Either): a bad field is reported with its path, what it got and what to write.
 *
 *   {
 *     "mesh": { "shape": "box", "scale": [0.8, 0.5, 0.6] },      // or { "obj": "mug.obj", "scale": [1, 1, 1] }
 *         // "sphere" is a smooth ball (scale = its diameter on every axis), "icosphere" a faceted one
 *     "camera": { "eye": [0, 2, -6], "at": [0, 0.3, 0], "fovY": 40 },
 *         // or { "distance", "elevation", "azimuth", "at", "fovY" } (degrees)
 *         // or { "intrinsics": { "fx", "fy", "cx", "cy", "width", "height" },
 *         //      "pose": { "R": [[…]×3], "t": [x, y, z] } } (OpenCV)
 *     "fps": 30, "substeps": 16,                // video frame rate; simulation steps per frame
 *                                               // (default: what the contact needs, else 4)
 *     "frames": 60,                             // optional: the first N frames (default: all)
 *     "resolution": 64,                         // estimator's height in pixels (or [width, height])
 *     "crop": [x, y, width, height],            // optional, in the video's pixels
 *     "initialState": { "position": [..], "rotation": [x, y, z, w], "velocity": [..], "angularVelocity": [..] },
 *     "impulses": [{ "force": [N], "point": [m, body frame], "start": 0, "duration": 0.1 }],
 *     "gravity": [0, -9.8, 0],
 *     "ground": { "mu": 0.6 },                  // or null (no ground); ke, kd, kf default to RIGID_CONTACT_DEFAULTS
 *                                               // "restitution": 0.6 sets kd for a bounce of that ratio
 *     "background": [0, 0, 0],                  // or "median" / "first-frame" of the video, "ground",
 *                                               // { "image": "plate.png" }
 *     "compare": "silhouette",                  // or "colour": what the image loss compares (see video-fit.ts)
 *     "mass": 2,                                // known value (or the unknown's initial guess)
 *     "unknowns": { "mass": { "initial": 1.5, "prior": [0.5, 5] } },
 *                  // also ke kd kf mu x0 y0 z0 yaw0 vx0 vy0 vz0 pushScale pushStart frameOffset
 *     "truth": { "mass": 2.5 }                  // optional: reported beside the estimate
 *   }
 *
 * Pure: paths in it are returned as written (the Node loader resolves them against the file).
 */
import * as E from "fp-ts/lib/Either.js";
import { RIGID_RESTITUTION_RANGE, rigidContactSubsteps, rigidGroundDamping } from "../models/contact/index.js";
import { pipe } from "fp-ts/lib/function.js";
import type { CameraSpec, Vec3 } from "./scenes/camera.js";
import type { TriMesh } from "../models/meshes/types.js";
import type { ContactParams, Impulse, Quat, RigidSceneSpec } from "./scenes/rigid.js";
import { POSITIVE_RIGID_UNKNOWNS, RIGID_CONTACT_DEFAULTS, RIGID_UNKNOWNS, type RigidUnknown } from "./scenes/rigid.js";
import { isUniformScale, SCENE_SHAPES, type SceneShape } from "./scenes/shapes.js";

export type SceneBackground =
  | readonly [number, number, number]
  | "median"
  | "first-frame"
  | "ground"
  | { readonly image: string };

export interface VideoSceneFile {
  readonly mesh: { readonly shape: SceneShape; readonly scale: Vec3 } | { readonly obj: string; readonly scale: Vec3 };
  readonly camera: CameraSpec;
  readonly fps: number;
  readonly substeps: number;
  readonly frames: number | null;
  /** [width, height], or a height (the width follows the video's aspect). */
  readonly resolution: number | readonly [number, number];
  readonly crop: readonly [number, number, number, number] | null;
  readonly initialState: {
    readonly position: Vec3;
    readonly rotation: Quat;
    readonly velocity: Vec3;
    readonly angularVelocity: Vec3;
  };
  readonly impulses: readonly Impulse[];
  readonly gravity: Vec3;
  readonly ground: ContactParams | null;
  readonly background: SceneBackground;
  /**
   * What the loss compares: the object's silhouette with the video's foreground mask (robust to lighting and paint), or
   * colours.
   */
  readonly compare: "silhouette" | "colour";
  readonly mass: number;
  readonly unknowns: Readonly<
    Partial<Record<RigidUnknown, { readonly initial?: number; readonly prior?: readonly [number, number] }>>
  >;
  readonly truth: Readonly<Partial<Record<RigidUnknown, number>>>;
}

/** What a scene file says of the object and its motion, as a rigid scene's fields; an OBJ mesh as read beside it. */
export function sceneFileMotion(
  f: VideoSceneFile,
  mesh: TriMesh | null,
): Pick<
  RigidSceneSpec,
  "shape" | "scale" | "position" | "rotation" | "velocity" | "angularVelocity" | "impulses" | "gravity"
> {
  if ("obj" in f.mesh && !mesh)
    throw new Error(`scene: "mesh.obj" names ${f.mesh.obj}; read it (loadVideoScene does) and pass its mesh.`);
  return {
    shape: "obj" in f.mesh ? { mesh: mesh!, name: f.mesh.obj } : f.mesh.shape,
    scale: f.mesh.scale,
    position: f.initialState.position,
    rotation: f.initialState.rotation,
    velocity: f.initialState.velocity,
    angularVelocity: f.initialState.angularVelocity,
    impulses: f.impulses,
    gravity: f.gravity,
  };
}

type Result<T> = E.Either<string, T>;
type Obj = Record<string, unknown>;

const show = (v: unknown): string => (v === undefined ? "nothing" : JSON.stringify(v));
const fail = <T>(path: string, got: unknown, want: string, example: string): Result<T> =>
  E.left(`"${path}" ${want}, got ${show(got)}; write e.g. ${example}`);

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !globalThis.Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function num(
  o: Obj,
  key: string,
  path: string,
  c: { min?: number; exclusiveMin?: boolean; max?: number; integer?: boolean; example: string },
): Result<number> {
  const v = o[key];
  const ok =
    finite(v) &&
    (c.min === undefined || (c.exclusiveMin ? v > c.min : v >= c.min)) &&
    (c.max === undefined || v <= c.max) &&
    (!c.integer || Number.isInteger(v));
  if (ok) return E.right(v as number);
  const range =
    c.min !== undefined ? ` ${c.exclusiveMin ? ">" : "≥"} ${c.min}${c.max !== undefined ? ` and ≤ ${c.max}` : ""}` : "";
  return fail(path, v, `must be ${c.integer ? "a whole number" : "a number"}${range}`, c.example);
}

function vec<N extends number>(
  o: Obj,
  key: string,
  path: string,
  n: N,
  example: string,
  check: (x: number) => boolean = () => true,
  what = "numbers",
): Result<number[]> {
  const v = o[key];
  if (globalThis.Array.isArray(v) && v.length === n && v.every(finite) && v.every(check)) return E.right(v as number[]);
  return fail(path, v, `must be a list of ${n} ${what}`, example);
}

const optional = <T>(o: Obj, key: string, dflt: T, read: () => Result<T>): Result<T> =>
  o[key] === undefined ? E.right(dflt) : read();

function object(v: unknown, path: string, example: string): Result<Obj> {
  return isObj(v) ? E.right(v) : fail(path, v, "must be a JSON object", example);
}

function onlyKeys(o: Obj, path: string, known: readonly string[]): Result<Obj> {
  const extra = Object.keys(o).filter((k) => !known.includes(k));
  return extra.length
    ? E.left(
        `"${path}${path ? "." : ""}${extra[0]}" is not a field ` +
          `of ${path ? `"${path}"` : "a scene file"}; the fields are ${known.join(", ")}`,
      )
    : E.right(o);
}

const mesh = (v: unknown): Result<VideoSceneFile["mesh"]> =>
  pipe(
    object(v, "mesh", `"mesh": { "shape": "box", "scale": [1, 1, 1] } or { "obj": "object.obj" }`),
    E.chain((m) => onlyKeys(m, "mesh", ["shape", "obj", "scale"])),
    E.chain((m) =>
      pipe(
        optional(m, "scale", [1, 1, 1], () =>
          vec(m, "scale", "mesh.scale", 3, `"scale": [0.8, 0.5, 0.6]`, (x) => x > 0, "positive numbers"),
        ),
        E.chain((scale): Result<VideoSceneFile["mesh"]> => {
          const s = scale as unknown as Vec3;
          if (typeof m.obj === "string" && m.shape === undefined) return E.right({ obj: m.obj, scale: s });
          if (
            typeof m.shape === "string" &&
            (SCENE_SHAPES as readonly string[]).includes(m.shape) &&
            m.obj === undefined
          )
            return m.shape === "sphere" && !isUniformScale(s)
              ? fail(
                  "mesh.scale",
                  scale,
                  `must be the same on every axis for "sphere" (its diameter in metres); ` +
                    `for an ellipsoid use "icosphere" (a faceted solid)`,
                  `"scale": [0.2, 0.2, 0.2]`,
                )
              : E.right({ shape: m.shape as SceneShape, scale: s });
          return fail(
            "mesh",
            m,
            `needs either "shape" (one of ${SCENE_SHAPES.join(", ")}) or "obj" (a path to a closed OBJ mesh in metres)`,
            `"mesh": { "shape": "cone" }`,
          );
        }),
      ),
    ),
  );

function camera(v: unknown): Result<CameraSpec> {
  const example = `"camera": { "eye": [0, 2, -6], "at": [0, 0.3, 0], "fovY": 40 }`;
  return pipe(
    object(v, "camera", example),
    E.chain((c): Result<CameraSpec> => {
      const fov = () =>
        num(c, "fovY", "camera.fovY", {
          min: 0,
          exclusiveMin: true,
          max: 179,
          example: `"fovY": 40 (degrees, vertical)`,
        });
      if (c.intrinsics !== undefined || c.pose !== undefined) {
        return pipe(
          onlyKeys(c, "camera", ["intrinsics", "pose"]),
          E.chain(() =>
            object(
              c.intrinsics,
              "camera.intrinsics",
              `"intrinsics": { "fx": 500, "fy": 500, "cx": 319.5, "cy": 239.5, "width": 640, "height": 480 }`,
            ),
          ),
          E.bindTo("k"),
          E.bind("fx", ({ k }) =>
            num(k, "fx", "camera.intrinsics.fx", { min: 0, exclusiveMin: true, example: `"fx": 500 (pixels)` }),
          ),
          E.bind("fy", ({ k }) =>
            num(k, "fy", "camera.intrinsics.fy", { min: 0, exclusiveMin: true, example: `"fy": 500 (pixels)` }),
          ),
          E.bind("cx", ({ k }) => num(k, "cx", "camera.intrinsics.cx", { example: `"cx": 319.5 (pixels)` })),
          E.bind("cy", ({ k }) => num(k, "cy", "camera.intrinsics.cy", { example: `"cy": 239.5 (pixels)` })),
          E.bind("width", ({ k }) =>
            num(k, "width", "camera.intrinsics.width", {
              min: 1,
              integer: true,
              example: `"width": 640 (the calibrated image's pixels)`,
            }),
          ),
          E.bind("height", ({ k }) =>
            num(k, "height", "camera.intrinsics.height", { min: 1, integer: true, example: `"height": 480` }),
          ),
          E.bind("p", () =>
            object(
              c.pose,
              "camera.pose",
              `"pose": { "R": [[1, 0, 0], [0, -1, 0], [0, 0, -1]], "t": [0, 0, 5] } (world → camera, OpenCV)`,
            ),
          ),
          E.bind("t", ({ p }) => vec(p, "t", "camera.pose.t", 3, `"t": [0, 0, 5]`)),
          E.bind("R", ({ p }) => {
            const R = p.R;
            const rows =
              globalThis.Array.isArray(R) &&
              R.length === 3 &&
              R.every((r) => globalThis.Array.isArray(r) && r.length === 3 && r.every(finite))
                ? (R as number[][])
                : null;
            const orthonormal =
              rows &&
              [0, 1, 2].every((i) =>
                [0, 1, 2].every(
                  (j) => Math.abs(rows[i]!.reduce((s, x, k) => s + x * rows[j]![k]!, 0) - (i === j ? 1 : 0)) < 1e-4,
                ),
              );
            const det = rows
              ? rows[0]![0]! * (rows[1]![1]! * rows[2]![2]! - rows[1]![2]! * rows[2]![1]!) -
                rows[0]![1]! * (rows[1]![0]! * rows[2]![2]! - rows[1]![2]! * rows[2]![0]!) +
                rows[0]![2]! * (rows[1]![0]! * rows[2]![1]! - rows[1]![1]! * rows[2]![0]!)
              : 0;
            if (rows && orthonormal && det < 0)
              return E.left(
                `"camera.pose.R" has determinant −1: it is a mirror, not a rotation (a ` +
                  `camera's axes are right, down, forward); negate one row, got ${show(R)}`,
              );
            return rows && orthonormal
              ? E.right(rows)
              : fail<number[][]>(
                  "camera.pose.R",
                  R,
                  "must be a 3×3 rotation matrix (orthonormal rows)",
                  `"R": [[1, 0, 0], [0, -1, 0], [0, 0, -1]]`,
                );
          }),
          E.map(({ fx, fy, cx, cy, width, height, R, t }) => ({
            intrinsics: { fx, fy, cx, cy, width, height },
            pose: { R, t: t as unknown as Vec3 },
          })),
        );
      }
      if (c.eye !== undefined) {
        return pipe(
          onlyKeys(c, "camera", ["eye", "at", "up", "fovY"]),
          E.chain(() => vec(c, "eye", "camera.eye", 3, `"eye": [0, 2, -6]`)),
          E.bindTo("eye"),
          E.bind("at", () => vec(c, "at", "camera.at", 3, `"at": [0, 0.3, 0]`)),
          E.bind("up", () => optional(c, "up", [0, 1, 0], () => vec(c, "up", "camera.up", 3, `"up": [0, 1, 0]`))),
          E.bind("fovY", fov),
          E.filterOrElse(
            ({ eye, at }) => Math.hypot(eye[0]! - at[0]!, eye[1]! - at[1]!, eye[2]! - at[2]!) > 1e-9,
            () => `"camera.eye" and "camera.at" are the same point; the camera needs a direction to look in`,
          ),
          E.map(({ eye, at, up, fovY }) => ({
            eye: eye as unknown as Vec3,
            at: at as unknown as Vec3,
            up: up as unknown as Vec3,
            fovY,
          })),
        );
      }
      return pipe(
        onlyKeys(c, "camera", ["distance", "elevation", "azimuth", "at", "fovY"]),
        E.chain(() =>
          num(c, "distance", "camera.distance", {
            min: 0,
            exclusiveMin: true,
            example: `"distance": 6 (metres; or give "eye" and "at", or "intrinsics" and "pose")`,
          }),
        ),
        E.bindTo("distance"),
        E.bind("elevation", () =>
          num(c, "elevation", "camera.elevation", { min: -90, max: 90, example: `"elevation": 25 (degrees)` }),
        ),
        E.bind("azimuth", () => num(c, "azimuth", "camera.azimuth", { example: `"azimuth": 15 (degrees)` })),
        E.bind("at", () => optional(c, "at", [0, 0, 0], () => vec(c, "at", "camera.at", 3, `"at": [0, 0.3, 0]`))),
        E.bind("fovY", fov),
        E.map(({ distance, elevation, azimuth, at, fovY }) => ({
          distance,
          elevation,
          azimuth,
          at: at as unknown as Vec3,
          fovY,
        })),
      );
    }),
  );
}

const impulses = (v: unknown): Result<Impulse[]> => {
  if (v === undefined) return E.right([]);
  if (!globalThis.Array.isArray(v))
    return fail(
      "impulses",
      v,
      "must be a list of impulses",
      `"impulses": [{ "force": [20, 0, 0], "point": [0, 0, 0], "start": 0, "duration": 0.1 }]`,
    );
  return E.sequenceArray(
    v.map((x, i) =>
      pipe(
        object(x, `impulses[${i}]`, `{ "force": [20, 0, 0], "point": [0, 0, 0], "duration": 0.1 }`),
        E.chain((o) => onlyKeys(o, `impulses[${i}]`, ["force", "point", "start", "duration"])),
        E.bindTo("o"),
        E.bind("force", ({ o }) =>
          vec(o, "force", `impulses[${i}].force`, 3, `"force": [20, 0, 0] (newtons, world frame)`),
        ),
        E.bind("point", ({ o }) =>
          optional(o, "point", [0, 0, 0], () =>
            vec(
              o,
              "point",
              `impulses[${i}].point`,
              3,
              `"point": [0, 0, 0] (metres from the centre of mass, body frame)`,
            ),
          ),
        ),
        E.bind("start", ({ o }) =>
          optional(o, "start", 0, () =>
            num(o, "start", `impulses[${i}].start`, { min: 0, example: `"start": 0 (seconds)` }),
          ),
        ),
        E.bind("duration", ({ o }) =>
          num(o, "duration", `impulses[${i}].duration`, {
            min: 0,
            exclusiveMin: true,
            example: `"duration": 0.1 (seconds)`,
          }),
        ),
        E.map(
          ({ force, point, start, duration }): Impulse => ({
            force: force as unknown as Vec3,
            point: point as unknown as Vec3,
            start,
            duration,
          }),
        ),
      ),
    ),
  ) as Result<Impulse[]>;
};

/**
 * Ground contact (mass-normalised, `contact.rigidGround`): each coefficient defaults to
 * RIGID_CONTACT_DEFAULTS, so `"ground": { "mu": 0.5 }` (or `{}`) is a complete floor.
 */
const ground = (v: unknown): Result<ContactParams | null> => {
  if (v === undefined || v === null) return E.right(null);
  const d = RIGID_CONTACT_DEFAULTS;
  return pipe(
    object(v, "ground", `"ground": { "mu": 0.6 } (or null for no ground)`),
    E.chain((g) => onlyKeys(g, "ground", ["ke", "kd", "kf", "mu", "restitution"])),
    E.chain((g) =>
      g.restitution !== undefined && g.kd !== undefined
        ? fail<Obj>(
            "ground",
            g,
            `gives both "kd" and "restitution", which set the same damping; keep one`,
            `"ground": { "mu": 0.4, "restitution": 0.6 }`,
          )
        : E.right(g),
    ),
    E.bindTo("g"),
    E.bind("ke", ({ g }) =>
      optional(g, "ke", d.ke, () =>
        num(g, "ke", "ground.ke", {
          min: 0,
          exclusiveMin: true,
          example: `"ke": ${d.ke} (contact stiffness, N/m per kg of the object)`,
        }),
      ),
    ),
    E.bind("kd", ({ g, ke }) =>
      g.restitution !== undefined
        ? pipe(
            num(g, "restitution", "ground.restitution", {
              min: RIGID_RESTITUTION_RANGE[0],
              max: RIGID_RESTITUTION_RANGE[1],
              example: `"restitution": 0.6 (the speed after a bounce over the speed before)`,
            }),
            E.map((e) => rigidGroundDamping(e, { ke })),
          )
        : optional(g, "kd", d.kd, () =>
            num(g, "kd", "ground.kd", { min: 0, example: `"kd": ${d.kd} (contact damping, 1/s)` }),
          ),
    ),
    E.bind("kf", ({ g }) =>
      optional(g, "kf", d.kf, () =>
        num(g, "kf", "ground.kf", { min: 0, example: `"kf": ${d.kf} (friction stiffness, 1/s)` }),
      ),
    ),
    E.bind("mu", ({ g }) =>
      optional(g, "mu", d.mu, () => num(g, "mu", "ground.mu", { min: 0, example: `"mu": 0.6 (Coulomb friction)` })),
    ),
    E.map(({ ke, kd, kf, mu }) => ({ ke, kd, kf, mu })),
  );
};

const background = (v: unknown): Result<SceneBackground> => {
  if (v === undefined) return E.right([0, 0, 0]);
  if (v === "median" || v === "first-frame" || v === "ground") return E.right(v);
  if (isObj(v) && typeof v.image === "string" && Object.keys(v).length === 1) return E.right({ image: v.image });
  if (globalThis.Array.isArray(v) && v.length === 3 && v.every((x) => finite(x) && x >= 0 && x <= 1))
    return E.right(v as unknown as readonly [number, number, number]);
  return fail(
    "background",
    v,
    `must be an RGB colour in [0, 1], "median" (the video's per-pixel ` +
      `median), "first-frame", "ground", or { "image": "plate.png" }`,
    `"background": "median"`,
  );
};

const rigidUnknownName = (k: string, path: string): Result<RigidUnknown> =>
  (RIGID_UNKNOWNS as readonly string[]).includes(k)
    ? E.right(k as RigidUnknown)
    : E.left(
        `"${path}" names "${k}", which a rigid scene cannot estimate; its unknowns are ${RIGID_UNKNOWNS.join(", ")}`,
      );

const unknowns = (v: unknown): Result<VideoSceneFile["unknowns"]> => {
  if (v === undefined) return E.right({});
  return pipe(
    object(v, "unknowns", `"unknowns": { "mass": { "initial": 1.5, "prior": [0.5, 5] } }`),
    E.chain((u) =>
      E.sequenceArray(
        Object.entries(u).map(([k, spec]) =>
          pipe(
            rigidUnknownName(k, `unknowns.${k}`),
            E.chain(() => object(spec, `unknowns.${k}`, `"${k}": { "initial": 1.5, "prior": [0.5, 5] }`)),
            E.chain((s) => onlyKeys(s, `unknowns.${k}`, ["initial", "prior"])),
            E.bindTo("s"),
            E.bind("positive", () => E.right(POSITIVE_RIGID_UNKNOWNS.includes(k as RigidUnknown))),
            E.bind("initial", ({ s, positive }) =>
              optional<number | undefined>(s, "initial", undefined, () =>
                num(
                  s,
                  "initial",
                  `unknowns.${k}.initial`,
                  positive
                    ? { min: 0, exclusiveMin: true, example: `"initial": 1.5 (a positive first guess)` }
                    : { example: `"initial": 0 (a first guess)` },
                ),
              ),
            ),
            E.bind("prior", ({ s, positive }) =>
              optional<number[] | undefined>(s, "prior", undefined, () =>
                pipe(
                  positive
                    ? vec(
                        s,
                        "prior",
                        `unknowns.${k}.prior`,
                        2,
                        `"prior": [0.5, 5] (the range to search, positive)`,
                        (x) => x > 0,
                        "positive numbers",
                      )
                    : vec(s, "prior", `unknowns.${k}.prior`, 2, `"prior": [-0.2, 0.2] (the range to search)`),
                  E.filterOrElse(
                    (p) => p[0]! < p[1]!,
                    (p) => `"unknowns.${k}.prior" must be [low, high] with low < high, got ${show(p)}`,
                  ),
                ),
              ),
            ),
            E.map(
              ({ initial, prior }) =>
                [
                  k,
                  {
                    ...(initial !== undefined ? { initial } : {}),
                    ...(prior ? { prior: prior as unknown as readonly [number, number] } : {}),
                  },
                ] as const,
            ),
          ),
        ),
      ),
    ),
    E.map((entries) => Object.fromEntries(entries)),
  );
};

const truth = (v: unknown): Result<VideoSceneFile["truth"]> => {
  if (v === undefined) return E.right({});
  return pipe(
    object(v, "truth", `"truth": { "mass": 2.5 }`),
    E.chain((t) =>
      E.sequenceArray(
        Object.entries(t).map(([k]) =>
          pipe(
            rigidUnknownName(k, `truth.${k}`),
            E.chain((name) =>
              num(
                t,
                k,
                `truth.${k}`,
                POSITIVE_RIGID_UNKNOWNS.includes(name)
                  ? { min: 0, exclusiveMin: true, example: `"${k}": 2.5` }
                  : { example: `"${k}": 0.1` },
              ),
            ),
            E.map((n) => [k, n] as const),
          ),
        ),
      ),
    ),
    E.map((entries) => Object.fromEntries(entries)),
  );
};

const FIELDS = [
  "mesh",
  "camera",
  "fps",
  "substeps",
  "frames",
  "resolution",
  "crop",
  "initialState",
  "impulses",
  "gravity",
  "ground",
  "background",
  "compare",
  "mass",
  "unknowns",
  "truth",
] as const;

/** Validate a parsed scene file; Left is one message naming the field, what it got and what to write. */
export function parseVideoScene(raw: unknown): Result<VideoSceneFile> {
  return pipe(
    object(
      raw,
      "",
      `{ "mesh": { "shape": "box" }, "camera": { "eye": [0, 2, -6], "at": [0, 0, 0], "fovY": 40 }, "fps": 30 }`,
    ),
    E.mapLeft(() => `a scene file must hold one JSON object (see the scene file format in src/sysid/README.md)`),
    E.chain((o) => onlyKeys(o, "", FIELDS)),
    E.bindTo("o"),
    E.bind("mesh", ({ o }) => mesh(o.mesh)),
    E.bind("camera", ({ o }) => camera(o.camera)),
    E.bind("fps", ({ o }) =>
      num(o, "fps", "fps", {
        min: 0,
        exclusiveMin: true,
        max: 1000,
        example: `"fps": 30 (the video's frames per second)`,
      }),
    ),
    E.bind("substeps", ({ o }) =>
      optional<number | null>(o, "substeps", null, () =>
        num(o, "substeps", "substeps", {
          min: 1,
          max: 1000,
          integer: true,
          example: `"substeps": 16 (simulation steps per video frame)`,
        }),
      ),
    ),
    E.bind("frames", ({ o }) =>
      optional<number | null>(o, "frames", null, () =>
        num(o, "frames", "frames", { min: 2, integer: true, example: `"frames": 60 (use the first 60 frames)` }),
      ),
    ),
    E.bind("resolution", ({ o }) =>
      optional<number | readonly [number, number]>(o, "resolution", 64, () =>
        globalThis.Array.isArray(o.resolution)
          ? pipe(
              vec(
                o,
                "resolution",
                "resolution",
                2,
                `"resolution": [96, 64] (width, height)`,
                (x) => Number.isInteger(x) && x >= 8 && x <= 1024,
                "whole numbers of pixels in [8, 1024]",
              ),
              E.map((r) => r as unknown as readonly [number, number]),
            )
          : num(o, "resolution", "resolution", {
              min: 8,
              max: 1024,
              integer: true,
              example: `"resolution": 64 (the estimator's image height in pixels)`,
            }),
      ),
    ),
    E.bind("crop", ({ o }) =>
      optional<readonly [number, number, number, number] | null>(o, "crop", null, () =>
        pipe(
          vec(
            o,
            "crop",
            "crop",
            4,
            `"crop": [100, 40, 320, 240] (x, y, width, height in the video's pixels)`,
            (x) => Number.isInteger(x) && x >= 0,
            "whole numbers ≥ 0",
          ),
          E.map((c) => c as unknown as readonly [number, number, number, number]),
        ),
      ),
    ),
    E.bind("initialState", ({ o }) =>
      pipe(
        object(
          o.initialState,
          "initialState",
          `"initialState": { "position": [0, 0.5, 0], "rotation": [0, 0, ` +
            `0, 1], "velocity": [0, 0, 0], "angularVelocity": [0, 0, 0] }`,
        ),
        E.chain((s) => onlyKeys(s, "initialState", ["position", "rotation", "velocity", "angularVelocity"])),
        E.bindTo("s"),
        E.bind("position", ({ s }) =>
          vec(s, "position", "initialState.position", 3, `"position": [0, 0.5, 0] (metres, the centre of mass)`),
        ),
        E.bind("rotation", ({ s }) =>
          pipe(
            optional(s, "rotation", [0, 0, 0, 1], () =>
              vec(s, "rotation", "initialState.rotation", 4, `"rotation": [0, 0, 0, 1] (quaternion x, y, z, w)`),
            ),
            E.filterOrElse(
              (q) => Math.hypot(...q) > 1e-9,
              () => `"initialState.rotation" is a zero quaternion; write e.g. [0, 0, 0, 1]`,
            ),
            E.map((q) => {
              const n = Math.hypot(...q);
              return q.map((x) => x / n);
            }),
          ),
        ),
        E.bind("velocity", ({ s }) =>
          optional(s, "velocity", [0, 0, 0], () =>
            vec(s, "velocity", "initialState.velocity", 3, `"velocity": [0.5, 0, 0] (m/s)`),
          ),
        ),
        E.bind("angularVelocity", ({ s }) =>
          optional(s, "angularVelocity", [0, 0, 0], () =>
            vec(
              s,
              "angularVelocity",
              "initialState.angularVelocity",
              3,
              `"angularVelocity": [0, 1, 0] (rad/s, world frame)`,
            ),
          ),
        ),
        E.map(({ position, rotation, velocity, angularVelocity }) => ({
          position: position as unknown as Vec3,
          rotation: rotation as unknown as Quat,
          velocity: velocity as unknown as Vec3,
          angularVelocity: angularVelocity as unknown as Vec3,
        })),
      ),
    ),
    // (fp-ts's pipe takes at most 20 steps: the dynamics and the unknowns are read in a second pipe.)
    E.chain((geometry) =>
      pipe(
        E.Do,
        E.bind("impulses", () => impulses(geometry.o.impulses)),
        E.bind("gravity", () =>
          optional(geometry.o, "gravity", [0, -9.8, 0], () =>
            vec(geometry.o, "gravity", "gravity", 3, `"gravity": [0, -9.8, 0] (m/s², or [0, 0, 0])`),
          ),
        ),
        E.bind("ground", () => ground(geometry.o.ground)),
        E.bind("background", () => background(geometry.o.background)),
        E.bind("compare", () =>
          geometry.o.compare === undefined || geometry.o.compare === "silhouette" || geometry.o.compare === "colour"
            ? E.right((geometry.o.compare ?? "silhouette") as "silhouette" | "colour")
            : fail<"silhouette" | "colour">(
                "compare",
                geometry.o.compare,
                `must be "silhouette" (the object's outline against ` +
                  `the video's foreground) or "colour" (pixel colours)`,
                `"compare": "silhouette"`,
              ),
        ),
        E.bind("mass", () =>
          num(geometry.o, "mass", "mass", {
            min: 0,
            exclusiveMin: true,
            example: `"mass": 2 (kg: the known mass, or the first guess when mass is an unknown)`,
          }),
        ),
        E.bind("unknowns", () => unknowns(geometry.o.unknowns)),
        E.bind("truth", () => truth(geometry.o.truth)),
        E.map(({ impulses, gravity, ground, background, compare, mass, unknowns, truth }): VideoSceneFile => {
          const { mesh, camera, fps, substeps, frames, resolution, crop, initialState } = geometry;
          // Enough substeps for the ground contact to be accurate (scenes without contact: 4).
          const steps = substeps ?? (ground ? rigidContactSubsteps(ground, fps) : 4);
          return {
            mesh,
            camera,
            fps,
            substeps: steps,
            frames,
            resolution,
            crop,
            initialState,
            impulses,
            gravity: gravity as unknown as Vec3,
            ground,
            background,
            compare,
            mass,
            unknowns,
            truth,
          };
        }),
      ),
    ),
  );
}
