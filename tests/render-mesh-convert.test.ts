/** The converters between models' TriMesh, render's MeshData and render's Mesh keep every vertex and face. */
import { describe, expect, it } from "vitest";
import { models, np, render } from "../src/index.js";

const cubeObj = [
  "v -0.05 -0.05 -0.05", "v 0.05 -0.05 -0.05", "v 0.05 0.05 -0.05", "v -0.05 0.05 -0.05",
  "v -0.05 -0.05 0.05", "v 0.05 -0.05 0.05", "v 0.05 0.05 0.05", "v -0.05 0.05 0.05",
  "f 1 4 3 2", "f 5 6 7 8", "f 1 2 6 5", "f 4 8 7 3", "f 1 5 8 4", "f 2 3 7 6",
].join("\n");

describe("mesh converters", () => {
  it("TriMesh → MeshData → TriMesh is the identity, and meshFromTriMesh renders like a hand-built Mesh", () => {
    const tri = models.meshes.loadObj(cubeObj);
    const data = render.meshDataFromTriMesh(tri);
    expect(data.positions).toHaveLength(8);
    expect(data.faces).toHaveLength(12);
    const back = render.triMeshFromData(data);
    expect([...back.vertices]).toEqual([...tri.vertices]);
    expect([...back.faces]).toEqual([...tri.faces]);
    const mesh = render.meshFromTriMesh(tri, { colors: [0.9, 0.5, 0.2] });
    expect(mesh.vertices.shape).toEqual([8, 3]);
    expect(mesh.faces.dtype).toBe("int32");
    const byHand = { vertices: np.reshape(np.array(Array.from(tri.vertices)), [-1, 3]), faces: np.reshape(np.array(Array.from(tri.faces), { dtype: "int32" }), [-1, 3]), colors: [0.9, 0.5, 0.2] };
    const camera = render.perspectiveCamera({ eye: [0.3, 0.2, -0.4], at: [0, 0, 0], fovY: 40, near: 0.05 });
    const opts = { width: 16, height: 16 };
    expect([...render.render(mesh, camera, undefined, undefined, opts).dataSync()]).toEqual([...render.render(byHand, camera, undefined, undefined, opts).dataSync()]);
  });

  it("a generated sphere becomes a rigid body of the sphere's mass", () => {
    const sphere = render.triMeshFromData(render.icosphereData(3, 0.1));
    const body = models.rigid.meshBody(sphere, { density: 1000 });
    expect(body.mass).toBeGreaterThan(0.9 * (4 / 3) * Math.PI * 0.1 ** 3 * 1000);
    expect(body.mass).toBeLessThan((4 / 3) * Math.PI * 0.1 ** 3 * 1000);   // inscribed polyhedron
  });

  it("names malformed data", () => {
    expect(() => render.triMeshFromData({ positions: [[0, 0]], faces: [] })).toThrow(/position 0 has 2 coordinates/);
    expect(() => render.triMeshFromData({ positions: [[0, 0, 0]], faces: [[0, 0, 0, 0]] })).toThrow(/face 0 has 4 corners/);
  });
});
