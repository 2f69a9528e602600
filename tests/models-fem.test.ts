import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { grad, jvp, jit, np, type Array } from "../src/index.js";
import { fem, meshes, particles } from "../src/models/index.js";
import { quatFromAxisAngle, quatRotate } from "../src/models/common/quat.js";
import { f64, maxAbs, pseudoRandom } from "./models-helpers.js";

const mesh = meshes.tetBox({ cells: [2, 1, 1], size: [1, 0.5, 0.5] });
const body = (o: fem.SoftBodyOptions = {}) =>
  fem.softBody(mesh, { dtype: "float64", mu: 1e3, lambda: 2e3, gravity: [0, 0, 0], ...o });
const perturbed = (x: Array, scale: number, seed: number) =>
  np.add(x, f64(pseudoRandom(x.size, seed), [...x.shape]).mul(scale));

/** Rigidly move positions: rotate by (axis, angle) about the origin, then translate. */
function rigidMotion(x: Array, axis: [number, number, number], angle: number, shift: [number, number, number]): Array {
  const q = f64(quatFromAxisAngle(axis, angle));
  return np.add(quatRotate(np.broadcastTo(q, [x.shape[0]!, 4]), x), f64(shift));
}
const arbAxis = fc.tuple(
  fc.double({ min: -1, max: 1, noNaN: true }),
  fc.double({ min: -1, max: 1, noNaN: true }),
  fc.double({ min: 0.1, max: 1, noNaN: true }),
);
const arbShift = fc.tuple(
  fc.double({ min: -3, max: 3, noNaN: true }),
  fc.double({ min: -3, max: 3, noNaN: true }),
  fc.double({ min: -3, max: 3, noNaN: true }),
);

describe("stable Neo-Hookean tets", () => {
  it("forces vanish at rest", () => {
    const { system, state } = body();
    expect(maxAbs(particles.forces(system, state))).toBeLessThan(1e-10);
  });

  it("forces vanish under any rigid rotation + translation (full ‖F‖² invariant)", () => {
    const { system, state } = body({ damping: 3 });
    fc.assert(
      fc.property(arbAxis, fc.double({ min: -Math.PI, max: Math.PI, noNaN: true }), arbShift, (axis, angle, shift) => {
        const x = rigidMotion(state.x, axis, angle, shift);
        expect(maxAbs(particles.forces(system, { x, v: np.zerosLike(x) }))).toBeLessThan(1e-9);
      }),
      { numRuns: 15 },
    );
  });

  it("the anchors' diagonal-only I_C is not rotation-invariant, ours is (90° about z)", () => {
    const { system, state } = body();
    const x = rigidMotion(state.x, [0, 0, 1], Math.PI / 2, [0, 0, 0]);
    const F = fem.deformationGradientT(system.tets!, x);
    const diag = np.sum(np.mul(np.square(F), np.eye(3, undefined, { dtype: "float64" })), [1, 2]);
    expect(maxAbs(np.sub(diag, 3))).toBeGreaterThan(1); // dflex's Ic would see strain here
    expect(maxAbs(np.sub(fem.invariants(system.tets!, x).Ic, 3))).toBeLessThan(1e-12);
  });

  it("elastic force = −∂U/∂x and damping force = −∂D/∂v (float64, random deformation, per-tet materials)", () => {
    const nt = mesh.tets.length / 4;
    const { system, state } = body({
      mu: globalThis.Array.from({ length: nt }, (_, i) => 500 + 100 * i),
      lambda: globalThis.Array.from({ length: nt }, (_, i) => 2000 - 50 * i),
      damping: globalThis.Array.from({ length: nt }, (_, i) => 1 + i),
      activation: globalThis.Array.from({ length: nt }, (_, i) => 0.02 * (i - 4)),
    });
    const x = perturbed(state.x, 0.05, 3),
      v = perturbed(np.zerosLike(state.x), 0.4, 4);
    const fElastic = particles.forces(system, { x, v: np.zerosLike(v) });
    const gradU = grad((xx: Array) => particles.potentialEnergy(system, xx))(x);
    expect(maxAbs(np.add(fElastic, gradU)) / maxAbs(gradU)).toBeLessThan(1e-12);
    const fDamp = np.sub(particles.forces(system, { x, v }), fElastic);
    const gradD = grad((vv: Array) => particles.dissipation(system, x, vv))(v);
    expect(maxAbs(gradD)).toBeGreaterThan(1e-3);
    expect(maxAbs(np.add(fDamp, gradD)) / maxAbs(gradD)).toBeLessThan(1e-12);
  });

  it("internal forces have zero net force and zero net torque (Σf = 0, Σx×f = 0)", () => {
    const { system, state } = body({ damping: 5, activation: 0.1 });
    const x = perturbed(state.x, 0.08, 7),
      v = perturbed(np.zerosLike(state.x), 1, 8);
    const f = particles.forces(system, { x, v });
    const scale = maxAbs(f);
    expect(scale).toBeGreaterThan(1);
    expect(maxAbs(np.sum(f, 0)) / scale).toBeLessThan(1e-12);
    expect(maxAbs(np.sum(np.cross(x, f), 0)) / scale).toBeLessThan(1e-12);
  });

  it("damping is Galilean- and rotation-invariant: a rigid velocity field gives no force (anchors' §0.2 fix)", () => {
    const { system, state } = body({ damping: 10 });
    const x = perturbed(state.x, 0.05, 9);
    const omega = f64([0.3, -1.2, 0.7]),
      vel = f64([2, -1, 0.5]);
    const v = np.add(np.cross(np.broadcastTo(omega, x.shape), x), vel);
    const withV = particles.forces(system, { x, v }),
      without = particles.forces(system, { x, v: np.zerosLike(v) });
    expect(maxAbs(np.sub(withV, without))).toBeLessThan(1e-10);
  });

  it("positive activation contracts: rest forces point toward the centroid", () => {
    const tet = {
      vertices: Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]),
      tets: Int32Array.from([0, 1, 2, 3]),
    };
    const { system, state } = fem.softBody(tet, { dtype: "float64", activation: 0.1, gravity: [0, 0, 0] });
    const f = particles.forces(system, state);
    const toCentroid = np.sub(np.mean(state.x, 0, { keepdims: true }), state.x);
    expect(np.min(np.sum(np.mul(f, toCentroid), -1)).item()).toBeGreaterThan(0);
  });

  it("lumped masses sum to density × volume", () => {
    const m = fem.lumpedMasses(mesh, 800);
    expect(m.reduce((a, b) => a + b, 0)).toBeCloseTo(800 * 1 * 0.5 * 0.5, 9);
  });

  it("a cantilever's tip deflection converges toward Euler–Bernoulli as the mesh is refined", () => {
    // ν = 0 so the clamped end does not stiffen the beam; small load, so the linear (Hessian) solve applies.
    const L = 1,
      h = 0.1,
      b = 0.1,
      rho = 1000,
      g = 9.8,
      E = 1e9;
    const { mu, lambda } = fem.stableNeoHookeanFromYoung(E, 0);
    const eulerBernoulli = (rho * g * b * h * L ** 4) / (8 * E * ((b * h ** 3) / 12));
    const ratios = [1, 2, 4].map((k) => {
      const beam = meshes.tetBeam(L, h, b, [10 * k, k, k]);
      const nv = beam.vertices.length / 3;
      const { system, state } = fem.softBody(beam, { dtype: "float64", density: rho, mu, lambda, gravity: [0, -g, 0] });
      const free = f64(
        Float64Array.from({ length: 3 * nv }, (_, i) => (beam.vertices[3 * Math.floor(i / 3)]! < 1e-9 ? 0 : 1)),
        [nv, 3],
      );
      const gradU = (x: Array) => grad((xx: Array) => particles.potentialEnergy(system, xx))(x);
      const stiffnessTimes = jit((u: Array) => np.mul(jvp(gradU, [state.x], [u])[1], free));
      // Conjugate gradients on K·u = f_gravity with the x = 0 face clamped.
      const f = np.mul(np.neg(gradU(state.x)), free);
      let u = np.zerosLike(f),
        r = f,
        p = r,
        rr = np.sum(np.square(r)).item();
      const stop = 1e-10 * Math.sqrt(rr);
      for (let it = 0; it < 4000 && Math.sqrt(rr) > stop; it++) {
        const Kp = stiffnessTimes(p);
        const alpha = rr / np.sum(np.mul(p, Kp)).item();
        u = np.add(u, np.mul(p, alpha));
        r = np.sub(r, np.mul(Kp, alpha));
        const rrNext = np.sum(np.square(r)).item();
        p = np.add(r, np.mul(p, rrNext / rr));
        rr = rrNext;
      }
      const uy = u.dataSync();
      let sum = 0,
        count = 0;
      for (let i = 0; i < nv; i++)
        if (Math.abs(beam.vertices[3 * i]! - L) < 1e-9) {
          sum += uy[3 * i + 1]!;
          count++;
        }
      return -sum / count / eulerBernoulli;
    });
    // Linear tets are too stiff in bending (locking) and soften toward the beam solution with refinement.
    expect(ratios[0]!).toBeLessThan(ratios[1]!);
    expect(ratios[1]!).toBeLessThan(ratios[2]!);
    expect(1 - ratios[2]!).toBeLessThan(0.5 * (1 - ratios[1]!));
    expect(ratios[2]!).toBeGreaterThan(0.85);
    expect(ratios[2]!).toBeLessThan(1.03);
  });
});
