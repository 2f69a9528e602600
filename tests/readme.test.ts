/**
 * The README's code blocks run as written (importing "gradsim" through the package's own
 * exports, under the "source" condition that maps them to src/), type-check under `tsc --strict`,
 * and the first one prints the gradient the math says it should.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const blocks = [...readFileSync(join(root, "README.md"), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .filter((b) => b.includes('from "gradsim"'));

function run(code: string): string {
  // Inside the repository, so the package resolves itself by name.
  const dir = mkdtempSync(join(root, ".readme-"));
  try {
    const file = join(dir, "snippet.ts");
    writeFileSync(file, code);
    const r = spawnSync(join(root, "node_modules", ".bin", "tsx"), ["--conditions=source", file], {
      cwd: root,
      encoding: "utf8",
      timeout: 240_000,
    });
    if (r.status !== 0) throw new Error(`README snippet failed:\n${code}\n${r.stderr}`);
    return r.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("README", () => {
  it("has runnable snippets", () => expect(blocks.length).toBeGreaterThanOrEqual(2));
  it("the grad snippet prints sin x + x cos x", () => {
    const out = run(blocks[0]!);
    const printed = JSON.parse(out.split("\n")[0]!.replace(/\s+/g, "")) as number[];
    [1, 2, 3].forEach((x, i) => expect(printed[i]).toBeCloseTo(Math.sin(x) + x * Math.cos(x), 12));
  });
  it("every other snippet runs", () => {
    for (const b of blocks.slice(1)) run(b);
  });
  it("every snippet type-checks under --strict (the lax.scan one included)", () => {
    const dir = mkdtempSync(join(root, ".readme-"));
    try {
      blocks.forEach((b, k) => {
        mkdirSync(join(dir, `s${k}`));
        writeFileSync(join(dir, `s${k}`, "snippet.ts"), b);
      });
      writeFileSync(
        join(dir, "tsconfig.json"),
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
          include: ["*/snippet.ts", "../src/types/*.d.ts"],
        }),
      );
      const r = spawnSync(join(root, "node_modules", ".bin", "tsc"), ["-p", dir], { cwd: root, encoding: "utf8" });
      expect(r.stdout).toBe("");
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
