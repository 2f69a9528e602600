/**
 * The dataset protocol (sysid.runDataset) and its distribution: shards partition the instances,
 * records persist one file per instance (so a rerun resumes, and shards in other processes or on
 * other machines write into one results directory), `--workers N` merges to exactly a single
 * process's records, records of another run are refused, and a failing worker is named.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { np, sysid, type Array } from "../src/index.js";
import { availableParallelism } from "node:os";
import { fileRecordStore, spawnTagged } from "../src/sysid/node.js";
import { parseFlags } from "../examples/lib/flags.js";
import { runDatasetTask, runKey } from "../examples/lib/experiment.js";
import type { ExperimentContext } from "../examples/lib/run.js";
import { InputFileError } from "../src/io/input-file-error.js";
import { experiment as pendulum } from "../examples/pendulum.js";
import { outDir, readResult, runQuiet } from "./experiments-helpers.js";

const flagError = (argv: string[]): string => {
  const r = parseFlags(argv, "out");
  if (E.isRight(r)) throw new Error(`expected ${argv.join(" ")} to be rejected`);
  return r.left.message;
};

/** A result without its timings (which differ between runs). */
const untimed = (x: unknown): unknown =>
  globalThis.Array.isArray(x)
    ? x.map(untimed)
    : x && typeof x === "object"
      ? Object.fromEntries(
          Object.entries(x)
            .filter(([k]) => k !== "seconds")
            .map(([k, v]) => [k, untimed(v)]),
        )
      : x;

/** A toy task: y(t) = a·t + b for t = 0..7 observed as 3-D states; gradsim and diffphysics both fit the states. */
const lineTask: sysid.DatasetTask<Array> = {
  name: "line",
  unknowns: [
    { name: "a", prior: [-2, 2] },
    { name: "b", prior: [-1, 1] },
  ],
  trainSize: 10,
  sample: (rng) => {
    const draw = () => ({ a: rng.uniform(-2, 2), b: rng.uniform(-1, 1) });
    const truth = draw(),
      initial = draw(),
      prior = draw();
    return {
      truth,
      initial,
      prior,
      describe: `a ${truth.a.toFixed(3)}, b ${truth.b.toFixed(3)}`,
      problem: () => ({ frames: 8, simulate: (p, frames) => np.add(np.mul(p.a!, np.arange(frames)), p.b!) }),
    };
  },
  methods: () => ({ fit: { method: "states", settings: { optimizer: "lbfgs", steps: 10, progress: false } } }),
};

describe("dataset protocol", () => {
  it("validates --workers and --shard", () => {
    const ok = parseFlags(["--dataset", "5", "--shard", "1/3"], "out");
    expect(E.isRight(ok) && ok.right).toMatchObject({ workers: 1, shard: { index: 1, count: 3 } });
    expect(flagError(["--dataset", "5", "--workers", "0"])).toContain("--workers expects an integer ≥ 1");
    expect(flagError(["--dataset", "5", "--shard", "3/3"])).toContain("--shard expects K/N with 0 ≤ K < N");
    expect(flagError(["--dataset", "5", "--shard", "a/b"])).toContain("--shard expects K/N");
    expect(flagError(["--workers", "2"])).toContain("use them with --dataset N");
    expect(flagError(["--dataset", "5", "--workers", "2", "--shard", "0/2"])).toContain("either --workers or --shard");
  });

  it("summarises every row; shards partition the instances and their records are the whole run's", async () => {
    const whole = await sysid.runDataset(lineTask, { instances: 7, seed: 4 });
    expect(Object.keys(whole.rows)).toEqual(["average", "random", "fit"]);
    expect(whole.rows.fit!.relMae!.a).toBeLessThan(1e-4);
    expect(whole.rows.random!.relMae!.a).toBeGreaterThan(0.05);
    const shards = await Promise.all(
      [0, 1, 2].map((index) => sysid.runDataset(lineTask, { instances: 7, seed: 4, shard: { index, count: 3 } })),
    );
    shards.forEach((s, k) =>
      expect(s.records.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6].filter((i) => i % 3 === k)),
    );
    const merged = shards.flatMap((s) => s.records).sort((x, y) => x.index - y.index);
    expect(untimed(merged)).toEqual(untimed(whole.records));
  });

  it("keeps each finished instance in its own file, resumes from them, refuses records of another run", async () => {
    const dir = outDir("store");
    const logged: string[] = [];
    const first = await sysid.runDataset(lineTask, {
      instances: 3,
      seed: 1,
      store: fileRecordStore(dir, "line", "run A"),
      shard: { index: 0, count: 2 },
    });
    expect(readdirSync(join(dir, "line-instances")).sort()).toEqual(["00000.json", "00002.json"]);
    // A second process (another machine, say) fits the other shard into the same directory; the merge run fits nothing.
    await sysid.runDataset(lineTask, {
      instances: 3,
      seed: 1,
      store: fileRecordStore(dir, "line", "run A"),
      shard: { index: 1, count: 2 },
    });
    const merged = await sysid.runDataset(lineTask, {
      instances: 3,
      seed: 1,
      store: fileRecordStore(dir, "line", "run A"),
      log: (l) => logged.push(l),
    });
    expect(logged.filter((l) => l.includes("finished earlier"))).toHaveLength(3);
    expect(merged.records.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(merged.records[0]).toEqual(first.records[0]);
    expect(() => fileRecordStore(dir, "line", "run B").load(0)).toThrow(
      /was written by another run \(run A\), not this one \(run B\)/,
    );
    writeFileSync(join(dir, "line-instances", "00001.json"), "{ not json");
    expect(() => fileRecordStore(dir, "line", "run A").load(1)).toThrow(
      /00001.json is not a readable record.*delete it to refit/,
    );
  });

  // Records that would lie: a missing row, null, a string, another run's settings.
  it("refuses kept records that would lie in the table, and names the file", async () => {
    const dir = outDir("store-valid");
    const store = fileRecordStore(dir, "line", "run A");
    await sysid.runDataset(lineTask, { instances: 2, seed: 1, store });
    const file = join(dir, "line-instances", "00001.json");
    const original = JSON.parse(readFileSync(file, "utf8"));
    const edited = (edit: (r: any) => void) => {
      const x = structuredClone(original);
      edit(x.record);
      writeFileSync(file, JSON.stringify(x));
    };
    const rerun = () =>
      sysid.runDataset(lineTask, { instances: 2, seed: 1, store: fileRecordStore(dir, "line", "run A") });
    edited((r) => {
      delete r.relMae.fit;
    });
    await expect(rerun()).rejects.toThrow(
      /00001\.json \(instance 1\) has no relMae for the row "fit".*delete it to refit/,
    );
    edited((r) => {
      r.relMae.fit.a = null;
    });
    await expect(rerun()).rejects.toThrow(/relMae\.fit\.a = null, not a finite number/);
    edited((r) => {
      r.meanAbsError.random.b = "0.1";
    });
    await expect(rerun()).rejects.toThrow(/meanAbsError\.random\.b = "0\.1", not a finite number/);
    await expect(rerun()).rejects.toBeInstanceOf(InputFileError);
    writeFileSync(file, JSON.stringify(original));
    expect((await rerun()).records).toHaveLength(2);
    // Through the experiment layer: the run key holds the code version and the task's resolved settings.
    const ctx = {
      experiment: "line",
      flags: { seed: 1, dataset: 2, quick: true, iters: null, shard: null },
      out: outDir("store-key"),
      backend: "cpu",
      log: () => {},
    } as unknown as ExperimentContext;
    expect(runKey(ctx)).toMatch(/^line code=\d+\.\d+\.\d+\+[0-9a-f]{12} seed=1/);
    await runDatasetTask(ctx, lineTask);
    const changed = {
      ...lineTask,
      methods: () => ({
        fit: {
          method: "states" as const,
          settings: { optimizer: "lbfgs" as const, steps: 11, progress: false as const },
        },
      }),
    };
    await expect(runDatasetTask(ctx, changed)).rejects.toThrow(
      /was written by another run \(line code=.* settings=[0-9a-f]{12}\), not this one/,
    );
  });

  it("a run of another size keeps a run's records (instance i is drawn alike), but not another draw's", async () => {
    const out = outDir("store-sizes");
    const ctx = (dataset: number) =>
      ({
        experiment: "line",
        flags: { seed: 5, dataset, quick: true, iters: null, shard: null },
        out,
        backend: "cpu",
        log: () => {},
      }) as unknown as ExperimentContext;
    expect(runKey(ctx(2))).toContain("dataset=2");
    expect(runKey(ctx(2), { perInstance: true })).toBe(runKey(ctx(3), { perInstance: true }));
    const small = await runDatasetTask(ctx(2), lineTask);
    const logged: string[] = [];
    const large = await runDatasetTask({ ...ctx(3), log: (l: string) => logged.push(l) }, lineTask);
    expect(logged.filter((l) => l.includes("finished earlier"))).toHaveLength(2);
    expect(large.records.slice(0, 2)).toEqual(small.records);
    expect(large.instances).toBe(3);
    // A record whose description is not this run's draw (another sampler, say) is refused, naming the file.
    const file = join(out, "line-instances", "00001.json");
    const kept = JSON.parse(readFileSync(file, "utf8"));
    kept.record.describe = "a 0.000, b 0.000";
    writeFileSync(file, JSON.stringify(kept));
    await expect(runDatasetTask(ctx(3), lineTask)).rejects.toThrow(
      /00001\.json \(instance 1\) describes "a 0\.000, b 0\.000", but this run draws "a .*delete it to refit/,
    );
  });

  it("a merge (no --shard) over shards' records refuses to fit a shard's unfinished instances itself", async () => {
    const dir = outDir("store-merge");
    await sysid.runDataset(lineTask, {
      instances: 5,
      seed: 2,
      shard: { index: 0, count: 2 },
      store: fileRecordStore(dir, "line", "run A", { shard: { index: 0, count: 2 } }),
    });
    const merge = () =>
      sysid.runDataset(lineTask, { instances: 5, seed: 2, store: fileRecordStore(dir, "line", "run A") });
    await expect(merge()).rejects.toThrow(
      new RegExp(
        /line: merging the shards' records, but instances 1, 3 \(of shard 1\/2\) have no record: /.source +
          /run that shard to the end/.source,
      ),
    );
    await expect(merge()).rejects.toBeInstanceOf(sysid.IncompleteMergeError);
    await sysid.runDataset(lineTask, {
      instances: 5,
      seed: 2,
      shard: { index: 1, count: 2 },
      store: fileRecordStore(dir, "line", "run A", { shard: { index: 1, count: 2 } }),
    });
    expect((await merge()).records.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    // An unsharded run's own records resume as before: the missing ones are fitted.
    const single = outDir("store-resume");
    await sysid.runDataset(lineTask, { instances: 2, seed: 2, store: fileRecordStore(single, "line", "run A") });
    expect(
      (await sysid.runDataset(lineTask, { instances: 4, seed: 2, store: fileRecordStore(single, "line", "run A") }))
        .records,
    ).toHaveLength(4);
  });

  it("--workers children end with their parent: on its SIGTERM and on its SIGKILL", async () => {
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      const out = outDir(`workers-${signal}`);
      const parent = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          "bin/gradsim.ts",
          "pendulum",
          "--backend",
          "cpu",
          "--dataset",
          "4",
          "--workers",
          "2",
          "--out",
          out,
        ],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      let stderr = "";
      parent.stderr!.setEncoding("utf8").on("data", (c: string) => {
        stderr += c;
      });
      const children = async (): Promise<number[]> => {
        // The workers (tsx also starts an esbuild service, which is not ours to check).
        const ps = spawnSync("ps", ["-o", "pid=,args=", "--ppid", String(parent.pid)], { encoding: "utf8" });
        return ps.stdout
          .split("\n")
          .filter((l) => l.includes("--shard"))
          .map((l) => Number(l.trim().split(/\s+/)[0]));
      };
      // Wait until both workers have started.
      let kids: number[] = [];
      for (let t = 0; t < 600 && kids.length < 2; t++) {
        await new Promise((r) => setTimeout(r, 100));
        kids = await children();
      }
      expect(kids.length).toBe(2);
      parent.kill(signal);
      const alive = () =>
        kids.filter((pid) => {
          try {
            process.kill(pid, 0);
            return true;
          } catch {
            return false;
          }
        });
      for (let t = 0; t < 200 && alive().length; t++) await new Promise((r) => setTimeout(r, 100));
      expect(alive(), `${signal}: workers still running; parent's log: ${stderr}`).toEqual([]);
    }
  }, 180_000);

  it("pendulum --workers 2: the records merged from the child processes are a single process's", async () => {
    const args = ["--dataset", "3", "--iters", "5"];
    const single = await runQuiet(pendulum, args);
    const split = await runQuiet(pendulum, [...args, "--workers", "2"]);
    expect([single.code, split.code]).toEqual([0, 0]);
    expect(readdirSync(join(split.out, "pendulum-instances")).sort()).toEqual([
      "00000.json",
      "00001.json",
      "00002.json",
    ]);
    const one = readResult(single.out).pendulum,
      two = readResult(split.out).pendulum;
    expect(two.records.map((r: { index: number }) => r.index)).toEqual([0, 1, 2]);
    expect(untimed(two)).toEqual(untimed(one));
  }, 240_000);

  it("a failing worker fails the run and is named", async () => {
    const out = outDir("workers-fail");
    mkdirSync(join(out, "pendulum-instances"), { recursive: true });
    // Instance 1 belongs to worker 1 of 2; a corrupt record there stops that worker.
    writeFileSync(join(out, "pendulum-instances", "00001.json"), "corrupt");
    const r = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "bin/gradsim.ts",
        "pendulum",
        "--backend",
        "cpu",
        "--quick",
        "--dataset",
        "2",
        "--workers",
        "2",
        "--out",
        out,
      ],
      { encoding: "utf8", timeout: 150_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--workers: worker 1");
    expect(r.stderr).toContain("00001.json is not a readable record");
  }, 180_000);

  it("children side by side share the cores (GRADSIM_CPU_THREADS = cores / children, unless set)", async () => {
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    const saved = process.env.GRADSIM_CPU_THREADS;
    try {
      const print = {
        command: process.execPath,
        args: ["-e", "console.error('threads=' + process.env.GRADSIM_CPU_THREADS)"],
      };
      delete process.env.GRADSIM_CPU_THREADS;
      await spawnTagged(print, "a", 1000).exit;
      await spawnTagged(print, "b", 1).exit;
      process.env.GRADSIM_CPU_THREADS = "3";
      await spawnTagged(print, "c", 1000).exit;
    } finally {
      process.stderr.write = write;
      if (saved === undefined) delete process.env.GRADSIM_CPU_THREADS;
      else process.env.GRADSIM_CPU_THREADS = saved;
    }
    expect(lines).toContain("[a] threads=1\n");
    expect(lines).toContain(`[b] threads=${availableParallelism()}\n`);
    expect(lines).toContain("[c] threads=3\n");
  });
});
