/**
 * Running dataset shards as child processes on this machine: each child is the same command with
 * its own `--shard k/N`, writing its instance records into the shared output directory (see
 * dataset-store.ts); their progress lines interleave on stderr, tagged with the worker.
 */
import { spawn } from "node:child_process";

export interface WorkerCommand { readonly command: string; readonly args: readonly string[] }

/**
 * The parts of a started worker its caller uses. Spelled out (rather than Node's ChildProcess)
 * so that the published declarations type-check without @types/node in the user's project.
 */
export interface TaggedChild {
  /** null while the child runs. */
  readonly exitCode: number | null;
  kill(): boolean;
}
/** How a worker ended: its exit code, or the signal (e.g. "SIGTERM") that ended it. */
export interface WorkerExit { readonly code: number | null; readonly signal: string | null }

/** Start a command with its stderr lines copied to ours, each prefixed with `[tag] `. */
export function spawnTagged({ command, args }: WorkerCommand, tag: string): { child: TaggedChild; exit: Promise<WorkerExit> } {
  const child = spawn(command, [...args], { stdio: ["ignore", "ignore", "pipe"] });
  let pending = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    const lines = (pending + chunk).split(/\r?\n|\r/);
    pending = lines.pop()!;
    for (const line of lines) if (line) process.stderr.write(`[${tag}] ${line}\n`);
  });
  const exit = new Promise<WorkerExit>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal }));
  });
  return { child: { get exitCode() { return child.exitCode; }, kill: () => child.kill() }, exit };
}

/** Run the commands side by side to the end; a failing one stops the others and rejects. */
export async function runWorkers(commands: readonly WorkerCommand[]): Promise<void> {
  const children = commands.map((c, k) => {
    const { child, exit } = spawnTagged(c, `worker ${k}`);
    const done = exit.then(({ code, signal }) => {
      if (code !== 0) throw new Error(`worker ${k} (${[c.command, ...c.args].join(" ")}) exited with ${signal ?? `code ${code}`}; its log is above, tagged [worker ${k}]. ` +
        "Its finished instances are kept: rerun the same command to resume.");
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
