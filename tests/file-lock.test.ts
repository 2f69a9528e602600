/**
 * withFileLock: processes doing a read-modify-write of one file under the lock lose no update;
 * a lock left by a dead process is taken over once stale, by one waiter at a time; a held lock
 * times out with a message naming the lock file.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { withFileLock } from "../src/io/file-lock.js";
import { outDir } from "./experiments-helpers.js";

/** A process adding 1 to the number in `file` `times` times, each a slow read-modify-write under the lock. */
function incrementer(script: string, file: string, times: number): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, file, String(times)], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    child.on("error", fail);
    child.on("exit", (code) => done(code ?? -1));
  });
}

describe("withFileLock", () => {
  it("two processes' read-modify-writes of one file lose no update", async () => {
    const dir = outDir("file-lock");
    mkdirSync(dir, { recursive: true });
    const script = join(dir, "increment.ts"),
      file = join(dir, "counter.txt");
    writeFileSync(
      script,
      [
        `import { readFileSync, writeFileSync } from "node:fs";`,
        `import { withFileLock } from ${JSON.stringify(resolve("src/io/file-lock.ts"))};`,
        `const [file, times] = [process.argv[2]!, Number(process.argv[3])];`,
        `const pause = new Int32Array(new SharedArrayBuffer(4));`,
        `for (let i = 0; i < times; i++) withFileLock(file, () => {`,
        `  const n = Number(readFileSync(file, "utf8"));`,
        `  Atomics.wait(pause, 0, 0, 3); // widen the window between read and write`,
        `  writeFileSync(file, String(n + 1));`,
        `});`,
      ].join("\n"),
    );
    writeFileSync(file, "0");
    const codes = await Promise.all([incrementer(script, file, 40), incrementer(script, file, 40)]);
    expect(codes).toEqual([0, 0]);
    expect(Number(readFileSync(file, "utf8"))).toBe(80);
    expect(existsSync(`${file}.lock`)).toBe(false);
  }, 60_000);

  it("takes over a stale lock, waits for a fresh one, and releases it when the body throws", () => {
    const dir = outDir("file-lock-stale");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "tables.json");
    writeFileSync(`${file}.lock`, "");
    const old = new Date(Date.now() - 120_000);
    utimesSync(`${file}.lock`, old, old);
    expect(withFileLock(file, () => 7, { staleMs: 60_000 })).toBe(7);
    expect(existsSync(`${file}.lock`)).toBe(false);

    // A waiter breaks a stale lock only while holding `.lock.break`: a fresh breaker (another
    // waiter breaking it) makes it wait; a stale one (its breaker died) is removed, then the lock.
    writeFileSync(`${file}.lock`, "");
    utimesSync(`${file}.lock`, old, old);
    writeFileSync(`${file}.lock.break`, "");
    expect(() => withFileLock(file, () => 7, { timeoutMs: 100 })).toThrow(/has been held by another process for 120 s/);
    expect(existsSync(`${file}.lock`)).toBe(true);
    utimesSync(`${file}.lock.break`, old, old);
    expect(withFileLock(file, () => 8)).toBe(8);
    for (const f of [`${file}.lock`, `${file}.lock.break`]) expect(existsSync(f)).toBe(false);

    writeFileSync(`${file}.lock`, "");
    expect(() => withFileLock(file, () => 7, { timeoutMs: 100 })).toThrow(
      /tables\.json\.lock has been held by another process.*delete the lock file/,
    );

    expect(() =>
      withFileLock(join(dir, "other.json"), () => {
        throw new Error("body");
      }),
    ).toThrow("body");
    expect(existsSync(join(dir, "other.json.lock"))).toBe(false);
  });
});
