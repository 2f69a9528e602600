/**
 * No silent NaN: an unstable explicit rollout raises a DivergenceError that says where it
 * diverged and what to change (the issue's two 3×3 cloth cases), following the advice runs
 * cleanly, and physical parameters are validated where they enter the models.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runExperiment, type Experiment } from "../examples/lib/run.js";
import { models, np, render, sysid, type Array } from "../src/index.js";
import { DivergenceError, findDivergenceAsync } from "../src/models/common/divergence.js";

const mesh = models.meshes.clothGrid({ cells: [3, 3], cellSize: 0.1, plane: "xz" });
const sheet = (extra: object = {}) =>
  models.cloth.clothBody(mesh, { density: 1, mu: 200, lambda: 200, bending: { stiffness: 0, damping: 0.1 }, ...extra });
const CASES = { free: {}, "pinned, stiff bending": { pinned: [0], bending: { stiffness: 100, damping: 0.1 } } };

describe("divergence detection", () => {
  for (const [name, extra] of Object.entries(CASES)) {
    it(`${name} 3×3 cloth at dt 1e-3: a DivergenceError naming the frame, the culprit and a stable step`, () => {
      const { system, state } = sheet(extra);
      let err: unknown;
      try {
        models.particles.simulate(system, state, { dt: 1 / 1000, substeps: 10, frames: 6 });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DivergenceError);
      const msg = (err as Error).message;
      expect(msg).toMatch(/diverged .* at frame \d+ of 6 \(v\[\d+\]\), at substep \d+ of that frame's 10/);
      expect(msg).toMatch(/membrane damping 10/);
      const m = /stays finite with dt = ([\d.e-]+) s \((\d+) substeps per frame\)/.exec(msg);
      expect(m, msg).not.toBeNull();
      // The advice works: at the measured step the same sheet runs and stays finite.
      const ok = models.particles.simulate(system, state, { dt: Number(m![1]), substeps: Number(m![2]), frames: 6 });
      expect(ok.x.dataSync().every(Number.isFinite)).toBe(true);
    });
  }

  it("runs cleanly at a small step, and checkFinite: false returns the raw (NaN) states", async () => {
    const { system, state } = sheet(CASES["pinned, stiff bending"]);
    const small = models.particles.simulate(system, state, { dt: 1e-6, substeps: 10, frames: 6 });
    expect(small.x.dataSync().every(Number.isFinite)).toBe(true);
    const raw = models.particles.simulate(system, state, { dt: 1 / 1000, substeps: 10, frames: 6, checkFinite: false });
    expect(raw.x.dataSync().some((v) => !Number.isFinite(v))).toBe(true);
    const d = await findDivergenceAsync(raw, 6);
    expect(d?.frame).toBeGreaterThanOrEqual(0);
    expect(await findDivergenceAsync(small, 6)).toBeNull();
  });
});

describe("parameters are validated where they enter", () => {
  const beam = models.meshes.tetBeam(1, 0.2, 0.2, [2, 1, 1]);
  it.each([
    [{ mu: NaN, lambda: 1, density: 1 }, /fem: mu must be a finite number > 0 \(Pa\), got NaN/],
    [{ mu: 1, lambda: 1, density: -5 }, /fem: density must be a finite number > 0 \(kg\/m³\), got -5/],
    [{ mu: 1, lambda: Infinity }, /fem: lambda must be a finite number \(Pa\), got Infinity/],
    [{ mu: 1, lambda: 1, damping: -1 }, /fem: damping must be a finite number ≥ 0/],
  ])("fem.softBody(%o) is refused", (o, message) => {
    expect(() => models.fem.softBody(beam, o)).toThrow(message);
  });
  it("cloth parameters too, per element with the element's index", () => {
    expect(() => models.cloth.clothBody(mesh, { density: 0 })).toThrow(/cloth: density must be a finite number > 0/);
    expect(() => models.cloth.clothBody(mesh, { mu: [...globalThis.Array(17).fill(1), -1] })).toThrow(
      /cloth: mu\[17\] must be a finite number > 0 \(N\/m\), got -1/,
    );
    expect(() => models.cloth.clothBody(mesh, { bending: { stiffness: NaN } })).toThrow(
      /cloth: stiffness must be a finite number ≥ 0, got NaN/,
    );
  });
});

describe("sysid reports a divergence instead of a bare NaN", () => {
  // Two 1 kg particles on a spring; dt = 0.01 s is stable for k = 10 N/m (the truth) and not for the guess k = 1e6 N/m.
  const positions = [0, 0, 0, 1, 0, 0];
  const base = models.particles.particleSystem({
    mass: [1, 1],
    gravity: [0, 0, 0],
    springs: models.springs.springElements([[0, 1]], positions, { stiffness: 10 }),
  });
  const state = models.particles.particleState(positions, { velocity: [0.1, 0.2, 0] });
  const problem = {
    frames: 20,
    simulate: (p: sysid.Params, frames: number) => {
      const springs = { ...base.springs!, stiffness: np.broadcastTo(p.stiffness as Array, [1]) };
      return models.particles.simulate(
        { ...base, springs },
        {
          ...state,
          v: np.array(
            [
              [0, 0, 0],
              [0.5, 0.3, 0],
            ],
            { dtype: "float32" },
          ),
        },
        { dt: 0.01, frames },
      ).x;
    },
  };
  it("names the frame and the spring, as a DivergenceError", async () => {
    const unknowns: sysid.Unknown[] = [{ name: "stiffness", transform: "log", unit: "N/m" }];
    const observed = { states: problem.simulate(sysid.paramsOf(unknowns, { stiffness: 10 }), 20) };
    const run = sysid.estimate({
      ...problem,
      observed,
      unknowns,
      initial: { stiffness: 1e6 },
      method: "states",
      settings: { optimizer: "lbfgs", steps: 5, progress: false },
      log: () => {},
    });
    await expect(run).rejects.toBeInstanceOf(DivergenceError);
    await expect(run).rejects.toThrow(
      /not finite at step 0 .*diverged .* at frame \d+ of 20 .*spring 0 \(stiffness 1000000[\d.]* N\/m/,
    );
  });
});

describe("the CLI", () => {
  it("exits with code 2 and the divergence message (no stack trace or result.json) if a rollout diverges", async () => {
    const out = mkdtempSync(join(tmpdir(), "gradsim-diverge-"));
    const unstable: Experiment<object> = {
      name: "unstable-cloth",
      description: "the issue's 3×3 sheet at dt 1e-3",
      run: async () => {
        const { system, state } = sheet();
        models.particles.simulate(system, state, { dt: 1 / 1000, substeps: 10, frames: 6 });
        return {};
      },
    };
    const stderr: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((s: string) => {
      stderr.push(String(s));
      return true;
    }) as typeof process.stderr.write;
    let code: number;
    try {
      code = await runExperiment(unstable, ["--backend", "cpu", "--out", out]);
    } finally {
      process.stderr.write = write;
    }
    const wrote = existsSync(join(out, "result.json"));
    rmSync(out, { recursive: true, force: true });
    expect(code).toBe(2);
    expect(wrote).toBe(false);
    const text = stderr.join("");
    expect(text).toMatch(/gradsim unstable-cloth: simulate: the simulation diverged/);
    expect(text).not.toMatch(/\n\s+at /);
  });
});

describe("every model and the camera refuse non-physical parameters", () => {
  it.each([
    [
      "contact.ground ke",
      () => models.contact.ground({ ke: -1 }),
      /contact\.ground: ke must be a finite number ≥ 0 \(N\/m\), got -1/,
    ],
    [
      "contact.ground mu",
      () => models.contact.ground({ mu: NaN }),
      /contact\.ground: mu must be a finite number ≥ 0, got NaN/,
    ],
    [
      "rigid.sphereBody radius",
      () => models.rigid.sphereBody(-0.1),
      /rigid\.sphereBody: radius must be a finite number > 0 \(m\), got -0\.1/,
    ],
    [
      "rigid.meshBody density",
      () => models.rigid.meshBody(models.meshes.icosphere(1, 0.5), { density: -5 }),
      /rigid\.meshBody: density must be a finite number > 0/,
    ],
    [
      "rigidSystem mass",
      () =>
        models.rigid.rigidSystem([
          { mass: NaN, inertia: [1, 0, 0, 0, 1, 0, 0, 0, 1], contactPoints: [0, 0, 0], contactRadius: 0 },
        ]),
      /rigidSystem: bodies\[0\]\.mass must be a finite number > 0 \(kg\), got NaN/,
    ],
    [
      "simplePendulum length",
      () => models.pendulum.simplePendulum({ length: 0 }),
      /pendulum\.simplePendulum: length must be a finite number > 0 \(m\), got 0/,
    ],
    [
      "doublePendulum mass",
      () => models.pendulum.doublePendulum({ mass: [1, -2] }),
      /pendulum\.doublePendulum: mass\[1\] must be a finite number > 0 \(kg\), got -2/,
    ],
    [
      "springElements stiffness",
      () => models.springs.springElements([[0, 1]], [0, 0, 0, 1, 0, 0], { stiffness: -3 }),
      /springElements: stiffness must be a finite number ≥ 0/,
    ],
    [
      "particleSystem mass",
      () => models.particles.particleSystem({ mass: [1, 0] }),
      /particleSystem: mass\[1\] must be a finite number > 0 \(kg\), got 0/,
    ],
    [
      "perspectiveCamera fovY",
      () => render.perspectiveCamera({ fovY: 0 }),
      /perspectiveCamera: fovY must be an angle in degrees between 0 and 180, got 0/,
    ],
    [
      "perspectiveCamera eye",
      () => render.perspectiveCamera({ eye: [0, NaN, 1] }),
      /perspectiveCamera: eye must be finite numbers/,
    ],
    [
      "perspectiveCamera eye = at",
      () => render.perspectiveCamera({ eye: [1, 2, 3], at: [1, 2, 3] }),
      /perspectiveCamera: eye must be a point other than at/,
    ],
    [
      "perspectiveCamera up along the view",
      () => render.perspectiveCamera({ eye: [0, 5, 0], at: [0, 0, 0] }),
      /perspectiveCamera: up must be a direction not parallel to the view/,
    ],
    [
      "cameraFromMatrices fx = 0",
      () =>
        render.cameraFromMatrices(
          [
            [0, 0, 16],
            [0, 50, 16],
            [0, 0, 1],
          ],
          [
            [1, 0, 0, 0],
            [0, -1, 0, 0],
            [0, 0, -1, 5],
          ],
          32,
          32,
        ),
      /cameraFromMatrices: K's focal lengths .* must be finite and > 0/,
    ],
    [
      "cameraFromMatrices R a mirror",
      () =>
        render.cameraFromMatrices(
          [
            [50, 0, 16],
            [0, 50, 16],
            [0, 0, 1],
          ],
          [
            [1, 0, 0, 0],
            [0, 1, 0, 0],
            [0, 0, -1, 5],
          ],
          32,
          32,
        ),
      /cameraFromMatrices: R .* must be a rotation .* a mirror/,
    ],
    [
      "contact.ground smoothing 0",
      () => models.contact.ground({ smoothing: 0 }),
      /contact\.ground: smoothing must be a finite number > 0 \(m\), got 0/,
    ],
    [
      "contact.rigidGround smoothing 0",
      () => models.contact.rigidGround({ smoothing: 0 }),
      /contact\.rigidGround: smoothing must be > 0/,
    ],
    [
      "cloth with a zero-area face",
      () =>
        models.cloth.clothBody({
          vertices: Float64Array.from([0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 1, 0]),
          faces: Int32Array.from([0, 1, 2, 0, 1, 3]),
        }),
      /degenerate triangles \(zero or near-zero area\): 0/,
    ],
    [
      "soft body with an inverted tet",
      () =>
        models.fem.softBody({
          vertices: Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]),
          tets: Int32Array.from([0, 2, 1, 3]),
        }),
      /inverted tetrahedra \(negative volume; swap two vertices\): 0/,
    ],
  ])("%s", (_name, make, message) => {
    expect(make).toThrow(message);
  });
});
