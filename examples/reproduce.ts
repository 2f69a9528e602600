/**
 * `npm run reproduce`: run every experiment on its dataset and write the paper's Tables 1–3
 * (ours beside the paper's numbers) plus the loss landscapes and the other experiments'
 * headline results to results/tables.md and results/tables.json. Each experiment's own
 * outputs go to results/runs/<name>/.
 *
 *   npm run reproduce                    # full datasets (about 3 h 30 min of CPU time, one process)
 *   npm run reproduce -- --quick         # smoke run of the whole pipeline (minutes)
 *   npm run reproduce -- --dataset 20    # dataset size for the dataset experiments
 *   npm run reproduce -- --only rigid-contact,cloth   # rerun these; keep the other rows of tables.json
 *   npm run reproduce -- --workers 2     # fit each dataset's instances in 2 processes (2 cores); run the one-core
 *                                        # experiments 2 at a time
 *   npm run reproduce -- --full --workers 2 --resume   # continue a stopped run (same commit): finished experiments
 *                                                      # and instances are kept
 *   npm run reproduce -- --tables        # rewrite tables.md from tables.json, running nothing
 *   npm run reproduce -- --full --workers 2   # the paper's dataset sizes (Table 1: 200 objects, Table 2: 200,
 *                                             # Table 3: 100 + 100, Table 4: 90)
 * (risp-state's dataset is its training images per environment.)
 */
import { execSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as E from "fp-ts/lib/Either.js";
import { EXPERIMENTS } from "./registry.js";
import { FLAG_MAX, intFlag, parseFlags, type Flags } from "./lib/flags.js";
import { isEntry, runExperiment, USAGE } from "./lib/run.js";
import { RunClock } from "./lib/run-clock.js";
import { control, risp, sysid, writeAtomic, withFileLock } from "gradsim/node";
import { spawnTagged } from "gradsim/sysid/node";
import {
  fmtNumber,
  instancesOf,
  table1Markdown,
  table2Markdown,
  table2Misses,
  table3Markdown,
  type RigidDatasetReport,
  type Table3Report,
} from "./lib/tables.js";
import type { LandscapeResult } from "./landscape.js";
import type { ControlResult } from "./lib/control.js";
import type { ImperfectResult } from "./imperfect-models.js";
import { tablesMarkdown as rispTablesMarkdown, type RispStateResult } from "./risp-state.js";
import type { ConvLstmResult } from "./convlstm.js";
import type { RispTasksResult } from "./risp-tasks.js";
import type { DataEfficiencyResult } from "./risp-data-efficiency.js";
import type { TemporalSamplingResult } from "./risp-temporal-sampling.js";
import type { StandinResult } from "./risp-quadrotor-standin.js";
import { outsideMarkdown, type OutsideResult } from "./outside.js";

/**
 * What reproduce runs, in order (the paper's tables first; tables.md is rewritten after each
 * experiment), and the dataset size each gets (default, quick, --full: the paper's); null = no dataset.
 */
export interface PlanEntry {
  /** The run's name: its directory under runs/ and its row in the Runs table. */
  readonly name: string;
  /** The experiment it runs with `args` added, if not the one called `name` (another configuration of it). */
  readonly experiment?: string;
  readonly args?: readonly string[];
  readonly dataset: readonly [number, number, number] | null;
  readonly table: string;
  /** false: a dataset experiment that runs in one process (no --shard workers). */
  readonly shards?: false;
  /** Runs only when `--only` names it (it takes hours). */
  readonly onlyByName?: true;
}

export const PLAN: readonly PlanEntry[] = [
  { name: "rigid-mass", dataset: [10, 2, 200], table: "Table 1" },
  // --full: the paper's 200 test objects (App. G, every rigid-body experiment); the committed table has 50.
  { name: "rigid-contact", dataset: [4, 1, 200], table: "Table 2" },
  // The ConvLSTM rows of Tables 1–2: one network per table, trained then tested on the tables' first N objects (no
  // shards).
  { name: "convlstm", dataset: [10, 2, 200], table: "Tables 1–2", shards: false },
  // Again at the paper's data and epochs (800 training videos, 100 epochs): hours, so only with --only.
  {
    name: "convlstm-paper",
    experiment: "convlstm",
    args: ["--procedure", "paper"],
    dataset: [10, 2, 200],
    table: "Tables 1–2 (the paper's data)",
    shards: false,
    onlyByName: true,
  },
  { name: "deformable", dataset: [40, 1, 100], table: "Table 3" },
  { name: "cloth", dataset: [10, 1, 100], table: "Table 3" },
  { name: "imperfect-models", dataset: [30, 3, 90], table: "Table 4 (left), Fig. 7" },
  { name: "risp-state", dataset: [768, 32, 768], table: "RISP Table 1" },
  // Table 1 again, its test configurations outside the training ranges of ψ (risp-state --domain held-out).
  {
    name: "risp-state-held-out",
    experiment: "risp-state",
    args: ["--domain", "held-out"],
    dataset: [768, 32, 768],
    table: "RISP Table 1, held out in ψ",
  },
  // The scale: the quadrotor's held-out networks on 64² images (its head over a 4× larger last feature map).
  {
    name: "risp-state-held-out-64",
    experiment: "risp-state",
    args: ["--domain", "held-out", "--resolution", "64", "--envs", "quadrotor"],
    dataset: [768, 32, 768],
    table: "RISP Table 1, held out in ψ, 64²",
  },
  // The quadrotor's predictors trained under 1, 10 or a fresh configuration per image, tested per epoch (one process).
  { name: "risp-data-efficiency", dataset: null, table: "RISP Fig. 6a" },
  // Uses risp-state's networks (runs/risp-state); its dataset is the rendering configurations per environment.
  { name: "risp-tasks", dataset: [4, 1, 4], table: "RISP Tables 2–4" },
  // Table 2 again, the references' contrast against the ground reversed (risp-tasks --domain reversed-contrast).
  {
    name: "risp-tasks-reversed",
    experiment: "risp-tasks",
    args: ["--task", "sysid", "--domain", "reversed-contrast"],
    dataset: [4, 1, 4],
    table: "RISP Table 2, contrast reversed",
  },
  // RISP's tasks by the paper's procedure (App. C.1: 100 RMSProp steps), then our scan and polish from its end.
  {
    name: "risp-tasks-paper-procedure",
    experiment: "risp-tasks",
    args: ["--procedure", "paper"],
    dataset: [4, 1, 4],
    table: "RISP Tables 2–4, the paper's procedure",
  },
  // RISP's real-world quadrotor (App. C.2) on a stand-in video from MuJoCo + POV-Ray, on risp-state's networks.
  { name: "risp-quadrotor-standin", dataset: null, table: "RISP Figs. 4–5 (stand-in)" },
  // The rod's sysid loss along its modulus for four temporal samplings of the video, on risp-state's networks.
  { name: "risp-temporal-sampling", dataset: null, table: "RISP Fig. 6b" },
  // Videos gradsim did not make (MuJoCo/PyBullet physics, POV-Ray/Cycles renders): can the estimates be believed?
  { name: "outside", dataset: null, table: "Own videos (outside engines and renderers)" },
  // Cases made after the fit's defaults and the verdict's method were settled on the set above, fitted with them once.
  {
    name: "outside-held-out",
    experiment: "outside",
    args: ["--set", "held-out"],
    dataset: null,
    table: "Own videos, held out",
  },
  { name: "control-walker", dataset: null, table: "Figs. 5–6" },
  { name: "control-fem", dataset: null, table: "Figs. 5–6" },
  { name: "control-cloth", dataset: null, table: "Figs. 5–6" },
  { name: "landscape", dataset: null, table: "Fig. 4, 12" },
  { name: "pendulum", dataset: null, table: "—" },
  { name: "double-pendulum", dataset: null, table: "—" },
  { name: "smoke", dataset: null, table: "—" },
];

export interface RunRecord {
  readonly name: string;
  readonly table: string;
  readonly status: "ok" | "failed";
  readonly exitCode?: number;
  readonly seconds?: number;
  readonly dataset?: number;
  readonly result?: Record<string, unknown>;
  readonly note?: string;
  /** Commit and date the run was made at (runs of a table can come from different invocations with --only). */
  readonly commit?: string;
  readonly date?: string;
}

/** A dataset experiment whose instances are fitted by --workers processes (the others use one core). */
const sharded = (p: PlanEntry) => p.dataset !== null && p.shards !== false;

/** The experiment's own command-line arguments in a reproduction. */
function experimentArgv(
  p: PlanEntry,
  dataset: number | null,
  flags: Flags,
  workers: number,
  out: string,
  runsDir: string,
): string[] {
  return [
    "--out",
    out,
    "--seed",
    String(flags.seed),
    "--backend",
    flags.backend,
    ...(dataset ? ["--dataset", String(dataset), ...(sharded(p) ? ["--workers", String(workers)] : [])] : []),
    ...(flags.quick ? ["--quick"] : []),
    ...(flags.iters ? ["--iters", String(flags.iters)] : []),
    ...(flags.json ? ["--json"] : []),
    // The downstream tasks read the predictors this reproduction trained.
    ...(["risp-tasks", "risp-temporal-sampling", "risp-quadrotor-standin"].includes(p.experiment ?? p.name)
      ? ["--networks", join(runsDir, "risp-state")]
      : []),
    ...(p.args ?? []),
  ];
}

/**
 * Run one experiment, in this process or (`child`) in a child process of its own, whose log lines
 * are tagged with its name: experiments that use one core run side by side that way.
 */
async function runOne(
  p: PlanEntry,
  dataset: number | null,
  flags: Flags,
  workers: number,
  runsDir: string,
  child: boolean,
): Promise<Omit<RunRecord, "seconds">> {
  const { name, table } = p,
    experiment = p.experiment ?? name;
  const load = EXPERIMENTS[experiment];
  if (!load) throw new Error(`reproduce: "${experiment}" is not in examples/registry.ts.`);
  const out = join(runsDir, name);
  const argv = experimentArgv(p, dataset, flags, workers, out, runsDir);
  process.stderr.write(`\n=== reproduce: ${name} ${argv.join(" ")}${child ? " (in a child process)" : ""}\n`);
  const exitCode = child
    ? await runChild(experiment, name, argv, workers)
    : await runExperiment((await load()).experiment, argv);
  const file = join(out, "result.json");
  if (exitCode !== 0 || !existsSync(file))
    return {
      name,
      table,
      status: "failed",
      exitCode,
      note: `exit code ${exitCode}; see the log above${child ? `, tagged [${name}]` : ""}`,
    };
  return {
    name,
    table,
    status: "ok",
    exitCode,
    ...(dataset ? { dataset } : {}),
    result: JSON.parse(readFileSync(file, "utf8")),
  };
}

/** An experiment in a child process, one of `sideBySide` at a time (each gets its share of the cores' threads). */
async function runChild(
  experiment: string,
  name: string,
  argv: readonly string[],
  sideBySide: number,
): Promise<number> {
  const bin = fileURLToPath(new URL("../bin/gradsim.ts", import.meta.url));
  const { exit } = spawnTagged(
    { command: process.execPath, args: ["--import", import.meta.resolve("tsx"), bin, experiment, ...argv] },
    name,
    sideBySide,
  );
  const { code } = await exit;
  return code ?? 1;
}

/** Run `items` through `run`, at most `slots` at a time, in order. */
async function sideBySide<T>(items: readonly T[], slots: number, run: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(slots, queue.length) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await run(item);
    }),
  );
}

const resultOf = <T>(runs: readonly RunRecord[], name: string): T | null => {
  const r = runs.find((x) => x.name === name);
  return r?.status === "ok" ? (r.result as T) : null;
};

/** Top-level numbers of a result.json, for experiments without a paper table. */
const headline = (r: Record<string, unknown>): string =>
  Object.entries(r)
    .filter(([k, v]) => typeof v === "number" && !["seed", "seconds"].includes(k))
    .map(([k, v]) => `${k} ${fmtNumber(v as number)}`)
    .join(", ");

function outsideSection(r: OutsideResult | null, data = "examples/data/outside/"): string {
  if (!r) return "_not run yet_";
  return (
    `Each video simulated by MuJoCo or PyBullet and rendered by POV-Ray or Blender Cycles (${data}), ` +
    "fitted by `gradsim fit --precision 2%` " +
    "from the scene file a careful user writes. " +
    "Believable: every unknown the video determines within 2% of the truth; " +
    'or the verdict "poor" or "undetermined"; or "imprecise" (an interval wider than the ±2% asked) ' +
    "with every such unknown's truth inside its interval. " +
    "Truth in interval: every such unknown's truth inside the 95% interval gradsim printed " +
    "(the residual's spread over runs of frames, " +
    "the contact defaults (ke ×2, kd ×4, kf ×10), " +
    "and the moves of the estimate under the foreground's thresholds halved or doubled, " +
    "the model outline drawn half or twice as soft, " +
    "the object's initial place on the floor left free " +
    "and the contact points spread over the mesh's edges). " +
    "Loss ÷ floor: the final loss over what the right model would leave " +
    "(the mask's ramp, the soft outline against the model drawn sharp, the mask's noise); " +
    "explained: the share of the empty frame's loss above that floor the fit explains " +
    `("fits" needs at most ${sysid.VERDICT_LIMITS.floorRatio} ` +
    `and at least ${100 * sysid.VERDICT_LIMITS.explained}%).\n\n` +
    outsideMarkdown(r.cases)
  );
}

function landscapeMarkdown(l: LandscapeResult | null): string {
  if (!l) return "_not run_";
  const rows = l.sweeps.map(
    (s) =>
      `| ${s.parameter} | ${s.truth} | ${Object.values(s.argmin)
        .map((v) => fmtNumber(v))
        .join(" | ")} | ${Object.values(s.localMinima).join(" / ")} |`,
  );
  return [
    `Image-space MSE vs the parameter, ${l.frames} frames at ${l.resolution}² ` +
      `(plots: runs/landscape/landscape-*.png; ` +
      `colours ${JSON.stringify(l.plotColours)}).`,
    "",
    "| parameter | truth | argmin first+last | every frame | every 5th | first+middle | local minima per curve |",
    "|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

function imperfectMarkdown(r: ImperfectResult | null): string {
  if (!r) return "_not run_";
  const fig = r.fig7
    ? sysid.OBJECT_LOOKS.map(
        (l) => `${l} ${fmtNumber(r.fig7![l].mean[Math.min(10, r.fig7![l].mean.length - 1)]!)}`,
      ).join(", ")
    : "";
  return [
    `Mass from video of ${r.objects} objects (${r.perKind.rigid} rigid, ` +
      `${r.perKind.deformable} deformable, ${r.perKind.cloth} cloth), ` +
      `relative absolute error of the mass; ` +
      `per-object records in runs/imperfect-models/objects.json.`,
    "",
    r.table,
    "",
    ...(r.fig7
      ? [
          `Fig. 7 (runs/imperfect-models/fig7.png): mean relative error after 10 Adam iterations ` +
            `on the rigid objects: ${fig}.`,
        ]
      : []),
  ].join("\n");
}

function rispStateMarkdown(r: RispStateResult | null, name: string): string {
  if (!r) return "_not run_";
  const s = r.settings;
  return [
    `Mean absolute state error per test image over ${4 * s.testPerConfig} ray-traced images ` +
      `(${s.testPerConfig} states under 4 unseen rendering configurations): ours as mean ± the std of the 4 ` +
      `configurations' mean errors (the paper's spread: its average row, blind to the image, has none) / the std ` +
      `over the images; ` +
      `networks trained on ${s.train} SoftRas images per environment at ${s.resolution}², ${s.epochs} epochs ` +
      `(runs/${name}/: looks-*.png, errors-*.csv, <env>/<row>/loss.png). ` +
      `Paper: RISP, ICLR 2022, Table 1.`,
    "",
    rispTablesMarkdown(r.envs),
  ].join("\n");
}

function dataEfficiencyMarkdown(r: DataEfficiencyResult | null): string {
  if (!r) return "_not run_";
  const s = r.settings;
  return [
    `The quadrotor's state error on ${s.testStates * s.testConfigs} traced images (${s.testStates} states under ` +
      `${s.testConfigs} configurations held out in ψ) after the last of ${s.training.epochs} epochs, the networks ` +
      `trained on ${s.training.train} SoftRas images at ${s.training.resolution}² drawn under ` +
      `${s.counts.filter((c) => c !== "each").join(" or ")} fixed rendering configurations or a fresh one per ` +
      `image (runs/risp-data-efficiency/: fig6a.png, the error per epoch; curves.csv). ` +
      `Paper: RISP, ICLR 2022, Fig. 6a (100 epochs; 200 states under 10 configurations).`,
    "",
    r.table,
  ].join("\n");
}

function standinMarkdown(r: StandinResult | null): string {
  if (!r) return "_not run_";
  return [
    `A labelled stand-in for the paper's clip (not public): ${r.frames} frames at 10 Hz of a quadrotor flown through ` +
      "the view, simulated by MuJoCo with drag, gusts and 3.3% more mass than the model is told, rendered by POV-Ray " +
      "(tools/risp-standin; examples/data/risp-quadrotor-standin), fitted on risp-state's networks; errors against " +
      "the stand-in's MoCap (runs/risp-quadrotor-standin/: motion.gif, trajectory-*.png, errors.csv). " +
      "Paper: RISP, ICLR 2022, §4.5 and App. C.2 (qualitative: Figs. 4–5).",
    "",
    r.table,
  ].join("\n");
}

function temporalSamplingMarkdown(r: TemporalSamplingResult | null): string {
  if (!r) return "_not run_";
  return [
    `The rod's system identification loss of the ours row along its ${r.unknown} (${r.grid.length} points across ` +
      `its box, the look at ψ's middle), each configuration's curve rescaled to [0, 1] and averaged over ` +
      `${r.settings.configs} of the tables' configurations (runs/risp-temporal-sampling/: fig6b.png, landscape.csv). ` +
      `Paper: RISP, ICLR 2022, Fig. 6b.`,
    "",
    r.table,
  ].join("\n");
}

const RISP_PAPER_TABLES = { sysid: "Table 2", imitation: "Table 3", control: "Table 4 (appendix)" } as const;

/** A risp-tasks run's section, from its run's name (its directory under runs/). */
function rispTasksMarkdown(runs: readonly RunRecord[], dir: string): string {
  const r = resultOf<RispTasksResult>(runs, dir);
  if (!r) return "_not run_";
  const s = r.settings;
  const reversed =
    r.domain === "reversed-contrast"
      ? " (the tables' configurations with the body's contrast against the ground reversed from our frames')"
      : "";
  const procedure =
    r.procedure === "paper"
      ? `the paper's procedure (${risp.PAPER_TASK_PROCEDURE.iterations} projected RMSProp iterations), then our ` +
        "scan and polish from its end"
      : `${s.iterations} projected Adam iterations`;
  return [
    `Mean ± std over ${s.configs} reference videos ray-traced under unseen rendering configurations${reversed}` +
      `, each row from the same random guess per configuration, ` +
      `${procedure} (runs/${dir}/: <task>-<env>.gif reference | ours | pixelwise` +
      `${r.tasks.control ? ", control-<env>.png" : ""}` +
      `, loss-<task>-<env>.png). ` +
      (r.domain === "reversed-contrast"
        ? "The paper has no reversed-contrast experiment: its columns are RISP (ICLR 2022) " +
          "Table 2 under the paper's own domains, for scale only."
        : `Paper: RISP, ICLR 2022, ${(["sysid", "imitation", "control"] as const)
            .filter((t) => r.tasks[t])
            .map((t) => RISP_PAPER_TABLES[t])
            .join(", ")}.`),
    "",
    r.table,
  ].join("\n");
}

const CONTROL = ["control-walker", "control-fem", "control-cloth"] as const;

function controlMarkdown(runs: readonly RunRecord[]): string {
  const cell = (x: { mean: number; std: number }, digits: (v: number) => string) =>
    `${digits(x.mean)} ± ${digits(x.std)}`;
  const rows = CONTROL.flatMap((name) => {
    const r = resultOf<ControlResult>(runs, name);
    if (!r) return [`| ${name} | _not run_ | | | | | | |`];
    // Results written before the centre-of-mass distance was recorded separately measured only that.
    const meaning = r.distanceMeaning ?? "centre-of-mass distance to the goal (m)";
    const com = (m: control.ControlMethod) =>
      r.methods[m].comDistance ? cell(r.methods[m].comDistance, (v) => v.toFixed(3)) : "—";
    return control.CONTROL_METHODS.map(
      (m) =>
        `| ${name} | ${m} | ${cell(r.methods[m].imageLoss, (v) => v.toExponential(2))} | ` +
        `${cell(r.methods[m].distance, (v) => v.toFixed(3))} | ` +
        `${meaning} | ${com(m)} | ` +
        `${r.methods[m].runs.length} | ${m === "random" ? "—" : r.settings.iters} |`,
    );
  });
  return [
    "Image loss: MSE of the last frame against the target image; " +
      "distance to goal: each scene's reported metric (its column says which " +
      "— for control-cloth the mean over particles of each one's final distance to its place in " +
      "the target cloth, which neither method minimises); " +
      "centre of mass: the final centre of mass's distance to the goal's; " +
      "mean ± std over seeds, each method from the same initial control. " +
      "Plots: runs/<experiment>/fig6-*.png; motion: runs/<experiment>/motion.gif.",
    "",
    "| experiment | method | image loss | distance to goal | which distance " +
      "| centre of mass to goal (m) | seeds | iterations |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** Experiments whose result has no headline in the Runs table (their tables say it all). */
const NO_HEADLINE = [
  "rigid-mass",
  "rigid-contact",
  "convlstm",
  "convlstm-paper",
  "landscape",
  "imperfect-models",
  "risp-state",
  "risp-state-held-out",
  "risp-state-held-out-64",
  "risp-data-efficiency",
  "risp-temporal-sampling",
  "risp-tasks",
  "risp-tasks-reversed",
  "risp-tasks-paper-procedure",
  "risp-quadrotor-standin",
  ...CONTROL,
];

function markdown(runs: readonly RunRecord[], meta: Record<string, string>): string {
  const t1 = resultOf<RigidDatasetReport>(runs, "rigid-mass"),
    t2 = resultOf<RigidDatasetReport>(runs, "rigid-contact");
  const t3 = (name: string) => resultOf<{ table3?: Table3Report }>(runs, name)?.table3 ?? null;
  const n = (r: RigidDatasetReport) => (r ? `${instancesOf(r)} objects` : "not run");
  const learned = (table: "rigid-mass" | "rigid-contact") =>
    Object.fromEntries(
      (["convlstm", "convlstm-paper"] as const).map((name) => [
        name,
        resultOf<ConvLstmResult>(runs, name)?.tables[table].instances,
      ]),
    );
  const status = runs.map(
    (r) =>
      `| ${r.name} | ${r.table} | ${r.status} | ${r.seconds ?? "—"} | ${r.dataset ?? "—"} | ${r.date ?? "—"} | ` +
      `${r.commit ?? "—"} | ${r.note ?? (r.result && !NO_HEADLINE.includes(r.name) ? headline(r.result) : "")} |`,
  );
  const segments = Number(meta.segments) > 1 ? ` in ${meta.segments} segments (stopped and resumed)` : "";
  const wall = meta.totalSeconds ? `; wall time ${meta.totalSeconds} s${segments}` : "";
  return [
    "# gradsim results",
    "",
    `Last written by \`npm run reproduce${meta.args}\` on ${meta.date} ` +
      `(commit ${meta.commit}, backend ${meta.backend}, ${meta.machine}${wall}); ` +
      "each experiment's own date and commit are in the Runs table at the end. " +
      "Paper numbers: ∇Sim, ICLR 2021, Tables 1–3. " +
      "Each run's own outputs (videos, loss curves, per-object JSON) are under `runs/<experiment>/`.",
    "",
    `## Table 1 — mass from video (${n(t1)})`,
    "",
    table1Markdown(t1, learned("rigid-mass")),
    "",
    `## Table 2 — mass, elasticity and friction from video (${n(t2)})`,
    "",
    table2Markdown(t2, learned("rigid-contact")),
    "",
    ...[table2Misses(t2)].filter(Boolean).flatMap((line) => [line, ""]),
    "## Table 3 — deformable solids and cloth",
    "",
    table3Markdown({ deformable: t3("deformable"), cloth: t3("cloth") }),
    "",
    "## Table 4 (left) — imperfect dynamics and rendering models; Fig. 7",
    "",
    imperfectMarkdown(resultOf<ImperfectResult>(runs, "imperfect-models")),
    "",
    "## RISP Table 1 — state estimation across rendering domains",
    "",
    rispStateMarkdown(resultOf<RispStateResult>(runs, "risp-state"), "risp-state"),
    "",
    "## RISP Table 1, test configurations held out from training in ψ",
    "",
    rispStateMarkdown(resultOf<RispStateResult>(runs, "risp-state-held-out"), "risp-state-held-out"),
    "",
    "## RISP Table 1, held out in ψ, at 64² (the quadrotor)",
    "",
    rispStateMarkdown(resultOf<RispStateResult>(runs, "risp-state-held-out-64"), "risp-state-held-out-64"),
    "",
    "## RISP Fig. 6a — data efficiency: few rendering configurations",
    "",
    dataEfficiencyMarkdown(resultOf<DataEfficiencyResult>(runs, "risp-data-efficiency")),
    "",
    "## RISP Tables 2–4 — system identification, imitation and visuomotor control across rendering domains",
    "",
    rispTasksMarkdown(runs, "risp-tasks"),
    "",
    "## Stress test designed here, not a table of the RISP paper: RISP Table 2 with the contrast reversed",
    "",
    rispTasksMarkdown(runs, "risp-tasks-reversed"),
    "",
    "## RISP Tables 2–4 by the paper's procedure (100 RMSProp iterations), then our scan and polish",
    "",
    rispTasksMarkdown(runs, "risp-tasks-paper-procedure"),
    "",
    "## RISP's real-world quadrotor (§4.5, App. C.2, Figs. 4–5) on a stand-in video",
    "",
    standinMarkdown(resultOf<StandinResult>(runs, "risp-quadrotor-standin")),
    "",
    "## RISP Fig. 6b — temporal sampling: the rod's loss landscape",
    "",
    temporalSamplingMarkdown(resultOf<TemporalSamplingResult>(runs, "risp-temporal-sampling")),
    "",
    "## Own videos: other engines' physics, other renderers",
    "",
    outsideSection(resultOf<OutsideResult>(runs, "outside")),
    "",
    "## Own videos held out: made after the fit and the verdict were settled on the others, fitted once",
    "",
    outsideSection(resultOf<OutsideResult>(runs, "outside-held-out"), "examples/data/outside-held-out/"),
    "",
    "## Visuomotor control from a single target image (§4.2, Figs. 5–6)",
    "",
    controlMarkdown(runs),
    "",
    "## Loss landscapes (Fig. 4, Fig. 12)",
    "",
    landscapeMarkdown(resultOf<LandscapeResult>(runs, "landscape")),
    "",
    "## Runs",
    "",
    "| experiment | paper | status | seconds | dataset | date | commit | notes |",
    "|---|---|---|---|---|---|---|---|",
    ...status,
    "",
  ].join("\n");
}

/** The entries a run makes: those `--only` names, or without it every one but those that run only when named. */
export const selectedPlan = (plan: readonly PlanEntry[], only: ReadonlySet<string> | null): PlanEntry[] =>
  plan.filter((p) => (only ? only.has(p.name) : !p.onlyByName));

/** Reproduce's own `--NAME value` (--only, --workers) split from the experiment flags. */
function takeOwnFlag(argv: readonly string[], name: string): { value: string | null; rest: string[] } {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return { value: null, rest: [...argv] };
  return { value: argv[i + 1] ?? "", rest: [...argv.slice(0, i), ...argv.slice(i + 2)] };
}

const OWN_USAGE =
  "  --only NAME[,NAME]  --full (the paper's dataset sizes)  " +
  "--resume (continue a stopped reproduction at the same commit: " +
  "keep its finished experiments and instances)  " +
  "--tables (rewrite tables.md from tables.json, running nothing)\n";

/** `--tables`: tables.md again from the runs kept in tables.json (after a change to how tables are drawn). */
function rewriteTables(out: string): number {
  const file = join(out, "tables.json");
  if (!existsSync(file)) {
    process.stderr.write(`reproduce --tables: no ${file}; run reproduce first.\n`);
    return 2;
  }
  const { meta, runs } = JSON.parse(readFileSync(file, "utf8")) as { meta: Record<string, string>; runs: RunRecord[] };
  writeAtomic(join(out, "tables.md"), markdown(runs, meta));
  process.stderr.write(`reproduce --tables: ${out}/tables.md rewritten from ${runs.length} runs\n`);
  return 0;
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes("--tables")) {
    const out = takeOwnFlag(argv, "out").value;
    return rewriteTables(out ?? "results");
  }
  const full = argv.includes("--full"),
    resume = argv.includes("--resume");
  const onlyFlag = takeOwnFlag(
      argv.filter((a) => a !== "--full" && a !== "--resume"),
      "only",
    ),
    workersFlag = takeOwnFlag(onlyFlag.rest, "workers");
  const only = onlyFlag.value === null ? null : new Set(onlyFlag.value.split(",").filter(Boolean));
  const workers = intFlag("workers", workersFlag.value ?? "1", 1, FLAG_MAX.workers);
  if (E.isLeft(workers)) {
    process.stderr.write(`reproduce: ${workers.left.message}\n`);
    return 2;
  }
  const parsed = parseFlags(workersFlag.rest, "results");
  if (E.isLeft(parsed)) {
    process.stderr.write(`reproduce: ${parsed.left.message}\n${USAGE}${OWN_USAGE}`);
    return 2;
  }
  const flags = parsed.right;
  if (flags.help) {
    process.stdout.write(
      `reproduce: run every experiment and write results/tables.md, results/tables.json\n${USAGE}${OWN_USAGE}`,
    );
    return 0;
  }
  const planned = new Set(PLAN.map((p) => p.name));
  const extra = Object.keys(EXPERIMENTS)
    .filter((k) => !planned.has(k))
    .sort()
    .map((name): PlanEntry => ({ name, dataset: null, table: "—" }));
  const plan: readonly PlanEntry[] = [...PLAN, ...extra];
  const unknown = only ? [...only].filter((n) => !plan.some((p) => p.name === n)) : [];
  if (only && (only.size === 0 || unknown.length)) {
    process.stderr.write(
      `reproduce: --only takes experiment names separated by commas (${plan.map((p) => p.name).join(", ")}), ` +
        `got "${[...unknown].join(",")}".\n`,
    );
    return 2;
  }
  const runsDir = join(flags.out, "runs");
  mkdirSync(runsDir, { recursive: true });
  // With --only, the other experiments' rows come from tables.json as it is when the tables are
  // written (not as it was at the start), so --only runs of different experiments can run side by side.
  const tablesJson = join(flags.out, "tables.json");
  const previous = (): RunRecord[] =>
    existsSync(tablesJson) ? (JSON.parse(readFileSync(tablesJson, "utf8")) as { runs: RunRecord[] }).runs : [];
  const kept = (): RunRecord[] => (only ? previous().filter((r) => !only.has(r.name)) : []);
  // This run's records by experiment.
  const byName = new Map<string, RunRecord>();
  // Kept rows and this run's, in plan order.
  const ordered = (): RunRecord[] => {
    const rows = new Map([...kept().map((r) => [r.name, r] as const), ...byName]);
    return plan.flatMap((p) => rows.get(p.name) ?? []);
  };
  const commit = checkoutCommit();
  let clock: RunClock;
  try {
    clock = RunClock.open(join(flags.out, "reproduce-clock.json"), commit, resume);
  } catch (e) {
    process.stderr.write(`reproduce --resume: ${(e as Error).message}\n`);
    return 2;
  }
  const date = new Date().toISOString().slice(0, 10);
  const meta = (runs: readonly RunRecord[]) => ({
    date,
    commit,
    backend: [...new Set(runs.map((r) => r.result?.backend).filter(Boolean))].join(", ") || flags.backend,
    machine: `${cpus().length} CPU cores (${cpus()[0]?.model ?? "unknown CPU"}), Node ${process.version}`,
    args: argv.length ? ` -- ${argv.join(" ")}` : "",
    totalSeconds: clock.totalSeconds().toFixed(0),
    segments: String(clock.segmentCount()),
  });
  // Tables are rewritten after every experiment, so an interrupted run keeps what it finished;
  // under a lock, since --only runs side by side each read the others' rows and write their own.
  const writeTables = () =>
    withFileLock(tablesJson, () => {
      const runs = ordered(),
        m = meta(runs);
      writeAtomic(join(flags.out, "tables.md"), markdown(runs, m));
      writeAtomic(tablesJson, JSON.stringify({ meta: m, runs }, null, 2) + "\n");
    });
  const datasetOf = (p: PlanEntry) => (p.dataset ? (flags.dataset ?? p.dataset[flags.quick ? 1 : full ? 2 : 0]) : null);
  const selected = selectedPlan(plan, only);
  // --resume: experiments an earlier segment finished at this commit, with these sizes, are kept.
  if (resume) {
    for (const r of previous()) {
      const p = selected.find((x) => x.name === r.name);
      if (
        p &&
        r.status === "ok" &&
        r.commit === commit &&
        (r.dataset ?? null) === datasetOf(p) &&
        Boolean(r.result?.quick) === flags.quick
      ) {
        byName.set(r.name, r);
        process.stderr.write(`reproduce --resume: ${r.name} finished in an earlier segment; kept\n`);
      }
    }
  }
  const run = async (p: PlanEntry, child: boolean) => {
    clock.begin(p.name);
    const record = await runOne(p, datasetOf(p), flags, workers.right, runsDir, child);
    byName.set(p.name, { ...record, seconds: clock.end(p.name), commit, date });
    writeTables();
  };
  const todo = selected.filter((p) => !byName.has(p.name));
  // A sharded dataset experiment uses every worker; the others use one core each, so with
  // --workers N they run afterwards, N at a time, each in a child process.
  const sideways = (p: PlanEntry) => workers.right > 1 && !sharded(p);
  for (const p of todo.filter((x) => !sideways(x))) await run(p, false);
  await sideBySide(todo.filter(sideways), workers.right, (p) => run(p, true));
  clock.stop();
  // Written after each experiment already; again when none ran (a resume with nothing left).
  if (!todo.length) writeTables();
  const runs = ordered();
  const ran = todo.map((p) => byName.get(p.name)!);
  const m = meta(runs);
  process.stderr.write(
    `\nreproduce: ${ran.filter((r) => r.status === "ok").length}/${ran.length} experiments ran in ${m.totalSeconds} s` +
      `${clock.segmentCount() > 1 ? ` over ${m.segments} segments` : ""}` +
      `${runs.length > ran.length ? ` (${runs.length - ran.length} rows kept from the previous tables)` : ""}; ` +
      `tables in ${flags.out}/tables.md and ${flags.out}/tables.json\n`,
  );
  return ran.some((r) => r.status === "failed") ? 1 : 0;
}

/** The checkout's short commit, marked -dirty when tracked files differ from it. */
function checkoutCommit(): string {
  try {
    const head = execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
    const dirty =
      execSync("git status --porcelain --untracked-files=no", { stdio: ["ignore", "pipe", "ignore"] })
        .toString()
        .trim() !== "";
    return dirty ? `${head}-dirty` : head;
  } catch {
    return "unknown"; /* not a git checkout */
  }
}

// (Imported by the tests for its plan; run as a script, it reproduces.)
if (isEntry(import.meta.url)) process.exit(await main(process.argv.slice(2)));
