/**
 * risp-state and risp-tasks merges: a run without --shard over records some shard wrote refuses
 * (exit 2, naming the missing units and their shard) instead of training or fitting them itself.
 */
import { describe, expect, it } from "vitest";
import { runKey } from "../examples/lib/experiment.js";
import type { ExperimentContext } from "../examples/lib/run.js";
import { experiment as rispState, RISP_STATE_SETTINGS, storeKey } from "../examples/risp-state.js";
import { experiment as rispTasks } from "../examples/risp-tasks.js";
import { fileRecordStore } from "../src/sysid/node.js";
import { outDir, runQuiet } from "./experiments-helpers.js";

/** The key runQuiet's run (--backend cpu --quick --json) has (risp-state's: in the tables' domain, at its size). */
const keyOf = (experiment: string, out: string) => {
  const ctx = {
    experiment,
    flags: { seed: 0, dataset: null, quick: true, iters: null },
    out,
    backend: "cpu",
  } as unknown as ExperimentContext;
  return experiment === "risp-state" ? storeKey(ctx, "table", RISP_STATE_SETTINGS.quick.resolution) : runKey(ctx);
};

describe("risp merges", () => {
  for (const [name, exp] of [
    ["risp-state", rispState],
    ["risp-tasks", rispTasks],
  ] as const) {
    it(`${name}: a merge refuses while a shard's units have no record`, async () => {
      const out = outDir(`${name}-merge`);
      // Unit 0's record, written by shard 0/2 (its content is never read: the refusal comes first).
      fileRecordStore<{ index: number }>(out, name, keyOf(name, out), { shard: { index: 0, count: 2 } }).save({
        index: 0,
      });
      let stderr = "";
      const errors = process.stderr.write;
      process.stderr.write = ((s: string) => {
        stderr += s;
        return true;
      }) as typeof process.stderr.write;
      try {
        expect((await runQuiet(exp, [], out)).code).toBe(2);
      } finally {
        process.stderr.write = errors;
      }
      expect(stderr).toMatch(
        new RegExp(
          `${name}: merging the shards' records, but instances [0-9, …]+ ` +
            `\\(of shards 1/2, 0/2\\) have no record: run those shards to the end`,
        ),
      );
    }, 60_000);
  }
});
