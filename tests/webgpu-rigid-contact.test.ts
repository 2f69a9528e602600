/**
 * Rigid ground contact on WebGPU (float32): the implicit friction and damping step (a 6×6 solve per
 * body) rolls out and differentiates on the device as on the CPU — a tilted, spinning box landing and
 * pushed across the floor (45 steps: lavapipe runs a step's kernels one by one).
 */
import { expect, it } from "vitest";
import { grad, init, jit, np, type Array } from "../src/index.js";
import { contact, meshes, rigid } from "../src/models/index.js";
import { describeGpu } from "./webgpu-helpers.js";

type P = Record<string, Array>;

/** Positions [frames·3] and ∂loss/∂(mass, μ) of the scene on the current default backend. */
async function run(dtype: "float32" | "float64"): Promise<{ x: number[]; dMass: number; dMu: number }> {
  const box = rigid.meshBody(meshes.box(0.2, 0.1, 0.15), {
    position: [0, 0.11, 0],
    rotation: rigid.quatFromAxisAngle([1, 0, 0], 0.2),
    angularVelocity: [0, 2, 0],
  });
  // 2 kg (the mesh's density would make it 24 kg, which the push would hardly move).
  const b = { ...box, mass: 2, inertia: box.inertia.map((x) => (x * 2) / box.mass) };
  const g = contact.rigidGround({ mu: 0.4, dtype });
  const { system, state } = rigid.rigidSystem([b], {
    ground: g,
    dtype,
    forceWindows: [{ body: 0, force: [12, 0, 3], start: 0.02, end: 0.1 }],
  });
  const unitI = np.div(system.inertia, np.reshape(system.mass, [1, 1, 1]));
  const roll = (p: P) =>
    rigid.simulate(
      { ...system, mass: p.mass!, inertia: np.mul(np.reshape(p.mass!, [1, 1, 1]), unitI), ground: { ...g, mu: p.mu! } },
      state,
      { dt: 1 / 450, substeps: 15, frames: 3 },
    ).x;
  const theta: P = { mass: system.mass, mu: g.mu };
  const x = globalThis.Array.from(await jit(roll)(theta).data());
  const gr = jit(grad((p: P) => np.sum(np.square(roll(p)))))(theta) as P;
  return { x, dMass: (await gr.mass!.data())[0]!, dMu: (await gr.mu!.data())[0]! };
}

describeGpu("rigid ground contact on WebGPU", () => {
  it("the rollout and its gradient agree with the CPU's float64", async () => {
    await init({ backend: "cpu" });
    const want = await run("float64");
    await init({ backend: "webgpu" });
    const got = await run("float32");
    const worst = Math.max(...want.x.map((w, i) => Math.abs(w - got.x[i]!)));
    expect(worst, "positions (m)").toBeLessThan(2e-4);
    expect(Math.abs(got.dMass / want.dMass - 1), `∂/∂mass ${got.dMass} vs ${want.dMass}`).toBeLessThan(2e-2);
    expect(Math.abs(got.dMu / want.dMu - 1), `∂/∂μ ${got.dMu} vs ${want.dMu}`).toBeLessThan(2e-2);
  }, 600_000);
});
