/**
 * gradSim's ConvLSTM baseline: the recurrent video regressor (shapes, bad input, float64 parameter
 * gradients through its scan against central differences, frame order matters), the `convlstm`
 * experiment's quick mode on the tables' own objects, and its rows in Tables 1–2.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { grad, init, np, random, sysid, tree, type Array } from "../src/index.js";
import { networks } from "../src/node.js";
import { makeRng } from "../src/core/host-rng.js";
import { experiment as convlstm, CONVLSTM_SETTINGS } from "../examples/convlstm.js";
import { massBenchmark } from "../examples/rigid-mass.js";
import { table1Markdown, type RigidDatasetReport } from "../examples/lib/tables.js";
import { cli, outDir, readResult, runQuiet } from "./experiments-helpers.js";

await init({ backend: "cpu" });

describe("networks.convLstm", () => {
  const cfg: networks.ConvLstmConfig = { frame: [6, 6, 2], outputs: 2, features: 3, hidden: 2, dtype: "float64" };
  const video = random.uniform(random.key(1), [4, 6, 6, 2], { dtype: "float64" });

  it("maps a video to the outputs, depends on the frames' order, and names a wrong video shape", () => {
    const p = networks.initConvLstm(random.key(0), cfg);
    const y = networks.convLstm(p, cfg, video);
    expect(y.shape).toEqual([2]);
    const reversed = np.take(video, np.array([3, 2, 1, 0], { dtype: "int32" }), 0);
    expect(np.max(np.abs(np.sub(networks.convLstm(p, cfg, reversed), y))).item()).toBeGreaterThan(1e-4);
    expect(() => networks.convLstm(p, cfg, np.zeros([4, 6, 6, 3], { dtype: "float64" }))).toThrow(
      /built for frames \[6,6,2\]/,
    );
  });

  it("its parameter gradient through the scan over frames matches central differences (float64)", () => {
    const p0 = networks.initConvLstm(random.key(2), cfg);
    const f = (p: networks.ConvLstmParams) => np.sum(np.square(networks.convLstm(p, cfg, video)));
    const g = grad(f)(p0);
    const dir = tree.map((x: Array) => random.normal(random.key(x.size + 3), x.shape, { dtype: "float64" }), p0);
    const dot = tree
      .flatten(tree.map((a: Array, b: Array) => np.sum(np.mul(a, b)), g, dir))[0]
      .reduce((s: number, x) => s + (x as Array).item(), 0);
    const at = (t: number) => f(tree.map((a: Array, b: Array) => np.add(a, np.mul(t, b)), p0, dir)).item();
    const h = 1e-5,
      fd = (at(h) - at(-h)) / (2 * h);
    expect(Math.abs(dot - fd)).toBeLessThan(1e-6 * Math.max(1, Math.abs(fd)));
  });
});

describe("convlstm (quick)", () => {
  it("trains one regressor per table and tests it on the tables' own objects", async () => {
    const { code, out } = await runQuiet(convlstm);
    expect(code).toBe(0);
    const r = readResult(out);
    const cfg = CONVLSTM_SETTINGS.quick;
    // The test objects are rigid-mass's dataset draws at the same seed, in order.
    const task = sysid.rigidDatasetTask(massBenchmark(true), { progress: false });
    const rng = makeRng(0);
    const describes = globalThis.Array.from({ length: cfg.instances }, () => task.sample(rng).describe);
    expect(r.tables["rigid-mass"].instances.map((x: { describe: string }) => x.describe)).toEqual(describes);
    for (const [name, columns] of [
      ["rigid-mass", ["mass"]],
      ["rigid-contact", ["mass", "ke", "kd", "kf", "mu"]],
    ] as const) {
      const t = r.tables[name];
      expect(Object.keys(t.relMae)).toEqual(columns);
      for (const c of columns) expect(t.relMae[c]).toBeGreaterThan(0);
      expect(t.instances.length).toBe(cfg.instances);
      expect(existsSync(join(out, name, "params.gsp"))).toBe(true);
      expect(existsSync(join(out, name, "loss.png"))).toBe(true);
    }
  }, 300_000);

  it("Table 1's ConvLSTM row averages the learned errors over exactly the objects the table's run fitted", () => {
    const records = [
      { index: 0, describe: "box" },
      { index: 1, describe: "cone" },
    ];
    const report = {
      dataset: { task: "rigid-mass", instances: 2, unknowns: [{ name: "mass" }], columns: ["mass"], rows: {}, records },
    } as unknown as RigidDatasetReport;
    const learned = [
      { index: 0, describe: "box", relMae: { mass: 0.1 }, meanAbsError: { mass: 0.2 } },
      { index: 1, describe: "cone", relMae: { mass: 0.3 }, meanAbsError: { mass: 0.4 } },
      { index: 2, describe: "torus", relMae: { mass: 9 }, meanAbsError: { mass: 9 } },
    ];
    const row = (md: string) => md.split("\n").find((l) => l.includes("ConvLSTM"))!;
    expect(row(table1Markdown(report, { convlstm: learned }))).toMatch(/\| 0\.300 \| 0\.135 \| 0\.200 \|/);
    // Other objects (another seed): no row rather than a wrong one.
    expect(
      row(
        table1Markdown(report, {
          convlstm: learned.map((l) => ({ ...l, describe: "x" })),
        }),
      ),
    ).toMatch(/\| — \| 0\.135 \| — \|/);
    // Earlier runs' records carry the true values instead of descriptions.
    const earlier = {
      dataset: 2,
      methods: {},
      objects: [
        { index: 0, truth: { mass: 0.51577 } },
        { index: 1, truth: { mass: 1.5 } },
      ],
    } as unknown as RigidDatasetReport;
    const described = [
      { ...learned[0]!, describe: "cone 0.60×0.73×0.69, truth mass 0.5158, initial mass 0.2225" },
      { ...learned[1]!, describe: "box 1×1×1, truth mass 1.500, initial mass 2" },
    ];
    expect(row(table1Markdown(earlier, { convlstm: described }))).toMatch(/\| 0\.300 \| 0\.135 \| 0\.200 \|/);
    expect(
      row(
        table1Markdown(earlier, {
          convlstm: [described[0]!, { ...described[1]!, describe: "box 1×1×1, truth mass 1.400, initial mass 2" }],
        }),
      ),
    ).toMatch(/\| — \| 0\.135 \| — \|/);
    // The run at the paper's data and epochs is a row of its own beside ours.
    const paperRow = (md: string) => md.split("\n").find((l) => l.includes("ConvLSTM at the paper's data"))!;
    const both = table1Markdown(report, {
      convlstm: learned,
      "convlstm-paper": learned.map((l) => ({ ...l, relMae: { mass: l.relMae.mass / 10 } })),
    });
    expect(row(both)).toMatch(/\| 0\.300 \| 0\.135 \| 0\.200 \|/);
    expect(paperRow(both)).toMatch(/\| 0\.300 \| 0\.135 \| 0\.0200 \|/);
    expect(paperRow(table1Markdown(report, { convlstm: learned }))).toMatch(/\| — \| 0\.135 \| — \|/);
  });

  it("--procedure paper trains at the paper's size only (not with --quick); another procedure is refused", async () => {
    const paper = cli(["convlstm", "--quick", "--backend", "cpu", "--procedure", "paper", "--out", outDir("cl-paper")]);
    expect(paper.code).toBe(2);
    expect(paper.stderr).toContain("--procedure paper trains at full size; drop --quick");
    const other = cli(["convlstm", "--backend", "cpu", "--procedure", "pretrained", "--out", outDir("cl-other")]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--procedure must be one of ours, paper, got "pretrained"');
  }, 120_000);
});
