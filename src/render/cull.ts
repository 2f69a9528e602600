/**
 * Cost control (issue 7 item 6): screen tiles and face binning with a fixed capacity.
 *
 * The image is split into tiles of tw×th pixels. Each face's screen bounding box, padded by
 * the rasterizer's soft margin (SoftRas: √(Tσ), DIB-R: boxlen), is tested against every tile;
 * each tile keeps the first `capacity` overlapping faces in face order (so results do not
 * depend on binning, and DIB-R's first-face tie-breaking is preserved). Binning *selects* — it
 * is computed from stopGradient'd values and yields int32 index arrays used with np.take — so
 * it never enters the differentiated path. It is written with array ops, so it also works under
 * jit and vmap; only the automatic choice of capacity needs concrete values (eager, grad, vmap).
 */
import type { Array } from "../core/array.js";
import { ConcreteArray } from "../core/concrete.js";
import type { DType } from "../core/dtype.js";
import { np } from "../core/np/index.js";
import { Tracer } from "../core/trace.js";
import { unstack } from "./raster-common.js";

/** A regular grid of tiles covering a (padded) image; pixel centres follow src/render/CONVENTIONS.md. */
export interface TileGrid {
  readonly width: number;
  readonly height: number;
  readonly tileW: number;
  readonly tileH: number;
  readonly nx: number;
  readonly ny: number;
  /** Number of tiles (nx·ny) and pixels per tile (tileW·tileH). */
  readonly T: number;
  readonly Pt: number;
  /** NDC pixel-centre coordinates, [T, Pt, 1]. */
  readonly px: Array;
  readonly py: Array;
  /** NDC bounds of each tile's pixel centres, [T, 1]. */
  readonly xlo: Array;
  readonly xhi: Array;
  readonly ylo: Array;
  readonly yhi: Array;
}

/** NDC x of pixel column i and y of pixel row r (row 0 = top): x=(2i+1−W)/W, y=(H−2r−1)/H. */
export const pixelX = (i: number, width: number): number => (2 * i + 1 - width) / width;
export const pixelY = (r: number, height: number): number => (height - 2 * r - 1) / height;

export function makeTileGrid(
  width: number,
  height: number,
  tile: number | readonly [number, number],
  dtype: DType,
): TileGrid {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new Error(`render: image size must be positive integers, got ${width}×${height}.`);
  }
  const [tw0, th0] = typeof tile === "number" ? [tile, tile] : tile;
  if (!Number.isInteger(tw0) || !Number.isInteger(th0) || tw0 < 1 || th0 < 1)
    throw new Error(`render: tile size must be positive integers, got ${JSON.stringify(tile)}.`);
  const tileW = Math.min(tw0, width),
    tileH = Math.min(th0, height);
  const nx = Math.ceil(width / tileW),
    ny = Math.ceil(height / tileH);
  const T = nx * ny,
    Pt = tileW * tileH;
  const px = new Float64Array(T * Pt),
    py = new Float64Array(T * Pt);
  const xlo = new Float64Array(T),
    xhi = new Float64Array(T),
    ylo = new Float64Array(T),
    yhi = new Float64Array(T);
  for (let ty = 0; ty < ny; ty++)
    for (let tx = 0; tx < nx; tx++) {
      const t = ty * nx + tx;
      for (let ly = 0; ly < tileH; ly++)
        for (let lx = 0; lx < tileW; lx++) {
          const k = t * Pt + ly * tileW + lx;
          px[k] = pixelX(tx * tileW + lx, width);
          py[k] = pixelY(ty * tileH + ly, height);
        }
      // Padded pixels (beyond the image) are computed and discarded; bounds cover real pixels only.
      const i1 = Math.min(tx * tileW + tileW, width) - 1,
        r1 = Math.min(ty * tileH + tileH, height) - 1;
      xlo[t] = pixelX(tx * tileW, width);
      xhi[t] = pixelX(i1, width);
      yhi[t] = pixelY(ty * tileH, height);
      ylo[t] = pixelY(r1, height);
    }
  const arr = (d: Float64Array, shape: number[]) => np.reshape(np.array(d, { dtype }), shape);
  return {
    width,
    height,
    tileW,
    tileH,
    nx,
    ny,
    T,
    Pt,
    px: arr(px, [T, Pt, 1]),
    py: arr(py, [T, Pt, 1]),
    xlo: arr(xlo, [T, 1]),
    xhi: arr(xhi, [T, 1]),
    ylo: arr(ylo, [T, 1]),
    yhi: arr(yhi, [T, 1]),
  };
}

/** Per-tile results [T, Pt, ...rest] → image [H, W, ...rest] (drops padding). */
export function tilesToImage(grid: TileGrid, x: Array): Array {
  const rest = x.shape.slice(2);
  const r = np.reshape(x, [grid.ny, grid.nx, grid.tileH, grid.tileW, ...rest]);
  const perm = [0, 2, 1, 3, ...rest.map((_, i) => 4 + i)];
  let img = np.reshape(np.transpose(r, perm), [grid.ny * grid.tileH, grid.nx * grid.tileW, ...rest]);
  if (img.shape[0] !== grid.height) img = np.split(img, [grid.height], 0)[0]!;
  if (img.shape[1] !== grid.width) img = np.split(img, [grid.width], 1)[0]!;
  return img;
}

export interface Bins {
  /** int32 [T, C]: face index per slot (0 in empty slots — always a valid gather index). */
  readonly index: Array;
  /** bool [T, C]: whether the slot holds a face. */
  readonly slotValid: Array;
  /** int32 [T]: faces overlapping each tile (before truncation to capacity). */
  readonly counts: Array;
  /** int32 []: (tile, face) pairs dropped because a tile overflowed its capacity. */
  readonly overflow: Array;
  readonly capacity: number;
}

export interface BinOptions {
  /** Fixed slots per tile. Default: exact maximum when values are concrete, else every face (no culling). */
  readonly capacity?: number;
  /** What to do when concrete counts exceed an explicit capacity. Default "error". */
  readonly onOverflow?: "error" | "ignore";
}

/**
 * The concrete values behind `x`, if known now: plain arrays, forward-mode/linearize primals and
 * vmap's batched values are; jit/makeIR tracers and GPU buffers (no synchronous read) are not (returns null). For
 * values under vmap
 * the result is reduced with max over the batch axes, so it has x's logical shape (row-major).
 */
export function concreteMaxOverBatch(x: Array): Float64Array | null {
  let a: unknown = x;
  let logical = x.shape.map((_, i) => i); // positions of x's own axes in the current value
  for (let depth = 0; depth < 64; depth++) {
    if (a instanceof ConcreteArray) return reduceBatchAxes(a, logical);
    if (!(a instanceof Tracer)) return null;
    const c = a.concrete();
    if (c) return reduceBatchAxes(c, logical);
    // vmap's BatchTracer keeps the batched value in `val` with the batch axis at `bdim`;
    // a JvpTracer keeps its (possibly batched) value in `primal`.
    const t = a as unknown as { val?: Array; bdim?: number | null; primal?: Array };
    if (t.val !== undefined) {
      const d = t.bdim;
      if (d !== null && d !== undefined) logical = logical.map((p) => (p >= d ? p + 1 : p));
      a = t.val;
    } else if (t.primal !== undefined) a = t.primal;
    else return null;
  }
  return null;
}

function reduceBatchAxes(c: ConcreteArray, logical: readonly number[]): Float64Array | null {
  if (c.backend.name !== "cpu") return null; // no synchronous reads from a GPU: behave as if traced
  const data = c.dataSync();
  const shape = c.shape;
  const outShape = logical.map((p) => shape[p]!);
  const n = outShape.reduce((p, q) => p * q, 1);
  const out = new Float64Array(n).fill(-Infinity);
  const idx = new globalThis.Array<number>(shape.length).fill(0);
  for (let k = 0; k < data.length; k++) {
    let o = 0;
    for (const p of logical) o = o * shape[p]! + idx[p]!;
    if (data[k]! > out[o]!) out[o] = data[k]!;
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
  return out;
}

/**
 * Bin faces into tiles. xy [F,3,2] screen vertices, include bool [F] (valid and not culled),
 * margin: padding of each face's bounding box in NDC.
 */
export function binFaces(grid: TileGrid, xy: Array, include: Array, margin: number, opts: BinOptions = {}): Bins {
  const sxy = np.stopGradient(xy);
  const [xs, ys] = unstack(sxy, 2) as [Array, Array]; // [F,3]
  const F = xy.shape[0]!;
  const b = (v: Array, f: "max" | "min") => np.reshape(f === "max" ? np.max(v, 1) : np.min(v, 1), [1, F]);
  const xmin = np.sub(b(xs, "min"), margin),
    xmax = np.add(b(xs, "max"), margin);
  const ymin = np.sub(b(ys, "min"), margin),
    ymax = np.add(b(ys, "max"), margin);
  const ov = np.logicalAnd(
    np.logicalAnd(
      np.logicalAnd(np.greaterEqual(xmax, grid.xlo), np.lessEqual(xmin, grid.xhi)),
      np.logicalAnd(np.greaterEqual(ymax, grid.ylo), np.lessEqual(ymin, grid.yhi)),
    ),
    np.reshape(include, [1, F]),
  ); // [T, F]
  const ovi = np.astype(ov, "int32");
  const counts = np.sum(ovi, 1);
  const C = chooseCapacity(counts, F, opts);
  const rank = np.sub(np.cumsum(ovi, 1), 1); // slot of each overlapping face within its tile
  const T = grid.T;
  const tileBase = np.reshape(np.mul(np.arange(T), C), [T, 1]);
  const keep = np.logicalAnd(ov, np.less(rank, C));
  // Scatter (face+1) into its slot; everything else goes to a dummy slot T·C that is dropped.
  const slot = np.where(keep, np.add(tileBase, rank), T * C);
  const faceIds = np.broadcastTo(np.reshape(np.add(np.arange(F), 1), [1, F]), [T, F]);
  // Updates are deliberately unmasked (the dummy slot collects junk): masking them with `keep` as well
  // trips a CPU-compiler bug under jit (see the render report), and is unnecessary.
  const flat = np.scatterAdd(
    np.zeros([T * C + 1], { dtype: "int32" }),
    np.reshape(slot, [T * F]),
    np.reshape(faceIds, [T * F]),
  );
  const idx1 = np.reshape(np.split(flat, [T * C], 0)[0]!, [T, C]);
  const slotValid = np.greater(idx1, 0);
  const index = np.maximum(np.sub(idx1, 1), 0);
  const overflow = np.sum(np.maximum(np.sub(counts, C), 0));
  checkOverflow(overflow, C, opts);
  return { index, slotValid, counts, overflow, capacity: C };
}

function chooseCapacity(counts: Array, F: number, opts: BinOptions): number {
  if (opts.capacity !== undefined) {
    if (!Number.isInteger(opts.capacity) || opts.capacity < 1)
      throw new Error(`render: capacity must be a positive integer, got ${opts.capacity}.`);
    return Math.min(opts.capacity, Math.max(F, 1)); // more slots than faces would only add empty work
  }
  const d = concreteMaxOverBatch(counts);
  if (!d) return Math.max(F, 1); // traced (jit): no culling unless the caller fixes a capacity
  let m = 1;
  for (let i = 0; i < d.length; i++) m = Math.max(m, d[i]!);
  return Math.min(m, Math.max(F, 1));
}

function checkOverflow(overflow: Array, C: number, opts: BinOptions): void {
  if (opts.capacity === undefined || opts.onOverflow === "ignore") return;
  const d = concreteMaxOverBatch(overflow);
  if (!d) return;
  const n = d[0]!;
  if (n > 0) {
    throw new Error(
      `render: ${n} (tile, face) pairs exceed the tile capacity ${C}; raise options.capacity, ` +
        `use smaller tiles, or omit capacity to size it automatically (pass onOverflow: "ignore" to drop them).`,
    );
  }
}
