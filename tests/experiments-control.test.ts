/**
 * Visuomotor control (gradSim §4.2): control-walker, control-fem and control-cloth in their quick
 * modes on the CPU — gradsim, from pixels only, halves the image loss and ends closer to the goal
 * than the untrained control — a float64 gradient check of one step's activations, and bad input.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { grad, init, jit, models, np, type Array } from "../src/index.js";
import { experiment as walker } from "../examples/control-walker.js";
import { centreOfMassDistance, clothControlScene, walkerBody } from "../src/control/index.js";
import { experiment as gear } from "../examples/control-fem.js";
import { experiment as clothControl } from "../examples/control-cloth.js";
import { cli, outDir, readResult, runQuiet } from "./experiments-helpers.js";

await init({ backend: "cpu" });

describe.each([
  ["control-walker", walker],
  ["control-fem", gear],
  ["control-cloth", clothControl],
] as const)("%s (quick)", (name, exp) => {
  it("gradsim halves the image loss, ends nearer the goal than random; reports curves, GIF and memory", async () => {
    const { code, out } = await runQuiet(exp);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(r.scene).toBe(name);
    const { random, diffphysics, gradsim } = r.methods;
    expect(gradsim.runs.length).toBe(r.settings.seeds);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(sum(gradsim.runs.map((x: { imageLoss: number }) => x.imageLoss))).toBeLessThan(
      0.5 * sum(gradsim.runs.map((x: { initialImageLoss: number }) => x.initialImageLoss)),
    );
    for (const run of gradsim.runs) {
      expect(run.imageLoss, `seed ${run.seed}`).toBeLessThan(run.initialImageLoss);
      expect(run.imageLosses.length).toBe(r.settings.iters + 1);
    }
    expect(gradsim.distance.mean).toBeLessThan(random.distance.mean);
    expect(diffphysics.distance.mean).toBeLessThan(random.distance.mean);
    // The same seeds start every method from the same control.
    gradsim.runs.forEach((g: { initialImageLoss: number }, i: number) =>
      expect(Math.abs(g.initialImageLoss / random.runs[i].imageLoss - 1)).toBeLessThan(1e-4),
    );
    if (name === "control-cloth") {
      // The metric is per particle: never below the centre of mass's distance, and above it for a sheet that lands
      // turned or folded.
      expect(r.distanceMeaning).toMatch(/per-particle/);
      for (const m of [random, diffphysics, gradsim])
        for (const run of m.runs) expect(run.distance, `seed ${run.seed}`).toBeGreaterThan(run.comDistance);
    }
    expect(r.peakMemoryMB).toBeGreaterThan(0);
    for (const f of ["fig6-image-loss.png", "fig6-image-loss.csv", "fig6-distance.png", "motion.gif", "frames.png"])
      expect(existsSync(join(out, f)), f).toBe(true);
  }, 300_000);
});

/** grad(loss) at a0 against central differences (h = 1e-6, float64) at the entries `at`; returns the gradient. */
function expectCentralDifferences(loss: (a: Array) => Array, a0: Array, at: readonly number[]): Float64Array {
  const g = grad(loss)(a0).dataSync() as Float64Array;
  const h = 1e-6,
    n = a0.size;
  for (const k of at) {
    const e = np.array(
      globalThis.Array.from({ length: n }, (_, i) => (i === k ? h : 0)),
      { dtype: "float64" },
    );
    const fd = (loss(np.add(a0, e)).item() - loss(np.sub(a0, e)).item()) / (2 * h);
    expect(Math.abs(g[k]! - fd), `entry ${k}`).toBeLessThan(1e-6 * Math.max(1, Math.abs(fd)));
  }
  return g;
}

describe("control gradients", () => {
  it("one step's gradient in the walker's triangle activations matches central differences (float64)", () => {
    const { system, state, triangles } = walkerBody("float64");
    const w = np.array(
      globalThis.Array.from({ length: state.x.size }, (_, i) => Math.sin(1.3 * i + 0.2)),
      { dtype: "float64" },
    );
    const loss = (a: Array) => {
      const next = models.particles.step(system, { x: state.x, v: np.add(state.v, 0.1) }, { triActivation: a }, 1e-3);
      return np.sum(np.mul(np.reshape(np.add(next.x, next.v), [-1]), w));
    };
    const a0 = np.array(
      globalThis.Array.from({ length: triangles }, (_, i) => 0.1 * Math.cos(i)),
      { dtype: "float64" },
    );
    const g = expectCentralDifferences(loss, a0, [0, 7, triangles - 1]);
    expect(Math.max(...globalThis.Array.from(g, Math.abs))).toBeGreaterThan(1e-3); // activations move the walker
  });

  it("one step's gradient with respect to a soft body's tet activations matches central differences (float64)", () => {
    const mesh = models.meshes.tetGear({ layers: 1 });
    const { system, state } = models.fem.softBody(mesh, {
      density: 1,
      mu: 1000,
      lambda: 1000,
      damping: 1,
      dtype: "float64",
    });
    const T = mesh.tets.length / 4;
    const w = np.array(
      globalThis.Array.from({ length: state.x.size }, (_, i) => Math.cos(0.7 * i)),
      { dtype: "float64" },
    );
    const loss = (a: Array) =>
      np.sum(np.mul(np.reshape(models.particles.step(system, state, { tetActivation: a }, 1e-3).x, [-1]), w));
    const a0 = np.array(
      globalThis.Array.from({ length: T }, (_, i) => 0.05 * Math.sin(i)),
      { dtype: "float64" },
    );
    const g = expectCentralDifferences(loss, a0, [0, 100, T - 1]);
    expect(Math.max(...globalThis.Array.from(g, Math.abs))).toBeGreaterThan(0);
  });
});

describe("control-cloth's loss and metric", () => {
  // The metric is the mean per-particle distance to the target cloth.
  it("diffphysics' loss sums the squared centre-of-mass error over all frames; the metric is per-particle", () => {
    const scene = clothControlScene({ cells: [4, 4], resolution: 16 }, 3);
    const x = jit((v: Array) => scene.positions(v))(np.array([2, 1, 0.5], { dtype: "float32" }));
    const [T, N] = x.shape as [number, number, number];
    expect(T).toBe(scene.frames);
    const xs = x.dataSync(),
      goalCom = scene.goalCom.dataSync();
    let expected = 0,
      last = 0;
    for (let t = 0; t < T; t++) {
      let se = 0;
      for (let k = 0; k < 3; k++) {
        let com = 0;
        for (let i = 0; i < N; i++) com += xs[(t * N + i) * 3 + k]! / N;
        se += (com - goalCom[k]!) ** 2 / 3;
      }
      expected += se;
      if (t === T - 1) last = se;
    }
    const loss = scene.stateLoss(x).item();
    expect(Math.abs(loss / expected - 1)).toBeLessThan(1e-4);
    expect(loss).toBeGreaterThan(2 * last); // not the last frame alone

    // The hidden throw reaches the target cloth; a shifted copy is the shift away; a copy turned about its centre of
    // mass is not at distance 0.
    const goal = scene.goalPositions;
    const hit = jit((v: Array) => np.index(scene.positions(v), scene.frames - 1))(scene.hiddenVelocity);
    expect(scene.goalDistance(hit).item()).toBeLessThan(1e-4);
    expect(
      Math.abs(scene.goalDistance(np.add(goal, np.array([0.3, 0.4, 0], { dtype: "float32" }))).item() - 0.5),
    ).toBeLessThan(1e-5);
    const com = np.mean(goal, 0);
    // Half a turn about y.
    const turned = np.add(np.mul(np.sub(goal, com), np.array([-1, 1, -1], { dtype: "float32" })), com);
    expect(centreOfMassDistance(turned, scene.goalCom).item()).toBeLessThan(1e-5);
    const g = goal.dataSync(),
      c = com.dataSync();
    let spread = 0;
    for (let i = 0; i < N; i++) spread += (2 * Math.hypot(g[3 * i]! - c[0]!, g[3 * i + 2]! - c[2]!)) / N;
    expect(spread).toBeGreaterThan(0.05);
    expect(Math.abs(scene.goalDistance(turned).item() / spread - 1)).toBeLessThan(1e-4);
  }, 120_000);
});

describe("control bad input", () => {
  // A bad policy size: one that is not an integer ≥ 2.
  it("a bad policy size, a missing or unreadable target image, and --policy with no policy exit with code 2", () => {
    for (const [args, message] of [
      [["control-walker", "--policy", "1"], /--policy expects an integer ≥ 2/],
      [["control-fem", "--policy", "many"], /--policy expects an integer ≥ 2/],
      [
        ["control-walker", "--quick", "--target", "no-such-goal.png"],
        /no such file; give a PNG of the walker at its goal/,
      ],
      [["control-cloth", "--quick", "--policy", "4"], /initial velocity .* not a phase policy/],
      [["rigid-mass", "--policy", "4"], /does not take --policy/],
    ] as const) {
      const r = cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const bad = join(outDir("control-bad"), "goal.png");
    writeFileSync(bad, "not a png");
    const r = cli(["control-walker", "--quick", "--target", bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a readable PNG/);
  }, 120_000);
});
