/** The Stanford bunny, a real scanned mesh, from the `bunny` npm package (1839 vertices, 3674 triangles, closed). */
import * as stanford from "bunny";
import { boundingSize, transformVertices, type TriMesh } from "./types.js";

export interface BunnyOptions {
  /** Scale so that the longest side of the bounding box has this length (default: raw units, ~15.6). */
  readonly size?: number;
  /** Translate the bounding-box centre to this point (default: keep the raw coordinates). */
  readonly center?: readonly [number, number, number];
}

export function bunny(o: BunnyOptions = {}): TriMesh {
  let vertices: Float64Array = Float64Array.from(stanford.positions.flat());
  const faces = Int32Array.from(stanford.cells.flat());
  if (o.size !== undefined) vertices = transformVertices(vertices, { scale: o.size / boundingSize(vertices) });
  if (o.center !== undefined) {
    const mid = [0, 1, 2].map((d) => {
      let lo = Infinity,
        hi = -Infinity;
      for (let i = d; i < vertices.length; i += 3) {
        lo = Math.min(lo, vertices[i]!);
        hi = Math.max(hi, vertices[i]!);
      }
      return (lo + hi) / 2;
    });
    vertices = transformVertices(vertices, {
      translate: [o.center[0] - mid[0]!, o.center[1] - mid[1]!, o.center[2] - mid[2]!],
    });
  }
  return { vertices, faces };
}
