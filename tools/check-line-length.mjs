#!/usr/bin/env node
// Line-length check, run by `npm run lint` after Biome. Biome's formatter wraps code at its lineWidth (120, see
// biome.jsonc) but leaves alone what it cannot break: comments, strings, template literals (the WGSL shaders among
// them). This lists every line of the checked files longer than 120 characters as `file:line: length` and exits 1
// if there is any.
//
//   node tools/check-line-length.mjs             checks the default folders below
//   node tools/check-line-length.mjs src tests   checks the named files and folders instead
//
// A line's length counts Unicode code points (a `θ` or a `→` is one character, as an editor shows it, not two UTF-16
// units or three bytes); a tab counts one. A trailing `\r` is not counted.
//
// Checked: `.ts`, `.mts` and `.mjs` files under the folders in ROOTS, skipping node_modules/ and dist/.
//
// The one exemption: a line that contains a URL (`http://` or `https://` up to the next whitespace, quote or closing
// bracket) and fits once its URLs are taken out. A URL cannot be broken without breaking the link; everything else
// on the line can be wrapped. There is no comment that switches the check off for a line.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const LIMIT = 120;
const ROOTS = ["src", "tests", "property-tests", "examples", "web", "bench", "bin", "tools"];
const EXTENSIONS = [".ts", ".mts", ".mjs"];
const SKIP_DIRS = new Set(["node_modules", "dist"]);
const URL_PATTERN = /https?:\/\/[^\s"'`)\]>]+/g;

function files(path, out) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return out; // A default folder that does not exist is skipped; a named one is reported by the caller.
  }
  if (stat.isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (SKIP_DIRS.has(entry)) continue;
      files(join(path, entry), out);
    }
  } else if (EXTENSIONS.some((ext) => path.endsWith(ext))) {
    out.push(path);
  }
  return out;
}

function length(line) {
  let n = 0;
  for (const _ of line) n++;
  return n;
}

const named = process.argv.slice(2);
for (const path of named) {
  try {
    statSync(path);
  } catch {
    console.error(`check-line-length: no such file or folder: ${path}`);
    process.exit(2);
  }
}
const roots = named.length > 0 ? named : ROOTS;

let found = 0;
let checked = 0;
for (const root of roots) {
  for (const file of files(root, [])) {
    checked++;
    const lines = readFileSync(file, "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i].endsWith("\r") ? lines[i].slice(0, -1) : lines[i];
      const n = length(line);
      if (n <= LIMIT) continue;
      if (line.search(URL_PATTERN) >= 0 && length(line.replace(URL_PATTERN, "")) <= LIMIT) continue;
      console.log(`${relative(".", file)}:${i + 1}: ${n} characters`);
      found++;
    }
  }
}

if (found > 0) {
  console.log(`${found} line${found === 1 ? "" : "s"} longer than ${LIMIT} characters in ${checked} files.`);
  process.exit(1);
}
