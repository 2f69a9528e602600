/**
 * How the objects of the `imperfect-models` experiment look: the rasterizer's looks (the table's
 * default, and Fig. 7's flat colour, Phong shading and texture), its video of an object's motion,
 * and the paint and light of the ray-traced ("photorealistic") targets.
 */
import type { Array } from "../../core/array.js";
import { np } from "../../core/np/index.js";
import type * as render from "../../render/index.js";
import { octantColors, overBackground, SCENE_LIGHTS, softVideo, type DeformingMesh } from "../video.js";
import { renderCamera, type Vec3 } from "./camera.js";
import { IMPERFECT_CAMERA, type ObjectGeometry, type ObjectSceneSettings, type ObjectSpec } from "./imperfect.js";

const f32 = (x: unknown): Array => np.array(x, { dtype: "float32" });

/** Per-vertex colours of an object's surface: an octant code around its rest centre (rotation and shear show). */
export function objectColors(g: ObjectGeometry, spec: ObjectSpec): Array {
  return octantColors(g.surface.vertices, spec.position);
}

/** The rasterizer's camera for the scene. */
export const objectSceneCamera = (s: ObjectSceneSettings): render.Camera =>
  renderCamera(IMPERFECT_CAMERA, s.resolution, s.resolution);

/**
 * How the object looks to the rasterizer. "default": octant colours under the scenes' light (the
 * table's rows). Fig. 7's variants: "colour" (one flat colour, unlit: only the outline carries
 * information), "shading" (one colour, Phong shading with a specular highlight), "texture" (a
 * non-uniform texture under the same shading).
 */
export const OBJECT_LOOKS = ["colour", "shading", "texture"] as const;
export type ObjectLookName = "default" | (typeof OBJECT_LOOKS)[number];

/** A look: the mesh's paint (colours, or uvs and a texture), the lights and the shading. */
export interface ObjectLook {
  readonly mesh: DeformingMesh;
  readonly lights: render.Lights;
  readonly shading?: render.Shading;
}

const PAINT = [0.85, 0.5, 0.25];
const SHADED: render.Lights = { ambient: 0.3, directional: [{ direction: [0.4, 1, -0.5], color: 0.7, specular: 0.5 }] };

/** A smooth random colour texture (16×16 texels, bilinear), the same for every object. */
function noiseTexture(): Array {
  let seed = 12345;
  const next = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const rows = globalThis.Array.from({ length: 16 }, () =>
    globalThis.Array.from({ length: 16 }, () => [0.2 + 0.75 * next(), 0.2 + 0.75 * next(), 0.2 + 0.75 * next()]),
  );
  return f32(rows);
}

/**
 * Per-face-corner uvs [F, 3, 2] by box projection of the rest surface: each face takes the plane its normal is closest
 * to.
 */
function boxUvs(g: ObjectGeometry, spec: ObjectSpec): Array {
  const v = g.surface.vertices,
    f = g.surface.faces,
    c = spec.position;
  const extent = Math.max(spec.size[0], spec.size[1], spec.size[2]);
  const out: number[][][] = [];
  for (let k = 0; k < f.length; k += 3) {
    const p = [0, 1, 2].map((j) => [0, 1, 2].map((d) => v[3 * f[k + j]! + d]! - c[d]!));
    const e1 = p[1]!.map((x, d) => x - p[0]![d]!),
      e2 = p[2]!.map((x, d) => x - p[0]![d]!);
    const n = [
      e1[1]! * e2[2]! - e1[2]! * e2[1]!,
      e1[2]! * e2[0]! - e1[0]! * e2[2]!,
      e1[0]! * e2[1]! - e1[1]! * e2[0]!,
    ].map(Math.abs);
    const axis = n.indexOf(Math.max(...n));
    const [a, b] = [0, 1, 2].filter((d) => d !== axis) as [number, number];
    out.push(p.map((q) => [0.5 + q[a]! / extent, 0.5 + q[b]! / extent]));
  }
  return f32(out);
}

/** The look named `look` of an object (its surface's faces, painted by name: see OBJECT_LOOKS). */
export function objectLook(g: ObjectGeometry, spec: ObjectSpec, look: ObjectLookName): ObjectLook {
  const faces = np.reshape(np.array(g.surface.faces, { dtype: "int32" }), [-1, 3]);
  const V = g.surface.vertices.length / 3;
  const uniform = f32(globalThis.Array.from({ length: V }, () => PAINT));
  switch (look) {
    case "default":
      return { mesh: { faces, colors: objectColors(g, spec) }, lights: SCENE_LIGHTS };
    case "colour":
      return { mesh: { faces, colors: uniform }, lights: { ambient: 1 } };
    case "shading":
      return {
        mesh: { faces, colors: uniform, material: { specular: 0.6, shininess: 12 } },
        lights: SHADED,
        shading: "phong",
      };
    case "texture":
      return {
        mesh: { faces, uvs: boxUvs(g, spec), texture: noiseTexture(), material: { specular: 0.6, shininess: 12 } },
        lights: SHADED,
        shading: "phong",
      };
  }
}

/**
 * Frames of the object at positions [T, N, 3] (the surface's V vertices first): RGBA [T, H, W, 4]
 * over the background (a colour [3] or an image [H, W, 3], e.g. groundImage), alpha the soft
 * silhouette; RGB [T, H, W, 3], what a camera sees; or the silhouette alone [T, H, W, 1].
 */
export function objectVideo(
  positions: Array,
  g: ObjectGeometry,
  look: ObjectLook,
  s: ObjectSceneSettings,
  background: Array,
  channels: "rgba" | "rgb" | "alpha",
): Array {
  const V = g.surface.vertices.length / 3;
  const x = positions.shape[1] === V ? positions : np.take(positions, np.arange(V), 1);
  const frames = softVideo(x, look.mesh, {
    resolution: s.resolution,
    camera: objectSceneCamera(s),
    lights: look.lights,
    ...(look.shading ? { shading: look.shading } : {}),
  });
  return channels === "alpha" ? np.split(frames, [3], -1)[1]! : overBackground(frames, background, channels);
}

/**
 * Per-face paint of the traced ("photorealistic") target: warm and cool by rest normal, unlike the rasterizer's
 * colours.
 */
export function tracedAlbedo(g: ObjectGeometry): Float32Array {
  const v = g.surface.vertices,
    f = g.surface.faces,
    out = new Float32Array(f.length);
  const paints = [
    [0.85, 0.35, 0.2],
    [0.2, 0.55, 0.85],
    [0.9, 0.8, 0.25],
  ];
  for (let k = 0; k < f.length; k += 3) {
    const p = [0, 1, 2].map((j) => [0, 1, 2].map((d) => v[3 * f[k + j]! + d]!));
    const e1 = p[1]!.map((x, d) => x - p[0]![d]!),
      e2 = p[2]!.map((x, d) => x - p[0]![d]!);
    const n = [e1[1]! * e2[2]! - e1[2]! * e2[1]!, e1[2]! * e2[0]! - e1[0]! * e2[2]!, e1[0]! * e2[1]! - e1[1]! * e2[0]!];
    const axis = n.map(Math.abs).indexOf(Math.max(...n.map(Math.abs)));
    const dim = n[axis]! > 0 ? 1 : 0.7;
    out.set(
      paints[axis]!.map((c) => c * dim),
      k,
    );
  }
  return out;
}

/** The traced target's light: another direction than the rasterizer's. */
export const TRACED_LIGHT: Vec3 = [-0.5, 1, -0.35];
/** The traced target's light levels and Blinn–Phong highlight (render.traceVideo's options); tracedLook copies them. */
export const TRACED_SHADING = { ambient: 0.3, intensity: 0.75, specular: 0.35, shininess: 40 } as const;

/**
 * The rasterizer's nearest reproduction of the traced target's look, as a user who knows the object's paint and the
 * light would set it up: each face painted its traced albedo (a texture of the six paints, one texel block per paint,
 * every corner of a face at its block's centre), flat shading, the tracer's ambient and light levels along
 * TRACED_LIGHT (TRACED_SHADING), and its white highlight with a Phong exponent a quarter of its Blinn–Phong one
 * (about the same lobe). What it cannot reproduce: the cast shadows, the highlight's exact form, supersampled edges and
 * sensor noise.
 */
export function tracedLook(g: ObjectGeometry): ObjectLook {
  const albedo = tracedAlbedo(g);
  const F = albedo.length / 3;
  const paints: number[][] = [];
  const block = new Int32Array(F);
  for (let f = 0; f < F; f++) {
    const c = [albedo[3 * f]!, albedo[3 * f + 1]!, albedo[3 * f + 2]!];
    let k = paints.findIndex((p) => p.every((x, d) => x === c[d]));
    if (k < 0) k = paints.push(c) - 1;
    block[f] = k;
  }
  // Blocks of 3 × 3 texels: bilinear sampling at a block's centre reads that paint alone.
  const texture = f32(
    globalThis.Array.from({ length: 3 }, () =>
      globalThis.Array.from({ length: 3 * paints.length }, (_, x) => paints[Math.floor(x / 3)]!),
    ),
  );
  const uv = (k: number) => [(3 * k + 1.5) / (3 * paints.length), 0.5];
  const uvs = f32(globalThis.Array.from(block, (k) => [uv(k), uv(k), uv(k)]));
  return {
    mesh: {
      faces: np.reshape(np.array(g.surface.faces, { dtype: "int32" }), [-1, 3]),
      uvs,
      texture,
      material: { specular: TRACED_SHADING.specular, shininess: TRACED_SHADING.shininess / 4 },
    },
    lights: {
      ambient: TRACED_SHADING.ambient,
      directional: [{ direction: [...TRACED_LIGHT], color: TRACED_SHADING.intensity, specular: 1 }],
    },
    shading: "flat",
  };
}
