/**
 * `--workers N` on dataset runs: the flags are validated, shards partition the instances, and
 * the records merged from the child processes equal a single process's (the Table 3 runner,
 * through `pendulum`), a shard of the Table 1/2 runner fits its objects as the whole run does,
 * and a failing worker fails the run and is named.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { parseFlags } from "../examples/lib/flags.js";
import { ownedInstances } from "../examples/lib/dataset-workers.js";
import { experiment as pendulum } from "../examples/pendulum.js";
import { experiment as rigidMass } from "../examples/rigid-mass.js";
import { outDir, readResult, runQuiet } from "./experiments-helpers.js";

const flagError = (argv: string[]): string => {
  const r = parseFlags(argv, "out");
  if (E.isRight(r)) throw new Error(`expected ${argv.join(" ")} to be rejected`);
  return r.left.message;
};

/** A result without its timings (which differ between runs). */
const untimed = (x: unknown): unknown =>
  Array.isArray(x) ? x.map(untimed)
  : x && typeof x === "object" ? Object.fromEntries(Object.entries(x).filter(([k]) => k !== "seconds").map(([k, v]) => [k, untimed(v)]))
  : x;

describe("dataset workers", () => {
  it("validates --workers and --shard", () => {
    const ok = parseFlags(["--dataset", "5", "--shard", "1/3"], "out");
    expect(E.isRight(ok) && ok.right).toMatchObject({ workers: 1, shard: { index: 1, count: 3 } });
    expect(flagError(["--dataset", "5", "--workers", "0"])).toContain("--workers expects an integer ≥ 1");
    expect(flagError(["--dataset", "5", "--shard", "3/3"])).toContain("--shard expects K/N with 0 ≤ K < N");
    expect(flagError(["--dataset", "5", "--shard", "a/b"])).toContain("--shard expects K/N");
    expect(flagError(["--workers", "2"])).toContain("use them with --dataset N");
    expect(flagError(["--dataset", "5", "--workers", "2", "--shard", "0/2"])).toContain("either --workers or --shard");
  });

  it("shards partition the instances", () => {
    for (const count of [1, 2, 3, 7]) {
      const owned = Array.from({ length: count }, (_, index) => ownedInstances({ shard: { index, count } }, 10));
      expect(owned.flat().sort((a, b) => a - b)).toEqual(ownedInstances({ shard: null }, 10));
      for (const o of owned) expect(o.every((i) => i % count === owned.indexOf(o))).toBe(true);
    }
  });

  it("pendulum: the records merged from 2 workers are a single process's", async () => {
    const args = ["--dataset", "3", "--iters", "5"];
    const single = await runQuiet(pendulum, args);
    const split = await runQuiet(pendulum, [...args, "--workers", "2"]);
    expect([single.code, split.code]).toEqual([0, 0]);
    expect(readdirSync(split.out).filter((f) => f.startsWith("worker-")).sort()).toEqual(["worker-0", "worker-1"]);
    const one = readResult(single.out).pendulum, two = readResult(split.out).pendulum;
    expect(two.records.map((r: { index: number }) => r.index)).toEqual([0, 1, 2]);
    expect(untimed(two)).toEqual(untimed(one));
    expect(JSON.parse(readFileSync(join(split.out, "pendulum-instances.json"), "utf8"))).toEqual(two.records);
  }, 180_000);

  it("rigid-mass: a shard fits its objects as the whole dataset's run does", async () => {
    // (The merge itself is the same code for both runners; the pendulum test above covers it.)
    const args = ["--dataset", "2", "--iters", "5"];
    const single = await runQuiet(rigidMass, args);
    const shard = await runQuiet(rigidMass, [...args, "--shard", "1/2"]);
    expect([single.code, shard.code]).toEqual([0, 0]);
    const all = readResult(single.out).objects, mine = readResult(shard.out).objects;
    expect(mine.map((o: { index: number }) => o.index)).toEqual([1]);
    expect(untimed(mine[0])).toEqual(untimed(all[1]));
  }, 240_000);

  it("a failing worker fails the run and is named", async () => {
    const out = outDir("workers-fail");
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "worker-1"), "a file where worker 1's output directory should go");
    const r = spawnSync(process.execPath, ["--import", "tsx", "bin/gradsim.ts", "pendulum", "--backend", "cpu", "--quick", "--dataset", "2", "--workers", "2", "--out", out], { encoding: "utf8", timeout: 120_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--workers: worker 1");
  }, 150_000);
});
