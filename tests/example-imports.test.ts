/**
 * Examples and the web page are written as a user writes them: they import the package by name
 * ("gradsim", "gradsim/node", "gradsim/sysid/node"; tsconfig.json's "paths" and vitest.config.ts
 * resolve it to the sources), never a relative path into src/.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");

/** Every .ts/.tsx/.js/.mjs file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sources(path);
    return /\.(ts|tsx|mts|js|mjs)$/.test(name) ? [path] : [];
  });
}

/** Module specifiers of static imports and re-exports, dynamic import() and require() calls. */
function specifiers(code: string): string[] {
  const found: string[] = [];
  for (const re of [
    /\b(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\b(?:import|require)\s*\(\s*["']([^"']+)["']\s*\)/g,
  ]) {
    for (const m of code.matchAll(re)) found.push(m[1]!);
  }
  return found;
}

/** The specifiers of `file` that are relative paths into src/. */
function intoSrc(file: string, code: string): string[] {
  return specifiers(code).filter((s) => s.startsWith(".") && (resolve(dirname(file), s) + sep).startsWith(src + sep));
}

describe("examples and web import the package, not src/", () => {
  it("finds relative imports into src/ in every form (the check itself)", () => {
    const file = join(root, "examples", "lib", "x.ts");
    const code = [
      `import { np } from "../../src/index.js";`,
      `import type { Rng } from '../../src/core/host-rng.js';`,
      `export { a } from "../../src/io/atomic.js";`,
      `const m = await import("../../src/node.js");`,
      `import "../../src/optim/loss-curve-files.js";`,
      `import {\n  b,\n} from "../../src/models/index.js";`,
      `import { ok } from "gradsim"; import { fine } from "./stats.js"; import { alsoFine } from "../lib/run.js";`,
    ].join("\n");
    expect(intoSrc(file, code).sort()).toEqual([
      "../../src/core/host-rng.js",
      "../../src/index.js",
      "../../src/io/atomic.js",
      "../../src/models/index.js",
      "../../src/node.js",
      "../../src/optim/loss-curve-files.js",
    ]);
  });

  it("no file under examples/ or web/ imports a relative path into src/", () => {
    const offenders = ["examples", "web"]
      .flatMap((d) => sources(join(root, d)))
      .flatMap((file) => intoSrc(file, readFileSync(file, "utf8")).map((s) => `${relative(root, file)}: "${s}"`));
    expect(
      offenders,
      `import these from "gradsim", "gradsim/node" or "gradsim/sysid/node" instead ` +
        `(export what is missing from src/index.ts or src/node.ts)`,
    ).toEqual([]);
  });
});
