/**
 * A scene's contactSampling: "vertices" touches the ground at a box's corners, "edges" also at its edges' midpoints
 * (each face a 3 × 3 grid, equally loaded when the box lies flat). A box spinning in place on its base slows under
 * Coulomb friction at α = μ g r̄ m / I, r̄ the contacts' mean distance from the axis — the corners' a√2 or the grid's
 * (4a√2 + 4a)/9 for a square base of half-side a: the load's spread is what the two samplings disagree on.
 */
import { describe, expect, it } from "vitest";
import { sysid } from "../src/index.js";

const [a, mu, omega0, g] = [0.1, 0.5, 20, 9.8];
const spinning = (contactSampling: "vertices" | "edges"): sysid.RigidSceneSpec => ({
  shape: "box",
  scale: [2 * a, 0.1, 2 * a],
  mass: 1.3,
  position: [0, 0.05, 0],
  rotation: [0, 0, 0, 1],
  velocity: [0, 0, 0],
  angularVelocity: [0, omega0, 0],
  impulses: [],
  gravity: [0, -g, 0],
  contact: { ...sysid.RIGID_CONTACT_DEFAULTS, mu },
  frames: 5,
  fps: 30,
  substeps: 30,
  camera: { eye: [0, 1, -3], at: [0, 0, 0], fovY: 40 },
  resolution: 8,
  contactSampling,
});

/** The box's turn (radians about +y) from frame 0 to frame 4, from its first vertex about the vertices' mean. */
function turn(spec: sysid.RigidSceneSpec): number {
  const scene = sysid.buildRigidScene(spec);
  const v = sysid.rigidVertices(scene, {}, spec.frames).dataSync();
  const V = v.length / 3 / spec.frames;
  const heading = (k: number) => {
    let cx = 0,
      cz = 0;
    for (let i = 0; i < V; i++) {
      cx += v[3 * (k * V + i)]! / V;
      cz += v[3 * (k * V + i) + 2]! / V;
    }
    return Math.atan2(v[3 * k * V + 2]! - cz, v[3 * k * V]! - cx);
  };
  // +y turns x towards −z: the heading angle in the x–z plane decreases (by less than π over these frames).
  const d = heading(0) - heading(4);
  return d < 0 ? d + 2 * Math.PI : d;
}

describe("a scene's contact sampling", () => {
  const t = 4 / 30,
    inertia = (2 * (2 * a) ** 2) / 12; // per kg, about y
  const closedForm = (rMean: number) => omega0 * t - (mu * g * rMean * t * t) / (2 * inertia);

  it.each([
    ["vertices", a * Math.SQRT2],
    ["edges", (a * (4 * Math.SQRT2 + 4)) / 9],
  ] as const)("%s: a spinning box slows as Coulomb friction at its contacts says", (sampling, rMean) => {
    expect(sysid.buildRigidScene(spinning(sampling)).contactPoints.length / 3).toBe(sampling === "edges" ? 26 : 8);
    const got = turn(spinning(sampling));
    expect(Math.abs(got / closedForm(rMean) - 1), `${got} rad`).toBeLessThan(0.01);
  });

  it("names a sampling it does not know", () => {
    const bad = { ...spinning("edges"), contactSampling: "faces" } as unknown as sysid.RigidSceneSpec;
    expect(() => sysid.buildRigidScene(bad)).toThrow(/contactSampling must be "vertices" or "edges", got "faces"/);
  });
});
