/**
 * The `imperfect-models` experiment (gradSim Table 4 left, Fig. 7) in its quick mode on the CPU
 * — one rigid, one deformable and one cloth object — its records and shards. The scene it is
 * built from (sysid's objectModel, objectLook) is tested in sysid-scene-imperfect.test.ts.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  experiment as imperfect,
  IMPERFECT_SETTINGS,
  ROWS,
  validObjectRecord,
  type ObjectRecord,
} from "../examples/imperfect-models.js";
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
    expect(r.table).toContain("| photorealistic render, colour | — (not in the paper) |");
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

describe("imperfect-models records", () => {
  it("a kept record made before a row existed gets that row fitted, and keeps the rest", async () => {
    const first = await runQuiet(imperfect, ["--dataset", "1", "--iters", "3"]);
    expect(first.code).toBe(0);
    const file = join(first.out, "imperfect-models-instances", "00000.json");
    const stored = JSON.parse(readFileSync(file, "utf8"));
    const before = stored.record as ObjectRecord;
    const added = "photorealistic render, colour";
    const strip = <T>(t: Record<string, T> | undefined) =>
      Object.fromEntries(Object.entries(t ?? {}).filter(([k]) => k !== added));
    const old = {
      ...before,
      estimates: strip(before.estimates),
      // A marker in a kept row: kept rows are not refitted.
      relMae: { ...strip(before.relMae), "perfect model": { mass: 0.123 } },
      meanAbsError: strip(before.meanAbsError),
      iterations: strip(before.iterations),
      seconds: strip(before.seconds),
    };
    writeFileSync(file, JSON.stringify({ ...stored, record: old }));
    const { runExperiment } = await import("../examples/lib/run.js");
    const args = ["--backend", "cpu", "--quick", "--json", "--out", first.out, "--dataset", "1", "--iters", "3"];
    const write = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      expect(await runExperiment(imperfect, args)).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    const after = JSON.parse(readFileSync(file, "utf8")).record as ObjectRecord;
    expect(after.relMae[added]!.mass).toBe(before.relMae[added]!.mass);
    expect(after.relMae["perfect model"]!.mass).toBe(0.123);
    expect(after.fig7).toEqual(before.fig7);
  }, 300_000);

  it("a kept record with an original row missing, null or a string is refused naming its file", () => {
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
  // Once every shard has finished, the merge goes through.
  it("a shard fits only its objects, writes no merged-looking table; a merge refuses unfinished shards", async () => {
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
