/**
 * Running dataset shards as child processes on this machine: each child is the same command with
 * its own `--shard k/N`, writing its instance records into the shared output directory (see
 * dataset-store.ts); their progress lines interleave on stderr, tagged with the worker.
 */
import { spawn } from "node:child_process";

export interface WorkerCommand { readonly command: string; readonly args: readonly string[] }

/** Run the commands side by side to the end; a failing one stops the others and rejects. */
export async function runWorkers(commands: readonly WorkerCommand[]): Promise<void> {
  const children = commands.map(({ command, args }, k) => {
    const child = spawn(command, [...args], { stdio: ["ignore", "ignore", "pipe"] });
    let pending = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (pending + chunk).split(/\r?\n|\r/);
      pending = lines.pop()!;
      for (const line of lines) if (line) process.stderr.write(`[worker ${k}] ${line}\n`);
    });
    const done = new Promise<void>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) => (code === 0 ? resolve()
        : reject(new Error(`worker ${k} (${[command, ...args].join(" ")}) exited with ${signal ?? `code ${code}`}; its log is above, tagged [worker ${k}]. ` +
          "Its finished instances are kept: rerun the same command to resume."))));
    });
    return { child, done };
  });
  try {
    await Promise.all(children.map((c) => c.done));
  } catch (e) {
    for (const { child } of children) if (child.exitCode === null) child.kill();
    throw e;
  }
}
