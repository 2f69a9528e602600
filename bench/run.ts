/**
 * `npm run bench`: gradsim, its peers (jax-js, TensorFlow.js) and the hand-written C/JS
 * references on the same workloads, on this machine, in one run. Every configuration runs in a
 * fresh process and prints one JSON line (bench/lib.ts protocol). Writes bench/results/<date>.jsonl
 * and <date>.md with ratios (gradsim / peer, gradsim / C reference).
 *
 *   npm run bench                       everything (≈15–25 min on 2 cores)
 *   npm run bench -- --quick            smaller sizes, no peers
 *   npm run bench -- --only W4          substring filter on "peer workload backend size"
 *   npm run bench -- --no-peers | --no-webgpu | --no-models
 *   npm run bench -- soak               the memory soak test alone (bench/soak.ts; the default run includes its
 *                                       60-frame fit, 1,000 steps per backend)
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { soakInFreshProcesses } from "./soak.js";
import { summarize, type Row } from "./summary.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const argv = process.argv.slice(2);
const has = (f: string) => argv.includes(`--${f}`);
const opt = (f: string) => {
  const i = argv.indexOf(`--${f}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = has("quick"),
  only = opt("only");
const env = { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? tmpdir() };

if (argv[0] === "soak") {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(here, "soak.ts"), ...argv.slice(1)], {
    cwd: root,
    env,
    stdio: "inherit",
  });
  process.exit(r.status ?? 1);
}

const rows: Row[] = [];
const log = (m: string) => process.stderr.write(`${m}\n`);
function record(line: Row): void {
  rows.push(line);
  log(
    `  ${line.peer} ${line.workload} ${line.backend} ${line.size} ` +
      `${line.mode ?? ""}: ${line.ms_median ?? line.error ?? line.skipped} ms`,
  );
}

function runScript(id: string, cmd: string, args: string[], cwd: string, timeoutS = 600): void {
  if (only && !id.includes(only)) return;
  const res = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout: timeoutS * 1000, maxBuffer: 64 << 20 });
  const line = (res.stdout ?? "").split("\n").find((l) => l.startsWith("{"));
  if (line) {
    record(JSON.parse(line) as Row);
    return;
  }
  const [peer, workload, backend, size] = id.split(" ");
  const why = res.error
    ? String(res.error.message)
    : `exit ${res.status}: ${(res.stderr ?? "").trim().split("\n").slice(-2).join(" | ")}`;
  record({ peer: peer!, workload: workload!, backend: backend!, size: size!, ms_median: null, error: why });
}

function webgpuAvailable(): boolean {
  const probe =
    "import { create } from 'webgpu'; const a = await create([]).requestAdapter(); " +
    "process.stdout.write(a ? 'yes' : 'no'); process.exit(0);";
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", probe], {
    cwd: root,
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
  return r.stdout.trim() === "yes";
}

// ---------------------------------------------------------------- gradsim
const tsx = join(root, "node_modules", ".bin", "tsx");
const gpu = !has("no-webgpu") && webgpuAvailable();
log(`gradsim workloads (cpu${gpu ? ", webgpu" : ""})`);
const W4_SIZES = quick ? [10000] : [10000, 100000];
for (const backend of gpu ? ["cpu", "webgpu"] : ["cpu"]) {
  const g = (script: string, workload: string, size: string | number, extra: string[]) =>
    runScript(
      `gradsim ${workload} ${backend} ${size}`,
      tsx,
      [join(here, "gradsim", script), "--backend", backend, "--size", String(size), ...extra],
      root,
    );
  for (const variant of ["fwd", "grad"])
    for (const jit of ["1", "0"])
      g("w1_elementwise.ts", `W1-elementwise-${variant}`, quick ? 100000 : 1e6, ["--variant", variant, "--jit", jit]);
  g("w2_matmul.ts", "W2-matmul", quick ? 256 : 512, ["--jit", "1"]);
  for (const jit of ["1", "0"]) g("w3_mlp_grad.ts", "W3-mlp-grad", 1024, ["--jit", jit]);
  for (const T of W4_SIZES)
    for (const variant of ["energy", "grad"])
      for (const jit of ["1", "0"]) {
        g("w4_fem.ts", variant === "grad" ? "W4-fem-energy-grad" : "W4-fem-energy", T, [
          "--variant",
          variant,
          "--jit",
          jit,
        ]);
      }
  for (const jit of ["1", "0"]) g("w5_fem_vmap.ts", "W5-fem-vmap-energy-grad", "64x1000", ["--jit", jit]);
  g("w6_predictor_grad.ts", "W6-predictor-grad", 16, ["--jit", "1"]);
}

// ---------------------------------------------------------------- C and plain-JS references (W4)
log("references (C, plain JS)");
try {
  const tmp = mkdtempSync(join(tmpdir(), "gradsim-bench-"));
  const exe = join(tmp, "fem_ref");
  execFileSync("gcc", ["-O3", "-march=native", "-o", exe, join(here, "ref", "fem_ref.c"), "-lm"], { stdio: "pipe" });
  for (const T of W4_SIZES) {
    const bin = join(tmp, `w4-${T}.bin`);
    execFileSync(process.execPath, [join(here, "ref", "mesh-bin.mjs"), "--tets", String(T), "--out", bin], {
      stdio: "pipe",
    });
    const out = execFileSync(exe, [bin, "9"], { encoding: "utf8" });
    for (const l of out.split("\n").filter((x) => x.startsWith("{"))) record(JSON.parse(l) as Row);
    runScript(
      `js-reference W4-fem-energy-grad js-f32 ${T}`,
      process.execPath,
      [join(here, "ref", "fem_ref.mjs"), String(T)],
      root,
    );
  }
} catch (e) {
  log(`  C reference skipped: ${(e as Error).message.split("\n")[0]}`);
}

// ---------------------------------------------------------------- peers
if (!quick && !has("no-peers")) {
  const peers = join(here, "peers");
  if (!existsSync(join(peers, "node_modules"))) {
    log("installing peer benchmarks' dependencies (npm ci in bench/peers) …");
    spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: peers, stdio: "inherit", env });
  }
  log("peers (jax-js, TensorFlow.js)");
  const p = (
    peer: string,
    script: string,
    workload: string,
    backend: string,
    size: string | number,
    extra: string[] = [],
  ) =>
    runScript(
      `${peer} ${workload} ${backend} ${size} ${extra.join(" ")}`,
      process.execPath,
      [join(peers, script), "--backend", backend, "--size", String(size), ...extra],
      peers,
    );
  for (const be of gpu ? ["wasm", "webgpu"] : ["wasm"]) {
    for (const v of ["fwd", "grad"])
      p("jax-js", "jaxjs/w1_elementwise.mjs", `W1-elementwise-${v}`, be, 1e6, ["--variant", v, "--jit", "1"]);
    p("jax-js", "jaxjs/w2_matmul.mjs", "W2-matmul", be, 512, ["--jit", "0"]);
    p("jax-js", "jaxjs/w3_mlp_grad.mjs", "W3-mlp-grad", be, 1024, ["--jit", "1"]);
    for (const T of W4_SIZES) {
      p("jax-js", "jaxjs/w4_fem.mjs", "W4-fem-energy", be, T, ["--variant", "energy", "--mode", "jit"]);
      p("jax-js", "jaxjs/w4_fem.mjs", "W4-fem-energy-grad", be, T, ["--variant", "grad", "--mode", "jit-split"]);
    }
    p("jax-js", "jaxjs/w5_fem_vmap.mjs", "W5-fem-vmap-energy-grad", be, "64x1000", ["--mode", "jit-split"]);
  }
  for (const be of gpu ? ["cpu", "wasm", "webgpu"] : ["cpu", "wasm"]) {
    for (const v of ["fwd", "grad"])
      p("tfjs", "tfjs/w1_elementwise.mjs", `W1-elementwise-${v}`, be, 1e6, ["--variant", v]);
    p("tfjs", "tfjs/w2_matmul.mjs", "W2-matmul", be, 512);
    p("tfjs", "tfjs/w3_mlp_grad.mjs", "W3-mlp-grad", be, 1024);
    for (const T of W4_SIZES) {
      p("tfjs", "tfjs/w4_fem.mjs", "W4-fem-energy", be, T, [
        "--variant",
        "energy",
        ...(be === "webgpu" ? ["--fvia", "bcast"] : []),
      ]);
      if (be === "webgpu")
        p("tfjs", "tfjs/w4_fem.mjs", "W4-fem-energy-grad", be, T, ["--variant", "grad", "--fvia", "bcast"]);
    }
  }
}

// ---------------------------------------------------------------- models (physics, rendering)
const modelRows: unknown[] = [];
if (!has("no-models") && (!only || only.includes("physics") || only.includes("render"))) {
  log("physics and rendering benchmarks");
  // --quick: smaller sizes (tets or pixels), no arguments for the unsized scripts.
  const quickArgs: Record<string, string[]> = {
    "physics.ts": ["--sizes", "100,1000"],
    "render.ts": ["--sizes", "64"],
    "raster-threads.ts": ["--sizes", "64", "--rounds", "3"],
    "table4.ts": ["--sizes", "100,1000"],
  };
  for (const script of [
    "physics.ts",
    "render.ts",
    "raster-threads.ts",
    "divergence.ts",
    "table4.ts",
    "sysid-objective.ts",
  ]) {
    if (!existsSync(join(here, script))) continue;
    const r = spawnSync(tsx, [join(here, script), ...(quick ? (quickArgs[script] ?? []) : [])], {
      cwd: root,
      env,
      encoding: "utf8",
      timeout: 1800_000,
      maxBuffer: 64 << 20,
    });
    for (const l of (r.stdout ?? "").split("\n").filter((x) => x.startsWith("{"))) modelRows.push(JSON.parse(l));
    if (r.status !== 0) log(`  ${script} failed: ${(r.stderr ?? "").trim().split("\n").slice(-2).join(" | ")}`);
  }
}

// ---------------------------------------------------------------- memory
// The demo's 60-frame fit for 1,000 steps per backend.
if (!quick && !has("no-models") && !only) {
  log("memory soak (the 60-frame video fit, 1,000 steps)");
  modelRows.push(...soakInFreshProcesses(gpu ? ["cpu", "webgpu"] : ["cpu"], 1000, 100, "fit60"));
}

// ---------------------------------------------------------------- results
const date = new Date().toISOString().slice(0, 10);
const outDir = join(here, "results");
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, `${date}.jsonl`), [...rows, ...modelRows].map((r) => JSON.stringify(r)).join("\n") + "\n");
const md = summarize(rows, modelRows, { date, machine: machineLine(gpu) });
writeFileSync(join(outDir, `${date}.md`), md);
process.stdout.write(md);
log(`wrote bench/results/${date}.md and .jsonl`);

function machineLine(withGpu: boolean): string {
  let cpu = "";
  try {
    cpu = execFileSync("sh", ["-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], { encoding: "utf8" }).trim();
  } catch {
    /* not Linux */
  }
  const adapter = withGpu ? ", WebGPU = Dawn on the adapter found here" : ", no WebGPU adapter";
  return `Node ${process.version}, ${cpu || "unknown CPU"}${adapter}`;
}
