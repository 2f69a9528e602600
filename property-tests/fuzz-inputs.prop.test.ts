/**
 * Fuzzed inputs: mangled OBJ, .tet, scene JSON, PNG and GIF files and random command lines fed to
 * the loaders and the CLI. Every case ends in a result or a clear error (our own Error with a
 * message naming the input) — never a TypeError or RangeError from deep inside, never a hang,
 * and no partial output file. Fixed seed in CI (property-tests/setup.ts), bounded cases.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { afterAll, describe, expect, it } from "vitest";
import { parseFlags } from "../examples/lib/flags.js";
import { decodeGif, models, np, sysid } from "../src/index.js";
import { readPng, writePng } from "../src/io/image.js";
import { loadVideoScene } from "../src/sysid/node/video-fit.js";

const root = join(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "gradsim-fuzz-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A mangled copy of `seed`: a few random deletions, insertions, byte flips, duplications or a truncation. */
const mangled = (seed: Uint8Array): fc.Arbitrary<Uint8Array> => {
  const edit = fc.oneof(
    fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), len: fc.integer({ min: 1, max: 16 }) }),
    fc.record({
      kind: fc.constant("insert" as const),
      at: fc.nat(),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
    }),
    fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant("duplicate" as const), at: fc.nat(), len: fc.integer({ min: 1, max: 32 }) }),
    fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  );
  return fc.array(edit, { minLength: 1, maxLength: 4 }).map((edits) => {
    let b = [...seed];
    for (const e of edits) {
      const at = b.length ? e.at % b.length : 0;
      if (e.kind === "delete") b.splice(at, e.len);
      else if (e.kind === "insert") b.splice(at, 0, ...e.bytes);
      else if (e.kind === "flip") {
        if (b.length) b[at] = e.value;
      } else if (e.kind === "duplicate") b.splice(at, 0, ...b.slice(at, at + e.len));
      else b = b.slice(0, at);
    }
    return Uint8Array.from(b);
  });
};
const text = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** Runs `f`; passes if it returns, or throws a plain Error whose message matches `clear`. */
function resultOrClearError<T>(f: () => T, clear: RegExp, check: (r: T) => void = () => {}): void {
  let r: T;
  try {
    r = f();
  } catch (e) {
    expect((e as Error).constructor, `a ${(e as Error).constructor.name} escaped: ${(e as Error).message}`).toBe(Error);
    expect((e as Error).message).toMatch(clear);
    return;
  }
  check(r);
}

const RUNS = 150;

describe("mangled mesh files", () => {
  const obj = "# a tetrahedron\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";
  const tet = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 1 1 1\nt 0 1 2 3\nt 1 2 3 4\n";
  it("OBJ: parseObj returns issues with line numbers or a mesh whose faces index its vertices", () => {
    fc.assert(
      fc.property(mangled(text(obj)), (b) => {
        const src = decode(b);
        const r = models.meshes.parseObj(src);
        if (E.isLeft(r)) {
          expect(r.left.length).toBeGreaterThan(0);
          for (const i of r.left) expect(i.line).toBeGreaterThanOrEqual(1);
          expect(() => models.meshes.loadObj(src)).toThrow(/loadObj: \d+ problem/);
        } else {
          const nv = r.right.vertices.length / 3;
          expect(r.right.vertices.every(Number.isFinite)).toBe(true);
          expect(r.right.faces.every((i) => i >= 0 && i < nv)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });
  it(".tet: parseTet likewise", () => {
    fc.assert(
      fc.property(mangled(text(tet)), (b) => {
        const r = models.meshes.parseTet(decode(b));
        if (E.isRight(r)) {
          const nv = r.right.vertices.length / 3;
          expect(r.right.tets.every((i) => i >= 0 && i < nv)).toBe(true);
        } else expect(r.left.length).toBeGreaterThan(0);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("mangled scene files", () => {
  const scenePath = join(root, "examples", "data", "fit-example", "scene.json");
  const scene = readFileSync(scenePath, "utf8");
  it("byte-level: loadVideoScene gives the scene or an error naming the file and what is wrong", () => {
    fc.assert(
      fc.property(mangled(text(scene)), (b) => {
        const p = join(dir, "scene.json");
        writeFileSync(p, b);
        // Relative paths in the scene (mesh, background plate) resolve against the original's directory.
        resultOrClearError(() => loadVideoScene(p), /^scene/);
      }),
      { numRuns: RUNS },
    );
  });
  it("field-level: any JSON value in any field is accepted or refused with a message, never thrown", () => {
    const raw = JSON.parse(scene) as Record<string, unknown>;
    const keys = [...Object.keys(raw), "unknown-field"];
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 3 }), (k, v) => {
        const r = sysid.parseVideoScene({ ...raw, [k]: v });
        if (E.isLeft(r)) expect(r.left.length).toBeGreaterThan(10);
      }),
      { numRuns: RUNS },
    );
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (v) => {
        const r = sysid.parseVideoScene(v);
        if (E.isLeft(r)) expect(typeof r.left).toBe("string");
      }),
      { numRuns: 50 },
    );
  });
});

describe("mangled images", () => {
  const pngPath = join(dir, "seed.png");
  writePng(
    pngPath,
    np
      .array(
        Array.from({ length: 6 * 5 * 4 }, (_, i) => (i % 7) / 7),
        { dtype: "float32" },
      )
      .reshape([6, 5, 4]),
  );
  const png = new Uint8Array(readFileSync(pngPath));
  const gif = new Uint8Array(readFileSync(join(root, "examples", "data", "fit-example", "clip.gif")).subarray(0, 4096));
  it("PNG: readPng returns an image or says the file is not a readable PNG", () => {
    fc.assert(
      fc.property(mangled(png), (b) => {
        const p = join(dir, "fuzz.png");
        writeFileSync(p, b);
        resultOrClearError(
          () => readPng(p),
          /^readPng: .*fuzz\.png/,
          (img) => {
            expect(img.ndim).toBe(3);
            expect(img.shape[2]).toBe(4);
          },
        );
      }),
      { numRuns: RUNS },
    );
  });
  it("GIF: decodeGif returns whole frames or says what is wrong and where", () => {
    fc.assert(
      fc.property(mangled(gif), (b) => {
        resultOrClearError(
          () => decodeGif(b),
          /^decodeGif: /,
          (g) => {
            for (const f of g.frames) expect(f.length).toBe(g.width * g.height * 4);
          },
        );
      }),
      { numRuns: RUNS },
    );
  });
});

describe("random command lines", () => {
  const tokens = fc.oneof(
    fc.constantFrom(
      "--seed",
      "--backend",
      "--out",
      "--iters",
      "--dataset",
      "--quick",
      "--json",
      "--workers",
      "--shard",
      "--target",
      "--video",
      "--scene",
      "--unknowns",
      "--help",
      "--bogus",
      "--seed=",
      "--iters=-3",
      "--backend=tpu",
      "--shard=3/2",
    ),
    fc.constantFrom("cpu", "webgpu", "auto", "-1", "0", "1e9", "NaN", "abc", "2/3", "mass,mu", ""),
    fc.string({ maxLength: 6 }),
  );
  it("parseFlags returns flags or a CliError with a message for any argument list", () => {
    fc.assert(
      fc.property(fc.array(tokens, { maxLength: 8 }), (argv) => {
        const r = parseFlags(argv, "out/x");
        if (E.isLeft(r)) expect(r.left.message.length).toBeGreaterThan(10);
        else {
          expect(Number.isInteger(r.right.seed)).toBe(true);
          expect(r.right.out.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("the CLI exits with code 2 and a one-line reason (no stack trace, no output directory) on bad arguments", () => {
    // A few drawn command lines, each a child process; only those parseFlags refuses (they would otherwise start a
    // run).
    const bad = fc
      .sample(fc.array(tokens, { minLength: 1, maxLength: 5 }), { numRuns: 60, seed: 7 })
      .filter((argv) => E.isLeft(parseFlags(argv, "out/x")) && !argv.some((a) => a.includes("--out")))
      .slice(0, 4);
    expect(bad.length).toBeGreaterThan(0);
    for (const argv of bad) {
      const r = spawnSync(
        join(root, "node_modules", ".bin", "tsx"),
        [join(root, "bin", "gradsim.ts"), "pendulum", ...argv],
        { cwd: dir, encoding: "utf8", timeout: 60_000 },
      );
      expect(r.status, `${argv.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stderr).toMatch(/gradsim pendulum: /);
      expect(existsSync(join(dir, "out"))).toBe(false);
    }
  });
});
