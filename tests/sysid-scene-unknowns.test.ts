/**
 * What users don't know about a clip as unknowns of a rigid scene: the initial position, heading
 * and velocity, the push's magnitude and start, and a sub-frame offset of the clip. Their
 * derivatives agree with central differences (the push's start off the step grid too: force
 * windows ramp over one step), and they are recovered from the object's 3-D trajectory.
 */
import { describe, expect, it } from "vitest";
import { grad, jit, np, sysid, type Array as NDArray } from "../src/index.js";

const spec: sysid.RigidSceneSpec = {
  shape: "box",
  scale: [0.4, 0.3, 0.3],
  mass: 1.5,
  position: [-0.5, 0.15, 0],
  rotation: [0, 0, 0, 1],
  velocity: [0.2, 0, 0],
  angularVelocity: [0, 0, 0],
  impulses: [{ force: [12, 0, 1], point: [0, 0, 0], start: 0.05, duration: 0.1 }],
  gravity: [0, -9.8, 0],
  contact: { ...sysid.RIGID_CONTACT_DEFAULTS, mu: 0.4 },
  frames: 12,
  fps: 30,
  substeps: 20,
  camera: { eye: [0, 1.5, -4], at: [0, 0.2, 0], fovY: 40 },
  resolution: 32,
};
const scene = sysid.buildRigidScene(spec);
const names = ["x0", "z0", "yaw0", "vx0", "pushScale", "pushStart"] as const;
const unknowns: sysid.Unknown[] = names.map((name) => ({
  name,
  transform: name === "pushScale" ? "log" : "identity",
  prior: name === "pushScale" ? [0.5, 2] : [-0.3, 0.3],
}));

describe("a rigid scene's initial state and pushes as unknowns", () => {
  it("moves the trajectory smoothly: derivatives match central differences, the push's start off the step grid", () => {
    const layout = new sysid.Layout(unknowns);
    const weights = np
      .array(
        Array.from({ length: 12 * scene.local.shape[0]! * 3 }, (_, i) => Math.sin(0.37 * i + 1)),
        { dtype: "float32" },
      )
      .reshape([12, -1, 3]);
    const loss = jit((u: NDArray) => np.sum(np.mul(sysid.rigidVertices(scene, layout.params(u), 12), weights)));
    // The push's start and end mid-step (0.1025 s = 61.5 steps of 1/600 s): the derivative has kinks on the step grid.
    const at = { x0: -0.5, z0: 0.02, yaw0: 0.1, vx0: 0.2, pushScale: 1.1, pushStart: 0.0525 };
    const u = layout.toU(at);
    const d = jit(grad(loss))(np.array(u, { dtype: "float32" })).dataSync();
    names.forEach((n, i) => {
      // Small steps: contact makes the trajectory rough at the millisecond scale of the push's start.
      const h = n === "pushStart" ? 1e-4 : 1e-3;
      const shifted = (s: number) =>
        loss(
          np.array(
            u.map((x, j) => (j === i ? x + s : x)),
            { dtype: "float32" },
          ),
        ).item();
      const fd = (shifted(h) - shifted(-h)) / (2 * h);
      expect(Math.abs(fd), `${n} moves the trajectory`).toBeGreaterThan(1e-3);
      // The push's start: the float32 loss is rough at this scale (its differences at ±1e-4 s move by ~3% with the
      // rounding of single ops; at ±1e-3 s contact changes their sign), so 4% there.
      const tolerance = n === "pushStart" ? 0.04 : 0.02;
      expect(Math.abs(d[i]! - fd), `${n}: ${d[i]} vs ${fd}`).toBeLessThan(tolerance * Math.abs(fd));
    });
  });

  it("recovers them from the object's 3-D trajectory", async () => {
    const truth = { x0: -0.45, z0: 0.05, yaw0: 0.15, vx0: 0.25, pushScale: 1.2, pushStart: 0.037 };
    const observed = sysid.rigidVertices(scene, sysid.paramsOf(unknowns, truth), 12);
    const r = await sysid.estimate({
      frames: 12,
      simulate: (p, frames) => sysid.rigidVertices(scene, p, frames),
      observed: { states: observed },
      unknowns,
      initial: { x0: -0.5, z0: 0, yaw0: 0, vx0: 0.2, pushScale: 1, pushStart: 0 },
      method: "states",
      settings: { optimizer: "lbfgs", steps: 60, progress: false },
      log: () => {},
    });
    for (const n of names)
      expect(Math.abs((r.estimate[n] as number) - truth[n]), n).toBeLessThan(2e-3 * Math.max(1, Math.abs(truth[n])));
  });

  it("recovers a clip's sub-frame offset: frames sampled at k/fps + δ from a simulation five times finer", async () => {
    // The truth: a launched, sliding box simulated at 150 fps (the same 1/600 s step) and sampled at
    // frames 2, 7, 12, …: the 30 fps clip's frame k shows t = k/30 + 2/150 s (δ = 13.3 ms).
    const launched = { ...spec, impulses: [], velocity: [1.2, 0, 0.3] as const, frames: 12 };
    const fine = sysid.buildRigidScene({ ...launched, fps: 150, substeps: 4, frames: 60 });
    const all = sysid.rigidVertices(fine, {}, 60);
    const observed = np.take(
      all,
      np.array(
        Array.from({ length: 12 }, (_, k) => 5 * k + 2),
        { dtype: "int32" },
      ),
      0,
    );
    const coarse = sysid.buildRigidScene(launched);
    const offset: sysid.Unknown[] = [{ name: "frameOffset", prior: [-0.02, 0.02] }];
    const plain = sysid.rigidVertices(coarse, {}, 12);
    const gap = (v: NDArray) => Math.sqrt(np.mean(np.square(np.sub(v, observed))).item());
    const r = await sysid.estimate({
      frames: 12,
      simulate: (p, frames) => sysid.rigidVertices(coarse, p, frames),
      observed: { states: observed },
      unknowns: offset,
      initial: { frameOffset: 0 },
      method: "states",
      settings: { optimizer: "lbfgs", steps: 40, progress: false },
      log: () => {},
    });
    expect(Math.abs((r.estimate.frameOffset as number) - 2 / 150)).toBeLessThan(3e-4);
    // The offset explains the clip: its vertices within 0.2 mm (RMS) of the truth's, from 5 mm without it.
    expect(gap(plain)).toBeGreaterThan(4e-3);
    expect(gap(sysid.rigidVertices(coarse, sysid.paramsOf(offset, r.estimate), 12))).toBeLessThan(2e-4);
  });
});
