/**
 * The package as a user installs it: `npm pack` (which builds dist/), the tarball installed into
 * a scratch project, a program run with plain `node` that imports "gradsim" and takes a gradient,
 * `tsc` resolving the package's types there — a day-one program under `--strict` without
 * skipLibCheck, so every published declaration is checked, in a project with the DOM library and
 * in one with neither DOM nor @types/node — and a browser bundle (esbuild, platform browser) of
 * the main entry that pulls in no Node built-ins.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);
const scratch = mkdtempSync(join(tmpdir(), "gradsim-pack-"));
const pkg = join(scratch, "node_modules", "gradsim");
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );

function run(cmd: string, args: readonly string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  run("npm", ["pack", "--pack-destination", scratch, "--silent"], root);
  const tarball = readdirSync(scratch).find((f) => f.endsWith(".tgz"));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${scratch}`);
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "uses-gradsim", private: true, type: "module" }));
  // The dependencies come from npm's cache when the repository's own install filled it.
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", join(scratch, tarball)], scratch);
}, 600_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the packed package", () => {
  it("ships built JavaScript and types, not TypeScript sources", () => {
    const files = readdirSync(join(scratch, "node_modules", "gradsim", "dist"));
    expect(files).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "node.js", "node.d.ts"]));
    // src/ holds only the reference documents the guides and comments cite.
    const src = filesUnder(join(pkg, "src"))
      .map((f) => relative(pkg, f))
      .sort();
    expect(src).toEqual([
      "src/core/README.md",
      "src/models/README.md",
      "src/render/CONVENTIONS.md",
      "src/risp/README.md",
      "src/sysid/README.md",
    ]);
  });

  it("ships the docs it references: each relative link of its Markdown and each document its declarations cite", () => {
    const docs = filesUnder(pkg).filter((f) => f.endsWith(".md") && !relative(pkg, f).includes("node_modules"));
    expect(docs.map((f) => relative(pkg, f))).toEqual(
      expect.arrayContaining(["README.md", "docs/guides/quickstart.md", "results/README.md", "bench/README.md"]),
    );
    const missing: string[] = [];
    for (const doc of docs) {
      for (const m of readFileSync(doc, "utf8").matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!.split("#")[0]!;
        if (!target || /^(https?|mailto):/.test(m[1]!)) continue;
        if (!existsSync(join(dirname(doc), target))) missing.push(`${relative(pkg, doc)} → ${m[1]}`);
      }
    }
    for (const dts of filesUnder(join(pkg, "dist")).filter((f) => f.endsWith(".d.ts"))) {
      const text = readFileSync(dts, "utf8");
      for (const m of text.matchAll(/\b((?:src|docs|results|bench)\/[\w./-]+\.md)\b/g))
        if (!existsSync(join(pkg, m[1]!))) missing.push(`${relative(pkg, dts)} cites ${m[1]}`);
      if (/\.\.\/shared\/|render-anchors\.md/.test(text))
        missing.push(`${relative(pkg, dts)} cites a file outside the repository`);
    }
    expect(missing).toEqual([]);
  });

  it("plain node imports it and takes a gradient", () => {
    writeFileSync(
      join(scratch, "main.mjs"),
      [
        'import { grad, np, optim, writeLinePlot } from "gradsim";',
        "const f = (x) => np.sum(np.mul(np.sin(x), x));",
        'const g = await grad(f)(np.array([1, 2, 3], { dtype: "float64" })).data();',
        "console.log(JSON.stringify({ g: [...g], node: typeof writeLinePlot, fit: typeof optim.fit }));",
      ].join("\n"),
    );
    const out = JSON.parse(run(process.execPath, ["main.mjs"], scratch).trim().split("\n").pop()!) as {
      g: number[];
      node: string;
      fit: string;
    };
    [1, 2, 3].forEach((x, i) => expect(out.g[i]).toBeCloseTo(Math.sin(x) + x * Math.cos(x), 12));
    // In Node, "gradsim" resolves to the Node entry (files, plots).
    expect(out.node).toBe("function");
    expect(out.fit).toBe("function");
  });

  it("plain node renders on two threads: the rasterizer workers load the shipped dist module", () => {
    writeFileSync(
      join(scratch, "threads.mjs"),
      [
        'import { init, render as R } from "gradsim";',
        // Internal, by file path (not an export): the pool's counters and its workers-only switch.
        'const T = await import("./node_modules/gradsim/dist/render/fused/raster-threads.js");',
        "await init({ backend: 'cpu', cpuThreads: 2 });",
        "const workers = await T.startRasterWorkers();",
        "const mesh = R.meshFromData(R.icosphereData(3, 1), { colors: [0.8, 0.5, 0.3] });",
        "const camera = R.perspectiveCamera({ distance: 3.2, elevation: 20, azimuth: 30 });",
        "const draw = async () => [...(await R.render(mesh, camera, { ambient: 0.5, directional: [] }, undefined, " +
          "{ width: 64, softras: { sigma: 1 / 64 ** 2 } }).data())];",
        "T.setRasterCallerClaims(false);",
        "const threaded = await draw();",
        "T.setRasterCallerClaims(true);",
        "const pieces = T.rasterWorkerPieces();",
        "await init({ cpuThreads: 1 });",
        "const one = await draw();",
        "console.log(JSON.stringify({ workers, pieces, same: threaded.every((v, i) => Object.is(v, one[i])) }));",
      ].join("\n"),
    );
    const out = JSON.parse(run(process.execPath, ["threads.mjs"], scratch).trim().split("\n").pop()!) as {
      workers: number;
      pieces: number;
      same: boolean;
    };
    expect(out).toEqual({ workers: 1, pieces: expect.any(Number), same: true });
    expect(out.pieces, "the worker ran the render's pieces").toBeGreaterThan(0);
  });

  it("tsc resolves its types (and rejects a wrong use)", () => {
    writeFileSync(
      join(scratch, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        include: ["typed.ts"],
      }),
    );
    writeFileSync(
      join(scratch, "typed.ts"),
      [
        'import { grad, np, type Array } from "gradsim";',
        'import { writeLinePlot } from "gradsim/node";',
        "const f = (x: Array): Array => np.sum(np.square(x));",
        "export const g: Array = grad(f)(np.array([1, 2]));",
        "export const plot: (path: string, data: readonly number[]) => void = writeLinePlot;",
      ].join("\n"),
    );
    run(bin("tsc"), ["-p", "."], scratch);
    writeFileSync(
      join(scratch, "typed.ts"),
      'import { np } from "gradsim";\nexport const n: number = np.array([1]);\n',
    );
    const r = spawnSync(bin("tsc"), ["-p", "."], { cwd: scratch, encoding: "utf8" });
    expect(r.status, "assigning an Array to a number must not type-check").not.toBe(0);
    expect(r.stdout).toMatch(/not assignable to type 'number'/);
  });

  it("a day-one program type-checks under --strict without skipLibCheck, and the transforms keep its types", () => {
    writeFileSync(
      join(scratch, "day-one.ts"),
      [
        'import { grad, jit, lax, np, valueAndGrad, vmap, type NDArray } from "gradsim";',
        'import { writeLinePlot } from "gradsim/node";',
        'import { fitVideo, readVideo } from "gradsim/sysid/node";',
        "export const video: typeof readVideo = readVideo, fit: typeof fitVideo = fitVideo;",
        "type Params = { mass: NDArray; friction: NDArray };",
        "const loss = (p: Params): NDArray => np.sum(np.add(np.square(p.mass), p.friction));",
        "const params: Params = { mass: np.array([1, 2]), friction: np.array(0.5) };",
        "export const g: Params = grad(loss)(params);",
        "export const [value, g2] = valueAndGrad(loss)(params);",
        "export const friction: NDArray = g2.friction;",
        "export const [[p]] = lax.scan(([p, v]: [NDArray, NDArray]) => [[np.add(p, v), v], null], " +
          "[np.zeros([]), np.ones([])], null, { length: 3 });",
        "export const batched: NDArray = jit(vmap((x: NDArray) => np.sin(x)))(np.array([1, 2]));",
        "export const plot: (path: string, data: readonly number[]) => void = writeLinePlot;",
        "// The gradient is typed (not any): a misspelt field does not type-check.",
        "// @ts-expect-error",
        "export const typo = g.mas;",
      ].join("\n"),
    );
    const strict = {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      types: [],
    };
    for (const [name, lib] of [
      ["with the DOM library", undefined],
      ["with ES2022 only", ["ES2022"]],
    ] as const) {
      writeFileSync(
        join(scratch, "tsconfig.strict.json"),
        JSON.stringify({ compilerOptions: { ...strict, ...(lib ? { lib } : {}) }, include: ["day-one.ts"] }),
      );
      const r = spawnSync(bin("tsc"), ["-p", "tsconfig.strict.json"], { cwd: scratch, encoding: "utf8" });
      expect(r.stdout, `tsc --strict ${name}`).toBe("");
      expect(r.status).toBe(0);
    }
  });

  it("the guide's OBJ → simulate → render → GIF program compiles against the package and runs with plain node", () => {
    const guide = readFileSync(join(root, "docs", "guides", "obj-to-gif.md"), "utf8");
    const program = /^```ts\n([\s\S]*?)^```$/m.exec(guide)![1]!;
    mkdirSync(join(scratch, "obj"), { recursive: true });
    writeFileSync(join(scratch, "obj", "program.ts"), program);
    // @types/node from the repository (the program reads and writes files); everything else from the installed package.
    writeFileSync(
      join(scratch, "tsconfig.obj.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          rootDir: "obj",
          outDir: "obj-out",
          types: ["node"],
          typeRoots: [join(root, "node_modules", "@types")],
        },
        include: ["obj/program.ts"],
      }),
    );
    const tsc = spawnSync(bin("tsc"), ["-p", "tsconfig.obj.json"], { cwd: scratch, encoding: "utf8" });
    expect(tsc.stdout, "tsc --strict of the guide's program").toBe("");
    const out = run(process.execPath, [join(scratch, "obj-out", "program.js")], join(scratch, "obj"));
    expect(out.trim()).toBe("[ 24, 64, 64, 4 ] true");
    expect(
      readFileSync(join(scratch, "obj", "drop.gif"))
        .subarray(0, 6)
        .toString(),
    ).toBe("GIF89a");
  });

  it("a browser bundle of the main entry pulls in no Node built-ins", () => {
    writeFileSync(
      join(scratch, "web.js"),
      'import { grad, np, render, sysid } from "gradsim";\nconsole.log(grad, np, render, sysid);\n',
    );
    const r = spawnSync(
      bin("esbuild"),
      ["web.js", "--bundle", "--platform=browser", "--format=esm", "--outfile=web.bundle.js", "--log-level=error"],
      { cwd: scratch, encoding: "utf8" },
    );
    expect(r.stderr, "esbuild errors").toBe("");
    expect(r.status).toBe(0);
  });
});
