/**
 * Point-cloud pieces as pytorch3d names them: `samplePointsFromMesh` (points on a mesh's surface,
 * faces chosen in proportion to their area, uniform inside each face) and `chamferDistance` (the
 * mean squared distance from each point of one cloud to the nearest of the other, both ways).
 * Both are array programs, so gradients reach the vertices (the samples are reparametrised:
 * barycentric weights are drawn, positions computed) and the points.
 */
import type { Array } from "../core/array.js";
import { np } from "../core/np/index.js";
import * as random from "../core/random.js";
import type { Mesh } from "./mesh.js";

/**
 * `n` points [n, 3] on the surface of `mesh`: a face drawn with probability proportional to its
 * area, then a uniform point in it (barycentric weights 1 − √u, √u(1 − v), √u·v).
 */
export function samplePointsFromMesh(key: Array, mesh: Pick<Mesh, "vertices" | "faces">, n: number): Array {
  if (!Number.isInteger(n) || n < 1) throw new Error(`samplePointsFromMesh: n must be a positive integer, got ${n}.`);
  const corners = np.take(mesh.vertices, mesh.faces, 0); // [F, 3, 3]
  const [a, b, c] = [0, 1, 2].map((k) => np.take(corners, k, 1)); // [F, 3] each
  const area = np.mul(0.5, np.norm(np.cross(np.sub(b!, a!), np.sub(c!, a!)), -1));
  const [kFace, kU, kV] = random.split(key, 3);
  const face = random.categorical(kFace!, np.broadcastTo(np.log(np.stopGradient(area)), [n, area.shape[0]!])); // [n]
  const su = np.sqrt(random.uniform(kU!, [n, 1], { dtype: mesh.vertices.dtype }));
  const v = random.uniform(kV!, [n, 1], { dtype: mesh.vertices.dtype });
  const pick = (p: Array) => np.take(p, face, 0); // [n, 3]
  return np.add(
    np.add(np.mul(np.sub(1, su), pick(a!)), np.mul(np.mul(su, np.sub(1, v)), pick(b!))),
    np.mul(np.mul(su, v), pick(c!)),
  );
}

/**
 * Chamfer distance between point clouds a [N, D] and b [M, D]: mean over a of the squared
 * distance to the nearest point of b, plus the same from b to a (pytorch3d's default
 * `chamfer_distance` reduction). O(N·M) memory.
 */
export function chamferDistance(a: Array, b: Array): Array {
  if (a.ndim !== 2 || b.ndim !== 2 || a.shape[1] !== b.shape[1])
    throw new Error(`chamferDistance: give two point clouds [N, D] and [M, D], got ${a.aval} and ${b.aval}.`);
  const d2 = np.sum(np.square(np.sub(np.expandDims(a, 1), np.expandDims(b, 0))), -1); // [N, M]
  return np.add(np.mean(np.min(d2, 1)), np.mean(np.min(d2, 0)));
}
