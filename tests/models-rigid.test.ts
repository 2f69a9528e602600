import { describe, expect, it } from "vitest";
import { np } from "../src/index.js";
import { contact, meshes, rigid } from "../src/models/index.js";
import { matvec, mT } from "../src/models/common/vec.js";
import { maxAbs } from "./models-helpers.js";

const frame = (s: rigid.RigidState, f: number): rigid.RigidState => ({
  x: np.index(s.x, f),
  q: np.index(s.q, f),
  v: np.index(s.v, f),
  w: np.index(s.w, f),
  t: np.index(s.t, f),
});

describe("rigid bodies", () => {
  it("without gravity or contact, linear and angular momentum are conserved (tumbling asymmetric box)", () => {
    const body = rigid.meshBody(meshes.box(0.5, 0.2, 0.1), {
      density: 300,
      velocity: [1, 2, 3],
      angularVelocity: [0.1, 3, 0.2],
    });
    const { system, state } = rigid.rigidSystem([body], { gravity: [0, 0, 0], dtype: "float64" });
    const out = rigid.simulate(system, state, { dt: 1e-2, substeps: 4, frames: 50 });
    const L0 = rigid.angularMomentum(system, state),
      p0 = np.mul(system.mass, state.v);
    for (const f of [9, 29, 49]) {
      const s = frame(out, f);
      expect(maxAbs(np.sub(rigid.angularMomentum(system, s), L0)) / maxAbs(L0)).toBeLessThan(1e-12);
      expect(maxAbs(np.sub(np.mul(system.mass, s.v), p0))).toBeLessThan(1e-12);
      expect(Math.abs(np.sum(np.square(s.q)).item() - 1)).toBeLessThan(1e-12);
    }
    // The body really tumbles (ω changes direction), and kinetic energy stays put to O(dt²).
    const last = frame(out, 49);
    expect(maxAbs(np.sub(last.w, state.w))).toBeGreaterThan(0.5);
    const e0 = rigid.kineticEnergy(system, state).item();
    expect(Math.abs(rigid.kineticEnergy(system, last).item() - e0) / e0).toBeLessThan(1e-4);
  });

  it("the gyroscopic term: a torque-free symmetric top's body-frame ω precesses at (C − A)·ω_axis/A", () => {
    // Euler's equations with I = diag(A, C, A): ω̇x = k·ωz, ω̇z = −k·ωx, k = (C − A)ωy/A, so the body-frame
    // (ωx, ωz) turns by −k·t while ωy stays constant.
    const body = rigid.meshBody(meshes.cylinder(0.3, 0.05, 32), { density: 500, angularVelocity: [0.4, 6, 0] });
    const { system, state } = rigid.rigidSystem([body], { gravity: [0, 0, 0], dtype: "float64" });
    const I = system.inertia.dataSync();
    const A = I[0]!,
      C = I[4]!;
    expect(Math.abs(I[8]! - A) / A).toBeLessThan(1e-9);
    const rate = ((C - A) * 6) / A;
    const dt = 2e-3,
      substeps = 5,
      frames = 40;
    const out = rigid.simulate(system, state, { dt, substeps, frames });
    const R = rigid.quatToMatrix(out.q);
    const wb = matvec(mT(R), out.w).dataSync() as Float64Array; // body-frame ω per frame
    let prev = 0,
      unwrapped = 0;
    for (let f = 0; f < frames; f++) {
      const ang = Math.atan2(wb[3 * f + 2]!, wb[3 * f]!);
      let d = ang - prev;
      d -= 2 * Math.PI * Math.round(d / (2 * Math.PI));
      unwrapped += d;
      prev = ang;
      expect(unwrapped).toBeCloseTo(-rate * (f + 1) * substeps * dt, 3);
      expect(wb[3 * f + 1]).toBeCloseTo(6, 7);
    }
    expect(Math.abs(unwrapped)).toBeGreaterThan(0.5);
  });

  it("a force window gives the impulse F·(steps in window)·dt", () => {
    const body = rigid.sphereBody(0.2, { density: 100 });
    const F = [3, -1, 2] as const;
    const { system, state } = rigid.rigidSystem([body], {
      gravity: [0, 0, 0],
      dtype: "float64",
      forceWindows: [{ body: 0, force: F, point: [0, 0.2, 0], start: 0.025, end: 0.105 }],
    });
    const out = rigid.simulate(system, state, { dt: 0.01, frames: 20 });
    const v = np.index(np.index(out.v, 19), 0).toList() as number[];
    F.forEach((c, i) => expect(v[i]).toBeCloseTo((c * 0.08) / body.mass, 10));
    // Applied off-centre, it also spins the body: ΔL = r × F·T.
    expect(maxAbs(np.index(out.w, 19))).toBeGreaterThan(0.1);
  });

  it("a ball dropped on the ground comes to rest at penetration mg/ke", () => {
    const ke = 1e4;
    const ball = rigid.sphereBody(0.1, { density: 500, position: [0, 0.3, 0] });
    const ground = contact.ground({ ke, kd: 2 * Math.sqrt(ke * ball.mass), kf: 100, mu: 0.5, dtype: "float64" });
    const { system, state } = rigid.rigidSystem([ball], { ground, dtype: "float64" });
    const out = rigid.simulate(system, state, { dt: 1e-3, substeps: 20, frames: 60 });
    const y = (np.index(out.x, 59).toList() as number[][])[0]![1]!;
    expect(0.1 - y).toBeCloseTo((ball.mass * 9.8) / ke, 6);
  });

  it("a box sliding with friction stops near v²/(2μg) (contact through its 8 vertices)", () => {
    const ke = 2e4,
      mu = 0.4,
      v0 = 2;
    const m = 1000 * 0.2 ** 3;
    const ground = contact.ground({ ke, kd: 200, kf: 1e4, mu, dtype: "float64" });
    const box = rigid.meshBody(meshes.box(0.1, 0.1, 0.1), {
      density: 1000,
      position: [0, 0.1 - (m * 9.8) / (4 * ke), 0],
      velocity: [v0, 0, 0],
    });
    const { system, state } = rigid.rigidSystem([box], { ground, dtype: "float64" });
    const out = rigid.simulate(system, state, { dt: 5e-4, substeps: 20, frames: 70 });
    const xs = out.x.dataSync();
    expect(Math.abs(xs[3 * 69]! - xs[3 * 60]!)).toBeLessThan(1e-3); // stopped
    expect(xs[3 * 69]! / ((v0 * v0) / (2 * mu * 9.8))).toBeCloseTo(1, 1);
    expect(Math.abs(xs[3 * 69]! / ((v0 * v0) / (2 * mu * 9.8)) - 1)).toBeLessThan(0.02);
  });
});

describe("mass properties from closed meshes", () => {
  const props = (m: meshes.TriMesh, density = 1) =>
    rigid.massProperties(
      np.array(m.vertices, { dtype: "float64" }).reshape([-1, 3]),
      np.array(m.faces, { dtype: "int32" }).reshape([-1, 3]),
      density,
    );

  it("box: m = ρ·8hxhyhz, I = m/3·diag(hy²+hz², hx²+hz², hx²+hy²), COM at the centre", () => {
    const shifted = meshes.box(0.5, 1, 1.5);
    const p = props({ ...shifted, vertices: meshes.transformVertices(shifted.vertices, { translate: [1, 2, 3] }) }, 2);
    const m = 2 * 8 * 0.5 * 1 * 1.5;
    expect(p.mass.item()).toBeCloseTo(m, 12);
    expect(p.com.toList()).toEqual([1, 2, 3].map((c) => expect.closeTo(c, 12)));
    const I = p.inertia.toList() as number[][];
    [
      [1 + 2.25, 0, 0],
      [0, 0.25 + 2.25, 0],
      [0, 0, 0.25 + 1],
    ].forEach((row, i) => row.forEach((c, j) => expect(I[i]![j]).toBeCloseTo((m / 3) * c, 10)));
  });

  it("icosphere, cylinder, cone, capsule, torus: volumes and inertias approach the closed forms", () => {
    const sphere = props(meshes.icosphere(1, 4));
    expect(sphere.volume.item() / ((4 / 3) * Math.PI)).toBeCloseTo(1, 2);
    expect((sphere.inertia.toList() as number[][])[1]![1]! / (0.4 * sphere.mass.item())).toBeCloseTo(1, 2);
    const cyl = props(meshes.cylinder(0.5, 1, 128));
    expect(cyl.volume.item() / (Math.PI * 0.25 * 2)).toBeCloseTo(1, 3);
    expect((cyl.inertia.toList() as number[][])[1]![1]! / (0.5 * cyl.mass.item() * 0.25)).toBeCloseTo(1, 3);
    const cone = props(meshes.cone(0.5, 1, 128));
    expect(cone.volume.item() / ((Math.PI * 0.25) / 3)).toBeCloseTo(1, 3);
    expect(maxAbs(cone.com)).toBeLessThan(1e-12);
    const cap = props(meshes.capsule(0.3, 0.5, 64, 16));
    expect(cap.volume.item() / (Math.PI * 0.09 * 1 + (4 / 3) * Math.PI * 0.027)).toBeCloseTo(1, 2);
    const tor = props(meshes.torus(1, 0.25, 96, 48));
    expect(tor.volume.item() / (2 * Math.PI ** 2 * 0.0625)).toBeCloseTo(1, 2);
  });

  it("the Stanford bunny is a closed, consistently wound mesh and becomes a rigid body", () => {
    const b = meshes.bunny({ size: 0.3, center: [0, 0.15, 0] });
    expect(meshes.vertexCount(b)).toBe(1839);
    expect(meshes.faceCount(b)).toBe(3674);
    const spec = rigid.meshBody(b, { density: 500 });
    expect(spec.mass).toBeGreaterThan(0);
    const I = spec.inertia;
    expect(I[0]! + I[4]! - I[8]!).toBeGreaterThan(0); // triangle inequality of principal moments
    expect(spec.contactPoints.length).toBe(1839 * 3);
  });

  it("rejects an open mesh, listing the faces on its boundary", () => {
    const m = meshes.box();
    const open = { vertices: m.vertices, faces: m.faces.slice(0, 33) };
    expect(() => rigid.meshBody(open)).toThrow(/boundary edge.*: 0, 1, 2|boundary edge/);
  });
});
