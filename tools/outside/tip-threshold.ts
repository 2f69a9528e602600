/**
 * Where gradsim tips the held-out light cylinder over (by hand; seconds per run): its scene at the truth but for μ,
 * over a range of μ, each run's largest tilt and final height — beside tools/outside/tip_threshold.py's MuJoCo and
 * PyBullet. A rigid body pushed at its centre of mass and sliding tips once μ > r/(h/2) (0.78 here).
 *
 *   npx tsx tools/outside/tip-threshold.ts [substeps]
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { init, models, sysid } from "../../src/index.js";

const MUS = [0.5, 0.6, 0.62, 0.64, 0.66, 0.7, 0.75, 0.8];
const substeps = Number(process.argv[2] ?? 16);
const dir = fileURLToPath(new URL("../../examples/data/outside-held-out/cylinder-light-mujoco/", import.meta.url));
const scene = JSON.parse(readFileSync(`${dir}scene.json`, "utf8"));
const truth = JSON.parse(readFileSync(`${dir}truth.json`, "utf8"));
await init({ backend: "cpu" });

for (const mu of MUS) {
  const built = sysid.buildRigidScene({
    shape: scene.mesh.shape,
    scale: scene.mesh.scale,
    mass: truth.mass,
    position: scene.initialState.position,
    rotation: scene.initialState.rotation,
    velocity: scene.initialState.velocity,
    angularVelocity: scene.initialState.angularVelocity,
    impulses: scene.impulses,
    gravity: scene.gravity,
    contact: { ...sysid.RIGID_CONTACT_DEFAULTS, mu },
    frames: truth.frames,
    fps: truth.fps,
    substeps,
    camera: { eye: [0, 1, 3], at: [0, 0, 0], fovY: 40 },
    resolution: 16,
    background: [0, 0, 0],
  });
  const { system, state } = sysid.systemFor(built, {});
  const s = models.rigid.simulate(system, state, { dt: built.dt, substeps, frames: truth.frames - 1 });
  const q = s.q.dataSync(),
    x = s.x.dataSync();
  let tilt = 0;
  // The body's tilt from upright: the angle of its rotation away from a turn about the vertical.
  for (let k = 0; k < truth.frames - 1; k++)
    tilt = Math.max(tilt, (2 * Math.asin(Math.min(1, Math.hypot(q[4 * k]!, q[4 * k + 2]!))) * 180) / Math.PI);
  const height = x[3 * (truth.frames - 2) + 1]!;
  console.log(
    `gradsim  mu ${mu.toFixed(2)}: largest tilt ${tilt.toFixed(2).padStart(6)}°, ` +
      `final height ${(height * 1e3).toFixed(1)} mm`,
  );
}
