/**
 * Screen-space input shared by both rasterizers: triangles already projected to NDC (see
 * src/render/CONVENTIONS.md) with camera depths, plus optional per-face-corner attributes. The rasterizers'
 * test oracles are stated at this level; `scene.ts` produces it from meshes and cameras.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { binFaces, makeTileGrid, concreteMaxOverBatch, type BinOptions, type Bins, type TileGrid } from "./cull.js";
import type { FaceTopology } from "./mesh-edges.js";
import { faceGeometry, gatherSlots, unstack, type FaceGeometry, type SlotFaces } from "./raster-common.js";

export interface ScreenFaces {
  /** [F, 3, 2] NDC vertex positions per face (x right, y up). */
  readonly xy: Array;
  /** [F, 3] camera depth per face corner (> 0 in front of the camera). */
  readonly z: Array;
  /** bool [F]: front-facing. Default: signed screen area < 0 (SoftRas-convention cameras, CCW-outward meshes). */
  readonly front?: Array;
  /**
   * How the faces connect (mesh-edges.ts): with it SoftRas joins the edges two same-facing faces
   * share instead of drawing them as seams (SoftRasOptions.sharedEdges). render() supplies it.
   */
  readonly topology?: FaceTopology;
}

/** Per-pixel work is done tile by tile; these options control tiles and slots. */
export interface TilingOptions extends BinOptions {
  /** Tile size in pixels (number or [width, height]). Default 8. Use [W, H] with capacity = F for a dense pass. */
  readonly tile?: number | readonly [number, number];
  /**
   * Under jit (traced face counts): rasterize only the first `activeTiles` tiles that any face
   * overlaps; every other tile gets the empty-tile result (background, alpha 0). With a small
   * object on screen this skips most of the image. Tiles beyond the limit render empty and
   * their (tile, face) pairs count as `overflow`. Ignored when counts are concrete (eager),
   * where empty tiles are cheap already.
   */
  readonly activeTiles?: number;
}

/** The face/tile bookkeeping every rasterizer pass starts with. */
export interface RasterSetup {
  readonly grid: TileGrid;
  readonly geom: FaceGeometry;
  readonly front: Array;
  readonly bins: Bins;
  /** The compaction to non-empty tiles, when `activeTiles` applies (traced counts). */
  readonly active: ActiveTiles | null;
}

/** Non-empty tiles compacted into A rows plus one always-empty row A. */
interface ActiveTiles {
  /** int32 [A+1]: the tile behind each row (0 for padding rows). */
  readonly rowTile: Array;
  /** bool [A+1]: rows holding a real tile (false for padding and the empty row). */
  readonly rowValid: Array;
  /** int32 [T]: the row each tile's pixels come from (A for empty and dropped tiles). */
  readonly tileRow: Array;
}

/** Validate shapes, build per-face geometry and bin faces into tiles (include: extra per-face filter). */
export function setupRaster(
  faces: ScreenFaces,
  width: number,
  height: number,
  margin: number,
  include: (geom: FaceGeometry, front: Array) => Array,
  opts: TilingOptions,
): RasterSetup {
  const { xy, z } = faces;
  if (xy.ndim !== 3 || xy.shape[1] !== 3 || xy.shape[2] !== 2)
    throw new Error(`render: screen xy must be [F, 3, 2], got [${xy.shape}].`);
  if (z.ndim !== 2 || z.shape[0] !== xy.shape[0] || z.shape[1] !== 3)
    throw new Error(`render: screen z must be [F, 3] matching xy [${xy.shape}], got [${z.shape}].`);
  if (xy.shape[0] === 0) throw new Error("render: no faces to rasterize.");
  const dtype = xy.dtype === "float64" || z.dtype === "float64" ? "float64" : "float32";
  const grid = makeTileGrid(width, height, opts.tile ?? 8, dtype);
  const geom = faceGeometry(xy, z);
  const front = faces.front ?? np.less(np.stopGradient(geom.signedArea), 0);
  const bins = binFaces(grid, xy, np.logicalAnd(geom.valid, include(geom, front)), margin, opts);
  if (opts.activeTiles === undefined || concreteMaxOverBatch(bins.counts))
    return { grid, geom, front, bins, active: null };
  const { active, dropped } = compactTiles(bins.counts, grid.T, opts.activeTiles);
  return { grid, geom, front, bins: { ...bins, overflow: np.add(bins.overflow, dropped) }, active };
}

/** Rank the tiles with faces (in tile order) into rows 0..A−1; the rest map to the empty row A. */
function compactTiles(counts: Array, T: number, limit: number): { active: ActiveTiles; dropped: Array } {
  if (!Number.isInteger(limit) || limit < 1)
    throw new Error(`render: activeTiles must be a positive integer, got ${limit}.`);
  const A = Math.min(limit, T);
  const nonEmpty = np.greater(counts, 0);
  const rank = np.sub(np.cumsum(np.astype(nonEmpty, "int32"), 0), 1);
  const listed = np.logicalAnd(nonEmpty, np.less(rank, A));
  const tileRow = np.where(listed, rank, A);
  // Scatter tile+1 into its row; unlisted tiles all land in row A, which is then discarded.
  const flat = np.scatterAdd(
    np.zeros([A + 1], { dtype: "int32" }),
    tileRow,
    np.where(listed, np.add(np.arange(T, undefined, undefined, { dtype: "int32" }), 1), 0),
  );
  const rowValid = np.concatenate([np.greater(np.split(flat, [A], 0)[0]!, 0), np.zeros([1], { dtype: "bool" })], 0);
  const rowTile = np.where(rowValid, np.sub(flat, 1), 0);
  const dropped = np.sum(np.where(np.logicalAnd(nonEmpty, np.logicalNot(listed)), counts, 0));
  return { active: { rowTile, rowValid, tileRow }, dropped };
}

/** A group of tiles processed together with one slot count (all arrays have Tb leading tiles). */
export interface TileBatch {
  /** NDC pixel centres [Tb, Pt, 1]. */
  readonly px: Array;
  readonly py: Array;
  /** int32 [Tb, Cb] face per slot and bool [Tb, 1, Cb] occupied slots. */
  readonly index: Array;
  readonly slotValid: Array;
  /** Face geometry gathered into the slots. */
  readonly slots: SlotFaces;
  readonly capacity: number;
}

/** Per-slot copies of a per-face array [F, ...] → [Tb, 1, Cb, ...]. */
export function slotValues(batch: TileBatch, perFace: Array): Array {
  const [T, C] = batch.index.shape as [number, number];
  return np.reshape(np.take(perFace, batch.index, 0), [T, 1, C, ...perFace.shape.slice(1)]);
}

/** Per-slot corner attributes: attrs [F, 3, D] → three arrays [Tb, 1, Cb, D]. */
export function slotCornerAttributes(batch: TileBatch, attrs: Array): Array[] {
  if (attrs.ndim !== 3 || attrs.shape[1] !== 3)
    throw new Error(`render: per-corner attributes must be [F, 3, D], got [${attrs.shape}].`);
  return unstack(slotValues(batch, attrs), 3);
}

/**
 * Run `fn` over all tiles and return its per-tile outputs ([Tb, Pt, ...] each) in tile order
 * [T, Pt, ...]. When the per-tile face counts are concrete, tiles are grouped into buckets whose
 * slot count is the next power of two of their own count (so sparse tiles do not pay for the
 * densest one) and big buckets are split into chunks of at most `maxPairs` pixel×slot pairs.
 * Traced counts (jit) give one bucket at the fixed capacity, over the compacted non-empty tiles
 * when `activeTiles` is set. Selection only: every array op
 * that touches values is a gather, so gradients pass straight through.
 */
export function runTiles(setup: RasterSetup, fn: (b: TileBatch) => Array[], maxPairs = 1 << 21): Array[] {
  const { grid, bins, geom } = setup;
  if (setup.active) {
    const { rowTile, rowValid, tileRow } = setup.active;
    const rows = (x: Array) => np.take(x, rowTile, 0);
    const index = rows(bins.index),
      R = rowTile.shape[0]!;
    const valid = np.logicalAnd(rows(bins.slotValid), np.expandDims(rowValid, 1));
    const outs = fn({
      px: rows(grid.px),
      py: rows(grid.py),
      index,
      capacity: bins.capacity,
      slotValid: np.reshape(valid, [R, 1, bins.capacity]),
      slots: gatherSlots(geom.packed, index),
    });
    return outs.map((o) => np.take(o, tileRow, 0));
  }
  const groups = groupTiles(bins, grid.T, grid.Pt, maxPairs);
  const outs: Array[][] = [];
  for (const g of groups) {
    const full = g.tiles.length === grid.T && g.tiles.every((t, i) => t === i);
    const tiles = full ? null : np.array(g.tiles, { dtype: "int32" });
    const rows = (x: Array) => (tiles ? np.take(x, tiles, 0) : x);
    let index = rows(bins.index),
      valid = rows(bins.slotValid);
    if (g.capacity < bins.capacity) {
      index = np.split(index, [g.capacity], 1)[0]!;
      valid = np.split(valid, [g.capacity], 1)[0]!;
    }
    const Tb = g.tiles.length;
    outs.push(
      fn({
        px: rows(grid.px),
        py: rows(grid.py),
        index,
        capacity: g.capacity,
        slotValid: np.reshape(valid, [Tb, 1, g.capacity]),
        slots: gatherSlots(geom.packed, index),
      }),
    );
  }
  if (outs.length === 1 && groups[0]!.tiles.every((t, i) => t === i)) return outs[0]!;
  const order = groups.flatMap((g) => g.tiles);
  const inverse = new globalThis.Array<number>(grid.T);
  order.forEach((t, i) => (inverse[t] = i));
  const inv = np.array(inverse, { dtype: "int32" });
  return outs[0]!.map((_, k) =>
    np.take(
      np.concatenate(
        outs.map((o) => o[k]!),
        0,
      ),
      inv,
      0,
    ),
  );
}

interface TileGroup {
  readonly tiles: number[];
  readonly capacity: number;
}

function groupTiles(bins: Bins, T: number, Pt: number, maxPairs: number): TileGroup[] {
  const all = globalThis.Array.from({ length: T }, (_, i) => i);
  const need = concreteMaxOverBatch(bins.counts); // per tile, max over a vmapped batch
  if (!need) return [{ tiles: all, capacity: bins.capacity }];
  const byCap = new Map<number, number[]>();
  for (let t = 0; t < T; t++) {
    let cap = 1;
    while (cap < need[t]!) cap *= 2;
    cap = Math.min(cap, bins.capacity);
    (byCap.get(cap) ?? byCap.set(cap, []).get(cap)!).push(t);
  }
  const groups: TileGroup[] = [];
  for (const [capacity, tiles] of [...byCap.entries()].sort((a, b) => a[0] - b[0])) {
    const per = Math.max(1, Math.floor(maxPairs / (Pt * capacity)));
    for (let i = 0; i < tiles.length; i += per) groups.push({ tiles: tiles.slice(i, i + per), capacity });
  }
  return groups;
}
