/** writeAtomic: the data reaches the disk (fsync) before the rename makes it the file, and the rename is synced too. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

const calls: string[] = [];
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return {
    ...fs,
    fsyncSync: (fd: number) => {
      calls.push("fsync");
      return fs.fsyncSync(fd);
    },
    renameSync: (a: string, b: string) => {
      calls.push("rename");
      return fs.renameSync(a, b);
    },
  };
});
const { writeAtomic } = await import("../src/io/atomic.js");

const dir = mkdtempSync(join(tmpdir(), "gradsim-atomic-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("writeAtomic", () => {
  it("fsyncs the data before renaming it into place, then the directory", () => {
    const path = join(dir, "sub", "file.json");
    writeAtomic(path, "x".repeat(100_000));
    expect(readFileSync(path, "utf8")).toBe("x".repeat(100_000));
    expect(calls).toEqual(["fsync", "rename", "fsync"]);
    calls.length = 0;
    writeAtomic(path, Uint8Array.from([1, 2, 3]));
    expect([...readFileSync(path)]).toEqual([1, 2, 3]);
    expect(calls).toEqual(["fsync", "rename", "fsync"]);
  });
});
