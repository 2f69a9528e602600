import { describe, expect, it } from "vitest";
import { grad, np, type Array } from "../src/index.js";
import { cloth, contact, meshes, particles, springs } from "../src/models/index.js";
import { f64, maxAbs, pseudoRandom } from "./models-helpers.js";

describe("particles", () => {
  it("free fall matches the semi-implicit Euler closed form x_n = x0 + n·dt·v0 + g·dt²·n(n+1)/2", () => {
    const x0 = [0.1, 2, -0.3, 1, 5, 2],
      v0 = [1, 0.5, 0, -2, 3, 1];
    const sys = particles.particleSystem({ mass: [1, 3], gravity: [0, -9.8, 0], dtype: "float64" });
    const state = { x: f64(x0, [2, 3]), v: f64(v0, [2, 3]) };
    const dt = 1 / 30,
      substeps = 4,
      frames = 6;
    const out = particles.simulate(sys, state, { dt, substeps, frames });
    const xs = out.x.dataSync(),
      vs = out.v.dataSync();
    for (let f = 0; f < frames; f++) {
      const n = (f + 1) * substeps;
      for (let i = 0; i < 6; i++) {
        const g = i % 3 === 1 ? -9.8 : 0;
        expect(xs[6 * f + i]).toBeCloseTo(x0[i]! + n * dt * v0[i]! + (g * dt * dt * n * (n + 1)) / 2, 12);
        expect(vs[6 * f + i]).toBeCloseTo(v0[i]! + n * dt * g, 12);
      }
    }
  });

  it("pinned particles do not move while the rest of a cloth falls", () => {
    const mesh = meshes.clothGrid({ cells: [4, 3], cellSize: 0.1 });
    const { system, state } = cloth.clothBody(mesh, { pinned: [15, 19], dtype: "float64", damping: 1 });
    const out = particles.simulate(system, state, { dt: 1e-3, substeps: 10, frames: 5 });
    const last = np.index(out.x, 4);
    for (const i of [15, 19]) expect(np.index(last, i).toList()).toEqual(np.index(state.x, i).toList());
    expect((np.index(last, 0).toList() as number[])[1]).toBeLessThan(-1e-3);
  });

  it("damped springs: force = −∂E/∂x, damping = −∂D/∂v, Σf = 0 and Σx×f = 0", () => {
    const pos = pseudoRandom(12, 5);
    const s = springs.springElements(
      [
        [0, 1],
        [1, 2],
        [2, 3],
        [3, 0],
        [0, 2],
      ],
      pos,
      { stiffness: 50, damping: 2, dtype: "float64" },
    );
    const sys = particles.particleSystem({ mass: [1, 1, 1, 1], gravity: [0, 0, 0], springs: s, dtype: "float64" });
    const x = np.add(f64(pos, [4, 3]), f64(pseudoRandom(12, 6), [4, 3]).mul(0.2));
    const v = f64(pseudoRandom(12, 7), [4, 3]);
    const fe = particles.forces(sys, { x, v: np.zerosLike(v) });
    const f = particles.forces(sys, { x, v });
    expect(maxAbs(np.add(fe, grad((xx: Array) => particles.potentialEnergy(sys, xx))(x)))).toBeLessThan(1e-12);
    expect(maxAbs(np.add(np.sub(f, fe), grad((vv: Array) => particles.dissipation(sys, x, vv))(v)))).toBeLessThan(
      1e-12,
    );
    expect(maxAbs(np.sum(f, 0))).toBeLessThan(1e-12);
    expect(maxAbs(np.sum(np.cross(x, f), 0))).toBeLessThan(1e-12);
  });

  it("an undamped spring oscillates at ω = √(k/m_reduced) and keeps its energy bounded (symplectic)", () => {
    const k = 40,
      m = 0.5;
    const s = springs.springElements([[0, 1]], [0, 0, 0, 1, 0, 0], { stiffness: k, dtype: "float64" });
    const sys = particles.particleSystem({
      mass: [m, m],
      gravity: [0, 0, 0],
      springs: s,
      pinned: [0],
      dtype: "float64",
    });
    const state = { x: f64([0, 0, 0, 1.1, 0, 0], [2, 3]), v: np.zeros([2, 3], { dtype: "float64" }) };
    const dt = 1e-3,
      frames = 400,
      substeps = 5; // 2 s
    const out = particles.simulate(sys, state, { dt, substeps, frames });
    const xs = out.x.dataSync();
    const ext = globalThis.Array.from({ length: frames }, (_, f) => xs[6 * f + 3]! - 1);
    const crossings = ext.flatMap((e, f) => (f > 0 && ext[f - 1]! > 0 && e <= 0 ? [f] : []));
    const period = ((crossings[crossings.length - 1]! - crossings[0]!) * substeps * dt) / (crossings.length - 1);
    expect(period).toBeCloseTo((2 * Math.PI) / Math.sqrt(k / m), 2);
    const energy = (f: number) => {
      const vx = out.v.dataSync()[6 * f + 3]!;
      return 0.5 * m * vx * vx + 0.5 * k * ext[f]! ** 2;
    };
    const e0 = 0.5 * k * 0.01;
    for (let f = 0; f < frames; f += 37) expect(Math.abs(energy(f) - e0) / e0).toBeLessThan(0.02);
  });
});

describe("particle–ground contact", () => {
  const settle = (normal: [number, number, number], offset: number, ke: number) => {
    const m = 0.7,
      r = 0.05;
    const ground = contact.ground({ normal, offset, ke, kd: 2 * Math.sqrt(ke * m), kf: 50, mu: 0.8, dtype: "float64" });
    const sys = particles.particleSystem({ mass: [m], radius: r, ground, dtype: "float64" });
    const n = normal.map((c) => c / Math.hypot(...normal));
    const start = n.map((c) => c * (offset + r + 0.05));
    const out = particles.simulate(
      sys,
      { x: f64(start, [1, 3]), v: np.zeros([1, 3], { dtype: "float64" }) },
      { dt: 1e-3, substeps: 20, frames: 50 },
    );
    const xf = np.index(np.index(out.x, 49), 0).toList() as number[];
    const gap = xf[0]! * n[0]! + xf[1]! * n[1]! + xf[2]! * n[2]! - offset - r;
    return { gap, m, n };
  };

  it("a ball dropped on the ground comes to rest at penetration mg/ke", () => {
    const ke = 2e3;
    const { gap, m } = settle([0, 1, 0], 0, ke);
    expect(-gap).toBeCloseTo((m * 9.8) / ke, 6);
  });

  it("works for any plane normal and offset: penetration m·g·cos α / ke on a tilted plane", () => {
    const ke = 5e3;
    const { gap, m, n } = settle([Math.sin(0.3), Math.cos(0.3), 0], 0.4, ke);
    expect(-gap).toBeCloseTo((m * 9.8 * n[1]!) / ke, 6);
  });

  it("a particle sliding with friction stops near v²/(2μg)", () => {
    const mu = 0.5,
      v0 = 2,
      m = 1,
      ke = 1e4;
    const ground = contact.ground({ ke, kd: 2 * Math.sqrt(ke * m), kf: 1e3, mu, dtype: "float64" });
    const sys = particles.particleSystem({ mass: [m], ground, dtype: "float64" });
    const state = { x: f64([0, -(m * 9.8) / ke, 0], [1, 3]), v: f64([v0, 0, 0], [1, 3]) };
    const out = particles.simulate(sys, state, { dt: 1e-3, substeps: 20, frames: 30 });
    const x = np.index(np.index(out.x, 29), 0).toList() as number[];
    expect(x[0]).toBeCloseTo((v0 * v0) / (2 * mu * 9.8), 2);
  });

  it("friction never exceeds the Coulomb bound μ·f_n nor the viscous kf·|v_t|", () => {
    const g = contact.ground({ ke: 1e3, kd: 10, kf: 200, mu: 0.6, dtype: "float64" });
    const p = f64(pseudoRandom(60, 11), [20, 3]).mul(0.05);
    // Fast rows slip (kf·|v_t| ≫ μ·f_n), slow rows stick.
    const speeds = f64(
      globalThis.Array.from({ length: 20 }, (_, i) => (i < 10 ? 3 : 1e-3)),
      [20, 1],
    );
    const v = np.mul(f64(pseudoRandom(60, 12), [20, 3]), speeds);
    const f = contact.groundForces(g, p, v).dataSync(),
      vv = v.dataSync();
    let sticking = 0,
      slipping = 0;
    for (let i = 0; i < 20; i++) {
      const ft = Math.hypot(f[3 * i]!, f[3 * i + 2]!),
        fn = f[3 * i + 1]!,
        vt = Math.hypot(vv[3 * i]!, vv[3 * i + 2]!);
      expect(fn).toBeGreaterThanOrEqual(0);
      expect(ft).toBeLessThanOrEqual(0.6 * fn + 1e-12);
      expect(ft).toBeLessThanOrEqual(200 * vt + 1e-12);
      if (fn > 0 && ft > 0.9 * 0.6 * fn) slipping++;
      if (fn > 0 && ft > 0.9 * 200 * vt) sticking++;
    }
    expect(slipping).toBeGreaterThan(0);
    expect(sticking).toBeGreaterThan(0);
  });
});
