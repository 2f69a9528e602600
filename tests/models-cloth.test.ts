import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { grad, np, type Array } from "../src/index.js";
import { cloth, meshes, particles } from "../src/models/index.js";
import { quatFromAxisAngle, quatRotate } from "../src/models/common/quat.js";
import { f64, maxAbs, pseudoRandom } from "./models-helpers.js";

const sheet = meshes.clothGrid({ cells: [3, 2], cellSize: 0.2 });
const makeCloth = (o: cloth.ClothOptions = {}) =>
  cloth.clothBody(sheet, {
    dtype: "float64",
    mu: 50,
    lambda: 80,
    damping: 3,
    bending: { stiffness: 7, damping: 0.4 },
    gravity: [0, 0, 0],
    ...o,
  });
const noise = (x: Array, s: number, seed: number) => np.add(x, f64(pseudoRandom(x.size, seed), [...x.shape]).mul(s));

describe("cloth membrane and bending", () => {
  it("forces vanish at rest and under rigid rotation + translation", () => {
    const { system, state } = makeCloth();
    expect(maxAbs(particles.forces(system, state))).toBeLessThan(1e-12);
    fc.assert(
      fc.property(
        fc.double({ min: -3, max: 3, noNaN: true }),
        fc.double({ min: 0.1, max: 1, noNaN: true }),
        (angle, az) => {
          const q = f64(quatFromAxisAngle([0.3, -0.5, az], angle));
          const x = np.add(quatRotate(np.broadcastTo(q, [state.x.shape[0]!, 4]), state.x), f64([1, -2, 0.5]));
          expect(maxAbs(particles.forces(system, { x, v: np.zerosLike(x) }))).toBeLessThan(1e-10);
        },
      ),
      { numRuns: 10 },
    );
  });

  it("anchor oracle: 1.2× uniform stretch of the unit right triangle (μ = λ = 100) gives f_p = (26.4, 26.4, 0)", () => {
    const tri = { vertices: Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0]), faces: Int32Array.from([0, 1, 2]) };
    const { system, state } = cloth.clothBody(tri, {
      dtype: "float64",
      mu: 100,
      lambda: 100,
      damping: 0,
      bending: false,
      gravity: [0, 0, 0],
    });
    const f = particles.forces(system, { x: state.x.mul(1.2), v: np.zerosLike(state.x) });
    expect(np.index(f, 0).toList()).toEqual([26.4, 26.4, 0].map((c) => expect.closeTo(c, 10)));
    expect(maxAbs(np.sum(f, 0))).toBeLessThan(1e-12);
  });

  it("membrane + bending: force = −∂U/∂x, damping = −∂D/∂v (float64), Σf = 0, Σx×f = 0", () => {
    const { system, state } = makeCloth({ activation: 0.03, bending: { stiffness: 7, damping: 0.4, restAngle: 0.2 } });
    const x = noise(state.x, 0.04, 1),
      v = noise(np.zerosLike(state.x), 0.5, 2);
    const fe = particles.forces(system, { x, v: np.zerosLike(v) });
    const f = particles.forces(system, { x, v });
    const gU = grad((xx: Array) => particles.potentialEnergy(system, xx))(x);
    const gD = grad((vv: Array) => particles.dissipation(system, x, vv))(v);
    expect(maxAbs(np.add(fe, gU)) / maxAbs(gU)).toBeLessThan(1e-12);
    expect(maxAbs(np.add(np.sub(f, fe), gD)) / maxAbs(gD)).toBeLessThan(1e-12);
    expect(maxAbs(np.sum(f, 0)) / maxAbs(f)).toBeLessThan(1e-12);
    expect(maxAbs(np.sum(np.cross(x, f), 0)) / maxAbs(f)).toBeLessThan(1e-12);
  });

  it("a hinge folded by φ has dihedral angle ±φ, and the bending force unfolds it", () => {
    const hingeMesh = {
      vertices: Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0]),
      faces: Int32Array.from([0, 1, 3, 0, 3, 2]),
    };
    const b = cloth.bendingElements(hingeMesh, { stiffness: 10, dtype: "float64" });
    expect(b.indices.shape).toEqual([1, 4]);
    for (const phi of [0.3, -0.7, 1.2]) {
      // Rotate vertex 2 (a wing) about the shared edge 0–3 by φ.
      const axis = [1 / Math.SQRT2, 1 / Math.SQRT2, 0] as [number, number, number];
      const q = f64(quatFromAxisAngle(axis, phi));
      const x2 = quatRotate(q, f64([0, 1, 0]));
      const x = np.concatenate([f64([0, 0, 0, 1, 0, 0], [2, 3]), x2.reshape([1, 3]), f64([1, 1, 0], [1, 3])], 0);
      const theta = cloth.dihedralAngle(b, x).item();
      expect(Math.abs(theta)).toBeCloseTo(Math.abs(phi), 12);
      // Moving vertex 2 along its force reduces |θ|.
      const f = cloth.bendingForces(b, x, null);
      const x2moved = np.add(x, np.mul(f, 1e-4));
      expect(Math.abs(cloth.dihedralAngle(b, x2moved).item())).toBeLessThan(Math.abs(theta));
    }
  });

  it("aerodynamic drag matches the anchor check value (unit right triangle falling, k_drag = 1)", () => {
    const tri = { vertices: Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0]), faces: Int32Array.from([0, 1, 2]) };
    const t = cloth.triangleElements(tri, { dtype: "float64", drag: 1, lift: 0 });
    const x = f64(tri.vertices, [3, 3]),
      v = f64([0, 0, -1, 0, 0, -1, 0, 0, -1], [3, 3]);
    const f = cloth.aeroForces(t, x, v);
    // Total k_drag·A·|n̂·v̄|·v̄ = 0.5 ẑ (dflex gives each vertex 0.4999 ẑ, i.e. 3× the total).
    expect(np.sum(f, 0).toList()).toEqual([0, 0, 0.5].map((c) => expect.closeTo(c, 12)));
    const lift = cloth.aeroForces(
      cloth.triangleElements(tri, { dtype: "float64", drag: 0, lift: 1 }),
      x,
      f64([1, 0, -1, 1, 0, -1, 1, 0, -1], [3, 3]),
    );
    // 45° angle of attack: k_lift·A·asin(n̂·v̂)·|v̄|² = 0.5·(−π/4)·2, along −n̂ → +ẑ·π/4.
    expect(np.sum(lift, 0).toList()).toEqual([0, 0, Math.PI / 4].map((c) => expect.closeTo(c, 10)));
  });

  it("a cloth in free fall without air falls as a rigid sheet (internal forces stay zero)", () => {
    const { system, state } = makeCloth({ gravity: [0, -9.8, 0] });
    const n = 12,
      dt = 1e-3;
    const out = particles.simulate(system, state, { dt, substeps: n, frames: 1 });
    const drop = np.sub(np.index(out.x, 0), state.x);
    expect(maxAbs(np.sub(drop, f64([0, (-9.8 * dt * dt * n * (n + 1)) / 2, 0])))).toBeLessThan(1e-12);
  });

  it("the 2-D walker contracts where its triangles are activated (control_walker's actuation)", () => {
    const w = meshes.walker();
    const { system, state } = cloth.clothBody(w, {
      dtype: "float64",
      density: 10,
      mu: 200,
      lambda: 400,
      damping: 1,
      activation: 0.2,
      bending: false,
      gravity: [0, 0, 0],
    });
    const out = particles.simulate(system, state, { dt: 1e-3, substeps: 25, frames: 4 });
    const area = (x: Array) => {
      const xs = x.dataSync(),
        f = w.faces;
      let a = 0;
      for (let t = 0; t < f.length / 3; t++)
        a += meshes.triangleArea2(xs as Float64Array, f[3 * t]!, f[3 * t + 1]!, f[3 * t + 2]!) / 2;
      return a;
    };
    const a0 = area(state.x),
      a1 = area(np.index(out.x, 3));
    expect(a1 / a0).toBeLessThan(0.95);
    expect(a1 / a0).toBeGreaterThan(0.6);
    expect(
      maxAbs(
        np
          .index(out.x, 3)
          .reshape([-1, 3])
          .take(np.array([2], { dtype: "int32" }), 1),
      ),
    ).toBeLessThan(1e-12); // stays planar
  });
});
