/**
 * The objects of the imperfect-models scene (gradSim §4.3, Table 4 left; src/sysid/scenes/imperfect.ts
 * and imperfect-looks.ts): the centroid-fan tetrahedralisation, the models an object can be
 * simulated by, and the looks it is rendered with. The experiment's quick run is in
 * experiments-imperfect.test.ts.
 */
import { describe, expect, it } from "vitest";
import { makeRng, models, np, render, sysid } from "../src/index.js";

describe("sysid: the imperfect-models objects", () => {
  it("a centroid fan fills a convex surface with positive tets of its volume, and keeps that surface", () => {
    const m = models.meshes.cone(0.4, 0.8, 12);
    const fan = sysid.centroidFan(m);
    const v = fan.vertices;
    let volume = 0;
    for (let t = 0; t < fan.tets.length; t += 4) {
      const six = models.meshes.tetVolume6(v, fan.tets[t]!, fan.tets[t + 1]!, fan.tets[t + 2]!, fan.tets[t + 3]!);
      expect(six).toBeGreaterThan(0);
      volume += six / 6;
    }
    expect(volume).toBeCloseTo(models.rigid.meshBody(m, { density: 1 }).mass, 8);
    const key = (f: ArrayLike<number>) =>
      Array.from({ length: f.length / 3 }, (_, i) =>
        [f[3 * i]!, f[3 * i + 1]!, f[3 * i + 2]!].sort((a, b) => a - b).join(),
      ).sort();
    expect(key(models.meshes.tetSurface(fan))).toEqual(key(m.faces));
  });

  it("each model of an object starts from its rest surface; a heavier estimate slides less under the same push", () => {
    const s = { frames: 10, fps: 30, resolution: 32 };
    for (const kind of ["rigid", "deformable", "cloth"] as const) {
      const spec = sysid.sampleObject(makeRng(3), kind);
      const g = sysid.objectGeometry(spec);
      const V = g.surface.vertices.length / 3;
      const choices = [
        sysid.TRUE_MODEL(spec),
        ...(kind === "rigid"
          ? [{ ...sysid.TRUE_MODEL(spec), body: "deformable" as const }]
          : kind === "deformable"
            ? [{ ...sysid.TRUE_MODEL(spec), body: "rigid" as const }]
            : []),
      ];
      for (const choice of choices) {
        const model = sysid.objectModel(spec, g, choice, s);
        const travel = (scale: number) => {
          const x = model.positions(np.array(spec.mass * scale, { dtype: "float32" }), s.frames).dataSync();
          const N = x.length / (3 * s.frames);
          let first = 0,
            last = 0;
          for (let i = 0; i < V; i++) {
            first += x[3 * i]! / V;
            last += x[3 * ((s.frames - 1) * N + i)]! / V;
          }
          return { first, last };
        };
        const a = travel(1),
          b = travel(2);
        // After one frame the surface is still near where it was placed (≤ 5 cm: one frame of fall and push).
        let rest = 0;
        for (let i = 0; i < V; i++) rest += g.surface.vertices[3 * i]! / V;
        expect(Math.abs(a.first - rest), `${kind} as ${choice.body}`).toBeLessThan(0.05);
        expect(b.last - b.first, `${kind} as ${choice.body}`).toBeLessThan(a.last - a.first);
        expect(a.last - a.first).toBeGreaterThan(0.1);
      }
    }
  });

  it("a body model the object cannot have is a clear error", () => {
    const spec = sysid.sampleObject(makeRng(1), "cloth");
    expect(() =>
      sysid.objectModel(
        spec,
        sysid.objectGeometry(spec),
        { ...sysid.TRUE_MODEL(spec), body: "rigid" },
        { frames: 4, fps: 30, resolution: 16 },
      ),
    ).toThrow(/rigid body|cannot/);
  });
});

describe("sysid: the imperfect-models looks", () => {
  it("every look paints the object's surface; its video is RGBA over the ground or the silhouette alone", () => {
    const s = { frames: 2, fps: 30, resolution: 16 };
    const spec = sysid.sampleObject(makeRng(5), "rigid");
    const g = sysid.objectGeometry(spec);
    const V = g.surface.vertices.length / 3;
    const F = g.surface.faces.length / 3;
    const rest = np.reshape(np.array(g.surface.vertices, { dtype: "float32" }), [1, V, 3]);
    const positions = np.broadcastTo(rest, [s.frames, V, 3]);
    const background = sysid.groundImage(sysid.IMPERFECT_CAMERA, s.resolution, s.resolution);
    for (const name of ["default", ...sysid.OBJECT_LOOKS] as const) {
      const look = sysid.objectLook(g, spec, name);
      expect(look.mesh.faces.shape, name).toEqual([F, 3]);
      if (name === "texture") expect(look.mesh.uvs!.shape).toEqual([F, 3, 2]);
      else expect(look.mesh.colors!.shape, name).toEqual([V, 3]);
      const rgba = sysid.objectVideo(positions, g, look, s, background, "rgba");
      expect(rgba.shape, name).toEqual([s.frames, s.resolution, s.resolution, 4]);
      const alpha = sysid.objectVideo(positions, g, look, s, background, "alpha").dataSync();
      expect(alpha.length).toBe(s.frames * s.resolution * s.resolution);
      // The object is in view: some pixels covered, not all.
      expect(Math.max(...alpha), name).toBeGreaterThan(0.5);
      expect(Math.min(...alpha), name).toBeLessThan(0.5);
    }
    // The traced target's paint: one RGB per face, in [0, 1].
    const albedo = sysid.tracedAlbedo(g);
    expect(albedo.length).toBe(g.surface.faces.length);
    expect(albedo.every((x) => x >= 0 && x <= 1)).toBe(true);
  });

  it("the traced target's nearest look (the colour row's) paints the object as the tracer does", () => {
    const s = { frames: 1, fps: 30, resolution: 32 };
    const spec = sysid.sampleObject(makeRng(5), "rigid");
    const g = sysid.objectGeometry(spec);
    const V = g.surface.vertices.length / 3;
    const r = s.resolution;
    const traced = render.traceVideo(
      {
        frames: [g.surface.vertices],
        faces: g.surface.faces,
        albedo: sysid.tracedAlbedo(g),
        specular: sysid.TRACED_SHADING.specular,
        shininess: sysid.TRACED_SHADING.shininess,
      },
      {
        camera: sysid.hostCamera(sysid.IMPERFECT_CAMERA, r, r),
        width: r,
        height: r,
        light: sysid.TRACED_LIGHT,
        ambient: sysid.TRACED_SHADING.ambient,
        intensity: sysid.TRACED_SHADING.intensity,
        noise: 0,
      },
      true,
    );
    const plate = np.reshape(np.array(traced.images.subarray(3 * r * r), { dtype: "float32" }), [r, r, 3]);
    const positions = np.reshape(np.array(g.surface.vertices, { dtype: "float32" }), [1, V, 3]);
    // Mean squared colour difference over the pixels the object covers whole in the traced frame.
    const inside = (look: sysid.ObjectLook) => {
      const x = sysid.objectVideo(positions, g, look, s, plate, "rgb").dataSync();
      let sum = 0,
        n = 0;
      for (let p = 0; p < r * r; p++)
        if (traced.masks[p]! > 0.999)
          for (let c = 0; c < 3; c++, n++) sum += (x[3 * p + c]! - traced.images[3 * p + c]!) ** 2;
      return { mse: sum / n, pixels: n / 3 };
    };
    const nearest = inside(sysid.tracedLook(g)),
      plain = inside(sysid.objectLook(g, spec, "default"));
    expect(nearest.pixels).toBeGreaterThan(10);
    expect(nearest.mse, `nearest ${nearest.mse}, default ${plain.mse}`).toBeLessThan(2e-3);
    expect(plain.mse).toBeGreaterThan(10 * nearest.mse);
  });
});
