/**
 * Dataset records on disk, one file per instance: `<dir>/<task>-instances/<index>.json`. Every
 * file is written atomically (a temporary file renamed into place), so any number of processes —
 * `--workers` children here, or `--shard k/N` runs on other machines writing into one shared
 * results directory — never clobber each other or leave half a record; and a rerun finds the
 * instances already finished and skips them. Merging is just a run without `--shard` once every
 * shard is done: it loads every record.
 *
 * Each file carries the run's key (experiment, code version, seed, dataset size, resolved
 * settings); a record written by a run with another key is an error, never silently mixed in. It
 * also names the shard that wrote it, so a merge can tell a shard's unfinished instances from a
 * single run's (which it would resume).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { writeAtomic } from "../../io/atomic.js";
import { InputFileError } from "../../io/input-file-error.js";
import { join } from "node:path";
import type { InstanceRecord, RecordStore } from "../dataset.js";

interface StoredRecord<R> {
  readonly run: string;
  readonly shard?: string | null;
  readonly record: R;
}

export function instanceDir(dir: string, task: string): string {
  return join(dir, `${task}-instances`);
}

/**
 * A record store in `<dir>/<task>-instances/` for runs identified by `runKey`; `shard` (this
 * process's --shard, if any) is written beside each record. Unreadable or foreign records throw
 * an InputFileError naming the file (the command line exits 2).
 */
export function fileRecordStore<R extends { readonly index: number } = InstanceRecord>(
  dir: string,
  task: string,
  runKey: string,
  o: { readonly shard?: { readonly index: number; readonly count: number } | null } = {},
): RecordStore<R> {
  const folder = instanceDir(dir, task);
  mkdirSync(folder, { recursive: true });
  const file = (i: number) => join(folder, `${String(i).padStart(5, "0")}.json`);
  const read = (i: number): StoredRecord<R> | null => {
    const path = file(i);
    if (!existsSync(path)) return null;
    let stored: StoredRecord<R>;
    try {
      stored = JSON.parse(readFileSync(path, "utf8")) as StoredRecord<R>;
    } catch (e) {
      throw new InputFileError(
        path,
        `dataset: ${path} is not a readable record (${(e as Error).message}); delete it to refit that instance.`,
      );
    }
    if (!stored || typeof stored !== "object")
      throw new InputFileError(
        path,
        `dataset: ${path} is not a record (it holds ${JSON.stringify(stored)}); delete it to refit that instance.`,
      );
    if (stored.run !== runKey) {
      throw new InputFileError(
        path,
        `dataset: ${path} was written by another run (${stored.run}), not this one (${runKey}); ` +
          "use a different --out directory, or delete the old records to refit them.",
      );
    }
    if (stored.record?.index !== i)
      throw new InputFileError(
        path,
        `dataset: ${path} holds instance ${stored.record?.index}, expected ${i}; delete it to refit that instance.`,
      );
    return stored;
  };
  const writer = o.shard ? `${o.shard.index}/${o.shard.count}` : null;
  return {
    load: (i) => read(i)?.record ?? null,
    origin: (i) => read(i)?.shard ?? null,
    where: (i) => file(i),
    save(record) {
      writeAtomic(
        file(record.index),
        JSON.stringify({ run: runKey, shard: writer, record } satisfies StoredRecord<R>, null, 1) + "\n",
      );
    },
  };
}

/** Indices of the finished instances in a store's folder (for progress and merge messages). */
export function finishedInstances(dir: string, task: string): number[] {
  const folder = instanceDir(dir, task);
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((n) => /^\d+\.json$/.test(n))
    .map((n) => Number(n.slice(0, -5)))
    .sort((a, b) => a - b);
}
