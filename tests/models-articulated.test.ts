/**
 * models.articulated: reduced-coordinate dynamics from point-mass kinematics and autodiff, checked
 * against the closed-form pendula (the double pendulum's Coriolis terms included), energy
 * conservation and dissipation, the SPD solve, float64 gradients in the joint stiffness through a
 * rollout, RISP's hand (13 joints, limits, mesh), and bad input.
 */
import { describe, expect, it } from "vitest";
import { grad, init, jit, models, np, sysid, type Array } from "../src/index.js";

await init({ backend: "cpu" });
const { articulated, pendulum } = models;
const f64 = (x: unknown) => np.array(x, { dtype: "float64" });

/** A planar chain in the x–y plane of point masses at the ends of links hanging along −y, joints about z. */
function chain(lengths: readonly number[], masses: readonly number[], o: { damping?: number } = {}) {
  return articulated.articulatedSystem(
    lengths.map((L, i) => ({
      parent: i - 1,
      offset: (i === 0 ? [0, 0, 0] : [0, -lengths[i - 1]!, 0]) as [number, number, number],
      axis: [0, 0, 1] as [number, number, number],
      points: [{ at: [0, -L, 0] as [number, number, number], mass: masses[i]! }],
      damping: o.damping ?? 0,
    })),
    { gravity: [0, -10, 0], dtype: "float64" },
  );
}

describe("models.articulated", () => {
  it("one link is the simple pendulum and two are the double pendulum, Coriolis terms included", () => {
    const one = chain([1.3], [0.7]);
    const simple = pendulum.simplePendulum({
      length: 1.3,
      mass: 0.7,
      gravity: 10,
      damping: 0,
      dtype: "float64",
    }).system;
    for (const [q, w] of [
      [0.3, 0],
      [-1.2, 2],
      [2.5, -1],
    ]) {
      const a = articulated.acceleration(one.system, { q: f64([q]), qd: f64([w]) }, null).item();
      expect(a).toBeCloseTo(pendulum.simpleAcceleration(simple, { theta: f64(q), omega: f64(w) }, null).item(), 10);
    }
    const two = chain([1, 0.8], [1.5, 0.6]);
    const dp = pendulum.doublePendulum({
      length: [1, 0.8],
      mass: [1.5, 0.6],
      gravity: 10,
      damping: [0, 0],
      dtype: "float64",
    }).system;
    for (const [t1, t2, w1, w2] of [
      [0.4, -0.3, 1.1, -2],
      [2, 1, -0.5, 3],
      [-1, 2.5, 2, 0.7],
    ]) {
      // Joint angles are relative: q1 = θ1, q2 = θ2 − θ1.
      const a = articulated
        .acceleration(two.system, { q: f64([t1, t2! - t1!]), qd: f64([w1, w2! - w1!]) }, null)
        .dataSync();
      const b = pendulum.doubleAcceleration(dp, { theta: f64([t1, t2]), omega: f64([w1, w2]) }, null).dataSync();
      expect(a[0]!).toBeCloseTo(b[0]!, 9);
      expect(a[1]!).toBeCloseTo(b[1]! - b[0]!, 9);
    }
  });

  it("solveSpd solves a symmetric positive definite system", () => {
    const B = f64([
      [2, 1, 0, 0.5],
      [0.3, 3, 1, 0],
      [0, 0.2, 1, 0.1],
      [1, 0, 0.4, 2],
    ]);
    const A = np.add(np.matmul(B, np.transpose(B)), np.eye(4, undefined, { dtype: "float64" }));
    const x = f64([0.5, -1, 2, 0.25]);
    expect(np.max(np.abs(np.sub(articulated.solveSpd(A, np.matmul(A, x)), x))).item()).toBeLessThan(1e-12);
  });

  it("the hand conserves energy without damping and loses it monotonically with damping", () => {
    const q0 = globalThis.Array.from({ length: 13 }, (_, i) => 0.5 * Math.sin(i + 1) * 0.6);
    const run = (damping: number) => {
      const { hand, state } = articulated.hand({ damping, q: q0, dtype: "float64" });
      const s = articulated.simulate(hand.system, state, { dt: 1 / 1920, substeps: 16, frames: 30 });
      return globalThis.Array.from({ length: 30 }, (_, t) =>
        articulated.energy(hand.system, { q: np.index(s.q, t), qd: np.index(s.qd, t) }).item(),
      );
    };
    const { hand, state } = articulated.hand({ damping: 0, q: q0, dtype: "float64" });
    const e0 = articulated.energy(hand.system, state).item();
    const conserved = run(0);
    // Within the limits (|q0| < π/4 and small swings) the limit springs stay idle: the energy is the system's.
    const swing = Math.max(...conserved.map((e) => Math.abs(e - e0)));
    const scale = e0 - articulated.energy(hand.system, { q: np.zerosLike(state.q), qd: state.qd }).item();
    expect(Math.abs(scale)).toBeGreaterThan(1e-4);
    expect(swing).toBeLessThan(0.02 * Math.abs(scale));
    const damped = run(2e-3);
    for (let t = 1; t < damped.length; t++) expect(damped[t]!).toBeLessThanOrEqual(damped[t - 1]! + 1e-12);
    expect(damped[damped.length - 1]!).toBeLessThan(e0 - 0.3 * Math.abs(scale));
  }, 120_000);

  it("motor torques bend the fingers, the joint limits cut their swing short, and the mesh follows the links", () => {
    const { hand, state } = articulated.hand();
    const torques = np.broadcastTo(
      np.array(
        globalThis.Array.from({ length: 13 }, () => 1.2),
        { dtype: "float32" },
      ),
      [30, 13],
    );
    const s = articulated.simulate(hand.system, state, { dt: 1 / 960, substeps: 32, frames: 30, controls: torques });
    // Nearly undamped, each joint swings about its equilibrium; the limit springs cut the swing short.
    const peak = (q: Array) => Math.max(...q.dataSync());
    const free = articulated.simulate({ ...hand.system, limits: null }, state, {
      dt: 1 / 960,
      substeps: 32,
      frames: 30,
      controls: torques,
    });
    expect(peak(free.q)).toBeGreaterThan(2);
    expect(peak(s.q)).toBeLessThan(peak(free.q) - 0.3);
    for (const q of np.mean(s.q, 0).dataSync()) expect(q).toBeGreaterThan(0.3);
    const mesh = articulated.handMesh(hand);
    expect(mesh.faces.shape).toEqual([12 * 14, 3]);
    const rest = mesh.vertices(state.q).dataSync(),
      bent = mesh.vertices(np.index(s.q, 29)).dataSync();
    // The palm does not move; the fingertips curl towards the camera (−z).
    for (let k = 0; k < 24; k++) expect(bent[k]).toBeCloseTo(rest[k]!, 6);
    const distal = 8 * (2 + 1); // the first finger's distal link (joint 2): its 8 corners follow the palm's
    expect(Math.min(...globalThis.Array.from({ length: 8 }, (_, v) => bent[3 * (distal + v) + 2]!))).toBeLessThan(
      -0.05,
    );
    expect(Math.min(...globalThis.Array.from({ length: 8 }, (_, v) => rest[3 * (distal + v) + 2]!))).toBeGreaterThan(
      -0.02,
    );
  }, 120_000);

  it("the hand renders (SoftRas), and curling the fingers shrinks its silhouette", () => {
    const { hand, state } = articulated.hand();
    const mesh = articulated.handMesh(hand);
    const camera = sysid.renderCamera({ eye: [0, 1.05, -0.8], at: [0, 1.05, 0], fovY: 40 }, 32, 32);
    const coverage = (q: Array) =>
      np
        .sum(
          np.split(
            sysid.softFrame(
              [{ vertices: mesh.vertices(q), mesh: { faces: mesh.faces, colors: np.ones([8 * 14, 3]) } }],
              { resolution: 32, camera },
            ),
            [3],
            -1,
          )[1]!,
        )
        .item();
    const open = coverage(state.q),
      curled = coverage(np.full([13], Math.PI / 4));
    expect(open).toBeGreaterThan(60);
    expect(curled).toBeLessThan(0.85 * open);
  });

  it("the gradient of a rollout's final joint angles in joint stiffness matches central differences (float64)", () => {
    const { hand, state } = articulated.hand({
      q: globalThis.Array.from({ length: 13 }, (_, i) => 0.2 * Math.cos(i)),
      dtype: "float64",
    });
    const final = (k: Array) => {
      const s = articulated.simulate({ ...hand.system, stiffness: k }, state, { dt: 1 / 960, substeps: 3, frames: 4 });
      return np.sum(np.mul(np.index(s.q, 3), f64(globalThis.Array.from({ length: 13 }, (_, i) => 1 + 0.1 * i))));
    };
    const k0 = hand.system.stiffness;
    const g = jit(grad(final))(k0).dataSync();
    const h = 1e-6;
    for (const j of [0, 5, 12]) {
      const e = f64(globalThis.Array.from({ length: 13 }, (_, i) => (i === j ? h : 0)));
      const fd = (final(np.add(k0, e)).item() - final(np.sub(k0, e)).item()) / (2 * h);
      expect(Math.abs(g[j]! - fd)).toBeLessThan(1e-6 * Math.max(1, Math.abs(fd)));
      expect(Math.abs(fd)).toBeGreaterThan(1e-4);
    }
  }, 120_000);

  it("bad input is a clear error", () => {
    const ok = {
      parent: -1,
      offset: [0, 0, 0] as const,
      axis: [0, 0, 1] as const,
      points: [{ at: [0, -1, 0] as const, mass: 1 }],
    };
    expect(() => articulated.articulatedSystem([{ ...ok, parent: 0 }])).toThrow(
      /parent must be −1 \(the base\) or an earlier joint/,
    );
    expect(() => articulated.articulatedSystem([{ ...ok, axis: [0, 0, 0] }])).toThrow(/axis must be a non-zero vector/);
    expect(() => articulated.articulatedSystem([{ ...ok, points: [{ at: [0, 0, 0], mass: -1 }] }])).toThrow(
      /mass must be/,
    );
    expect(() => articulated.hand({ stiffness: [1, 2] })).toThrow(/one per joint \(13\)/);
    const { hand, state } = articulated.hand();
    expect(() => articulated.acceleration(hand.system, { q: np.zeros([12]), qd: np.zeros([12]) }, null)).toThrow(
      /joint angles must be \[13\]/,
    );
    expect(() =>
      articulated.simulate(hand.system, state, { dt: 0.01, frames: 3, controls: np.zeros([3, 12]) }),
    ).toThrow(/motor torques must be \[frames, joints\] = \[3, 13\]/);
  });
});
