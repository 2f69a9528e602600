#!/usr/bin/env bash
# Runs gradsim's WebGPU benchmarks (bench/device/bench.ts: W4, Table 4, render) on a Linux x86-64
# machine with a GPU driver and nothing else installed, from bench/device/bundle/ (pack.sh): Node,
# Dawn and the Vulkan loader come with it. Finishes in under 8 minutes (bench budget 400 s, hard
# limit 450 s) and writes one JSON file.
#   bench/device/run.sh [OUT.json]           (default: bench/device/device-bench.json)
# The Vulkan driver: VK_ICD_FILENAMES when set; else NVIDIA's manifest from the standard places;
# else one written for the NVIDIA driver's libGLX_nvidia.so.0; else whatever the loader finds
# (on a machine without a GPU, Mesa's lavapipe).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; b="$here/bundle"
out="$(realpath -m "${1:-$here/device-bench.json}")"
[[ -f "$b/node.gz" ]] || { echo "run.sh: $b/node.gz is missing: run bench/device/pack.sh first (or carry bench/device/bundle)" >&2; exit 2; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
gunzip -c "$b/node.gz" > "$work/node" && chmod +x "$work/node"
mkdir -p "$work/app/node_modules/webgpu/dist/linux-x64"
cp "$b/app/"*.mjs "$work/app/"
cp "$b/webgpu/index.js" "$b/webgpu/package.json" "$work/app/node_modules/webgpu/"
gunzip -c "$b/webgpu/dawn.node.gz" > "$work/app/node_modules/webgpu/dist/linux-x64/dawn.node"
tar -xzf "$b/libs.tgz" -C "$work"
libs="$work/vulkan"
# libstdc++ / libgcc_s only where the system has none (Dawn and Node need them).
# (the cache is read from a file: under pipefail, `ldconfig -p | grep -q` fails when grep stops early)
ldconfig -p > "$work/ldcache" 2>/dev/null || true
grep -q 'libstdc++\.so\.6 ' "$work/ldcache" || libs="$libs:$work/cxx"
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
notes=""
if [[ -z "${VK_ICD_FILENAMES:-}" ]]; then
  icd="$(ls /etc/vulkan/icd.d/nvidia*.json /usr/share/vulkan/icd.d/nvidia*.json /usr/local/share/vulkan/icd.d/nvidia*.json 2>/dev/null | head -1)"
  if [[ -z "$icd" ]]; then
    lib="$(awk '/libGLX_nvidia\.so\.0 /{print $NF; exit}' "$work/ldcache")"
    [[ -z "$lib" ]] && lib="$(ls /usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0 /usr/lib64/libGLX_nvidia.so.0 /usr/lib/libGLX_nvidia.so.0 2>/dev/null | head -1)"
    if [[ -n "$lib" ]]; then
      icd="$work/nvidia_icd.json"
      printf '{"file_format_version":"1.0.0","ICD":{"library_path":"%s","api_version":"1.3.0"}}\n' "$lib" > "$icd"
      notes="ICD written for $lib"
    else
      notes="no NVIDIA Vulkan driver found (no nvidia ICD manifest, no libGLX_nvidia.so.0): the loader's default search"
    fi
  else notes="ICD $icd"; fi
  [[ -n "$icd" ]] && export VK_ICD_FILENAMES="$icd"
fi
gpu="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
export DEVICE_NOTES="$notes${gpu:+; nvidia-smi: $gpu}; bundle $(cat "$b/commit" 2>/dev/null)"
echo "run.sh: $DEVICE_NOTES" >&2
timeout -k 10 450 "$work/node" "$work/app/entry.mjs" --out "$out" --budget "${BUDGET_S:-400}"
rc=$?
echo "run.sh: bench exited $rc; wrote $out" >&2
exit $rc
