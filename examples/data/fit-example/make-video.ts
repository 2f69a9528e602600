/**
 * Makes the `fit` example's video (clip.gif) and its background plate (plate.png: the same view
 * without the object, as one photographs before the throw), with an image formation that is NOT gradsim's
 * rasterizer: each pixel's ray is traced against the box (slab test in the body frame) and the
 * floor, 4×4 rays per pixel, Lambert + Blinn–Phong shading under a light gradsim does not use,
 * a shadow on the floor, a wood-grain floor texture, sensor noise, and GIF's 256-colour palette.
 * The motion comes from gradsim's rigid-body simulator (the physics the estimator assumes);
 * everything about how it looks does not.
 *
 *   npx tsx examples/data/fit-example/make-video.ts      # rewrites clip.gif and plate.png next to this file
 */
import { fileURLToPath } from "node:url";
import { writeGif, writePng, np, sysid, makeRng, models, type Raster } from "gradsim/node";
const rigid = models.rigid;

type V3 = [number, number, number];
const sub = (a: V3, b: V3): V3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const dot = (a: V3, b: V3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const unit = (a: V3): V3 => {
  const n = Math.hypot(...a);
  return [a[0] / n, a[1] / n, a[2] / n];
};

const parsed = sysid.parseVideoScene(
  JSON.parse((await import("node:fs")).readFileSync(fileURLToPath(new URL("./scene.json", import.meta.url)), "utf8")),
);
if (parsed._tag === "Left") throw new Error(`scene.json: ${parsed.left}`);
const scene = parsed.right;
const TRUE_MASS = scene.truth.mass!;
const [W, H] = [128, 96],
  FRAMES = 40,
  SS = 4;
const LIGHT: V3 = unit([-0.5, 1, -0.35]);

// The trajectory: gradsim's simulator with the true mass (scene.json describes everything else).
const spec: sysid.RigidSceneSpec = {
  ...sysid.sceneFileMotion(scene, null),
  mass: TRUE_MASS,
  contact: null,
  frames: FRAMES,
  fps: scene.fps,
  substeps: scene.substeps,
  camera: scene.camera,
  resolution: [W, H],
};
const built = sysid.buildRigidScene(spec);
const { system, state } = sysid.systemFor(built, {});
// Frame 0 is the initial state (the scene file's convention), frame k the state k frame periods later.
const later = rigid.simulate(system, state, { dt: built.dt, substeps: spec.substeps, frames: FRAMES - 1 });
const xs = np.concatenate([state.x, np.squeeze(later.x, 1)], 0).dataSync();
const Rs = rigid.quatToMatrix(np.concatenate([state.q, np.squeeze(later.q, 1)], 0)).dataSync();
// Half extents of the box in its body frame (the box primitive is 1 m across per unit scale, centred on its COM).
const half: V3 = [0.5 * spec.scale[0], 0.5 * spec.scale[1], 0.5 * spec.scale[2]];

const cam = sysid.hostCamera(spec.camera, W, H);
const FLOOR_Y = -0.6;

/** Ray–box intersection in the body frame: distance and world normal of the nearest hit, or null. */
function hitBox(o: V3, d: V3, t: number): { s: number; n: V3 } | null {
  if (t < 0) return null; // the plate: no object
  const c: V3 = [xs[3 * t]!, xs[3 * t + 1]!, xs[3 * t + 2]!];
  const R = (i: number, j: number) => Rs[9 * t + 3 * i + j]!;
  // Body-frame ray: Rᵀ(o − c), Rᵀd.
  const oc = sub(o, c);
  const ob: V3 = [0, 1, 2].map((j) => R(0, j) * oc[0] + R(1, j) * oc[1] + R(2, j) * oc[2]) as V3;
  const db: V3 = [0, 1, 2].map((j) => R(0, j) * d[0] + R(1, j) * d[1] + R(2, j) * d[2]) as V3;
  let near = -Infinity,
    far = Infinity,
    axis = 0,
    sign = 1;
  for (let k = 0; k < 3; k++) {
    if (Math.abs(db[k]!) < 1e-12) {
      if (Math.abs(ob[k]!) > half[k]!) return null;
      continue;
    }
    const t1 = (-half[k]! - ob[k]!) / db[k]!,
      t2 = (half[k]! - ob[k]!) / db[k]!;
    const lo = Math.min(t1, t2),
      hi = Math.max(t1, t2);
    if (lo > near) {
      near = lo;
      axis = k;
      sign = t1 < t2 ? -1 : 1;
    }
    far = Math.min(far, hi);
  }
  if (!(near <= far && near > 1e-6)) return null;
  const nb: V3 = [0, 0, 0];
  nb[axis] = sign;
  return { s: near, n: [0, 1, 2].map((i) => R(i, 0) * nb[0] + R(i, 1) * nb[1] + R(i, 2) * nb[2]) as V3 };
}

/** Albedo of a box face by its body-frame normal: warm and cool paints, unlike gradsim's normal colouring. */
function paint(n: V3, t: number): V3 {
  const R = (i: number, j: number) => Rs[9 * t + 3 * i + j]!;
  const nb = [0, 1, 2].map((j) => R(0, j) * n[0] + R(1, j) * n[1] + R(2, j) * n[2]);
  const k = nb.findIndex((x) => Math.abs(x) > 0.5);
  const paints: V3[] = [
    [0.85, 0.35, 0.2],
    [0.2, 0.55, 0.85],
    [0.9, 0.8, 0.25],
  ];
  const p = paints[k]!;
  return nb[k]! > 0 ? p : [p[0] * 0.7, p[1] * 0.7, p[2] * 0.7];
}

function radiance(o: V3, d: V3, t: number): V3 {
  const box = hitBox(o, d, t);
  if (box) {
    const n = box.n,
      a = paint(n, t);
    const lambert = Math.max(0, dot(n, LIGHT));
    const h = unit(sub(LIGHT, d));
    const spec = Math.max(0, dot(n, h)) ** 40 * 0.35;
    return a.map((c) => c * (0.3 + 0.75 * lambert) + spec) as V3;
  }
  if (d[1] < 0) {
    const s = (FLOOR_Y - o[1]) / d[1];
    const p: V3 = [o[0] + s * d[0], FLOOR_Y, o[2] + s * d[2]];
    // Wood-like grain: stripes along x with a slow wobble.
    const grain = 0.5 + 0.5 * Math.sin(5 * p[2] + 2 * Math.sin(1.7 * p[0]));
    let c: V3 = [0.45 + 0.12 * grain, 0.33 + 0.08 * grain, 0.22 + 0.05 * grain];
    if (hitBox(p, LIGHT, t)) c = c.map((x) => x * 0.55) as V3; // shadow
    return c;
  }
  return [0.55, 0.62, 0.7]; // wall / sky
}

const rng = makeRng(7);
/** Frame t (t = −1: the background plate without the object). */
function frame(t: number): Raster {
  const rgba = new Uint8ClampedArray(W * H * 4);
  for (let row = 0; row < H; row++)
    for (let col = 0; col < W; col++) {
      const acc: V3 = [0, 0, 0];
      for (let sy = 0; sy < SS; sy++)
        for (let sx = 0; sx < SS; sx++) {
          const d = unit(sysid.pixelRay(cam, col + (sx + 0.5) / SS - 0.5, row + (sy + 0.5) / SS - 0.5, W, H) as V3);
          const c = radiance(cam.eye as V3, d, t);
          for (let k = 0; k < 3; k++) acc[k] += c[k]! / (SS * SS);
        }
      for (let k = 0; k < 3; k++)
        rgba[4 * (row * W + col) + k] = Math.round(255 * Math.min(1, Math.max(0, acc[k]! + 0.015 * rng.normal())));
      rgba[4 * (row * W + col) + 3] = 255;
    }
  return { width: W, height: H, rgba };
}
const out = fileURLToPath(new URL("./clip.gif", import.meta.url));
writeGif(
  out,
  Array.from({ length: FRAMES }, (_, t) => frame(t)),
  { fps: scene.fps },
);
writePng(fileURLToPath(new URL("./plate.png", import.meta.url)), frame(-1));
process.stderr.write(`wrote ${out}: ${FRAMES} frames of ${W}×${H}, true mass ${TRUE_MASS} kg\n`);
