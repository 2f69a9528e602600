/** Checkpoint files (Node): parameter trees saved atomically and loaded with their shapes checked. */
import { readFileSync } from "node:fs";
import { writeAtomic } from "../io/atomic.js";
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { writeLossCurveCsv, writeLossCurvePng } from "../optim/loss-curve-files.js";
import { checkParamsLike, parseParams, serializeParams } from "./checkpoint.js";
import { train, type TrainOptions, type TrainResult } from "./train.js";

/** Write `params` to `path` (format: checkpoint.ts), atomically. */
export async function saveParams(path: string, params: unknown): Promise<void> {
  writeAtomic(path, await serializeParams(params));
}

/**
 * Read a checkpoint. With `like` (e.g. a freshly initialised network), the file must hold the same
 * tree with the same shapes and dtypes — a mismatch names the first differing parameter.
 */
export function loadParams<T = unknown>(path: string, like?: T): T {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(`loadParams: cannot read ${path}: ${(e as Error).message}`);
  }
  const params = parseParams(bytes, `loadParams ${path}`);
  if (like !== undefined) checkParamsLike(params, like, `loadParams ${path}`);
  return params as T;
}

/**
 * `train` with its outputs on disk under `dir`: after every epoch the parameters (`params.gsp`,
 * loadable with loadParams) and the loss per step (`loss.csv`, `loss.png`).
 */
export async function trainToDisk<P, D>(
  dir: string,
  o: TrainOptions<P, D>,
): Promise<TrainResult<P> & { files: string[] }> {
  mkdirSync(dir, { recursive: true });
  const files = ["params.gsp", "loss.csv", "loss.png"];
  const r = await train({
    ...o,
    onEpoch: async (info) => {
      await saveParams(join(dir, files[0]!), info.params);
      writeLossCurveCsv(join(dir, files[1]!), info.losses);
      writeLossCurvePng(join(dir, files[2]!), info.losses, {
        title: `${o.label ?? "training"}: loss per step`,
        yLabel: "loss",
      });
      await o.onEpoch?.(info);
    },
  });
  return { ...r, files };
}
