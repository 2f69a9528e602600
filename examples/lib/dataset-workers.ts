/**
 * Dataset runs on several cores. `--workers N` starts N child processes of the same experiment,
 * worker k with `--shard k/N` (it fits the instances i with i mod N = k) and `--out
 * <out>/worker-k`; the parent then reads every worker's per-instance records, merges them by
 * index and summarises them as if it had fitted them all itself. An instance's draw and seeds
 * depend only on the seed and its index, so the merged records are the ones a single process
 * writes.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Flags } from "./flags.js";
import type { ExperimentContext } from "./run.js";
import { range } from "./estimation.js";

/** The dataset indices this process fits: all of them, or its shard's. */
export const ownedInstances = (flags: Pick<Flags, "shard">, n: number): number[] =>
  range(n).filter((i) => !flags.shard || i % flags.shard.count === flags.shard.index);

/**
 * A dataset's per-instance records in index order, also written to `<out>/<file>`: from the
 * workers with --workers, else fitted here (this shard's instances), the file rewritten after
 * each so that partial results survive an interrupted run.
 */
export async function datasetRecords<R extends { readonly index: number }>(ctx: ExperimentContext, file: string, n: number, fit: (i: number) => Promise<R>): Promise<R[]> {
  const records: R[] = [];
  const save = () => writeFileSync(join(ctx.out, file), JSON.stringify(records, null, 2) + "\n");
  if (ctx.flags.workers > 1) {
    records.push(...(await workerRecords<R>(ctx, file, n)));
    save();
  } else for (const i of ownedInstances(ctx.flags, n)) {
    records.push(await fit(i));
    save();
  }
  return records;
}

const runs = new WeakMap<ExperimentContext, Promise<string[]>>();

/**
 * Every worker's records in `file` (a JSON array of records with an `index`), merged by index.
 * The first call of a run starts the workers (each runs the whole experiment on its shard, so an
 * experiment with several datasets reads each of them from the same workers).
 */
async function workerRecords<R extends { readonly index: number }>(ctx: ExperimentContext, file: string, n: number): Promise<R[]> {
  let dirs = runs.get(ctx);
  if (!dirs) runs.set(ctx, (dirs = startWorkers(ctx)));
  const records = (await dirs).flatMap((dir) => JSON.parse(readFileSync(join(dir, file), "utf8")) as R[]).sort((a, b) => a.index - b.index);
  if (records.length !== n || records.some((r, i) => r.index !== i)) {
    throw new Error(`--workers: the workers' ${file} hold instances [${records.map((r) => r.index).join(", ")}], expected 0 to ${n - 1}.`);
  }
  return records;
}

/** Run the workers to the end; their output directories. A failing worker stops the others. */
async function startWorkers(ctx: ExperimentContext): Promise<string[]> {
  const { flags } = ctx;
  const bin = fileURLToPath(new URL("../../bin/gradsim.ts", import.meta.url));
  const tsx = import.meta.resolve("tsx");
  // No idle workers: each fits at least one instance.
  const count = Math.min(flags.workers, flags.dataset!);
  ctx.log(`--workers ${flags.workers}: fitting the ${flags.dataset} instances in ${count} child processes`);
  const dirs = range(count).map((k) => join(ctx.out, `worker-${k}`));
  const children = dirs.map((out, k) => {
    const args = [
      ctx.experiment, "--seed", String(flags.seed), "--backend", ctx.backend, "--dataset", String(flags.dataset),
      "--shard", `${k}/${count}`, "--out", out,
      ...(flags.quick ? ["--quick"] : []), ...(flags.iters ? ["--iters", String(flags.iters)] : []), ...(flags.json ? ["--json"] : []),
    ];
    const child = spawn(process.execPath, ["--import", tsx, bin, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    // Progress lines of all workers interleave on stderr, each tagged with its worker.
    let pending = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (pending + chunk).split(/\r?\n|\r/);
      pending = lines.pop()!;
      for (const line of lines) if (line) process.stderr.write(`[worker ${k}] ${line}\n`);
    });
    return { child, done: new Promise<void>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) => (code === 0 ? resolve()
        : reject(new Error(`--workers: worker ${k} (gradsim ${args.join(" ")}) exited with ${signal ?? `code ${code}`}; its log is above, tagged [worker ${k}].`))));
    }) };
  });
  try {
    await Promise.all(children.map((c) => c.done));
  } catch (e) {
    for (const { child } of children) if (child.exitCode === null) child.kill();
    throw e;
  }
  return dirs;
}
