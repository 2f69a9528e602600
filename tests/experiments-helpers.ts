/**
 * Running experiments from tests: in-process on the CPU backend with --quick --json (so no
 * progress output), the result read back from result.json; and the CLI as a child process.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { runExperiment, type Experiment } from "../examples/lib/run.js";
import { table3Markdown, TABLE3_COLUMNS, type Table3Column, type Table3Report } from "../examples/lib/tables.js";

const created: string[] = [];
/** A fresh output directory, removed when the importing test file finishes. */
export const outDir = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `gradsim-${name}-`));
  created.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of created.splice(0)) rmSync(d, { recursive: true, force: true });
});

export const readResult = (dir: string): any => JSON.parse(readFileSync(join(dir, "result.json"), "utf8"));

/**
 * Run an experiment quietly (--backend cpu --quick --json plus `args`) into `out` (a new dir by default); returns the
 * exit code and the output dir.
 */
export async function runQuiet(
  exp: Experiment<object>,
  args: readonly string[] = [],
  out = outDir(exp.name),
): Promise<{ code: number; out: string }> {
  const write = process.stdout.write;
  // --json prints the result as one line; keep the test log clean.
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    const code = await runExperiment(exp, ["--backend", "cpu", "--quick", "--json", "--out", out, ...args]);
    return { code, out };
  } finally {
    process.stdout.write = write;
  }
}

/** `gradsim <args>` as a child process. */
export function cli(args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", "bin/gradsim.ts", ...args], {
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Losses column of a loss-curve CSV. */
export const lossColumn = (path: string): number[] =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => Number(l.split(",")[1]));

/** Cells [ours, paper] of the reproduce harness's Table 3 markdown, by row label prefix and column. */
export function table3Cells(reports: {
  deformable: Table3Report | null;
  cloth: Table3Report | null;
}): (row: string, column: Table3Column) => [string, string] {
  const lines = table3Markdown(reports).split("\n");
  return (row, column) => {
    const cells = lines
      .find((l) => l.startsWith(`| ${row}`))!
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());
    const k = 1 + 2 * TABLE3_COLUMNS.indexOf(column);
    return [cells[k]!, cells[k + 1]!];
  };
}
