/**
 * How a box's trajectory hangs on where its flat face carries its load (by hand; seconds per case): gradsim simulates
 * an outside case at its truth with the load at the corners (the scene's default contacts), on 3 × 3 grids per face
 * (`contactSampling: "edges"`), on those grids with trapezoid weights (corners 1, edge midpoints 2, face centres 4:
 * uniform pressure by the trapezoid rule, a point repeated as often as its weight) and on 9 × 9 grids, and prints
 * where each ends against the engine's own trajectory (truth.json). Rigid-body mechanics leaves the spread open (a
 * flat face on a flat floor is statically indeterminate); it decides the friction's torque on a box that turns. The
 * last row keeps the corners but bounds their friction by the body's load shared evenly (`frictionLoad: "shared"`).
 *
 *   npx tsx tools/outside/contact-spread.ts box-spun-pybullet [substeps]
 */
import { init } from "../../src/index.js";
import { readCase, sceneAtTruth, simulateAtTruth } from "./at-truth.js";

const name = process.argv[2] ?? "box-spun-pybullet";
const substeps = Number(process.argv[3] ?? 16);
const outside = readCase(name);
const { scene, truth } = outside;
if (!("shape" in scene.mesh) || scene.mesh.shape !== "box") throw new Error(`contact-spread: ${name} is not a box.`);
await init({ backend: "cpu" });

const half: number[] = scene.mesh.scale.map((s: number) => s / 2);
/** Points on every face of the box, an (n + 1) × (n + 1) grid each, repeated `copies(i, j)` times. */
function faceGrids(n: number, copies: (i: number, j: number) => number): number[] {
  const seen = new Set<string>();
  const out: number[] = [];
  for (let a = 0; a < 3; a++)
    for (const side of [-1, 1])
      for (let i = 0; i <= n; i++)
        for (let j = 0; j <= n; j++) {
          const p = [0, 0, 0];
          p[a] = side * half[a]!;
          p[(a + 1) % 3] = ((2 * i) / n - 1) * half[(a + 1) % 3]!;
          p[(a + 2) % 3] = ((2 * j) / n - 1) * half[(a + 2) % 3]!;
          const key = p.map((x) => x.toFixed(9)).join();
          if (seen.has(key)) continue; // a corner or edge point shared by two or three faces, once
          seen.add(key);
          for (let c = 0; c < copies(i, j); c++) out.push(...p);
        }
  return out;
}
const onRim = (i: number, n: number) => (i === 0 || i === n ? 1 : 0);
const SPREADS: readonly (readonly [string, number[]])[] = [
  ["corners", faceGrids(1, () => 1)],
  ["3 × 3 grids", faceGrids(2, () => 1)],
  ["3 × 3, trapezoid", faceGrids(2, (i, j) => 4 / 2 ** (onRim(i, 2) + onRim(j, 2)))],
  ["9 × 9 grids", faceGrids(8, () => 1)],
];

/** Turn about the vertical (degrees) of a unit quaternion (x, y, z, w) that turns about it alone. */
const yawOf = (q: ArrayLike<number>) => (2 * Math.atan2(q[1]!, q[3]!) * 180) / Math.PI;
const last = truth.frames - 1;
const [tx, , tz] = truth.trajectory.position[last];
const turn0 = yawOf(truth.trajectory.rotation[0]);
console.log(`${name} at its truth (mass ${truth.mass} kg, μ ${truth.mu}), ${substeps} substeps per frame`);
console.log(
  `  ${truth.engine}: ends at x ${(tx * 1e3).toFixed(1)}, z ${(tz * 1e3).toFixed(1)} mm, ` +
    `turned ${(yawOf(truth.trajectory.rotation[last]) - turn0).toFixed(1)}°`,
);
const built = sceneAtTruth(outside, { substeps });
const shared = sceneAtTruth(outside, { substeps, frictionLoad: "shared" });
const rows = [
  ...SPREADS.map(([label, points]) => [label, built, points] as const),
  ["corners, shared", shared, shared.contactPoints] as const,
];
for (const [label, scene, points] of rows) {
  const s = simulateAtTruth(scene, points);
  const x = Array.from(s.x).slice(3 * (last - 1), 3 * last);
  const q = Array.from(s.q).slice(4 * (last - 1), 4 * last);
  console.log(
    `  gradsim, ${label.padEnd(16)} (${String(points.length / 3).padStart(3)} points): ends at x ` +
      `${(x[0]! * 1e3).toFixed(1)}, z ${(x[2]! * 1e3).toFixed(1)} mm, turned ${(yawOf(q) - turn0).toFixed(1)}°, ` +
      `${(Math.hypot(x[0]! - tx, x[2]! - tz) * 1e3).toFixed(1)} mm from the engine's`,
  );
}
