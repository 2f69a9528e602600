/**
 * `npm run docs`: the documentation site (the guides and the API reference TypeDoc generates from
 * the TSDoc comments) into docs-site/. TypeDoc runs on TypeScript's JavaScript API, which the
 * repository's TypeScript 7 lacks, so it lives in its own small package here, installed on first use.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const run = (cmd, args, cwd) => {
  const r = spawnSync(cmd, args, { cwd, stdio: "inherit" });
  if (r.status !== 0) {
    console.error(`docs: ${cmd} ${args.join(" ")} failed (exit ${r.status}).`);
    process.exit(r.status ?? 1);
  }
};
const typedoc = join(here, "node_modules", "typedoc", "bin", "typedoc");
if (!existsSync(typedoc)) run("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], here);
run(
  process.execPath,
  [typedoc, "--options", join(root, "typedoc.json"), "--treatWarningsAsErrors", ...process.argv.slice(2)],
  root,
);
console.error(`docs: wrote ${join(root, "docs-site", "index.html")}`);
