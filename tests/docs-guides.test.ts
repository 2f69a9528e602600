/**
 * Every `ts` block of the guides (docs/guides/*.md) is a whole program: all of them are
 * type-checked together under `tsc --strict` (importing "gradsim" through the package's exports,
 * mapped to src/ by the "source" condition), then each runs with tsx in a directory of its own
 * (they write files such as my-mesh.obj) and must exit 0. Blocks in other languages (bash, yaml,
 * text) are not programs.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const guidesDir = join(root, "docs", "guides");

/** The ts blocks of one markdown text, in order. */
const tsBlocks = (markdown: string): string[] => [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

const guides = readdirSync(guidesDir)
  .filter((f) => f.endsWith(".md"))
  .sort();
const programs = guides.flatMap((g) =>
  tsBlocks(readFileSync(join(guidesDir, g), "utf8")).map((code, k) => ({
    guide: g,
    k,
    code,
    name: `${g.replace(/\.md$/, "")}-${k}`,
  })),
);
// Inside the repository, so the package resolves itself by name.
const work = mkdtempSync(join(root, ".scratch-guides-"));
for (const p of programs) {
  mkdirSync(join(work, p.name));
  writeFileSync(join(work, p.name, "program.ts"), p.code);
}
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the guides' code blocks", () => {
  it("every guide of the site is here and most have programs", () => {
    expect(guides).toEqual(
      expect.arrayContaining([
        "quickstart.md",
        "transforms-for-jax-users.md",
        "obj-to-gif.md",
        "your-own-video.md",
        "models.md",
        "rendering.md",
        "risp.md",
        "datasets.md",
      ]),
    );
    expect(programs.length).toBeGreaterThanOrEqual(8);
  });

  it("type-check under --strict", () => {
    writeFileSync(
      join(work, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          customConditions: ["source"],
          types: ["node", "@webgpu/types"],
          lib: ["ES2022", "DOM"],
          skipLibCheck: true,
        },
        include: ["*/program.ts", "../src/types/*.d.ts"],
      }),
    );
    const r = spawnSync(join(root, "node_modules", ".bin", "tsc"), ["-p", work], { cwd: root, encoding: "utf8" });
    expect(r.stdout, "tsc --strict over the guides' programs").toBe("");
    expect(r.status).toBe(0);
  });

  it.each(programs.map((p) => [p.name, p] as const))(
    "%s runs",
    (_name, p) => {
      const r = spawnSync(join(root, "node_modules", ".bin", "tsx"), ["--conditions=source", "program.ts"], {
        cwd: join(work, p.name),
        encoding: "utf8",
        timeout: 240_000,
      });
      expect(r.status, `${p.guide}, block ${p.k + 1}:\n${p.code}\n${r.stderr}`).toBe(0);
    },
    240_000,
  );
});
