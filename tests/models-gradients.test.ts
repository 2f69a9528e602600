/**
 * Gradients of short rollouts (float64, CPU) w.r.t. every physical parameter, against central
 * finite differences along random relative directions: ⟨∇L, d⟩ vs (L(θ+εd) − L(θ−εd))/2ε.
 */
import { describe, expect, it } from "vitest";
import { grad, np, type Array } from "../src/index.js";
import { cloth, contact, fem, meshes, particles, pendulum, rigid, smoke, springs } from "../src/models/index.js";
import { f64, inner, pseudoRandom } from "./models-helpers.js";

type Params = Record<string, Array>;

/** Check ⟨∂L/∂θ_k, d_k⟩ against central differences for every key k of θ (one reverse pass for all). */
function checkGradients(
  loss: (p: Params) => Array,
  theta: Params,
  opts: { eps?: number; rtol?: number } = {},
): Record<string, [number, number]> {
  const eps = opts.eps ?? 1e-6,
    rtol = opts.rtol ?? 1e-5;
  const g = grad(loss)(theta) as Params;
  const report: Record<string, [number, number]> = {};
  Object.keys(theta)
    .sort()
    .forEach((k, i) => {
      const x = theta[k]!;
      // Relative direction: perturb each entry in proportion to its size, so ε is meaningful for ke ~ 1e4 and a ~ 0.1
      // alike.
      const d = np.mul(f64(pseudoRandom(x.size, 17 + i), [...x.shape]), np.add(np.abs(x), 1e-3));
      const ad = inner(g[k]!, d);
      const fd =
        (loss({ ...theta, [k]: np.add(x, np.mul(d, eps)) }).item() -
          loss({ ...theta, [k]: np.sub(x, np.mul(d, eps)) }).item()) /
        (2 * eps);
      report[k] = [ad, fd];
      expect(Math.abs(fd), `∂L/∂${k} should be non-negligible`).toBeGreaterThan(1e-7);
      expect(Math.abs(ad - fd), `∂L/∂${k}: AD ${ad} vs FD ${fd}`).toBeLessThanOrEqual(rtol * Math.abs(fd) + 1e-9);
    });
  return report;
}

/** Weighted sum of a trajectory, so every frame and coordinate matters. */
const weighted = (traj: Array, seed: number): Array =>
  np.sum(np.mul(traj, f64(pseudoRandom(traj.size, seed), [...traj.shape])));

describe("rollout gradients match finite differences (float64)", () => {
  it("FEM body bouncing and sliding: mass, μ, λ, damping, activation, ke, kd, kf, friction μ, initial velocity", () => {
    const mesh = meshes.tetBox({ cells: [2, 1, 1], size: [0.2, 0.1, 0.1], origin: [0, 0.002, 0] });
    const { system, state } = fem.softBody(mesh, {
      dtype: "float64",
      density: 1000,
      mu: 2e4,
      lambda: 3e4,
      damping: 20,
      activation: 0.02,
      ground: contact.ground({ ke: 2e3, kd: 5, kf: 30, mu: 0.4, smoothing: 1e-3, dtype: "float64" }),
    });
    const tets = system.tets!,
      ground = system.ground!;
    const theta: Params = {
      mass: system.mass,
      mu: tets.mu,
      lambda: tets.lambda,
      damping: tets.damping,
      activation: tets.activation,
      ke: ground.ke,
      kd: ground.kd,
      kf: ground.kf,
      friction: ground.mu,
      v0: np.add(state.v, f64([1.5, -0.8, 0.3])),
    };
    const loss = (p: Params) => {
      const sys = {
        ...system,
        mass: p.mass!,
        tets: { ...tets, mu: p.mu!, lambda: p.lambda!, damping: p.damping!, activation: p.activation! },
        ground: { ...ground, ke: p.ke!, kd: p.kd!, kf: p.kf!, mu: p.friction! },
      };
      return weighted(particles.simulate(sys, { x: state.x, v: p.v0! }, { dt: 5e-4, substeps: 6, frames: 4 }).x, 1);
    };
    checkGradients(loss, theta);
  });

  // One edge of the cloth is pinned.
  it("pinned cloth with air and bending: bending stiffness and damping, rest angle, drag, lift, membrane μ", () => {
    const mesh = meshes.clothGrid({ cells: [3, 2], cellSize: 0.1, plane: "xz" });
    const { system, state } = cloth.clothBody(mesh, {
      dtype: "float64",
      density: 0.5,
      mu: 40,
      lambda: 60,
      damping: 0.05,
      drag: 2,
      lift: 1.5,
      pinned: [0, 3],
      bending: { stiffness: 0.05, damping: 0.01, restAngle: 0.1 },
      velocity: [0.5, -0.3, 0.2],
    });
    const tris = system.triangles!,
      bend = system.bending!;
    const theta: Params = {
      bendStiffness: bend.stiffness,
      bendDamping: bend.damping,
      restAngle: bend.restAngle,
      drag: tris.drag,
      lift: tris.lift,
      mu: tris.mu,
    };
    const loss = (p: Params) => {
      const sys = {
        ...system,
        triangles: { ...tris, drag: p.drag!, lift: p.lift!, mu: p.mu! },
        bending: { ...bend, stiffness: p.bendStiffness!, damping: p.bendDamping!, restAngle: p.restAngle! },
      };
      return weighted(particles.simulate(sys, state, { dt: 1e-3, substeps: 8, frames: 4 }).x, 2);
    };
    checkGradients(loss, theta);
  });

  it("rigid box tumbling onto the ground: mass, inertia, ke, kd, kf, friction μ, initial v and ω, window force", () => {
    const box = rigid.meshBody(meshes.box(0.1, 0.05, 0.08), {
      density: 500,
      position: [0, 0.13, 0],
      rotation: rigid.quatFromAxisAngle([1, 0, 1], 0.4),
      velocity: [1, -1, 0],
      angularVelocity: [1, 2, -1],
    });
    const ground = contact.ground({ ke: 3e3, kd: 10, kf: 50, mu: 0.5, smoothing: 1e-3, dtype: "float64" });
    const { system, state } = rigid.rigidSystem([box], {
      ground,
      dtype: "float64",
      forceWindows: [{ body: 0, force: [2, 0, 1], point: [0.1, 0, 0], start: 0, end: 0.01 }],
    });
    const theta: Params = {
      mass: system.mass,
      inertia: system.inertia,
      ke: ground.ke,
      kd: ground.kd,
      kf: ground.kf,
      friction: ground.mu,
      v0: state.v,
      w0: state.w,
      force: system.forceWindows!.force,
    };
    const loss = (p: Params) => {
      const sys = {
        ...system,
        mass: p.mass!,
        inertia: p.inertia!,
        ground: { ...ground, ke: p.ke!, kd: p.kd!, kf: p.kf!, mu: p.friction! },
        forceWindows: { ...system.forceWindows!, force: p.force! },
      };
      const out = rigid.simulate(sys, { ...state, v: p.v0!, w: p.w0! }, { dt: 1e-3, substeps: 10, frames: 4 });
      return np.add(weighted(out.x, 3), weighted(out.q, 4));
    };
    checkGradients(loss, theta);
  });

  it("damped spring chain: rest length, stiffness, damping, particle masses, gravity", () => {
    const pos = [0, 0, 0, 0.3, -0.1, 0, 0.6, -0.05, 0.1, 0.9, 0, 0];
    const s = springs.springElements(
      [
        [0, 1],
        [1, 2],
        [2, 3],
        [0, 2],
      ],
      pos,
      { stiffness: 80, damping: 0.7, dtype: "float64" },
    );
    const sys = particles.particleSystem({ mass: [1, 0.5, 0.7, 0.4], pinned: [0], springs: s, dtype: "float64" });
    const state = particles.particleState(pos, { dtype: "float64" });
    const theta: Params = {
      rest: np.mul(s.restLength, 1.1),
      stiffness: s.stiffness,
      damping: s.damping,
      mass: sys.mass,
      gravity: sys.gravity,
    };
    const loss = (p: Params) =>
      weighted(
        particles.simulate(
          {
            ...sys,
            mass: p.mass!,
            gravity: p.gravity!,
            springs: { ...s, restLength: p.rest!, stiffness: p.stiffness!, damping: p.damping! },
          },
          state,
          { dt: 5e-3, substeps: 4, frames: 5 },
        ).x,
        7,
      );
    checkGradients(loss, theta);
  });

  it("smoke: initial velocity field (periodic and closed)", () => {
    for (const boundary of ["periodic", "closed"] as const) {
      const { system, state } = smoke.smokeGrid(10, { boundary, iterations: 10, dtype: "float64" });
      // Offsets keep departure points off integer grid lines, where bilinear sampling has kinks.
      const theta: Params = {
        vx: f64(pseudoRandom(100, 5), [10, 10]).mul(1.3).add(0.123),
        vy: f64(pseudoRandom(100, 6), [10, 10]).mul(1.1).add(0.0789),
      };
      const loss = (p: Params) =>
        np.sum(
          np.square(
            np.index(smoke.simulate(system, { ...state, vx: p.vx!, vy: p.vy! }, { dt: 0.5, frames: 3 }).smoke, -1),
          ),
        );
      checkGradients(loss, theta);
    }
  });

  it("pendula: lengths, masses, gravity, damping, initial angles", () => {
    const s = pendulum.simplePendulum({ dtype: "float64" });
    const lossS = (p: Params) =>
      weighted(
        pendulum.simulateSimple(
          { ...s.system, length: p.length!, gravity: p.gravity!, damping: p.damping!, mass: p.mass! },
          { theta: p.theta0!, omega: s.state.omega },
          { dt: 1 / 60, substeps: 2, frames: 20 },
        ).theta,
        5,
      );
    checkGradients(lossS, {
      length: s.system.length,
      gravity: s.system.gravity,
      damping: s.system.damping,
      mass: s.system.mass,
      theta0: np.add(s.state.theta, 0.3),
    });
    const d = pendulum.doublePendulum({ dtype: "float64", damping: [0.1, 0.05] });
    const lossD = (p: Params) =>
      weighted(
        pendulum.doubleBobs(
          { ...d.system, length: p.length!, mass: p.mass! },
          pendulum.simulateDouble(
            { ...d.system, length: p.length!, mass: p.mass! },
            { theta: p.theta0!, omega: d.state.omega },
            { dt: 1 / 120, substeps: 2, frames: 15 },
          ),
        ),
        6,
      );
    checkGradients(lossD, { length: d.system.length, mass: d.system.mass, theta0: d.state.theta });
  });
});
