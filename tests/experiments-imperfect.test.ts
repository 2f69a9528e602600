/**
 * The `imperfect-models` experiment (gradSim Table 4 left, Fig. 7) in its quick mode on the CPU
 * — one rigid, one deformable and one cloth object — and the pieces it is built from: the
 * centroid-fan tetrahedralisation and the models an object can be simulated by.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRng } from "../src/core/host-rng.js";
import { models, np } from "../src/index.js";
import {
  experiment as imperfect,
  IMPERFECT_SETTINGS,
  ROWS,
  validObjectRecord,
  type ObjectRecord,
} from "../examples/imperfect-models.js";
import { centroidFan, objectGeometry, objectModel, sampleObject, TRUE_MODEL } from "../examples/lib/imperfect-scene.js";
import { readResult, runQuiet } from "./experiments-helpers.js";

describe("imperfect-models (quick)", () => {
  it("the perfect model beats every imperfect row; records, table, Fig. 7 and pictures are written", async () => {
    const { code, out } = await runQuiet(imperfect);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(r.objects).toBe(3);
    expect(r.perKind).toEqual({ rigid: 1, deformable: 1, cloth: 1 });
    const row = (name: string) => r.rows.find((x: { name: string }) => x.name === name);
    const perfect = row("perfect model");
    expect(perfect.objects).toBe(3);
    // The perfect model recovers every mass (measured: ≤ 1e-5); every wrong model is measurably worse.
    expect(perfect.mean).toBeLessThan(1e-3);
    for (const other of ROWS.slice(1)) {
      expect(row(other.name).mean, other.name).toBeGreaterThan(perfect.mean);
      expect(row(other.name).objects).toBe(other.kinds.length);
    }
    // Each object: the initial guess is off, every applicable row has an estimate.
    const objects = JSON.parse(readFileSync(join(out, "objects.json"), "utf8"));
    expect(objects.map((o: { kind: string }) => o.kind)).toEqual(["rigid", "deformable", "cloth"]);
    for (const o of objects) {
      expect(o.initialRelMae.mass).toBeGreaterThan(0.01);
      expect(Object.keys(o.estimates).sort()).toEqual(
        ROWS.filter((x) => x.kinds.includes(o.kind))
          .map((x) => x.name)
          .sort(),
      );
      expect(o.object.mass).toBe(o.truth.mass);
    }
    // Fig. 7: one curve per look on the rigid object, from the initial guess over every Adam iterate, and the mean
    // error falls.
    for (const look of ["colour", "shading", "texture"]) {
      const curve = r.fig7[look].mean as number[];
      expect(curve.length).toBe(IMPERFECT_SETTINGS.quick.figSteps + 1);
      expect(curve[curve.length - 1]!).toBeLessThan(curve[0]! / 10);
    }
    expect(r.table).toContain("| perfect model | 0.1071 |");
    for (const f of [
      "objects.json",
      "table.md",
      "fig7.png",
      "fig7.csv",
      "looks-rigid.png",
      "looks-cloth.png",
      "traced-deformable.gif",
    ])
      expect(existsSync(join(out, f)), f).toBe(true);
  }, 300_000);
});

describe("imperfect-models objects", () => {
  it("a centroid fan fills a convex surface with positive tets of the enclosed volume, and its surface is the original one", () => {
    const m = models.meshes.cone(0.4, 0.8, 12);
    const fan = centroidFan(m);
    const v = fan.vertices;
    let volume = 0;
    for (let t = 0; t < fan.tets.length; t += 4) {
      const six = models.meshes.tetVolume6(v, fan.tets[t]!, fan.tets[t + 1]!, fan.tets[t + 2]!, fan.tets[t + 3]!);
      expect(six).toBeGreaterThan(0);
      volume += six / 6;
    }
    expect(volume).toBeCloseTo(models.rigid.meshBody(m, { density: 1 }).mass, 8);
    const key = (f: ArrayLike<number>) =>
      Array.from({ length: f.length / 3 }, (_, i) =>
        [f[3 * i]!, f[3 * i + 1]!, f[3 * i + 2]!].sort((a, b) => a - b).join(),
      ).sort();
    expect(key(models.meshes.tetSurface(fan))).toEqual(key(m.faces));
  });

  it("every model of an object starts from its rest surface; a heavier estimate slides less far under the same push", () => {
    const s = { frames: 10, fps: 30, resolution: 32 };
    for (const kind of ["rigid", "deformable", "cloth"] as const) {
      const spec = sampleObject(makeRng(3), kind);
      const g = objectGeometry(spec);
      const V = g.surface.vertices.length / 3;
      const choices = [
        TRUE_MODEL(spec),
        ...(kind === "rigid"
          ? [{ ...TRUE_MODEL(spec), body: "deformable" as const }]
          : kind === "deformable"
            ? [{ ...TRUE_MODEL(spec), body: "rigid" as const }]
            : []),
      ];
      for (const choice of choices) {
        const model = objectModel(spec, g, choice, s);
        const travel = (scale: number) => {
          const x = model.positions(np.array(spec.mass * scale, { dtype: "float32" }), s.frames).dataSync();
          const N = x.length / (3 * s.frames);
          let first = 0,
            last = 0;
          for (let i = 0; i < V; i++) {
            first += x[3 * i]! / V;
            last += x[3 * ((s.frames - 1) * N + i)]! / V;
          }
          return { first, last };
        };
        const a = travel(1),
          b = travel(2);
        // After one frame the surface is still near where it was placed (≤ 5 cm: one frame of fall and push).
        let rest = 0;
        for (let i = 0; i < V; i++) rest += g.surface.vertices[3 * i]! / V;
        expect(Math.abs(a.first - rest), `${kind} as ${choice.body}`).toBeLessThan(0.05);
        expect(b.last - b.first, `${kind} as ${choice.body}`).toBeLessThan(a.last - a.first);
        expect(a.last - a.first).toBeGreaterThan(0.1);
      }
    }
  });

  it("a body model the object cannot have is a clear error", () => {
    const spec = sampleObject(makeRng(1), "cloth");
    expect(() =>
      objectModel(
        spec,
        objectGeometry(spec),
        { ...TRUE_MODEL(spec), body: "rigid" },
        { frames: 4, fps: 30, resolution: 16 },
      ),
    ).toThrow(/rigid body|cannot/);
  });
});

describe("imperfect-models records", () => {
  it("a kept record with a row missing, null or a string is refused naming its file", () => {
    const rows = ROWS.filter((r) => r.kinds.includes("rigid")).map((r) => r.name);
    const errors = Object.fromEntries(rows.map((r) => [r, { mass: 0.1 }]));
    const record = {
      index: 3,
      kind: "rigid",
      describe: "a box",
      initialRelMae: { mass: 0.5 },
      relMae: errors,
      meanAbsError: errors,
      iterations: {},
      seconds: {},
    } as unknown as ObjectRecord;
    expect(validObjectRecord(record, 3, "x/00003.json")).toBe(record);
    const { [rows[1]!]: _gone, ...fewer } = errors;
    expect(() => validObjectRecord({ ...record, relMae: fewer }, 3, "x/00003.json")).toThrow(
      /x\/00003\.json \(instance 3\) has no relMae for the row "unmodelled friction"/,
    );
    expect(() =>
      validObjectRecord(
        { ...record, meanAbsError: { ...errors, [rows[0]!]: { mass: null } } } as unknown as ObjectRecord,
        3,
        "x/00003.json",
      ),
    ).toThrow(/mass = null, not a finite number/);
    expect(() =>
      validObjectRecord(
        { ...record, relMae: { ...errors, [rows[0]!]: { mass: "0.1" } } } as unknown as ObjectRecord,
        3,
        "x/00003.json",
      ),
    ).toThrow(/mass = "0\.1", not a finite number/);
    expect(() => validObjectRecord({ ...record, kind: "gas" } as unknown as ObjectRecord, 3, "x/00003.json")).toThrow(
      /kind "gas"/,
    );
  });
});

describe("imperfect-models shards", () => {
  it("a shard fits only its objects and writes no merged-looking table; a merge refuses while a shard is unfinished, then merges", async () => {
    const first = await runQuiet(imperfect, ["--dataset", "2", "--iters", "3", "--shard", "1/2"]);
    expect(first.code).toBe(0);
    expect(existsSync(join(first.out, "result.json"))).toBe(false);
    expect(existsSync(join(first.out, "objects.json"))).toBe(false);
    expect(JSON.parse(readFileSync(join(first.out, "result.shard-1-of-2.json"), "utf8"))).toMatchObject({
      objects: 1,
      shard: { index: 1, count: 2, partial: true },
    });
    const { runExperiment } = await import("../examples/lib/run.js");
    const write = process.stdout.write,
      errors = process.stderr.write;
    let stderr = "";
    const run = (args: string[]) =>
      runExperiment(imperfect, [
        "--backend",
        "cpu",
        "--quick",
        "--json",
        "--out",
        first.out,
        "--dataset",
        "2",
        "--iters",
        "3",
        ...args,
      ]);
    process.stdout.write = (() => true) as typeof process.stdout.write;
    process.stderr.write = ((s: string) => {
      stderr += s;
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(await run([])).toBe(2);
      expect(stderr).toMatch(/instance 0 \(of shard 0\/2\) has no record: run that shard to the end/);
      expect(await run(["--shard", "0/2"])).toBe(0);
      expect(await run([])).toBe(0);
    } finally {
      process.stdout.write = write;
      process.stderr.write = errors;
    }
    const merged = JSON.parse(readFileSync(join(first.out, "objects.json"), "utf8"));
    expect(merged.map((o: { index: number }) => o.index)).toEqual([0, 1]);
    expect(merged[1]).toEqual(
      JSON.parse(readFileSync(join(first.out, "imperfect-models-instances", "00001.json"), "utf8")).record,
    );
  }, 300_000);
});
