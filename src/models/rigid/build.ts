/** Building rigid systems from meshes (mass properties from a closed mesh + density) and spheres. */
import type { Array } from "../../core/array.js";
import type { DType } from "../../core/dtype.js";
import { np } from "../../core/np/index.js";
import type { GroundContact } from "../contact/types.js";
import { faceCount, vertexCount, type TriMesh } from "../meshes/types.js";
import { validateTriMesh } from "../meshes/validate.js";
import { massProperties } from "./mass-properties.js";
import type { ForceWindows, RigidState, RigidSystem } from "./types.js";
import { requireParam } from "../common/params.js";

/** One body: its mass properties, contact points (body frame, about the COM) and initial state. */
export interface BodySpec {
  readonly mass: number;
  /** Row-major 3×3 body-frame inertia about the COM. */
  readonly inertia: readonly number[];
  /** Contact points relative to the COM [P·3] and their radii. */
  readonly contactPoints: readonly number[];
  readonly contactRadius: number;
  readonly position?: readonly [number, number, number];
  /** Unit quaternion (x, y, z, w). */
  readonly rotation?: readonly [number, number, number, number];
  readonly velocity?: readonly [number, number, number];
  readonly angularVelocity?: readonly [number, number, number];
}

export interface MeshBodyOptions {
  /** kg/m³; default 1000 (dflex shape default). */
  readonly density?: number;
  /** Where the COM is placed. */
  readonly position?: readonly [number, number, number];
  readonly rotation?: readonly [number, number, number, number];
  readonly velocity?: readonly [number, number, number];
  readonly angularVelocity?: readonly [number, number, number];
}

/**
 * A body from a closed, outward-wound triangle mesh (validated: holes, non-manifold edges or
 * inconsistent winding raise an error listing the faces). Mass, COM and inertia come from the
 * mesh and density; every vertex becomes a contact point (dflex Model.collide for meshes).
 */
export function meshBody(mesh: TriMesh, o: MeshBodyOptions = {}): BodySpec {
  validateTriMesh(mesh, { closed: true, what: "rigid.meshBody" });
  requireParam("rigid.meshBody", "density", o.density ?? 1000, "positive", "kg/m³");
  // Host-side preprocessing in float64 on the CPU backend (WebGPU has no float64).
  const v = np.array(mesh.vertices, { dtype: "float64", backend: "cpu" }).reshape([vertexCount(mesh), 3]);
  const f = np.array(mesh.faces, { dtype: "int32", backend: "cpu" }).reshape([faceCount(mesh), 3]);
  const mp = massProperties(v, f, o.density ?? 1000);
  if (!(mp.volume.item() > 0))
    throw new Error(
      `rigid.meshBody: the mesh encloses volume ${mp.volume.item()} ≤ ` +
        `0; its faces must be wound counter-clockwise seen from outside.`,
    );
  const com = [...mp.com.dataSync()];
  const local = globalThis.Array.from(mesh.vertices, (c, i) => c - com[i % 3]!);
  return { mass: mp.mass.item(), inertia: [...mp.inertia.dataSync()], contactPoints: local, contactRadius: 0, ...o };
}

/** A solid sphere (one contact point at its centre with radius r). */
export function sphereBody(radius: number, o: MeshBodyOptions = {}): BodySpec {
  requireParam("rigid.sphereBody", "radius", radius, "positive", "m");
  requireParam("rigid.sphereBody", "density", o.density ?? 1000, "positive", "kg/m³");
  const m = (o.density ?? 1000) * (4 / 3) * Math.PI * radius ** 3;
  const i = 0.4 * m * radius * radius;
  return { mass: m, inertia: [i, 0, 0, 0, i, 0, 0, 0, i], contactPoints: [0, 0, 0], contactRadius: radius, ...o };
}

export interface ForceWindow {
  readonly body: number;
  readonly force: readonly [number, number, number];
  /** Application point in body coordinates about the COM (default the COM). */
  readonly point?: readonly [number, number, number];
  readonly start: number;
  readonly end: number;
}

export interface RigidSystemOptions {
  readonly gravity?: readonly [number, number, number];
  readonly ground?: GroundContact;
  readonly forceWindows?: readonly ForceWindow[];
  readonly dtype?: DType;
}

/** An optional vector of `n` finite numbers (undefined: the default applies). */
function requireVector(name: string, v: readonly number[] | undefined, n: number, unit: string): void {
  if (v === undefined) return;
  if (!globalThis.Array.isArray(v) || v.length !== n)
    throw new Error(`rigidSystem: ${name} must be ${n} numbers, got ${JSON.stringify(v)}.`);
  v.forEach((x, i) => requireParam("rigidSystem", `${name}[${i}]`, x, "finite", unit));
}

/** A system of independent bodies and its initial state. */
export function rigidSystem(
  bodies: readonly BodySpec[],
  o: RigidSystemOptions = {},
): { system: RigidSystem; state: RigidState } {
  if (!bodies.length) throw new Error("rigidSystem: needs at least one body.");
  bodies.forEach((b, k) => {
    requireParam("rigidSystem", `bodies[${k}].mass`, b.mass, "positive", "kg");
    b.inertia.forEach((x, i) => requireParam("rigidSystem", `bodies[${k}].inertia[${i}]`, x, "finite", "kg·m²"));
    // The initial state: an infinite or NaN velocity would otherwise come back as infinite positions.
    requireVector(`bodies[${k}].position`, b.position, 3, "m");
    requireVector(`bodies[${k}].rotation`, b.rotation, 4, "");
    requireVector(`bodies[${k}].velocity`, b.velocity, 3, "m/s");
    requireVector(`bodies[${k}].angularVelocity`, b.angularVelocity, 3, "rad/s");
    if (b.rotation && !(Math.hypot(...b.rotation) > 0))
      throw new Error(
        `rigidSystem: bodies[${k}].rotation is the zero quaternion; ` +
          `give a unit quaternion (x, y, z, w), e.g. [0, 0, 0, 1].`,
      );
    for (let i = 0; i < b.contactPoints.length; i++)
      requireParam("rigidSystem", `bodies[${k}].contactPoints[${i}]`, b.contactPoints[i]!, "finite", "m");
    requireParam("rigidSystem", `bodies[${k}].contactRadius`, b.contactRadius, "nonnegative", "m");
  });
  requireVector("gravity", o.gravity, 3, "m/s²");
  const dtype = o.dtype ?? "float32";
  const arr = (x: unknown): Array => np.array(x, { dtype });
  const body: number[] = [],
    local: number[][] = [],
    radius: number[] = [];
  bodies.forEach((b, k) => {
    for (let i = 0; i < b.contactPoints.length / 3; i++) {
      body.push(k);
      local.push([b.contactPoints[3 * i]!, b.contactPoints[3 * i + 1]!, b.contactPoints[3 * i + 2]!]);
      radius.push(b.contactRadius);
    }
  });
  const windows = o.forceWindows ?? [];
  windows.forEach((w, i) => {
    if (!(Number.isInteger(w.body) && w.body >= 0 && w.body < bodies.length))
      throw new Error(`rigidSystem: force window on body ${w.body}, but there are ${bodies.length} bodies.`);
    requireVector(`forceWindows[${i}].force`, w.force, 3, "N");
    requireVector(`forceWindows[${i}].point`, w.point, 3, "m");
    requireParam("rigidSystem", `forceWindows[${i}].start`, w.start, "finite", "s");
    requireParam("rigidSystem", `forceWindows[${i}].end`, w.end, "finite", "s");
    // A window that ends before it starts is never active: almost certainly swapped times, not an intent.
    if (w.end < w.start)
      throw new Error(
        `rigidSystem: forceWindows[${i}] ends (end = ${w.end} s) before it starts ` +
          `(start = ${w.start} s), so it would never be applied; give start ≤ end.`,
      );
  });
  const forceWindows: ForceWindows | undefined = windows.length
    ? {
        body: np.array(
          windows.map((w) => w.body),
          { dtype: "int32" },
        ),
        force: arr(windows.map((w) => [...w.force])),
        local: arr(windows.map((w) => [...(w.point ?? [0, 0, 0])])),
        start: arr(windows.map((w) => w.start)),
        end: arr(windows.map((w) => w.end)),
      }
    : undefined;
  const system: RigidSystem = {
    mass: arr(bodies.map((b) => b.mass)),
    inertia: arr(bodies.map((b) => [0, 1, 2].map((r) => b.inertia.slice(3 * r, 3 * r + 3)))),
    gravity: arr([...(o.gravity ?? [0, -9.8, 0])]),
    ...(body.length && o.ground
      ? {
          contacts: { body: np.array(body, { dtype: "int32" }), local: arr(local), radius: arr(radius) },
          ground: o.ground,
        }
      : {}),
    ...(forceWindows ? { forceWindows } : {}),
  };
  const state: RigidState = {
    x: arr(bodies.map((b) => [...(b.position ?? [0, 0, 0])])),
    q: arr(bodies.map((b) => [...(b.rotation ?? [0, 0, 0, 1])])),
    v: arr(bodies.map((b) => [...(b.velocity ?? [0, 0, 0])])),
    w: arr(bodies.map((b) => [...(b.angularVelocity ?? [0, 0, 0])])),
    t: np.array(0, { dtype }),
  };
  return { system, state };
}
