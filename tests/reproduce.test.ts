/**
 * `npm run reproduce`: tables are written from the experiments' results; --only reruns the named
 * experiments and keeps the other rows of an existing tables.json (also when written meanwhile by
 * another --only run); --workers reaches the dataset experiments and runs the one-core ones side
 * by side; --resume continues a stopped reproduction; bad --only names and --workers values exit 2.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PLAN, selectedPlan } from "../examples/reproduce.js";
import { outDir } from "./experiments-helpers.js";

const reproduce = (args: readonly string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "examples/reproduce.ts", ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });

describe("reproduce", () => {
  it("--only reruns one experiment and keeps the other rows of tables.json", () => {
    const out = outDir("reproduce");
    mkdirSync(out, { recursive: true });
    // The kept row comes after the rerun one in the plan: it must still be in every table written.
    const kept = {
      name: "smoke",
      table: "—",
      status: "ok",
      seconds: 1,
      commit: "abc1234",
      date: "2026-01-01",
      result: { backend: "cpu", answer: 42 },
    };
    writeFileSync(join(out, "tables.json"), JSON.stringify({ meta: {}, runs: [kept] }));
    const r = reproduce(["--quick", "--backend", "cpu", "--json", "--only", "pendulum", "--out", out]);
    expect(r.status, r.stderr).toBe(0);
    const tables = JSON.parse(readFileSync(join(out, "tables.json"), "utf8"));
    expect(tables.runs.map((x: { name: string }) => x.name)).toEqual(["pendulum", "smoke"]); // plan order
    expect(tables.runs[1]).toEqual(kept);
    expect(tables.runs[0].status).toBe("ok");
    expect(tables.runs[0].result.experiment).toBe("pendulum");
    const md = readFileSync(join(out, "tables.md"), "utf8");
    expect(md).toContain("| smoke | — | ok | 1 | — | 2026-01-01 | abc1234 | answer 42 |");
    expect(md).toMatch(/\| pendulum \| — \| ok \|/);
    expect(r.stderr).toContain("1/1 experiments ran");
    expect(r.stderr).toContain("1 rows kept");
  }, 150_000);

  it("--tables rewrites tables.md from tables.json without running anything", () => {
    const out = outDir("reproduce-tables");
    const kept = {
      name: "smoke",
      table: "—",
      status: "ok",
      seconds: 1,
      commit: "abc1234",
      date: "2026-01-01",
      result: { backend: "cpu", answer: 42 },
    };
    writeFileSync(
      join(out, "tables.json"),
      JSON.stringify({
        meta: { date: "2026-01-01", commit: "abc1234", backend: "cpu", machine: "m", args: "" },
        runs: [kept],
      }),
    );
    const r = reproduce(["--tables", "--out", out]);
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(out, "tables.md"), "utf8")).toContain(
      "| smoke | — | ok | 1 | — | 2026-01-01 | abc1234 | answer 42 |",
    );
    expect(reproduce(["--tables", "--out", join(out, "missing")]).status).toBe(2);
  });

  it("--only runs of different experiments side by side keep each other's rows", async () => {
    const out = outDir("reproduce-parallel");
    // Kept rows are read when the tables are written, not when a run starts: the run that finishes
    // last must not drop the row the other one wrote meanwhile.
    const run = (name: string) =>
      new Promise<number | null>((done) => {
        const child = spawn(
          process.execPath,
          [
            "--import",
            "tsx",
            "examples/reproduce.ts",
            "--quick",
            "--backend",
            "cpu",
            "--json",
            "--only",
            name,
            "--out",
            out,
          ],
          { stdio: "ignore" },
        );
        child.on("exit", done);
      });
    expect(await Promise.all([run("pendulum"), run("smoke")])).toEqual([0, 0]);
    const tables = JSON.parse(readFileSync(join(out, "tables.json"), "utf8"));
    expect(tables.runs.map((x: { name: string }) => x.name)).toEqual(["pendulum", "smoke"]);
  }, 150_000);

  it("--workers splits each dataset experiment over that many processes", () => {
    const out = outDir("reproduce-workers");
    const r = reproduce([
      "--quick",
      "--backend",
      "cpu",
      "--only",
      "deformable",
      "--dataset",
      "2",
      "--workers",
      "2",
      "--out",
      out,
    ]);
    expect(r.status, r.stderr).toBe(0);
    const run = join(out, "runs", "deformable");
    expect(r.stderr).toContain("fitting the 2 instances in 2 child processes");
    for (const task of ["material", "mass"])
      expect(readdirSync(join(run, `${task}-instances`)).sort()).toEqual(["00000.json", "00001.json"]);
    const result = JSON.parse(readFileSync(join(run, "result.json"), "utf8"));
    expect(result.material.records.map((x: { index: number }) => x.index)).toEqual([0, 1]);
  }, 150_000);

  it("--workers 2 runs the one-core experiments side by side, each in a child process", () => {
    const out = outDir("reproduce-sideways");
    const r = reproduce([
      "--quick",
      "--backend",
      "cpu",
      "--workers",
      "2",
      "--only",
      "pendulum,smoke,double-pendulum",
      "--out",
      out,
    ]);
    expect(r.status, r.stderr).toBe(0);
    for (const name of ["pendulum", "double-pendulum", "smoke"]) {
      expect(r.stderr).toContain(`=== reproduce: ${name} --out`);
      expect(r.stderr).toMatch(new RegExp(`\\[${name}\\] done in`)); // its log, tagged with its name
    }
    // Two slots: smoke waits for the first of the other two to finish.
    expect(r.stderr.indexOf("=== reproduce: smoke")).toBeGreaterThan(r.stderr.indexOf("] done in"));
    const tables = JSON.parse(readFileSync(join(out, "tables.json"), "utf8"));
    expect(tables.runs.map((x: { name: string; status: string }) => `${x.name} ${x.status}`)).toEqual([
      "pendulum ok",
      "double-pendulum ok",
      "smoke ok",
    ]);
    const clock = JSON.parse(readFileSync(join(out, "reproduce-clock.json"), "utf8"));
    expect(Object.keys(clock.experiments).sort()).toEqual(["double-pendulum", "pendulum", "smoke"]);
  }, 150_000);

  it("--resume keeps what an earlier segment finished at this commit and adds up the segments' time", () => {
    const out = outDir("reproduce-resume");
    const first = reproduce(["--quick", "--backend", "cpu", "--only", "pendulum", "--out", out]);
    expect(first.status, first.stderr).toBe(0);
    const before = JSON.parse(readFileSync(join(out, "tables.json"), "utf8"));
    const r = reproduce(["--quick", "--backend", "cpu", "--only", "pendulum,smoke", "--resume", "--out", out]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("pendulum finished in an earlier segment; kept");
    expect(r.stderr).not.toContain("=== reproduce: pendulum");
    expect(r.stderr).toContain("=== reproduce: smoke");
    expect(r.stderr).toContain("1/1 experiments ran");
    const tables = JSON.parse(readFileSync(join(out, "tables.json"), "utf8"));
    expect(tables.runs[0]).toEqual(before.runs[0]);
    expect(tables.meta.segments).toBe("2");
    const clock = JSON.parse(readFileSync(join(out, "reproduce-clock.json"), "utf8"));
    expect(clock.segments).toHaveLength(2);
    const span = (g: { start: string; end: string }) => (Date.parse(g.end) - Date.parse(g.start)) / 1000;
    expect(Number(tables.meta.totalSeconds)).toBeCloseTo(span(clock.segments[0]) + span(clock.segments[1]), -1);
    expect(readFileSync(join(out, "tables.md"), "utf8")).toContain("in 2 segments (stopped and resumed)");

    // A record made at another commit is not kept, and segments made at another commit are not continued.
    writeFileSync(
      join(out, "tables.json"),
      JSON.stringify({ ...tables, runs: tables.runs.map((x: object) => ({ ...x, commit: "0000000" })) }),
    );
    const again = reproduce(["--quick", "--backend", "cpu", "--only", "smoke", "--resume", "--out", out]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toContain("=== reproduce: smoke");
    writeFileSync(join(out, "reproduce-clock.json"), JSON.stringify({ ...clock, commit: "0000000" }));
    const other = reproduce(["--quick", "--backend", "cpu", "--only", "smoke", "--resume", "--out", out]);
    expect(other.status).toBe(2);
    expect(other.stderr).toContain("ran at commit 0000000");
  }, 150_000);

  it("rejects --workers that is not a positive integer with exit code 2", () => {
    const r = reproduce(["--workers", "0", "--out", outDir("reproduce-bad-workers")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--workers expects an integer ≥ 1");
  });

  it("runs the ConvLSTM at the paper's data and epochs (hours) only when --only names it", () => {
    const names = (only: ReadonlySet<string> | null) => selectedPlan(PLAN, only).map((p) => p.name);
    expect(names(null)).toContain("convlstm");
    expect(names(null)).not.toContain("convlstm-paper");
    expect(names(new Set(["convlstm-paper"]))).toEqual(["convlstm-paper"]);
  });

  it("rejects an unknown --only name with exit code 2", () => {
    const r = reproduce(["--only", "nope", "--out", outDir("reproduce-bad")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--only takes experiment names separated by commas");
  });
});
