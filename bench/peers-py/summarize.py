"""Summarize run_interleaved.sh output: median over repetitions of each script's own median.
  python summarize.py results.jsonl   -> markdown tables on stdout"""
import json
import statistics
import sys
from collections import defaultdict

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
# Runs with gradsim on several threads label its one-thread rows "gradsim-1t" ("gradsim" is then every core).
threaded_run = any(r.get("peer", "gradsim") == "gradsim" and r.get("threads", 1) > 1 for r in rows if "workload" in r)
ms = defaultdict(list)      # (workload, size, who) -> [ms per call | ms per step]
comp = defaultdict(list)    # (workload, size, who) -> [compile ms]
for r in rows:
    if r.get("rep", 0) < 0:
        continue
    w, size = r.get("workload"), r.get("size")
    if w is None:
        continue
    who = r.get("peer", "gradsim")
    if who == "gradsim" and r.get("kernels", "wasm") != "wasm":
        who = f"gradsim-{r['kernels']}"  # the JavaScript kernels (--kernels js), beside the default
    if who == "gradsim" and r.get("threads", 1) == 1 and threaded_run:
        who = "gradsim-1t"  # one thread, beside the default (every core)
    if who in ("c-reference", "js-reference"):
        who = f"{who}-{r['backend'][-3:]}"
    if "stepsPerSec" in r and r.get("stepsPerSec"):
        ms[(w, size, who)].append(1000 / r["stepsPerSec"])  # ms per step (per frame for DR)
    elif r.get("ms_median") is not None:
        ms[(w, size, who)].append(r["ms_median"])
    if r.get("peer") == "jax-js" and r.get("ms_median") is None:
        continue
    if r.get("compile_ms") is not None:
        comp[(w, size, who)].append(r["compile_ms"])
for r in rows:
    for k in ("uptime_before", "uptime_after"):
        if k in r:
            print(f"{k}: {r[k].strip()}")
med = {k: statistics.median(v) for k, v in ms.items()}
keys = sorted({(w, s) for w, s, _ in med})
peers = ["gradsim-1t", "gradsim-js", "jax", "numba", "jax-js", "c-reference-f32", "c-reference-f64", "js-reference-f32"]
print("| workload | size | gradsim ms | " + " | ".join(f"{p} ms" for p in peers) + " | gradsim/jax | gradsim-1t/jax | gradsim-js/jax | gradsim/numba | gradsim/C f32 | gradsim-1t/gradsim | gradsim/gradsim-js | reps |")
print("|---|---:|---:|" + "---:|" * len(peers) + "---:|---:|---:|---:|---:|---:|---:|---:|")
f = lambda v: "—" if v is None else (f"{v:.3g}" if v < 100 else f"{v:.0f}")
for w, s in keys:
    g = med.get((w, s, "gradsim"))
    vals = [med.get((w, s, p)) for p in peers]
    rat = lambda p: "—" if g is None or med.get((w, s, p)) is None else f"{g / med[(w, s, p)]:.2f}"
    n = len(ms.get((w, s, "gradsim"), []))
    gj, jx = med.get((w, s, "gradsim-js")), med.get((w, s, "jax"))
    js_jax = "—" if gj is None or jx is None else f"{gj / jx:.2f}"
    g1 = med.get((w, s, "gradsim-1t"))
    one_jax = "—" if g1 is None or jx is None else f"{g1 / jx:.2f}"
    second_core = "—" if g1 is None or g is None else f"{g1 / g:.2f}"
    print(f"| {w} | {s} | {f(g)} | " + " | ".join(f(v) for v in vals) + f" | {rat('jax')} | {one_jax} | {js_jax} | {rat('numba')} | {rat('c-reference-f32')} | {second_core} | {rat('gradsim-js')} | {n} |")
best = {k: min(v) for k, v in ms.items()}
print("\nbest rep (the lowest of the per-rep medians, ms: on a loaded machine, closest to each one's unloaded speed):")
print("| workload | size | gradsim | gradsim-1t | gradsim-js | jax | numba | C f32 | gradsim/jax | gradsim-1t/jax | gradsim/C f32 | gradsim-1t/C f32 | gradsim-1t/gradsim |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for w, s in keys:
    b = lambda p: best.get((w, s, p))
    r = lambda p, q: "—" if b(p) is None or b(q) is None else f"{b(p) / b(q):.2f}"
    print(f"| {w} | {s} | {f(b('gradsim'))} | {f(b('gradsim-1t'))} | {f(b('gradsim-js'))} | {f(b('jax'))} | {f(b('numba'))} | {f(b('c-reference-f32'))} | "
          f"{r('gradsim', 'jax')} | {r('gradsim-1t', 'jax')} | {r('gradsim', 'c-reference-f32')} | {r('gradsim-1t', 'c-reference-f32')} | {r('gradsim-1t', 'gradsim')} |")
print("\nper-rep spread (min..max of the per-rep medians, ms):")
for (w, s, who), v in sorted(ms.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
    print(f"  {w} {s} {who}: {min(v):.3g}..{max(v):.3g} (n={len(v)})")
print("\ncompile (ms, median over reps):")
for k, v in sorted(comp.items()):
    print(f"  {k[0]} {k[1]} {k[2]}: {statistics.median(v):.0f}")
