/**
 * The version of the code a run's records come from: the package version and a hash of every
 * TypeScript source of the library and the experiments. A changed default anywhere changes it,
 * so records written before an update are refused rather than mixed with new ones.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, type Dirent } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function sources(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

let cached: string | null = null;

/** "<package version>+<12 hex digits of the sources' hash>". */
export function codeVersion(): string {
  if (cached) return cached;
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  const hash = createHash("sha256");
  for (const f of [...sources(join(ROOT, "src")), ...sources(join(ROOT, "examples"))].sort())
    hash.update(relative(ROOT, f)).update("\0").update(readFileSync(f)).update("\0");
  cached = `${version}+${hash.digest("hex").slice(0, 12)}`;
  return cached;
}

/** 12 hex digits of a hash of `settings` as JSON (functions left out): a run key's resolved settings. */
export function settingsHash(settings: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(settings, (_k, v) => (typeof v === "function" ? undefined : v)) ?? "")
    .digest("hex")
    .slice(0, 12);
}
