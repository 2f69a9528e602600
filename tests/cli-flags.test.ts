/**
 * Command-line edges: a flag value keeps every "=" after the first, empty values and integers
 * that are not exact (past 2^53, beyond a flag's range, "1e20") are refused with exit code 2's
 * message, and OBJ files take decimal numbers only.
 */
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { models } from "../src/index.js";
import { parseFlags } from "../examples/lib/flags.js";

const parsed = (argv: string[]) => {
  const r = parseFlags(argv, "out");
  if (E.isLeft(r)) throw new Error(`rejected: ${r.left.message}`);
  return r.right;
};
const refused = (argv: string[]): string => {
  const r = parseFlags(argv, "out");
  if (E.isRight(r)) throw new Error(`expected ${JSON.stringify(argv)} to be refused`);
  return r.left.message;
};

describe("command-line flags", () => {
  it("--name=value keeps the whole value after the first =", () => {
    expect(parsed(["--out=results/run=1"]).out).toBe("results/run=1");
    expect(parsed(["--out=a=b=c", "--seed=3"])).toMatchObject({ out: "a=b=c", seed: 3 });
    expect(parsed(["--out", "x=y"]).out).toBe("x=y");
  });

  it("refuses empty values and integers that are not exact or out of range", () => {
    expect(refused(["--out", ""])).toBe("--out needs a value, got an empty string.");
    expect(refused(["--out="])).toBe("--out needs a value, got an empty string.");
    expect(refused(["--dataset", "1e20"])).toContain('--dataset expects an integer ≥ 1 and ≤ 1000000, got "1e20"');
    expect(refused(["--dataset", "100000000000000000000"])).toContain("--dataset expects an integer ≥ 1 and ≤ 1000000");
    // 2^53 + 1 would read as 2^53: two seeds, one run.
    expect(refused(["--seed", "9007199254740993"])).toContain(
      '--seed expects an integer ≥ 0 and ≤ 4294967295, got "9007199254740993"',
    );
    expect(refused(["--seed", "4294967296"])).toContain("--seed expects an integer ≥ 0 and ≤ 4294967295");
    expect(parsed(["--seed", "4294967295"]).seed).toBe(4294967295);
    expect(refused(["--iters", "0x10"])).toContain("--iters expects an integer ≥ 1");
    expect(refused(["--dataset", "5", "--shard", "0/9007199254740993"])).toContain("--shard expects K/N");
    expect(parsed(["--threads", "2"]).threads).toBe(2);
    expect(parsed([]).threads).toBeNull();
    expect(refused(["--threads", "0"])).toContain('--threads expects an integer ≥ 1 and ≤ 64, got "0"');
  });

  it("--precision takes a percentage or a fraction in (0, 25%]", () => {
    expect(parsed(["--precision", "2%"]).precision).toBeCloseTo(0.02, 15);
    expect(parsed(["--precision=0.05"]).precision).toBe(0.05);
    expect(parsed(["--precision", ".1"]).precision).toBe(0.1);
    expect(parsed(["--precision", "25%"]).precision).toBe(0.25);
    expect(parsed([]).precision).toBeNull();
    for (const bad of ["0", "0%", "30%", "0.3", "2 %", "-1%", "1e-2", "two"])
      expect(refused(["--precision", bad])).toContain(`--precision expects the share of its value every unknown`);
  });
});

describe("OBJ numbers", () => {
  const tri = (v: string) => `v 0 0 0\nv 1 0 0\nv ${v}\nf 1 2 3\n`;
  it("takes decimal numbers only: 0x10, 0b1, Infinity and an empty token are refused with their line", () => {
    expect([...models.meshes.loadObj(tri("0 1.5e0 -.5")).vertices]).toEqual([0, 0, 0, 1, 0, 0, 0, 1.5, -0.5]);
    for (const bad of ["0x10 0 0", "0 0b1 0", "0 0 Infinity", "0 0 1_000"])
      expect(() => models.meshes.loadObj(tri(bad))).toThrow(/line 3: vertex needs 3 numbers/);
    expect(() => models.meshes.loadObj("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0x3\n")).toThrow(/line 4: face "1 2 0x3"/);
  });
});
