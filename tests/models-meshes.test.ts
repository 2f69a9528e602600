import { describe, expect, it } from "vitest";
import { either as E } from "fp-ts";
import { meshes } from "../src/models/index.js";

const totalVolume = (m: meshes.TetMesh) => {
  let v = 0;
  for (let e = 0; e < meshes.tetCount(m); e++)
    v += meshes.tetVolume6(m.vertices, m.tets[4 * e]!, m.tets[4 * e + 1]!, m.tets[4 * e + 2]!, m.tets[4 * e + 3]!) / 6;
  return v;
};
/** A tet mesh is conforming when its boundary is a closed, consistently wound, manifold surface. */
const surfaceIsClosed = (m: meshes.TetMesh) =>
  E.isRight(meshes.checkTriMesh({ vertices: m.vertices, faces: meshes.tetSurface(m) }, { closed: true }));

describe("procedural meshes", () => {
  it("tet box: 5 positive tets per cube, exact volume, conforming (closed boundary surface)", () => {
    const m = meshes.tetBox({ cells: [3, 2, 2], size: [1.5, 1, 0.5] });
    expect(meshes.vertexCount(m)).toBe(4 * 3 * 3);
    expect(meshes.tetCount(m)).toBe(5 * 12);
    expect(E.isRight(meshes.checkTetMesh(m))).toBe(true);
    expect(totalVolume(m)).toBeCloseTo(0.75, 12);
    expect(surfaceIsClosed(m)).toBe(true);
    expect(meshes.tetSurface(m).length / 3).toBe(2 * 2 * (3 * 2 + 3 * 2 + 2 * 2));
  });

  it("tet sphere: valid, conforming, volume → 4/3·πr³", () => {
    const m = meshes.tetSphere(0.5, 6);
    expect(E.isRight(meshes.checkTetMesh(m))).toBe(true);
    expect(surfaceIsClosed(m)).toBe(true);
    expect(totalVolume(m) / ((4 / 3) * Math.PI * 0.125)).toBeCloseTo(1, 1);
  });

  it("extruded gear: valid, conforming tets with the profile's area × depth", () => {
    const profile = meshes.gearProfile({ teeth: 8 });
    let area = 0;
    for (let t = 0; t < meshes.faceCount(profile); t++)
      area +=
        meshes.triangleArea2(
          profile.vertices,
          profile.faces[3 * t]!,
          profile.faces[3 * t + 1]!,
          profile.faces[3 * t + 2]!,
        ) / 2;
    const gear = meshes.tetGear({ teeth: 8, depth: 0.6, layers: 3 });
    expect(E.isRight(meshes.checkTetMesh(gear))).toBe(true);
    expect(surfaceIsClosed(gear)).toBe(true);
    expect(totalVolume(gear)).toBeCloseTo(area * 0.6, 10);
  });

  it("cloth grid and 2-D walker: valid planar triangle meshes with interior bending hinges", () => {
    const c = meshes.clothGrid({ cells: [4, 3] });
    expect([meshes.vertexCount(c), meshes.faceCount(c)]).toEqual([20, 24]);
    expect(E.isRight(meshes.checkTriMesh(c))).toBe(true);
    // One hinge per interior edge: all unique edges minus the 2·(4 + 3) boundary edges.
    const edges = meshes.uniqueEdges(c.faces).length / 2;
    const boundary = 2 * (4 + 3);
    expect(meshes.bendingHinges(c).length / 4).toBe(edges - boundary);
    const w = meshes.walker();
    expect(E.isRight(meshes.checkTriMesh(w))).toBe(true);
    expect(
      Array.from(w.vertices)
        .filter((_, i) => i % 3 === 2)
        .every((z) => z === 0),
    ).toBe(true);
    expect(meshes.faceCount(w)).toBeGreaterThan(40);
  });

  it("rigid primitives are closed, consistently wound, with positive volume", () => {
    for (const m of [
      meshes.box(),
      meshes.icosphere(1, 2),
      meshes.cylinder(),
      meshes.cone(),
      meshes.capsule(),
      meshes.torus(),
    ]) {
      expect(E.isRight(meshes.checkTriMesh(m, { closed: true }))).toBe(true);
    }
    expect(meshes.faceCount(meshes.icosphere(1, 2))).toBe(320);
  });
});

describe("file formats", () => {
  it("OBJ: polygons are fan-triangulated, v/vt/vn and negative indices parse, and formatting round-trips", () => {
    const text = "# quad + tri\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nf 1/1/1 2/1/1 3/1/1 4/1/1\nf -4 -2 -1\n";
    const m = meshes.loadObj(text);
    expect(Array.from(m.faces)).toEqual([0, 1, 2, 0, 2, 3, 0, 2, 3]);
    const again = meshes.loadObj(meshes.formatObj(meshes.box()));
    expect(Array.from(again.faces)).toEqual(Array.from(meshes.box().faces));
    expect(Array.from(again.vertices)).toEqual(Array.from(meshes.box().vertices));
  });

  it("OBJ errors name the line and the problem", () => {
    const r = meshes.parseObj("v 0 0 0\nv 1 0\nv 0 1 0\nf 1 2 9\n");
    expect(E.isLeft(r)).toBe(true);
    if (E.isLeft(r)) expect(r.left.map((i) => i.line)).toEqual([2, 4]);
    expect(() => meshes.loadObj("v 0 0 0\nf 1 2 3\n")).toThrow(/line 2: face .* needs ≥ 3 vertex indices in 1\.\.1/);
  });

  it(".tet round-trips and reports bad records", () => {
    const m = meshes.tetBox({ cells: [1, 1, 1] });
    const again = meshes.loadTet(meshes.formatTet(m));
    expect(Array.from(again.tets)).toEqual(Array.from(m.tets));
    expect(() => meshes.loadTet("v 0 0 0\nt 0 1 2\nq 1\n")).toThrow(
      /line 2: tetrahedron needs 4 numbers[\s\S]*line 3: unknown record "q"/,
    );
  });
});

describe("mesh validation lists the offending elements", () => {
  const good = meshes.tetBox({ cells: [2, 1, 1] });
  const withTets = (tets: number[]) => ({ vertices: good.vertices, tets: Int32Array.from(tets) });
  const t = (e: number) => Array.from(good.tets.slice(4 * e, 4 * e + 4));

  it("inverted, degenerate, out-of-range and repeated-vertex tets", () => {
    const [a, b, c, d] = t(3);
    const bad = withTets([...t(0), b!, a!, c!, d!, ...t(1), 0, 1, 2, 99, 0, 0, 1, 2, 0, 1, 2, 3]);
    const r = meshes.checkTetMesh(bad);
    expect(E.isLeft(r)).toBe(true);
    const byKind = E.isLeft(r) ? Object.fromEntries(r.left.map((i) => [i.kind, i.elements])) : {};
    expect(byKind.inverted).toEqual([1]);
    expect(byKind["index-out-of-range"]).toEqual([3]);
    expect(byKind["repeated-vertex"]).toEqual([4]);
    expect(byKind.degenerate).toEqual([5]); // (0, 1, 2, 3) are four coplanar corners of the bottom face
    expect(() => meshes.validateTetMesh(bad)).toThrow(/1 inverted tetrahedra .*: 1$/m);
  });

  it("non-manifold and overlapping tets, non-manifold triangle edges", () => {
    const dup = meshes.checkTetMesh(withTets([...t(0), ...t(1), ...t(0)]));
    expect(E.isLeft(dup) && dup.left.find((i) => i.kind === "overlapping")?.elements).toEqual([0, 2]);
    // Three tets on the face (0, 1, 2): apexes 3 and 5 above it, 4 below.
    const v = Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1, 0.2, 0.2, 1]);
    const r = meshes.checkTetMesh({ vertices: v, tets: Int32Array.from([0, 1, 2, 3, 0, 2, 1, 4, 0, 1, 2, 5]) });
    expect(E.isLeft(r) && r.left.find((i) => i.kind === "non-manifold")?.elements).toEqual([0, 1, 2]);
    const fan = {
      vertices: Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1]),
      faces: Int32Array.from([0, 1, 2, 1, 0, 3, 0, 1, 4]),
    };
    const rt = meshes.checkTriMesh(fan);
    expect(E.isLeft(rt) && rt.left[0]!.kind).toBe("non-manifold");
    expect(E.isLeft(rt) && rt.left[0]!.elements).toEqual([0, 1, 2]);
  });

  it("closed-surface checks: holes and flipped triangles", () => {
    const b = meshes.box();
    const flipped = Int32Array.from(b.faces);
    [flipped[4], flipped[5]] = [flipped[5]!, flipped[4]!]; // flip triangle 1
    const r = meshes.checkTriMesh({ vertices: b.vertices, faces: flipped }, { closed: true });
    expect(E.isLeft(r) && r.left.find((i) => i.kind === "inconsistent-orientation")?.elements).toContain(1);
    expect(() => meshes.validateTriMesh({ vertices: b.vertices, faces: b.faces.slice(3) }, { closed: true })).toThrow(
      /boundary edge/,
    );
  });
});
