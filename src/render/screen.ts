/**
 * Screen-space input shared by both rasterizers: triangles already projected to NDC (see
 * CONVENTIONS.md) with camera depths, plus optional per-face-corner attributes. The oracles in
 * render-anchors.md §7 are stated at this level; `scene.ts` produces it from meshes and cameras.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import { binFaces, makeTileGrid, concreteMaxOverBatch, type BinOptions, type Bins, type TileGrid } from "./cull.js";
import { faceGeometry, gatherSlots, unstack, type FaceGeometry, type SlotFaces } from "./raster-common.js";

export interface ScreenFaces {
  /** [F, 3, 2] NDC vertex positions per face (x right, y up). */
  readonly xy: Array;
  /** [F, 3] camera depth per face corner (> 0 in front of the camera). */
  readonly z: Array;
  /** bool [F]: front-facing. Default: signed screen area < 0 (SoftRas-convention cameras, CCW-outward meshes). */
  readonly front?: Array;
}

/** Per-pixel work is done tile by tile; these options control tiles and slots. */
export interface TilingOptions extends BinOptions {
  /** Tile size in pixels (number or [width, height]). Default 8. Use [W, H] with capacity = F for a dense pass. */
  readonly tile?: number | readonly [number, number];
}

/** The face/tile bookkeeping every rasterizer pass starts with. */
export interface RasterSetup {
  readonly grid: TileGrid;
  readonly geom: FaceGeometry;
  readonly front: Array;
  readonly bins: Bins;
}

/** Validate shapes, build per-face geometry and bin faces into tiles (include: extra per-face filter). */
export function setupRaster(faces: ScreenFaces, width: number, height: number, margin: number,
  include: (geom: FaceGeometry, front: Array) => Array, opts: TilingOptions): RasterSetup {
  const { xy, z } = faces;
  if (xy.ndim !== 3 || xy.shape[1] !== 3 || xy.shape[2] !== 2) throw new Error(`render: screen xy must be [F, 3, 2], got [${xy.shape}].`);
  if (z.ndim !== 2 || z.shape[0] !== xy.shape[0] || z.shape[1] !== 3) throw new Error(`render: screen z must be [F, 3] matching xy [${xy.shape}], got [${z.shape}].`);
  if (xy.shape[0] === 0) throw new Error("render: no faces to rasterize.");
  const dtype = xy.dtype === "float64" || z.dtype === "float64" ? "float64" : "float32";
  const grid = makeTileGrid(width, height, opts.tile ?? 8, dtype);
  const geom = faceGeometry(xy, z);
  const front = faces.front ?? np.less(np.stopGradient(geom.signedArea), 0);
  const bins = binFaces(grid, xy, np.logicalAnd(geom.valid, include(geom, front)), margin, opts);
  return { grid, geom, front, bins };
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
  if (attrs.ndim !== 3 || attrs.shape[1] !== 3) throw new Error(`render: per-corner attributes must be [F, 3, D], got [${attrs.shape}].`);
  return unstack(slotValues(batch, attrs), 3);
}

/**
 * Run `fn` over all tiles and return its per-tile outputs ([Tb, Pt, ...] each) in tile order
 * [T, Pt, ...]. When the per-tile face counts are concrete, tiles are grouped into buckets whose
 * slot count is the next power of two of their own count (so sparse tiles do not pay for the
 * densest one) and big buckets are split into chunks of at most `maxPairs` pixel×slot pairs.
 * Traced counts (jit) give one bucket at the fixed capacity. Selection only: every array op
 * that touches values is a gather, so gradients pass straight through.
 */
export function runTiles(setup: RasterSetup, fn: (b: TileBatch) => Array[], maxPairs = 1 << 21): Array[] {
  const { grid, bins, geom } = setup;
  const groups = groupTiles(bins, grid.T, grid.Pt, maxPairs);
  const outs: Array[][] = [];
  for (const g of groups) {
    const full = g.tiles.length === grid.T && g.tiles.every((t, i) => t === i);
    const tiles = full ? null : np.array(g.tiles, { dtype: "int32" });
    const rows = (x: Array) => (tiles ? np.take(x, tiles, 0) : x);
    let index = rows(bins.index), valid = rows(bins.slotValid);
    if (g.capacity < bins.capacity) {
      index = np.split(index, [g.capacity], 1)[0]!;
      valid = np.split(valid, [g.capacity], 1)[0]!;
    }
    const Tb = g.tiles.length;
    outs.push(fn({
      px: rows(grid.px), py: rows(grid.py), index, capacity: g.capacity,
      slotValid: np.reshape(valid, [Tb, 1, g.capacity]), slots: gatherSlots(geom.packed, index),
    }));
  }
  if (outs.length === 1 && groups[0]!.tiles.every((t, i) => t === i)) return outs[0]!;
  const order = groups.flatMap((g) => g.tiles);
  const inverse = new globalThis.Array<number>(grid.T);
  order.forEach((t, i) => (inverse[t] = i));
  const inv = np.array(inverse, { dtype: "int32" });
  return outs[0]!.map((_, k) => np.take(np.concatenate(outs.map((o) => o[k]!), 0), inv, 0));
}

interface TileGroup { readonly tiles: number[]; readonly capacity: number }

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
