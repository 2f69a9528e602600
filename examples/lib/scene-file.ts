/**
 * `--target scene.json`: a user's own rigid scene, as a JSON object whose fields override the
 * built-in default scene (see RigidSceneSpec). Bad files are input errors (exit code 2).
 */
import { existsSync, readFileSync } from "node:fs";
import { CliError } from "./flags.js";
import { sysid } from "gradsim";

type RigidSceneSpec = sysid.RigidSceneSpec;
const { RIGID_SHAPES } = sysid;

const VEC: Record<string, number> = { scale: 3, position: 3, rotation: 4, velocity: 3, angularVelocity: 3, gravity: 3 };
const NUM = new Set(["mass", "frames", "fps", "substeps", "resolution"]);

export function readSceneFile(path: string, base: RigidSceneSpec): RigidSceneSpec {
  if (!existsSync(path))
    throw new CliError(
      `--target file "${path}" does not exist (expected a JSON scene, e.g. {"shape": "cone", "mass": 3}).`,
    );
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new CliError(`--target file "${path}" is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || globalThis.Array.isArray(raw))
    throw new CliError(`--target file "${path}" must hold a JSON object.`);
  const o = raw as Record<string, unknown>;
  const known = new Set([...Object.keys(VEC), ...NUM, "shape", "impulse"]);
  for (const k of Object.keys(o))
    if (!known.has(k)) throw new CliError(`--target: unknown scene field "${k}"; known: ${[...known].join(", ")}.`);
  const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
  for (const [k, n] of Object.entries(VEC)) {
    const v = o[k];
    if (v !== undefined && !(globalThis.Array.isArray(v) && v.length === n && v.every(isNum)))
      throw new CliError(`--target: "${k}" must be an array of ${n} numbers.`);
  }
  for (const k of NUM)
    if (o[k] !== undefined && !(isNum(o[k]) && (o[k] as number) > 0))
      throw new CliError(`--target: "${k}" must be a positive number.`);
  for (const k of ["frames", "substeps", "resolution"])
    if (o[k] !== undefined && !Number.isInteger(o[k])) throw new CliError(`--target: "${k}" must be an integer.`);
  if (o.shape !== undefined && !RIGID_SHAPES.includes(o.shape as never))
    throw new CliError(`--target: "shape" must be one of ${RIGID_SHAPES.join(", ")}.`);
  let impulses = base.impulses;
  if (o.impulse !== undefined) {
    const i = o.impulse as Record<string, unknown>;
    const vec3 = (v: unknown) => globalThis.Array.isArray(v) && v.length === 3 && v.every(isNum);
    if (
      typeof i !== "object" ||
      i === null ||
      !vec3(i.force) ||
      !vec3(i.point) ||
      !isNum(i.duration) ||
      (i.duration as number) <= 0
    ) {
      throw new CliError(`--target: "impulse" must be {"force": [x,y,z], "point": [x,y,z], "duration": seconds}.`);
    }
    impulses = [i as unknown as RigidSceneSpec["impulses"][number]];
  }
  const { impulse: _impulse, ...fields } = o;
  const merged: RigidSceneSpec = { ...base, ...(fields as Partial<RigidSceneSpec>), impulses, contact: null };
  const q = merged.rotation,
    n = Math.hypot(...q);
  if (!(n > 0)) throw new CliError(`--target: "rotation" must be a non-zero quaternion (x, y, z, w).`);
  return { ...merged, rotation: [q[0] / n, q[1] / n, q[2] / n, q[3] / n] };
}
