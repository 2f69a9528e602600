/**
 * Running an experiment: parse flags, pick the backend, run with progress on stderr, write
 * result.json (and any images the experiment writes) under --out, print the result as one JSON
 * line with --json. Bad input exits with code 2 and a clear message.
 */
import { mkdirSync } from "node:fs";
import { writeAtomic, DivergenceError, defaultBackend, init, InputFileError } from "gradsim/node";
import { IncompleteMergeError, exitWithParent, runWorkers, WORKER_ENV } from "gradsim/sysid/node";
import { join, resolve } from "node:path";
import * as E from "fp-ts/lib/Either.js";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CliError, parseFlags, type Flags } from "./flags.js";

export interface ExperimentContext {
  /** The experiment's CLI name (what dataset workers are started as). */
  readonly experiment: string;
  readonly flags: Flags;
  /** Output directory (created). */
  readonly out: string;
  readonly backend: "cpu" | "webgpu";
  /** Progress line on stderr (silent with --json). */
  log(msg: string): void;
}

export interface Experiment<R extends object> {
  readonly name: string;
  readonly description: string;
  /** What `--target FILE` reads (e.g. "a scene JSON"); absent: the experiment takes no --target. */
  readonly target?: string;
  /** The flags only some experiments read (`OWN_FLAGS`) that this one takes; any other is refused. */
  readonly takes?: readonly OwnFlag[];
  run(ctx: ExperimentContext): Promise<R>;
  /** The exit code for a finished run (default 0): a fit whose verdict is not "fits" ends non-zero. */
  exitCode?(result: R): number;
}

const FIT = "to fit your own video use: gradsim fit --video FILE --scene scene.json [--unknowns mass,mu]";
const POLICY = "only the control experiments (control-walker, control-fem, control-cloth) train a policy";
const RISP_TASKS = "only risp-tasks (RISP Tables 2–4) takes --task";
/** Flags that only some experiments read, and where to go instead when given to another. */
const OWN_FLAGS = {
  video: FIT,
  scene: FIT,
  unknowns: FIT,
  restarts: FIT,
  scan: FIT,
  precision: FIT,
  policy: POLICY,
  seeds: POLICY,
  task: RISP_TASKS,
  networks: "only risp-tasks, risp-temporal-sampling and risp-quadrotor-standin read trained predictors (--networks)",
  domain: "only risp-state and risp-tasks take --domain (their test images' rendering)",
  envs: "only risp-state and risp-tasks choose environments",
  resolution: "only risp-state takes --resolution (its images' side)",
  procedure: "only risp-tasks (how its rows are fitted) and convlstm (how much it trains on) take --procedure",
  set: "only outside (the videos of other engines and renderers) takes --set",
} as const;
export type OwnFlag = keyof typeof OWN_FLAGS;

export const USAGE =
  "flags: --seed N  --backend cpu|webgpu|auto  --out DIR  --iters N  --json  --quick  " +
  "--threads N (CPU kernels' threads; default: the cores)  " +
  "--dataset N  --workers N (dataset runs: fit N instances at a time in child processes)  " +
  "--shard K/N (dataset runs: fit instances i with i mod N = K; rerun without it to merge)  " +
  "--target FILE (rigid-mass: a scene JSON; smoke: a PNG)  " +
  "--video FILE --scene FILE --unknowns a,b --restarts N --scan N (fit)  " +
  "--policy P (control: phase inputs) --seeds N (control: seeds per method)  " +
  "--envs E,F (risp-state, risp-tasks: some of quadrotor|cube|hand|rod)  " +
  "--task T (risp-tasks: sysid|imitation|control)  " +
  "--procedure P (risp-tasks: ours|paper, the paper's 100 RMSProp steps then our scan and polish)  " +
  "--networks DIR (risp-tasks, risp-temporal-sampling, risp-quadrotor-standin: " +
  "the risp-state run with the trained predictors)  " +
  "--resolution N (risp-state: the images' side in pixels)  " +
  "--domain D (risp-state: the test configurations, table|held-out; " +
  "risp-tasks: the references' rendering, table|reversed-contrast)  " +
  "--set S (outside: the videos, validation|held-out)";

/**
 * Run an experiment from argv; returns the process exit code (0 ok, 1 failure, 2 bad input, or the experiment's own for
 * a finished run).
 */
export async function runExperiment<R extends object>(exp: Experiment<R>, argv: readonly string[]): Promise<number> {
  const parsed = parseFlags(argv, join("out", exp.name));
  if (E.isLeft(parsed)) {
    process.stderr.write(`gradsim ${exp.name}: ${parsed.left.message}\n${USAGE}\n`);
    return 2;
  }
  const flags = parsed.right;
  if (flags.help) {
    process.stdout.write(`gradsim ${exp.name}: ${exp.description}\n${USAGE}\n`);
    return 0;
  }
  if (flags.target !== null && !exp.target) {
    process.stderr.write(
      `gradsim ${exp.name}: does not take --target: its scene is built in (use --seed and --dataset to vary it).\n`,
    );
    return 2;
  }
  const refused = (Object.keys(OWN_FLAGS) as OwnFlag[]).find((k) => flags[k] !== null && !exp.takes?.includes(k));
  if (refused) {
    process.stderr.write(`gradsim ${exp.name}: does not take --${refused}; ${OWN_FLAGS[refused]}.\n`);
    return 2;
  }
  // A --workers child ends with its parent, however the parent ends (SIGKILL included).
  if (process.env[WORKER_ENV]) exitWithParent();
  try {
    const backend = await init({ backend: flags.backend, ...(flags.threads ? { cpuThreads: flags.threads } : {}) });
    mkdirSync(flags.out, { recursive: true });
    const log = (msg: string) => {
      if (!flags.json) process.stderr.write(`${msg}\n`);
    };
    log(`gradsim ${exp.name} on ${backend}${flags.quick ? " (quick)" : ""}, writing to ${flags.out}/`);
    const t0 = performance.now();
    if (flags.workers > 1 && flags.dataset) await startWorkers(exp.name, argv, flags, backend, log);
    const result = await exp.run({ experiment: exp.name, flags, out: flags.out, backend, log });
    const full = {
      experiment: exp.name,
      ...result,
      seconds: Number(((performance.now() - t0) / 1000).toFixed(2)),
      backend: defaultBackend(),
      seed: flags.seed,
      quick: flags.quick,
    };
    // A shard's result covers 1/N of the instances: never the merged run's result.json, which the merge writes.
    const file = flags.shard ? shardResultName(flags.shard) : "result.json";
    const written = flags.shard ? { ...full, shard: { ...flags.shard, partial: true } } : full;
    writeAtomic(join(flags.out, file), JSON.stringify(written, null, 2) + "\n");
    if (flags.json) process.stdout.write(JSON.stringify(written) + "\n");
    else {
      const part = flags.shard
        ? " (this shard's part only: rerun without --shard once every shard is done, to merge into result.json)"
        : "";
      log(`done in ${full.seconds} s; results in ${flags.out}/${file}${part}`);
    }
    return exp.exitCode ? exp.exitCode(result) : 0;
  } catch (e) {
    // Bad input and simulations made unstable by the input's parameters: a message, not a stack.
    if (
      e instanceof CliError ||
      e instanceof DivergenceError ||
      e instanceof InputFileError ||
      e instanceof IncompleteMergeError
    ) {
      process.stderr.write(`gradsim ${exp.name}: ${e.message}\n`);
      return 2;
    }
    process.stderr.write(`gradsim ${exp.name} failed: ${(e as Error).stack ?? e}\n`);
    return 1;
  }
}

/** The file a `--shard K/N` run writes its partial result to (beside the records; result.json is the merge's). */
export const shardResultName = (shard: { readonly index: number; readonly count: number }): string =>
  `result.shard-${shard.index}-of-${shard.count}.json`;

/**
 * `--workers N` on a dataset run: N child processes of the same command, worker k with
 * `--shard k/N`, each writing its instances' records into the shared --out directory; the run then
 * continues here and finds every instance finished (sysid/node/dataset-store.ts).
 */
async function startWorkers(
  name: string,
  argv: readonly string[],
  flags: Flags,
  backend: string,
  log: (m: string) => void,
): Promise<void> {
  const count = Math.min(flags.workers, flags.dataset!); // no idle workers: each fits at least one instance
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--workers") {
      i++;
      continue;
    }
    if (argv[i]!.startsWith("--workers=")) continue;
    rest.push(argv[i]!);
  }
  log(`--workers ${flags.workers}: fitting the ${flags.dataset} instances in ${count} child processes`);
  const bin = fileURLToPath(new URL("../../bin/gradsim.ts", import.meta.url));
  const tsx = import.meta.resolve("tsx");
  try {
    await runWorkers(
      Array.from({ length: count }, (_, k) => ({
        command: process.execPath,
        args: [
          "--import",
          tsx,
          bin,
          name,
          ...rest,
          "--out",
          flags.out,
          "--backend",
          backend,
          "--shard",
          `${k}/${count}`,
        ],
      })),
    );
  } catch (e) {
    throw new Error(`--workers: ${(e as Error).message}`);
  }
}

/** Whether the module at `moduleUrl` is the script node was started with (with or without its .ts). */
export function isEntry(moduleUrl: string): boolean {
  const entry = process.argv[1] ? pathToFileURL(resolve(process.argv[1])).href : "";
  return entry === moduleUrl || entry.replace(/\.ts$/, "") === moduleUrl.replace(/\.ts$/, "");
}

/** For `npx tsx examples/<name>.ts`: run when the module is the entry point. */
export async function mainIfEntry<R extends object>(exp: Experiment<R>, moduleUrl: string): Promise<void> {
  if (isEntry(moduleUrl)) {
    const code = await runExperiment(exp, process.argv.slice(2));
    process.exit(code);
  }
}
