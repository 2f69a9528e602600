#!/usr/bin/env bash
# Interleaved side-by-side timing: gradsim's own bench scripts, the Python peers (JAX, numba), jax-js
# and the C reference, A B A B ... for REPS repetitions, all JSON lines (tagged with rep) appended to OUT.
#   run_interleaved.sh GRADSIM_DIR PYTHON [REPS=5] [OUT=results.jsonl]
# GRADSIM_DIR: a gradsim checkout after `npm ci` (jax-js rows need `npm ci` in its bench/peers too);
# PYTHON: a python with jax, numpy, numba. Then: python summarize.py OUT. Env KERNELS="wasm js" times both CPU kernel forms;
# THREADS="2 1" times gradsim's CPU kernels on 2 threads and on 1 (GRADSIM_CPU_THREADS; default: the cores, then 1).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
gs="$(cd "$1" && pwd)"; py="$2"; reps="${3:-5}"; out="$(realpath -m "${4:-results.jsonl}")"
ref="$gs/bench/ref"; peers="$gs/bench/peers"
mkdir -p "$(dirname "$out")"
W4ARGS="--runs 21 --warmup 5"
# gradsim's CPU kernel forms to time (KERNELS="wasm js": the WebAssembly SIMD kernels and the JavaScript ones, side by side).
KERNELS="${KERNELS:-wasm}"
THREADS="${THREADS:-$(nproc) 1}"
tag() { local r="$1"; while IFS= read -r l; do [[ "$l" == \{* ]] && echo "{\"rep\":$r,${l#\{}" >> "$out"; done; }
echo "{\"rep\":-1,\"uptime_before\":\"$(uptime)\",\"commit\":\"$(git -C "$gs" rev-parse --short HEAD)\"}" >> "$out"
for r in $(seq 1 "$reps"); do
  for T in 10000 100000; do
    for K in $KERNELS; do for N in $THREADS; do
      (cd "$gs" && GRADSIM_CPU_THREADS=$N npx tsx bench/gradsim/w4_fem.ts --size "$T" $W4ARGS --kernels "$K") | tag "$r"
    done; done
    "$py" "$here/w4_fem_jax.py" --size "$T" $W4ARGS | tag "$r"
    "$py" "$here/w4_fem_numba.py" --size "$T" $W4ARGS | tag "$r"
    [[ -d "$peers/node_modules" ]] && (cd "$peers" && node jaxjs/w4_fem.mjs --backend wasm --size "$T" --variant grad --mode jit-split) | tag "$r"
  done
  bash "$ref/run.sh" 10000 100000 2>/dev/null | tag "$r"
  for K in $KERNELS; do for N in $THREADS; do
    (cd "$gs" && GRADSIM_CPU_THREADS=$N npx tsx bench/table4.ts --sizes 1000,10000 --rows dp --kernels "$K" 2>/dev/null) | tag "$r"
  done; done
  "$py" "$here/table4_dp_jax.py" --sizes 1000,10000 | tag "$r"
  echo "rep $r done $(date +%T)" >&2
done
echo "{\"rep\":-2,\"uptime_after\":\"$(uptime)\"}" >> "$out"
