#!/usr/bin/env node
// Line-length check, run by `npm run lint` after Biome. Biome's formatter wraps code at its lineWidth (120, see
// biome.jsonc) but leaves alone what it cannot break: comments, strings, template literals (the WGSL shaders among
// them). This lists every line of the checked files longer than 120 characters as `file:line: N characters` and
// exits 1 if there is any.
//
//   node tools/check-line-length.mjs             checks the files and folders in CHECKED below
//   node tools/check-line-length.mjs src tests   checks the named files and folders instead
//
// A line's length counts Unicode code points (a `θ` or a `→` is one character, as an editor shows it, not two UTF-16
// units or three bytes); a tab counts one. A trailing `\r` is not counted.
//
// Checked: the files Biome formats (`.ts`, `.mts`, `.mjs`, `.js`) under the given folders that git tracks or would
// track (ignored files such as builds are left out, as Biome leaves them out); outside a git checkout, every such
// file under the folders but node_modules/ and dist/.
//
// The one exemption: a line that contains a URL (`http://` or `https://` up to the next whitespace, quote or closing
// bracket) and fits once its URLs are taken out. A URL cannot be broken without breaking the link; everything else
// on the line can be wrapped. There is no comment that switches the check off for a line.

import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const LIMIT = 120;
// What `npm run lint` checks. In tests/ and property-tests/, Biome keeps a test's title on the line of its `it(` and
// cannot break a regular expression literal: shorten the title (the detail can go in a comment above), and build a
// long regular expression from the `.source` of shorter literals.
const CHECKED = ["src", "examples", "web", "bench", "bin", "tools", "tests", "property-tests", "vitest.config.ts"];
const EXTENSIONS = [".ts", ".mts", ".mjs", ".js"];
const SKIP_DIRS = new Set(["node_modules", "dist"]);
const URL_PATTERN = /https?:\/\/[^\s"'`)\]>]+/g;

const wanted = (path) => EXTENSIONS.some((ext) => path.endsWith(ext));

/** The files under `paths` that git tracks or would track (not ignored), or null outside a git checkout. */
function gitFiles(paths) {
  let out;
  try {
    out = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ...paths], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch {
    return null;
  }
  // A file deleted in the work tree but still in the index is listed too.
  return [...new Set(out.split("\0"))].filter((f) => f !== "" && wanted(f) && existsSync(f)).sort();
}

function walk(path, out) {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (!SKIP_DIRS.has(entry)) walk(join(path, entry), out);
    }
  } else if (wanted(path)) {
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
  if (!existsSync(path)) {
    console.error(`check-line-length: no such file or folder: ${path}`);
    process.exit(2);
  }
}
const paths = named.length > 0 ? named : CHECKED.filter((p) => existsSync(p));
const files = gitFiles(paths) ?? paths.flatMap((p) => walk(p, []));

let found = 0;
for (const file of files) {
  const lines = readFileSync(file, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].endsWith("\r") ? lines[i].slice(0, -1) : lines[i];
    const n = length(line);
    if (n <= LIMIT) continue;
    if (line.search(URL_PATTERN) >= 0 && length(line.replace(URL_PATTERN, "")) <= LIMIT) continue;
    console.log(`${file}:${i + 1}: ${n} characters`);
    found++;
  }
}

if (found > 0) {
  console.log(
    `${found} line${found === 1 ? "" : "s"} longer than ${LIMIT} characters (${files.length} files checked).`,
  );
  process.exit(1);
}
