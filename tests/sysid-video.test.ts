/**
 * A user's own video: reading frames (PNG directories, GIF, MP4 through ffmpeg), cropping and
 * area resampling, the scene file's validation, cameras given as angles, look-at or calibration,
 * and `gradsim fit` recovering the mass of the shipped example — a video ray-traced with other
 * shading, a shadow, noise and a textured floor than gradsim's rasterizer — to within 1%.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as E from "fp-ts/lib/Either.js";
import { afterAll, describe, expect, it } from "vitest";
import { models, np, render, sysid } from "../src/index.js";
import { writeGif, writePng, type Raster } from "../src/io/image.js";
import { foregroundMask, probeVideo, readVideo, resolveScene } from "../src/sysid/node.js";
import { experiment as fit, EXAMPLE } from "../examples/fit.js";
import { cli, outDir, readResult, runQuiet } from "./experiments-helpers.js";

const dir = join(tmpdir(), `gradsim-video-${process.pid}`);
mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A raster whose pixel (x, y) has colour f(x, y) (0–255). */
const raster = (w: number, h: number, f: (x: number, y: number) => [number, number, number]): Raster => {
  const rgba = new Uint8ClampedArray(w * h * 4);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) rgba.set([...f(x, y), 255], 4 * (y * w + x));
  return { width: w, height: h, rgba };
};
const hasFfmpeg = spawnSync("ffmpeg", ["-version"]).status === 0;

describe("readVideo", () => {
  it("reads PNG frames in natural order, crops, and resamples by area averaging", async () => {
    const frames = join(dir, "frames");
    mkdirSync(frames, { recursive: true });
    // frame10 must come after frame2; every frame is a 4×4 image whose value encodes (x, y, t).
    for (const t of [0, 1, 2, 10])
      writePng(
        join(frames, `frame${t}.png`),
        raster(4, 4, (x, y) => [10 * x + 40 * y, 20 * t, 0]),
      );
    const v = readVideo(frames, { width: 2, height: 2, crop: [0, 0, 4, 4] });
    expect(v.frames.shape).toEqual([4, 2, 2, 3]);
    expect(v.source).toMatchObject({ format: "png-frames", width: 4, height: 4, frames: 4 });
    const d = await v.frames.data();
    // Red of output pixel (0, 0) = mean over the 2×2 block x, y ∈ {0, 1}: (0 + 10 + 40 + 50)/4 = 25.
    expect(d[0]! * 255).toBeCloseTo(25, 3);
    // Green encodes t: frames 0, 1, 2, 10 in that order.
    expect([0, 1, 2, 3].map((t) => Math.round(d[t * 12 + 1]! * 255))).toEqual([0, 20, 40, 200]);
    // A crop of the bottom-right pixel only, upsampled to 2×2: every output pixel is that pixel.
    const c = await readVideo(frames, { width: 2, height: 2, crop: [3, 3, 1, 1], frames: 1 }).frames.data();
    for (let i = 0; i < 4; i++) expect(c[3 * i]! * 255).toBeCloseTo(30 + 120, 3);
    expect(() => readVideo(frames, { width: 2, height: 2, crop: [2, 2, 4, 4] })).toThrow(
      /crop \[2,2,4,4\] .* is not inside the 4×4 frames/,
    );
    expect(() => readVideo(frames, { width: 2, height: 2, frames: 9 })).toThrow(/has 4 frames, but 9 were asked for/);
  });

  it("reads a GIF with its frame rate, and names files it cannot read", () => {
    const gif = join(dir, "clip.gif");
    writeGif(
      gif,
      [0, 1, 2].map((t) => raster(8, 6, (x) => [x * 30, t * 80, 0])),
      { delayMs: 50 },
    );
    const p = probeVideo(gif);
    expect(p).toMatchObject({ format: "gif", width: 8, height: 6, frames: 3, fps: 20 });
    expect(readVideo(gif, { width: 4, height: 3 }).frames.shape).toEqual([3, 3, 4, 3]);
    writeFileSync(join(dir, "bad.gif"), "GIF89a\x10\x00");
    expect(() => readVideo(join(dir, "bad.gif"), { width: 4, height: 3 })).toThrow(
      /bad\.gif: decodeGif: the file ends inside/,
    );
    expect(() => readVideo(join(dir, "none.mp4"), { width: 4, height: 3 })).toThrow(/does not exist/);
    writeFileSync(join(dir, "notes.txt"), "hello");
    expect(() => readVideo(join(dir, "notes.txt"), { width: 4, height: 3 })).toThrow(
      /neither a directory of PNG frames, a \.gif, nor a video file/,
    );
  });

  it.runIf(hasFfmpeg)("reads an MP4 through ffmpeg, cropped and resampled by ffmpeg", async () => {
    const frames = join(dir, "mp4-frames");
    mkdirSync(frames, { recursive: true });
    for (let t = 0; t < 5; t++)
      writePng(
        join(frames, `f${String(t).padStart(2, "0")}.png`),
        raster(
          64,
          48,
          (x, y) =>
            (x < 32 ? [200, 40, 40] : [40, 40, 200]).map((c, k) => (k === 1 && y < 24 ? 160 : c)) as [
              number,
              number,
              number,
            ],
        ),
      );
    const mp4 = join(dir, "clip.mp4");
    execFileSync("ffmpeg", [
      "-v",
      "error",
      "-y",
      "-framerate",
      "25",
      "-i",
      join(frames, "f%02d.png"),
      "-pix_fmt",
      "yuv444p",
      "-crf",
      "0",
      mp4,
    ]);
    expect(probeVideo(mp4)).toMatchObject({ format: "ffmpeg", width: 64, height: 48, frames: 5, fps: 25 });
    const v = readVideo(mp4, { width: 8, height: 6, crop: [0, 24, 32, 24] });
    expect(v.frames.shape).toEqual([5, 6, 8, 3]);
    // The crop is the bottom-left quarter: red, no green.
    const d = await v.frames.data();
    expect(d[0]!).toBeGreaterThan(0.7);
    expect(d[1]!).toBeLessThan(0.25);
  });

  it("says what to install when ffmpeg is missing", () => {
    writeFileSync(join(dir, "fake.mp4"), "not a video");
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      expect(() => readVideo(join(dir, "fake.mp4"), { width: 4, height: 3 })).toThrow(
        /needs ffprobe, which is not installed here \(Debian: apt-get install ffmpeg\).*PNG frames or a GIF/,
      );
    } finally {
      process.env.PATH = path;
    }
  });
});

describe("the scene file", () => {
  const good = JSON.parse(readFileSync(EXAMPLE.scene, "utf8"));
  const error = (patch: Record<string, unknown>): string => {
    const r = sysid.parseVideoScene({ ...good, ...patch });
    if (E.isRight(r)) throw new Error(`expected ${JSON.stringify(patch)} to be rejected`);
    return r.left;
  };

  it("accepts the shipped example and rejects bad fields with the path, what it got, and what to write", () => {
    expect(E.isRight(sysid.parseVideoScene(good))).toBe(true);
    expect(error({ fps: "thirty" })).toBe(
      `"fps" must be a number > 0 and ≤ 1000, got "thirty"; write e.g. "fps": 30 (the video's frames per second)`,
    );
    expect(error({ camera: { eye: [0, 1], at: [0, 0, 0], fovY: 40 } })).toMatch(
      /^"camera\.eye" must be a list of 3 numbers, got \[0,1\]; write e\.g\. "eye": \[0, 2, -6\]/,
    );
    expect(error({ camera: { eye: [0, 1, 2], at: [0, 1, 2], fovY: 40 } })).toMatch(
      /"camera\.eye" and "camera\.at" are the same point/,
    );
    expect(error({ mesh: { shape: "teapot" } })).toMatch(/"mesh" needs either "shape" \(one of box, cone/);
    expect(error({ mesh: { shape: "sphere", scale: [0.2, 0.2, 0.3] } })).toMatch(
      /^"mesh\.scale" must be the same on every axis for "sphere" .*"icosphere"/,
    );
    expect(error({ impulses: [{ force: [1, 2, 3] }] })).toMatch(
      /"impulses\[0\]\.duration" must be a number > 0, got nothing/,
    );
    expect(error({ unknowns: { volume: {} } })).toMatch(
      /"unknowns\.volume" names "volume", which a rigid scene cannot estimate; its unknowns are mass, ke, kd, kf, mu/,
    );
    expect(error({ unknowns: { mass: { prior: [5, 1] } } })).toMatch(
      /must be \[low, high\] with low < high, got \[5,1\]/,
    );
    expect(error({ colour: "red" })).toMatch(/"colour" is not a field of a scene file; the fields are mesh, camera/);
    expect(
      error({
        camera: {
          intrinsics: { fx: 500, fy: 500, cx: 320, cy: 240, width: 640, height: 480 },
          pose: {
            R: [
              [1, 0, 0],
              [0, 2, 0],
              [0, 0, 1],
            ],
            t: [0, 0, 4],
          },
        },
      }),
    ).toMatch(/"camera\.pose\.R" must be a 3×3 rotation matrix/);
    expect(error({ compare: "edges" })).toMatch(/"compare" must be "silhouette"/);
    expect(error({ fps: 1e308 })).toMatch(/"fps" must be a number > 0 and ≤ 1000, got 1e\+308/);
    expect(
      error({
        camera: {
          intrinsics: { fx: 500, fy: 500, cx: 320, cy: 240, width: 640, height: 480 },
          pose: {
            R: [
              [1, 0, 0],
              [0, 1, 0],
              [0, 0, -1],
            ],
            t: [0, 0, 4],
          },
        },
      }),
    ).toMatch(/"camera\.pose\.R" has determinant −1: it is a mirror/);
    // A bounce: "restitution" sets the damping (not with kd too).
    const bouncy = sysid.parseVideoScene({ ...good, ground: { mu: 0.4, restitution: 0.6 } });
    expect(E.isRight(bouncy) && bouncy.right.ground!.kd).toBeCloseTo(
      models.contact.rigidGroundDamping(0.6, { ke: sysid.RIGID_CONTACT_DEFAULTS.ke }),
      9,
    );
    expect(error({ ground: { mu: 0.4, restitution: 0.6, kd: 50 } })).toMatch(/gives both "kd" and "restitution"/);
    expect(error({ ground: { mu: 0.4, restitution: 1.2 } })).toMatch(/"ground\.restitution" must be a number ≥ 0\.15/);
    // A floor needs no coefficients: they default to the documented contact, and the substeps to what it needs.
    const floor = sysid.parseVideoScene({ ...good, ground: { mu: 0.4 }, substeps: undefined });
    expect(E.isRight(floor) && floor.right.ground).toEqual({ ...sysid.RIGID_CONTACT_DEFAULTS, mu: 0.4 });
    expect(E.isRight(floor) && floor.right.substeps).toBeGreaterThanOrEqual(
      Math.ceil(1 / (30 * models.contact.rigidContactStepLimit(sysid.RIGID_CONTACT_DEFAULTS))),
    );
  });

  it("resolves files next to the scene file and names missing ones", () => {
    expect(() => resolveScene({ ...good, mesh: { obj: "missing.obj" } }, join(dir, "scene.json"))).toThrow(
      /"mesh\.obj" names .*missing\.obj, which does not exist/,
    );
    writeFileSync(join(dir, "broken.obj"), "v 0 0 0\nf 1 2 3\n");
    expect(() => resolveScene({ ...good, mesh: { obj: "broken.obj" } }, join(dir, "scene.json"))).toThrow(
      /the mesh .*broken\.obj cannot be read: line 2/,
    );
  });

  it("gives the object and its motion as a rigid scene's fields, an OBJ mesh only as read", () => {
    const f = E.getOrElseW(() => null)(sysid.parseVideoScene(good))!;
    expect(sysid.sceneFileMotion(f, null)).toEqual({
      shape: good.mesh.shape,
      scale: good.mesh.scale,
      position: good.initialState.position,
      rotation: good.initialState.rotation,
      velocity: good.initialState.velocity,
      angularVelocity: good.initialState.angularVelocity,
      impulses: good.impulses,
      gravity: good.gravity,
    });
    const obj = { ...f, mesh: { obj: "frustum.obj", scale: [1, 1, 1] as const } };
    expect(() => sysid.sceneFileMotion(obj, null)).toThrow(/"mesh\.obj" names frustum\.obj; read it/);
    const mesh = { vertices: new Float64Array(3), faces: new Int32Array(0) };
    expect(sysid.sceneFileMotion(obj, mesh).shape).toEqual({ mesh, name: "frustum.obj" });
  });
});

describe("cameras", () => {
  type V = [number, number, number];
  const sub = (a: V, b: V): V => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const dot = (a: V, b: V) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const crossV = (a: V, b: V): V => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const unitV = (a: V): V => {
    const n = Math.hypot(...a);
    return [a[0] / n, a[1] / n, a[2] / n];
  };
  const [W, H] = [80, 60];
  const points: V[] = [
    [0, 0, 0],
    [0.3, 0.5, -0.2],
    [-0.4, 0.1, 0.6],
    [1, 0, 0],
  ];
  /** Pixel (column, row) of world points through a gradsim camera (NDC → pixels, centres at integers). */
  async function pixels(c: sysid.CameraSpec): Promise<number[][]> {
    const xy = await render
      .projectPoints(sysid.renderCamera(c, W, H), np.array(points, { dtype: "float32" }))
      .xy.data();
    return points.map((_, i) => [xy[2 * i]! * (W / 2) + (W - 1) / 2, (H - 1) / 2 - xy[2 * i + 1]! * (H / 2)]);
  }
  /**
   * The OpenCV reference, written out: x_cam = R(x − eye) with rows right = forward × up, down = forward × right,
   * forward.
   */
  function opencv(eye: V, at: V, up: V, fovY: number): number[][] {
    const z = unitV(sub(at, eye)),
      x = unitV(crossV(z, up)),
      y = crossV(z, x);
    const f = H / 2 / Math.tan((fovY * Math.PI) / 360);
    return points.map((p) => {
      const d = sub(p, eye);
      return [(f * dot(x, d)) / dot(z, d) + (W - 1) / 2, (f * dot(y, d)) / dot(z, d) + (H - 1) / 2];
    });
  }
  const expectPixels = (a: number[][], b: number[][]) =>
    a.forEach((p, i) => {
      expect(p[0]).toBeCloseTo(b[i]![0]!, 2);
      expect(p[1]).toBeCloseTo(b[i]![1]!, 2);
    });

  it("each form is the physical camera: eye/at, angles, OpenCV project points like the OpenCV reference", async () => {
    const eye: V = [0.5, 1.2, -3],
      at: V = [0, 0.2, 0.1];
    const reference = opencv(eye, at, [0, 1, 0], 40);
    expectPixels(await pixels({ eye, at, fovY: 40 }), reference);
    const d = sub(eye, at),
      distance = Math.hypot(...d);
    const angles: sysid.CameraSpec = {
      distance,
      elevation: (Math.asin(d[1] / distance) * 180) / Math.PI,
      azimuth: (Math.atan2(d[0], -d[2]) * 180) / Math.PI,
      at,
      fovY: 40,
    };
    expectPixels(await pixels(angles), reference);
    const cal = sysid.calibratedCamera({ eye, at, fovY: 40 }, W, H);
    expectPixels(await pixels(cal), reference);
    // A calibrated camera written by hand (rows of R: right, down, forward; t = −R·eye).
    const z = unitV(sub(at, eye)),
      x = unitV(crossV(z, [0, 1, 0])),
      y = crossV(z, x),
      f = H / 2 / Math.tan((40 * Math.PI) / 360);
    const R = [x, y, z],
      t = R.map((r) => -dot(r, eye)) as V;
    expectPixels(
      await pixels({
        intrinsics: { fx: f, fy: f, cx: (W - 1) / 2, cy: (H - 1) / 2, width: W, height: H },
        pose: { R, t },
      }),
      reference,
    );
  });

  it("world +x lands on the image's left for a camera on −z looking at +z, +y up (a right-handed world)", async () => {
    const [, , , plusX] = await pixels({ eye: [0, 0, -5], at: [0, 0, 0], fovY: 40 });
    expect(plusX![0]).toBeLessThan((W - 1) / 2 - 5);
    const [, , , fromAngles] = await pixels({ distance: 5, elevation: 0, azimuth: 0, at: [0, 0, 0], fovY: 40 });
    expect(fromAngles![0]).toBeCloseTo(plusX![0]!, 3);
  });

  it("refuses degenerate cameras, naming what to change", () => {
    expect(() => sysid.calibratedCamera({ eye: [0, 5, 0], at: [0, 0, 0], fovY: 40 }, W, H)).toThrow(
      /up \[0,1,0\] is parallel to the viewing direction.*give an "up"/,
    );
    expect(() => sysid.calibratedCamera({ eye: [1, 1, 1], at: [1, 1, 1], fovY: 40 }, W, H)).toThrow(/same point/);
    const pose = {
      R: [
        [1, 0, 0],
        [0, -1, 0],
        [0, 0, -1],
      ],
      t: [0, 0, 5] as V,
    };
    expect(() =>
      sysid.calibratedCamera({ intrinsics: { fx: 0, fy: 50, cx: 40, cy: 30, width: W, height: H }, pose }, W, H),
    ).toThrow(/focal lengths/);
    expect(() =>
      sysid.calibratedCamera(
        {
          intrinsics: { fx: 50, fy: 50, cx: 40, cy: 30, width: W, height: H },
          pose: {
            ...pose,
            R: [
              [1, 0, 0],
              [0, 1, 0],
              [0, 0, -1],
            ],
          },
        },
        W,
        H,
      ),
    ).toThrow(/determinant.*mirror/);
  });
});

describe("foregroundMask", () => {
  it("marks the object and not the background or a cast shadow", async () => {
    const bg = np.reshape(
      np.array(
        Array.from({ length: 4 * 3 }, (_, i) => [0.6, 0.45, 0.3][i % 3]!),
        { dtype: "float32" },
      ),
      [1, 4, 3],
    );
    // Pixels: background, shadow (same colour × 0.5), object (blue), noise (+0.02).
    const video = np.reshape(
      np.array([0.6, 0.45, 0.3, 0.3, 0.225, 0.15, 0.2, 0.3, 0.8, 0.62, 0.46, 0.31], { dtype: "float32" }),
      [1, 1, 4, 3],
    );
    const m = await foregroundMask(video, np.reshape(bg, [1, 4, 3])).data();
    expect(Array.from(m)).toEqual([0, 0, 1, 0]);
  });
});

describe("gradsim fit", () => {
  // The shipped example is another renderer's video.
  it("recovers the shipped example's mass within 1%, and says what it fitted from which video", async () => {
    const { code, out } = await runQuiet(fit);
    expect(code).toBe(0);
    const r = readResult(out);
    expect(r.unknowns).toEqual([{ name: "mass", unit: "kg" }]);
    expect(r.video).toMatchObject({ format: "gif", sourceSize: [128, 96], resolution: [85, 64], framesUsed: 40 });
    expect(r.video.path).toContain("fit-example/clip.gif");
    expect(Math.abs(r.initial.mass - r.truth.mass) / r.truth.mass).toBeGreaterThan(0.5);
    expect(r.relError.mass).toBeLessThan(0.01);
    expect(Math.abs(r.estimate.mass - r.truth.mass) / r.truth.mass).toBeCloseTo(r.relError.mass, 12);
    for (const f of [
      "ground-truth.gif",
      "estimate.gif",
      "frames.png",
      "loss.png",
      "loss.csv",
      "residual-mean.png",
      "residual-frames.png",
      "profile.png",
      "profile.csv",
      "result.json",
    ])
      expect(r.files).toContain(f);
    // The verdict: it fits the video, and the mass interval covers the truth.
    expect(r.verdict.status).toBe("fits");
    expect(r.verdict.floorRatio).toBeLessThan(sysid.VERDICT_LIMITS.floorRatio);
    const [lo, hi] = r.verdict.uncertainty.unknowns[0].interval;
    expect(lo).toBeLessThanOrEqual(r.truth.mass);
    expect(hi).toBeGreaterThanOrEqual(r.truth.mass);
    expect(hi / lo).toBeLessThan(1.1);
    // Its parts: the outline's softness and the object's initial place on the floor, each a finite move.
    for (const part of ["outline", "place"])
      expect(r.verdict.uncertainty.alternativesSd[part][0], part).toBeGreaterThanOrEqual(0);
    // Every re-fit under them converged (stopped where no step lowers the loss, not at its step cap).
    expect(r.verdict.uncertainty.unconverged).toEqual([]);
    // The loss's profile along the interval's long axis: walked out on both sides, the interval holding every point
    // that costs no more than the alternatives' minimisers.
    const profile = r.verdict.uncertainty.profile;
    expect(profile.allowance).toBeGreaterThan(0);
    expect(new Set(profile.points.map((x: { step: number }) => Math.sign(x.step)))).toEqual(new Set([-1, 1]));
    // profile.csv: the estimate and every point, in order along the axis.
    const csv = readFileSync(join(out, "profile.csv"), "utf8").trim().split("\n");
    expect(csv[0]).toBe("step,mass,loss,consistent,interpolated");
    expect(csv.length).toBe(profile.points.length + 2);
    expect(csv.some((line) => line.startsWith("0,"))).toBe(true);
    for (const x of profile.points.filter((x: { consistent: boolean }) => x.consistent)) {
      const mass = Math.exp(x.u[0]);
      expect(mass).toBeGreaterThanOrEqual(lo * (1 - 1e-9));
      expect(mass).toBeLessThanOrEqual(hi * (1 + 1e-9));
    }
  }, 300_000);

  it("rejects bad input with exit code 2 and a message naming the problem", () => {
    const out = outDir("fit-bad");
    const noScene = cli(["fit", "--video", EXAMPLE.video, "--out", out]);
    expect(noScene.code).toBe(2);
    expect(noScene.stderr).toContain("--scene is missing");
    writeFileSync(
      join(out, "scene.json"),
      JSON.stringify({ ...JSON.parse(readFileSync(EXAMPLE.scene, "utf8")), fps: -1 }),
    );
    const bad = cli(["fit", "--video", EXAMPLE.video, "--scene", join(out, "scene.json"), "--out", out]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`"fps" must be a number > 0 and ≤ 1000, got -1`);
    const unknown = cli([
      "fit",
      "--video",
      EXAMPLE.video,
      "--scene",
      EXAMPLE.scene,
      "--unknowns",
      "mass,colour",
      "--out",
      out,
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`--unknowns: "colour" is not something a rigid scene can estimate`);
    const contact = cli(["fit", "--video", EXAMPLE.video, "--scene", EXAMPLE.scene, "--unknowns", "mu", "--out", out]);
    expect(contact.code).toBe(2);
    expect(contact.stderr).toContain(`the scene has no "ground"`);
    const badScan = cli(["fit", "--video", EXAMPLE.video, "--scene", EXAMPLE.scene, "--scan", "-1", "--out", out]);
    expect(badScan.code).toBe(2);
    expect(badScan.stderr).toContain("--scan");
    const elsewhere = cli(["rigid-mass", "--video", EXAMPLE.video]);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain("does not take --video; to fit your own video use: gradsim fit");
  }, 120_000);
});
