/**
 * A scene's "sphere" is a smooth ball: a true sphere's inertia and one contact at its lowest point, so a ball pushed
 * at its centre rolls without slipping (a = 5F/7m) and keeps rolling; the faceted "icosphere" bumps over its
 * vertices and loses speed. Its scale is its diameter, the same on every axis.
 */
import { describe, expect, it } from "vitest";
import { np, sysid } from "../src/index.js";

const [F, m, T, r] = [1.5, 1, 0.4, 0.1];
const ball = (shape: "sphere" | "icosphere"): sysid.RigidSceneSpec => ({
  shape,
  scale: [2 * r, 2 * r, 2 * r],
  mass: m,
  position: [0, r, 0],
  rotation: [0, 0, 0, 1],
  velocity: [0, 0, 0],
  angularVelocity: [0, 0, 0],
  impulses: [{ force: [F, 0, 0], point: [0, 0, 0], start: 0, duration: T }],
  gravity: [0, -9.8, 0],
  contact: { ...sysid.RIGID_CONTACT_DEFAULTS, mu: 0.5 },
  frames: 30,
  fps: 30,
  substeps: 30,
  camera: { eye: [0, 1, -3], at: [0, 0.1, 0], fovY: 40 },
  resolution: 16,
});

/** The centre's x at every frame (the mean of the drawn vertices, which lie on the sphere). */
function centreX(spec: sysid.RigidSceneSpec): number[] {
  const scene = sysid.buildRigidScene(spec);
  const v = sysid.rigidVertices(scene, {}, spec.frames);
  return Array.from(np.mean(np.take(v, 0, -1), -1).dataSync());
}

describe("a scene's smooth sphere", () => {
  it("rolls without slipping when pushed at its centre, then keeps its speed", () => {
    const x = centreX(ball("sphere"));
    const a = (5 * F) / (7 * m);
    // Frame k shows t = k/30; the push ends at frame 12.
    expect(Math.abs(x[12]! / (0.5 * a * T * T) - 1), `${x[12]} m`).toBeLessThan(0.01);
    expect(Math.abs((x[29]! - x[20]!) / (9 / 30) / (a * T) - 1)).toBeLessThan(0.01);
  });

  it("is what the faceted icosphere is not", () => {
    const x = centreX(ball("icosphere"));
    expect(Math.abs((x[29]! - x[20]!) / (9 / 30) / ((5 * F * T) / (7 * m)) - 1)).toBeGreaterThan(0.05);
  });

  it("needs one scale on every axis", () => {
    expect(() => sysid.buildRigidScene({ ...ball("sphere"), scale: [0.2, 0.2, 0.25] })).toThrow(
      /"sphere" needs the same scale on every axis/,
    );
  });
});
