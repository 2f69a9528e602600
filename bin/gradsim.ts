#!/usr/bin/env -S npx tsx
/**
 * The gradsim command line: `gradsim <experiment> [--seed N] [--backend cpu|webgpu|auto]
 * [--out DIR] [--iters N] [--json] [--quick] [--dataset N]`. Unknown experiments and bad flags
 * exit with code 2 and say what to do.
 */
import { EXPERIMENTS } from "../examples/registry.js";
import { runExperiment, USAGE } from "../examples/lib/run.js";

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  const names = Object.keys(EXPERIMENTS).sort();
  if (!name || name === "--help" || name === "help") {
    process.stdout.write(`usage: gradsim <experiment> [flags]\nexperiments: ${names.join(", ")}\n${USAGE}\n`);
    return name ? 0 : 2;
  }
  const load = EXPERIMENTS[name];
  if (!load) {
    process.stderr.write(`gradsim: unknown experiment "${name}"; choose one of: ${names.join(", ")}.\n`);
    return 2;
  }
  const { experiment } = await load();
  return runExperiment(experiment, rest);
}

process.exit(await main(process.argv.slice(2)));
