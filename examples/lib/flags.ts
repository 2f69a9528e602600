/**
 * Command-line flags shared by every experiment, validated with fp-ts Either so bad input
 * becomes one clear message (and exit code 2) instead of a stack trace.
 */
import * as E from "fp-ts/lib/Either.js";
import { pipe } from "fp-ts/lib/function.js";
import { sysid } from "gradsim";

export interface Flags {
  readonly seed: number;
  readonly backend: "cpu" | "webgpu" | "auto";
  readonly out: string;
  readonly iters: number | null;
  readonly json: boolean;
  readonly quick: boolean;
  readonly dataset: number | null;
  readonly target: string | null;
  readonly help: boolean;
  /** Dataset runs: how many child processes fit instances side by side (dataset-workers.ts). */
  readonly workers: number;
  /** Threads of the CPU backend's big compiled kernels (null: the default, see init's cpuThreads). */
  readonly threads: number | null;
  /** Dataset runs: fit only the instances i with i mod count = index (what each worker is given). */
  readonly shard: Shard | null;
  /** `fit`: the user's video, its scene file, and which unknowns to estimate (comma-separated). */
  readonly video: string | null;
  readonly scene: string | null;
  readonly unknowns: string | null;
  /**
   * `fit`: starts drawn from the prior before the descent, and grid points per unknown of the scan after it (0: none).
   */
  readonly restarts: number | null;
  readonly scan: number | null;
  /**
   * `fit`: the precision asked of every unknown, as a share of its value (`2%` or `0.02`; default the verdict's 25%).
   */
  readonly precision: number | null;
  /** Control experiments: sinusoidal phase inputs of the policy, and how many seeds each method runs. */
  readonly policy: number | null;
  readonly seeds: number | null;
  /**
   * risp-tasks: which task (sysid, imitation, control; default all) and where the trained predictors are; risp-state
   * and risp-tasks: which environments (comma-separated; default all).
   */
  readonly task: string | null;
  readonly envs: string | null;
  readonly networks: string | null;
  /** risp-state: the test configurations; risp-tasks: the references' rendering domain (default the tables'). */
  readonly domain: string | null;
  /** risp-state: the images' side in pixels (default the settings'). */
  readonly resolution: number | null;
  /** risp-tasks: how each row is fitted (ours, or the paper's RMSProp procedure). */
  readonly procedure: string | null;
  /** outside: which videos (the validation set, or the cases held out from it). */
  readonly set: string | null;
}

export interface Shard {
  readonly index: number;
  readonly count: number;
}

export class CliError extends Error {}

/** The names a comma-separated flag lists, each one of `known`; null if the flag was not given. */
export function chosenNames<T extends string>(flag: string, value: string | null, known: readonly T[]): T[] | null {
  if (value === null) return null;
  const names = value.split(",");
  const unknown = names.find((n) => !known.includes(n as T));
  if (unknown !== undefined)
    throw new CliError(`--${flag} takes ${known.join(", ")} (comma-separated), got "${unknown}".`);
  return names as T[];
}

/** The one of `known` a flag names, `fallback` if it was not given. */
export function oneOf<T extends string>(flag: string, value: string | null, known: readonly T[], fallback: T): T {
  const v = value ?? fallback;
  if (!(known as readonly string[]).includes(v))
    throw new CliError(`--${flag} must be one of ${known.join(", ")}, got "${v}".`);
  return v as T;
}

const BOOL = new Set(["json", "quick", "help"]);
const KNOWN = new Set([
  "seed",
  "backend",
  "out",
  "iters",
  "json",
  "quick",
  "dataset",
  "target",
  "help",
  "workers",
  "threads",
  "shard",
  "video",
  "scene",
  "unknowns",
  "restarts",
  "scan",
  "precision",
  "policy",
  "seeds",
  "task",
  "envs",
  "networks",
  "domain",
  "resolution",
  "procedure",
  "set",
]);

/**
 * An integer flag in [min, max]. Digits only (no "1e3", "0x10"), and never beyond `max`: past
 * 2^53 neighbouring integers collide silently, and a huge --dataset would only fail deep inside.
 */
export const intFlag = (
  name: string,
  v: string,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): E.Either<CliError, number> =>
  /^-?\d+$/.test(v) && Number.isSafeInteger(Number(v)) && Number(v) >= min && Number(v) <= max
    ? E.right(Number(v))
    : E.left(new CliError(`--${name} expects an integer ≥ ${min} and ≤ ${max}, got "${v}".`));

/**
 * Upper bounds of the integer flags: seeds are 32-bit (derived seeds such as seed·7919 + k stay exact), sizes what a
 * run can hold.
 */
export const FLAG_MAX = {
  seed: 2 ** 32 - 1,
  iters: 100_000_000,
  dataset: 1_000_000,
  policy: 1000,
  seeds: 100_000,
  workers: 1024,
  threads: 64,
  shards: 1_000_000,
  restarts: 10_000,
  scan: 10_000,
  resolution: 512,
} as const;

/**
 * A share in (0, the verdict's limit] (beyond it an unknown is not determined at all), written as a percentage ("2%")
 * or a fraction ("0.02").
 */
const precisionFlag = (v: string): E.Either<CliError, number> => {
  const m = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(v.trim());
  const x = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN,
    limit = sysid.VERDICT_LIMITS.relativeHalfWidth;
  return x > 0 && x <= limit
    ? E.right(x)
    : E.left(
        new CliError(
          `--precision expects the share of its value every unknown must be known to, in (0, ${100 * limit}%] ` +
            `(e.g. 2% or 0.02), got "${v}".`,
        ),
      );
};

const shardFlag = (v: string): E.Either<CliError, Shard | null> => {
  const m = /^(\d+)\/(\d+)$/.exec(v);
  const [index, count] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
  return index < count && count <= FLAG_MAX.shards
    ? E.right({ index, count })
    : E.left(new CliError(`--shard expects K/N with 0 ≤ K < N (fit instances i with i mod N = K), got "${v}".`));
};

/** Parse `--name value`, `--name=value` and boolean `--flag`s; `defaultOut` is used when --out is absent. */
export function parseFlags(argv: readonly string[], defaultOut: string): E.Either<CliError, Flags> {
  const raw = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) return E.left(new CliError(`unexpected argument "${a}"; flags look like --iters 50.`));
    // Only the first "=" separates: --out=results/run=1 keeps "results/run=1".
    const eq = a.indexOf("=");
    const [k, inline] = eq < 0 ? [a.slice(2), undefined] : [a.slice(2, eq), a.slice(eq + 1)];
    if (!KNOWN.has(k))
      return E.left(new CliError(`unknown flag --${k}; known flags: ${[...KNOWN].map((f) => `--${f}`).join(", ")}.`));
    if (BOOL.has(k)) {
      raw.set(k, inline ?? "true");
      continue;
    }
    const v = inline ?? argv[++i];
    if (v === undefined || (inline === undefined && v.startsWith("--")))
      return E.left(new CliError(`--${k} needs a value.`));
    if (v.trim() === "") return E.left(new CliError(`--${k} needs a value, got an empty string.`));
    raw.set(k, v);
  }
  const opt = (k: string, f: (v: string) => E.Either<CliError, number>): E.Either<CliError, number | null> =>
    raw.has(k) ? f(raw.get(k)!) : E.right(null);
  return pipe(
    E.Do,
    E.bind("seed", () => (raw.has("seed") ? intFlag("seed", raw.get("seed")!, 0, FLAG_MAX.seed) : E.right(0))),
    E.bind("iters", () => opt("iters", (v) => intFlag("iters", v, 1, FLAG_MAX.iters))),
    E.bind("dataset", () => opt("dataset", (v) => intFlag("dataset", v, 1, FLAG_MAX.dataset))),
    E.bind("policy", () => opt("policy", (v) => intFlag("policy", v, 2, FLAG_MAX.policy))),
    E.bind("seeds", () => opt("seeds", (v) => intFlag("seeds", v, 1, FLAG_MAX.seeds))),
    E.bind("restarts", () => opt("restarts", (v) => intFlag("restarts", v, 0, FLAG_MAX.restarts))),
    E.bind("scan", () => opt("scan", (v) => intFlag("scan", v, 0, FLAG_MAX.scan))),
    E.bind("precision", () => opt("precision", precisionFlag)),
    E.bind("resolution", () => opt("resolution", (v) => intFlag("resolution", v, 8, FLAG_MAX.resolution))),
    E.bind("workers", () =>
      raw.has("workers") ? intFlag("workers", raw.get("workers")!, 1, FLAG_MAX.workers) : E.right(1),
    ),
    E.bind("threads", () => opt("threads", (v) => intFlag("threads", v, 1, FLAG_MAX.threads))),
    E.bind("shard", () => (raw.has("shard") ? shardFlag(raw.get("shard")!) : E.right(null))),
    E.filterOrElse(
      ({ dataset, workers, shard }) => dataset !== null || (workers === 1 && shard === null),
      () => new CliError("--workers and --shard split a dataset run: use them with --dataset N."),
    ),
    E.filterOrElse(
      ({ workers, shard }) => workers === 1 || shard === null,
      () => new CliError("use either --workers or --shard, not both."),
    ),
    E.bind("backend", () => {
      const b = raw.get("backend") ?? "auto";
      return b === "cpu" || b === "webgpu" || b === "auto"
        ? E.right<CliError, Flags["backend"]>(b)
        : E.left(new CliError(`--backend must be cpu, webgpu or auto, got "${b}".`));
    }),
    E.map((parsed) => ({
      ...parsed,
      out: raw.get("out") ?? defaultOut,
      json: raw.get("json") === "true",
      quick: raw.get("quick") === "true",
      target: raw.get("target") ?? null,
      video: raw.get("video") ?? null,
      scene: raw.get("scene") ?? null,
      unknowns: raw.get("unknowns") ?? null,
      task: raw.get("task") ?? null,
      envs: raw.get("envs") ?? null,
      networks: raw.get("networks") ?? null,
      domain: raw.get("domain") ?? null,
      procedure: raw.get("procedure") ?? null,
      set: raw.get("set") ?? null,
      help: raw.get("help") === "true",
    })),
  );
}
