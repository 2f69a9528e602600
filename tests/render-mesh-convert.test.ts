/**
 * The converters between models' TriMesh, render's MeshData and render's Mesh keep every vertex
 * and face; OBJ texture coordinates (vt) reach render as per-corner uvs.
 */
import { describe, expect, it } from "vitest";
import { models, np, render } from "../src/index.js";

const cubeObj = [
  "v -0.05 -0.05 -0.05",
  "v 0.05 -0.05 -0.05",
  "v 0.05 0.05 -0.05",
  "v -0.05 0.05 -0.05",
  "v -0.05 -0.05 0.05",
  "v 0.05 -0.05 0.05",
  "v 0.05 0.05 0.05",
  "v -0.05 0.05 0.05",
  "f 1 4 3 2",
  "f 5 6 7 8",
  "f 1 2 6 5",
  "f 4 8 7 3",
  "f 1 5 8 4",
  "f 2 3 7 6",
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
    const byHand = {
      vertices: np.reshape(np.array(Array.from(tri.vertices)), [-1, 3]),
      faces: np.reshape(np.array(Array.from(tri.faces), { dtype: "int32" }), [-1, 3]),
      colors: [0.9, 0.5, 0.2],
    };
    const camera = render.perspectiveCamera({ eye: [0.3, 0.2, -0.4], at: [0, 0, 0], fovY: 40, near: 0.05 });
    const opts = { width: 16, height: 16 };
    expect([...render.render(mesh, camera, undefined, undefined, opts).dataSync()]).toEqual([
      ...render.render(byHand, camera, undefined, undefined, opts).dataSync(),
    ]);
  });

  it("a generated sphere becomes a rigid body of the sphere's mass", () => {
    const sphere = render.triMeshFromData(render.icosphereData(3, 0.1));
    const body = models.rigid.meshBody(sphere, { density: 1000 });
    expect(body.mass).toBeGreaterThan(0.9 * (4 / 3) * Math.PI * 0.1 ** 3 * 1000);
    expect(body.mass).toBeLessThan((4 / 3) * Math.PI * 0.1 ** 3 * 1000); // inscribed polyhedron
  });

  it("names malformed data", () => {
    expect(() => render.triMeshFromData({ positions: [[0, 0]], faces: [] })).toThrow(/position 0 has 2 coordinates/);
    expect(() => render.triMeshFromData({ positions: [[0, 0, 0]], faces: [[0, 0, 0, 0]] })).toThrow(
      /face 0 has 4 corners/,
    );
  });
});

describe("textured OBJ", () => {
  const quad = ["v 0 0 0", "v 1 0 0", "v 1 1 0", "v 0 1 0", "vt 0 0", "vt 1 0", "vt 1 1", "vt 0 1"];

  it("reads vt per face corner (fan-triangulated like the faces, negative indices relative)", () => {
    const m = models.meshes.loadObj([...quad, "f 1/1 2/2 3/3 4/4"].join("\n"));
    expect([...m.faces]).toEqual([0, 1, 2, 0, 2, 3]);
    expect([...m.uvs!]).toEqual([0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1]);
    const relative = models.meshes.loadObj([...quad, "f 1/-4/1 2/-3/1 3/-2/1"].join("\n"));
    expect([...relative.uvs!]).toEqual([0, 0, 1, 0, 1, 1]);
    const mesh = render.meshFromTriMesh(m);
    expect(mesh.uvs!.shape).toEqual([2, 3, 2]);
  });

  it("keeps geometry only when some corner has no vt, and names a vt index out of range", () => {
    expect(models.meshes.loadObj([...quad, "f 1/1 2/2 3/3", "f 1 3 4"].join("\n")).uvs).toBeUndefined();
    expect(models.meshes.loadObj([...quad, "f 1//1 2//1 3//1"].join("\n")).uvs).toBeUndefined();
    expect(() => models.meshes.loadObj([...quad, "f 1/9 2/2 3/3"].join("\n"))).toThrow(
      /line 9: face "1\/9 2\/2 3\/3" names texture coordinates outside 1..4/,
    );
  });

  it("a texture reaches the image through the OBJ's uvs", () => {
    const m = render.meshFromTriMesh(models.meshes.loadObj([...quad, "f 1/1 2/2 3/3 4/4"].join("\n")));
    // Left half of the texture red, right half blue: the rendered quad shows both.
    const texture = np.array([
      [
        [1, 0, 0],
        [0, 0, 1],
      ],
      [
        [1, 0, 0],
        [0, 0, 1],
      ],
    ]);
    const camera = render.perspectiveCamera({ eye: [0.5, 0.5, -2], at: [0.5, 0.5, 0], fovY: 40 });
    const img = render.render({ ...m, texture }, camera, { ambient: 1 }, undefined, { width: 16, height: 16 });
    const rgb = img.toList() as number[][][];
    const row = rgb[8]!;
    const reds = row.filter((p) => p[0]! > 0.6 && p[2]! < 0.4).length,
      blues = row.filter((p) => p[2]! > 0.6 && p[0]! < 0.4).length;
    expect(reds).toBeGreaterThan(2);
    expect(blues).toBeGreaterThan(2);
  });
});

describe("render's options object", () => {
  const mesh = render.meshFromData(render.icosphereData(1, 0.6));
  const camera = render.perspectiveCamera({ eye: [0, 0, -2.5], at: [0, 0, 0], fovY: 40 });
  const lights = { ambient: 0.3, directional: [{ direction: [0, 1, -1], color: 0.6 }] };

  it("render(meshes, camera, { lights, width, … }) draws what the positional form draws", () => {
    const named = render.render(mesh, camera, {
      lights,
      width: 16,
      height: 12,
      shading: "phong",
      background: [0, 0, 1],
    });
    const positional = render.render(mesh, camera, lights, undefined, {
      width: 16,
      height: 12,
      shading: "phong",
      background: [0, 0, 1],
    });
    expect(named.shape).toEqual([12, 16, 4]);
    expect([...named.dataSync()]).toEqual([...positional.dataSync()]);
    expect([...render.render(mesh, camera, { width: 8 }).dataSync()]).toEqual([
      ...render.render(mesh, camera, undefined, undefined, { width: 8 }).dataSync(),
    ]);
  });

  it("names a mix of the two forms", () => {
    expect(() => render.render(mesh, camera, { ambient: 0.3, width: 8 } as never)).toThrow(
      /mixes image options with light fields \(ambient\); put the lights under `lights/,
    );
    expect(() => render.render(mesh, camera, { width: 8 } as never, undefined, { height: 4 })).toThrow(
      /either one options object .* or the positional form/,
    );
  });
});
