/** The models compose with the transforms: vmap over parameter batches, jit of whole rollouts, checkpointed scans. */
import { describe, expect, it } from "vitest";
import { grad, jit, np, vmap, type Array } from "../src/index.js";
import { cloth, contact, fem, meshes, particles, pendulum, rigid, smoke, springs } from "../src/models/index.js";
import { f64, maxAbs, pseudoRandom } from "./models-helpers.js";

const femScene = () =>
  fem.softBody(meshes.tetBox({ cells: [2, 1, 1], size: [0.2, 0.1, 0.1], origin: [0, 0.002, 0] }), {
    dtype: "float64",
    density: 1000,
    mu: 2e4,
    lambda: 3e4,
    damping: 10,
    velocity: [1, -0.5, 0],
    ground: contact.ground({ ke: 2e3, kd: 5, kf: 30, mu: 0.4, dtype: "float64" }),
  });
const femOpts = { dt: 5e-4, substeps: 4, frames: 3 };

describe("models under vmap and jit", () => {
  it("vmap over a batch of FEM parameter sets (μ, activation, ke) equals separate rollouts", () => {
    const { system, state } = femScene();
    const nt = system.tets!.mu.shape[0]!;
    const batch = {
      mu: np.stack([2e4, 1e4, 4e4].map((m) => np.full([nt], m, { dtype: "float64" }))),
      activation: np.stack([0, 0.05, -0.05].map((a) => np.full([nt], a, { dtype: "float64" }))),
      ke: f64([2e3, 5e3, 1e3]),
    };
    const run = (p: { mu: Array; activation: Array; ke: Array }) =>
      particles.simulate(
        {
          ...system,
          tets: { ...system.tets!, mu: p.mu, activation: p.activation },
          ground: { ...system.ground!, ke: p.ke },
        },
        state,
        femOpts,
      ).x;
    const batched = vmap(run)(batch);
    for (let b = 0; b < 3; b++) {
      const single = run({
        mu: np.index(batch.mu, b),
        activation: np.index(batch.activation, b),
        ke: np.index(batch.ke, b),
      });
      expect(maxAbs(np.sub(np.index(batched, b), single))).toBeLessThan(1e-12);
    }
    expect(maxAbs(np.sub(np.index(batched, 0), np.index(batched, 1)))).toBeGreaterThan(1e-6);
  });

  it("jit(simulate) equals eager for FEM, cloth, rigid, smoke and pendulum", () => {
    const same = (a: unknown, b: unknown) => {
      const la = [a].flat(Infinity) as Array[],
        lb = [b].flat(Infinity) as Array[];
      la.forEach((x, i) => expect(maxAbs(np.sub(x, lb[i]!))).toBeLessThan(1e-10));
    };
    const f = femScene();
    same(
      jit((s: particles.ParticleSystem, s0: particles.ParticleState) => particles.simulate(s, s0, femOpts).x)(
        f.system,
        f.state,
      ),
      particles.simulate(f.system, f.state, femOpts).x,
    );
    const c = cloth.clothBody(meshes.clothGrid({ cells: [2, 2], cellSize: 0.1 }), {
      dtype: "float64",
      drag: 1,
      lift: 1,
      pinned: [6],
    });
    const cOpts = { dt: 1e-3, substeps: 3, frames: 2 };
    same(
      jit((s: particles.ParticleSystem) => particles.simulate(s, c.state, cOpts).x)(c.system),
      particles.simulate(c.system, c.state, cOpts).x,
    );
    const r = rigid.rigidSystem(
      [rigid.meshBody(meshes.box(0.1, 0.1, 0.1), { position: [0, 0.09, 0], angularVelocity: [1, 0, 2] })],
      { ground: contact.ground({ ke: 1e4, dtype: "float64" }), dtype: "float64" },
    );
    const rOpts = { dt: 1e-3, substeps: 3, frames: 2 };
    same(
      jit((s: rigid.RigidSystem, s0: rigid.RigidState) => rigid.simulate(s, s0, rOpts).q)(r.system, r.state),
      rigid.simulate(r.system, r.state, rOpts).q,
    );
    const k = smoke.smokeGrid(8, { iterations: 5, dtype: "float64" });
    const k0 = { ...k.state, vx: f64(pseudoRandom(64, 1), [8, 8]), vy: f64(pseudoRandom(64, 2), [8, 8]) };
    same(
      jit((s0: smoke.SmokeState) => smoke.simulate(k.system, s0, { dt: 1, frames: 2 }).smoke)(k0),
      smoke.simulate(k.system, k0, { dt: 1, frames: 2 }).smoke,
    );
    const p = pendulum.doublePendulum({ dtype: "float64" });
    same(
      jit((s: pendulum.DoublePendulum) => pendulum.simulateDouble(s, p.state, { dt: 0.01, frames: 5 }).theta)(p.system),
      pendulum.simulateDouble(p.system, p.state, { dt: 0.01, frames: 5 }).theta,
    );
  });

  it("vmap over a batch of rigid initial velocities and of spring stiffnesses equals separate rollouts", () => {
    const r = rigid.rigidSystem([rigid.sphereBody(0.1, { position: [0, 0.12, 0] })], {
      ground: contact.ground({ ke: 1e4, kd: 50, dtype: "float64" }),
      dtype: "float64",
    });
    const opts = { dt: 1e-3, substeps: 5, frames: 3 };
    const vs = f64([1, -2, 0, 0, -1, 1, -1, 0.5, 2], [3, 1, 3]);
    const run = (v: Array) => rigid.simulate(r.system, { ...r.state, v }, opts).x;
    const out = vmap(run)(vs);
    for (let b = 0; b < 3; b++) expect(maxAbs(np.sub(np.index(out, b), run(np.index(vs, b))))).toBeLessThan(1e-12);

    const pos = [0, 0, 0, 1, 0, 0, 2, 0, 0];
    const chain = particles.particleSystem({
      mass: [1, 1, 1],
      pinned: [0],
      dtype: "float64",
      springs: springs.springElements(
        [
          [0, 1],
          [1, 2],
        ],
        pos,
        { dtype: "float64" },
      ),
    });
    const s0 = particles.particleState(pos, { dtype: "float64" });
    const runK = (ke: Array) =>
      particles.simulate({ ...chain, springs: { ...chain.springs!, stiffness: ke } }, s0, { dt: 1e-2, frames: 4 }).x;
    const ks = f64([100, 100, 50, 300, 10, 20], [3, 2]);
    const outK = vmap(runK)(ks);
    for (let b = 0; b < 3; b++) expect(maxAbs(np.sub(np.index(outK, b), runK(np.index(ks, b))))).toBeLessThan(1e-12);
  });

  it("checkpoint: true gives the same rollout and the same gradient", () => {
    const { system, state } = femScene();
    const loss = (mu: Array, checkpoint: boolean) =>
      np.sum(
        np.square(
          particles.simulate({ ...system, tets: { ...system.tets!, mu } }, state, {
            dt: 5e-4,
            substeps: 2,
            frames: 9,
            checkpoint,
          }).x,
        ),
      );
    expect(Math.abs(loss(system.tets!.mu, true).item() - loss(system.tets!.mu, false).item())).toBeLessThan(1e-12);
    const g1 = grad((m: Array) => loss(m, true))(system.tets!.mu),
      g0 = grad((m: Array) => loss(m, false))(system.tets!.mu);
    expect(maxAbs(np.sub(g1, g0)) / maxAbs(g0)).toBeLessThan(1e-10);
  });
});
