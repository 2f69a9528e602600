/**
 * Target images for the `smoke` experiment: density fields [N, N] in [0, 1] (row 0 = top, as
 * images), either drawn procedurally or read from a PNG (`--target`), converted to grey and
 * box-filtered down to the grid.
 */
import { existsSync } from "node:fs";
import { readPng, np, type Array } from "gradsim/node";
import { CliError } from "./flags.js";

/** A soft-edged ring centred at (cx, cy) (fractions of the image), radii as fractions of N. */
export function ringTarget(
  n: number,
  o: { cx?: number; cy?: number; outer?: number; inner?: number } = {},
): Float64Array {
  const cx = (o.cx ?? 0.5) * n,
    cy = (o.cy ?? 0.45) * n,
    outer = (o.outer ?? 0.36) * n,
    inner = (o.inner ?? 0.18) * n;
  const out = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      const r = Math.hypot(i + 0.5 - cy, j + 0.5 - cx);
      // One-pixel soft edges: a hard ring is not reachable by advected smoke anyway.
      const edge = (d: number) => Math.min(1, Math.max(0, d + 0.5));
      out[i * n + j] = Math.min(edge(outer - r), edge(r - inner));
    }
  return out;
}

/** A PNG as grey density [N·N]: mean of RGB × alpha, box-filtered to N×N. */
export async function pngTarget(path: string, n: number): Promise<Float64Array> {
  if (!existsSync(path))
    throw new CliError(
      `--target ${path}: no such file; give a PNG image (it is converted to grey and resized to ${n}×${n}).`,
    );
  let img: Array;
  try {
    img = readPng(path);
  } catch (e) {
    throw new CliError(`--target ${path}: not a readable PNG (${(e as Error).message}).`);
  }
  const [h, w] = img.shape as [number, number, number];
  const d = await img.data();
  const out = new Float64Array(n * n),
    count = new Float64Array(n * n);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const k = 4 * (y * w + x);
      const grey = ((d[k]! + d[k + 1]! + d[k + 2]!) / 3) * d[k + 3]!;
      const cell = Math.min(n - 1, Math.floor((y * n) / h)) * n + Math.min(n - 1, Math.floor((x * n) / w));
      out[cell] += grey;
      count[cell] += 1;
    }
  for (let i = 0; i < n * n; i++) out[i] = count[i]! > 0 ? out[i]! / count[i]! : 0;
  return out;
}

export const densityArray = (d: Float64Array, n: number): Array =>
  np.reshape(np.array(d, { dtype: "float32" }), [n, n]);
