/**
 * A lock for a read-modify-write of a file that several processes update (Node only): reproduce
 * runs side by side (`--only`) each rewrite one tables.json from what is in it plus their own
 * rows, and without the lock one run's rows could be lost between another's read and write.
 */
import { closeSync, openSync, rmSync, statSync } from "node:fs";

export interface FileLockOptions {
  /** Give up after this long (ms). */
  readonly timeoutMs?: number;
  /** A lock older than this (ms) was left by a process that died holding it, and is removed. */
  readonly staleMs?: number;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Runs `fn` while holding `<path>.lock` (created exclusively; removed afterwards, also when fn throws). */
export function withFileLock<T>(
  path: string,
  fn: () => T,
  { timeoutMs = 60_000, staleMs = 60_000 }: FileLockOptions = {},
): T {
  const lock = `${path}.lock`;
  const start = Date.now();
  for (;;) {
    try {
      closeSync(openSync(lock, "wx"));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    let age: number;
    try {
      age = Date.now() - statSync(lock).mtimeMs;
    } catch {
      continue; /* released meanwhile */
    }
    if (age > staleMs && removeIfStale(lock, staleMs)) continue;
    if (Date.now() - start > timeoutMs) {
      throw new Error(
        `${lock} has been held by another process for ${(age / 1000).toFixed(0)} ` +
          `s; if no other process is writing ${path}, delete the lock file.`,
      );
    }
    Atomics.wait(sleeper, 0, 0, 20); // a synchronous sleep: the holders' critical sections take milliseconds
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

/**
 * Removes a stale lock while holding `<lock>.break`, re-checking under it: two waiters that both
 * saw the stale lock would otherwise race, the later one removing the lock the earlier one had
 * just taken, and both would hold it. A breaker left by a process that died within its few
 * statements is itself removed once stale. False: another waiter is breaking the lock.
 */
function removeIfStale(lock: string, staleMs: number): boolean {
  const breaker = `${lock}.break`;
  try {
    closeSync(openSync(breaker, "wx"));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const since = statSync(breaker, { throwIfNoEntry: false });
    if (since && Date.now() - since.mtimeMs > staleMs) rmSync(breaker, { force: true });
    return false;
  }
  try {
    const held = statSync(lock, { throwIfNoEntry: false });
    if (held && Date.now() - held.mtimeMs > staleMs) rmSync(lock, { force: true });
    return true;
  } finally {
    rmSync(breaker, { force: true });
  }
}
