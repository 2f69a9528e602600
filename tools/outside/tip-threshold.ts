/**
 * Where gradsim tips the held-out light cylinder over (by hand; seconds per run), beside
 * tools/outside/tip_threshold.py's MuJoCo and PyBullet. A rigid body pushed at its centre of mass and sliding tips
 * once μ > r/(h/2) (0.78 here).
 *
 * 1. Simulated: its scene at the truth but for μ, over a range of μ — each run's largest tilt and final height.
 * 2. Static: at each forward tilt θ, the height at which the contact's normal forces (`rigidGroundNormal`) carry the
 *    weight, and the μ whose sliding friction their moment about the centre of mass balances. The largest such μ is
 *    the contact's capacity: past it no tilt holds the body, and it tips. `--smoothing S` sets the contact's ramp.
 *
 *   npx tsx tools/outside/tip-threshold.ts [--substeps N] [--smoothing S]
 *   npx tsx tools/outside/tip-threshold.ts --case cylinder-mujoco     # another case (validation or held out)
 */
import { init, models, np, type Array } from "../../src/index.js";
import { readCase, sceneAtTruth, simulateAtTruth } from "./at-truth.js";

const MUS = [0.5, 0.6, 0.62, 0.64, 0.66, 0.7, 0.75, 0.8];
const TILTS_DEG = [0.2, 0.5, 1, 1.5, 2, 3, 4, 6];
const flag = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const substeps = flag("substeps", 16);
const smoothing = flag("smoothing", models.contact.RIGID_GROUND_DEFAULTS.smoothing);
const caseFlag = process.argv.indexOf("--case");
const outside = readCase(caseFlag >= 0 ? process.argv[caseFlag + 1]! : "cylinder-light-mujoco");
const { scene, truth } = outside;
await init({ backend: "cpu" });

/** The tilt (degrees) of a unit quaternion (x, y, z, w) away from a turn about the vertical. */
const tiltOf = (q: ArrayLike<number>, k: number) =>
  (2 * Math.asin(Math.min(1, Math.hypot(q[4 * k]!, q[4 * k + 2]!))) * 180) / Math.PI;

console.log(`simulated (smoothing ${models.contact.RIGID_GROUND_DEFAULTS.smoothing}, ${substeps} substeps per frame):`);
for (const mu of MUS) {
  const { q, x } = simulateAtTruth(sceneAtTruth(outside, { substeps, mu }));
  let tilt = 0;
  for (let k = 0; k < truth.frames - 1; k++) tilt = Math.max(tilt, tiltOf(q, k));
  const height = x[3 * (truth.frames - 2) + 1]!;
  console.log(
    `  mu ${mu.toFixed(2)}: largest tilt ${tilt.toFixed(2).padStart(6)}°, ` +
      `final height ${(height * 1e3).toFixed(1)} mm`,
  );
}

// Static: the contact points tilted forward by θ about the vertical through the centre of mass.
const points = sceneAtTruth(outside, { substeps }).contactPoints;
const count = points.length / 3;
const ground = models.contact.rigidGround({ smoothing });
const mass = truth.mass as number;
const weight = mass * -scene.gravity[1];
const f32 = (x: unknown) => np.array(x, { dtype: "float32" });
const normalForces = (theta: number, height: number): { fn: number[]; offsets: number[] } => {
  const c = Math.cos(theta),
    s = Math.sin(theta);
  const offsets: number[] = [];
  for (let i = 0; i < count; i++) {
    const [x, y, z] = [points[3 * i]!, points[3 * i + 1]!, points[3 * i + 2]!];
    offsets.push(c * x + s * y, -s * x + c * y, z); // the leading (+x) side goes down
  }
  const world: Array = np.reshape(f32(offsets.map((v, i) => (i % 3 === 1 ? v + height : v))), [count, 3]);
  const { fn } = models.contact.rigidGroundNormal(
    ground,
    world,
    np.zerosLike(world),
    np.zeros([count], { dtype: "float32" }),
    np.zeros([count], { dtype: "int32" }),
    f32([mass]),
    f32(scene.gravity),
  );
  return { fn: globalThis.Array.from(fn.dataSync()), offsets };
};
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
console.log(`static (smoothing ${smoothing}):`);
let capacity = 0;
for (const deg of TILTS_DEG) {
  const theta = (deg * Math.PI) / 180;
  let lo = 0,
    hi = 2 * scene.initialState.position[1];
  for (let it = 0; it < 60; it++) {
    const mid = 0.5 * (lo + hi);
    if (sum(normalForces(theta, mid).fn) > weight) lo = mid;
    else hi = mid;
  }
  const { fn, offsets } = normalForces(theta, 0.5 * (lo + hi));
  // Moments about the centre of mass: the normal forces' (restoring) and sliding friction's per unit μ (overturning).
  const restoring = sum(fn.map((f, i) => f * offsets[3 * i]!));
  const perMu = sum(fn.map((f, i) => -f * offsets[3 * i + 1]!));
  capacity = Math.max(capacity, restoring / perMu);
  console.log(
    `  tilt ${deg.toFixed(1).padStart(4)}°: the normal forces balance sliding friction up to μ ` +
      `${(restoring / perMu).toFixed(3)} (${fn.filter((f) => f > 1e-6).length} points touching)`,
  );
}
console.log(`  capacity: μ ${capacity.toFixed(3)}`);
