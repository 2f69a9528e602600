/**
 * Writing a file all at once (Node only): the bytes go to a temporary file beside the target,
 * are flushed to the disk (fsync), and the file is then renamed over the target and the directory
 * flushed, so neither a crash nor a power cut mid-write leaves a partial or empty file.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

export function writeAtomic(path: string, data: string | Uint8Array): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    const fd = openSync(tmp, "w");
    try {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  syncDirectory(dir);
}

/** Flush a directory's entries (the rename) to disk; a no-op where directories cannot be opened (Windows). */
function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    /* some file systems refuse fsync on a directory: the data itself is synced */
  } finally {
    closeSync(fd);
  }
}
