/**
 * Running dataset shards as child processes on this machine: each child is the same command with
 * its own `--shard k/N`, writing its instance records into the shared output directory (see
 * dataset-store.ts); their progress lines interleave on stderr, tagged with the worker.
 *
 * The children never outlive the parent: a parent's SIGTERM or SIGINT (what Kubernetes, Slurm and
 * Ctrl-C send) is passed on to them, and each child watches its parent from a thread of its own —
 * when the parent ends in any way (SIGKILL included, which cannot be caught) the child is
 * re-parented and ends itself. Records are written atomically, so a child stopped mid-fit loses only the
 * instance it was fitting.
 */
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";

export interface WorkerCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * The parts of a started worker its caller uses. Spelled out (rather than Node's ChildProcess)
 * so that the published declarations type-check without @types/node in the user's project.
 */
export interface TaggedChild {
  /** null while the child runs. */
  readonly exitCode: number | null;
  /** The signal that ended it, null while it runs or when it exited by itself. */
  readonly signalCode: string | null;
  kill(signal?: "SIGTERM" | "SIGINT" | "SIGHUP"): boolean;
}
/** How a worker ended: its exit code, or the signal (e.g. "SIGTERM") that ended it. */
export interface WorkerExit {
  readonly code: number | null;
  readonly signal: string | null;
}

/** Set in a worker's environment: it should end with its parent (see exitWithParent). */
export const WORKER_ENV = "GRADSIM_WORKER_OF";

/**
 * In a worker: end this process as soon as its parent (the pid in WORKER_ENV) is gone, i.e. we are
 * re-parented — also when that happened before this was called. The check runs
 * on its own thread, since a fit can hold the main thread's event loop for many seconds.
 */
export function exitWithParent(): void {
  const watchdog = new Worker(
    `
    const { workerData } = require("node:worker_threads");
    setInterval(() => { if (process.ppid !== workerData.parent) process.kill(workerData.self, "SIGTERM"); }, 200);
  `,
    { eval: true, workerData: { parent: Number(process.env[WORKER_ENV]) || process.ppid, self: process.pid } },
  );
  watchdog.unref();
}

/**
 * Start a command with its stderr lines copied to ours, each prefixed with `[tag] `. With `sideBySide` children
 * running at once, each child's CPU kernels use its share of the cores (GRADSIM_CPU_THREADS, unless that is set).
 */
export function spawnTagged(
  { command, args }: WorkerCommand,
  tag: string,
  sideBySide = 1,
): { child: TaggedChild; exit: Promise<WorkerExit> } {
  const threads = String(Math.max(1, Math.floor(availableParallelism() / sideBySide)));
  const child = spawn(command, [...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { GRADSIM_CPU_THREADS: threads, ...process.env, [WORKER_ENV]: String(process.pid) },
  });
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
  return {
    child: {
      get exitCode() {
        return child.exitCode;
      },
      get signalCode() {
        return child.signalCode;
      },
      kill: (signal) => child.kill(signal),
    },
    exit,
  };
}

/** Run the commands side by side to the end; a failing one stops the others and rejects. */
export async function runWorkers(commands: readonly WorkerCommand[]): Promise<void> {
  const children = commands.map((c, k) => {
    const { child, exit } = spawnTagged(c, `worker ${k}`, commands.length);
    const done = exit.then(({ code, signal }) => {
      if (code !== 0)
        throw new Error(
          `worker ${k} (${[c.command, ...c.args].join(" ")}) exited ` +
            `with ${signal ?? `code ${code}`}; its log is above, tagged [worker ${k}]. ` +
            "Its finished instances are kept: rerun the same command to resume.",
        );
    });
    return { child, done };
  });
  const stopAll = (signal: "SIGTERM" | "SIGINT" | "SIGHUP" = "SIGTERM") => {
    for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  // Our own termination signals go to the children too, then end us as the signal would.
  const forward = (signal: "SIGTERM" | "SIGINT" | "SIGHUP") => {
    stopAll(signal);
    for (const [s, h] of handlers) process.off(s, h);
    process.kill(process.pid, signal);
  };
  const handlers = (["SIGTERM", "SIGINT", "SIGHUP"] as const).map((s) => [s, () => forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  try {
    await Promise.all(children.map((c) => c.done));
  } catch (e) {
    stopAll();
    throw e;
  } finally {
    for (const [s, h] of handlers) process.off(s, h);
  }
}
