/**
 * An outside case simulated by gradsim at its truth: what tools/outside's TypeScript diagnostics (contact-spread.ts,
 * tip-threshold.ts) share. A case is named as in cases.py and found in the validation set or the held-out one.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { models, sysid } from "../../src/index.js";
import type { TriMesh } from "../../src/models/meshes/types.js";
import { loadVideoScene } from "../../src/sysid/node.js";

/** truth.json, as make_cases.py writes it. */
type Json = any;
export interface OutsideCase {
  readonly name: string;
  /** scene.json, read as `gradsim fit` reads it, and its OBJ mesh (null for a built-in shape). */
  readonly scene: sysid.VideoSceneFile;
  readonly mesh: TriMesh | null;
  readonly truth: Json;
}

/** The case's scene.json and truth.json, from examples/data/outside/ or examples/data/outside-held-out/. */
export function readCase(name: string): OutsideCase {
  const dirs = ["outside", "outside-held-out"].map((set) =>
    fileURLToPath(new URL(`../../examples/data/${set}/${name}/`, import.meta.url)),
  );
  const dir = dirs.find((d) => existsSync(d));
  if (!dir) throw new Error(`no outside case "${name}" in ${dirs.join(" or ")}`);
  const { file, mesh } = loadVideoScene(`${dir}scene.json`);
  return { name, scene: file, mesh, truth: JSON.parse(readFileSync(`${dir}truth.json`, "utf8")) };
}

/** Its rigid scene at the truth (μ, the friction's load replaced where given), over the video's frames; no camera. */
export function sceneAtTruth(
  c: OutsideCase,
  o: { substeps: number; mu?: number; frictionLoad?: "point" | "shared" },
): sysid.RigidScene {
  const { truth } = c;
  return sysid.buildRigidScene({
    ...sysid.sceneFileMotion(c.scene, c.mesh),
    mass: truth.mass,
    contact: { ...sysid.RIGID_CONTACT_DEFAULTS, mu: o.mu ?? truth.mu },
    frames: truth.frames,
    fps: truth.fps,
    substeps: o.substeps,
    camera: { eye: [0, 1, 3], at: [0, 0, 0], fovY: 40 },
    resolution: 16,
    background: [0, 0, 0],
    ...(o.frictionLoad ? { frictionLoad: o.frictionLoad } : {}),
  });
}

/** Positions [3·(frames − 1)] and orientations [4·(frames − 1)] after frame 0, the scene's contact points or these. */
export function simulateAtTruth(
  built: sysid.RigidScene,
  contactPoints: readonly number[] = built.contactPoints,
): { x: ArrayLike<number>; q: ArrayLike<number> } {
  const { system, state } = sysid.systemFor({ ...built, contactPoints }, {});
  const s = models.rigid.simulate(system, state, {
    dt: built.dt,
    substeps: built.spec.substeps,
    frames: built.spec.frames - 1,
  });
  return { x: s.x.dataSync(), q: s.q.dataSync() };
}
