/**
 * RISP's source-domain image formation: the object by SoftRas with Phong shading under ψ, over a
 * procedural ground (random blotches, checkers or stripes) with the object's shadow traced along
 * ψ's light — differentiable in every entry of ψ but the shadow's shape.
 */
import type { Array } from "../core/array.js";
import type { Rng } from "../core/host-rng.js";
import { np } from "../core/np/index.js";
import * as render from "../render/index.js";
import { hostCamera, renderCamera } from "../sysid/scenes/camera.js";
import { softFrame } from "../sysid/video.js";
import type { RispEnv } from "./env.js";
import { lightDirection, type Vec3 } from "./psi.js";

const SHININESS = 20;

/** A ground texture: brightness factors per channel at a ground point (x, z), multiplied by ψ's ground colour. */
export type GroundTexture = (x: number, z: number) => Vec3;

/**
 * A random procedural ground texture (domain randomisation of the background): smooth blotches
 * of random scale, checkers of random cell size, orientation and colours, or wavy stripes of
 * random frequency — brightness factors around 1 with random per-channel tints.
 */
export function randomGroundTexture(rng: Rng): GroundTexture {
  const tint = (a: number): Vec3 => [
    1 + a * rng.uniform(-1, 1),
    1 + a * rng.uniform(-1, 1),
    1 + a * rng.uniform(-1, 1),
  ];
  const angle = rng.uniform(0, Math.PI),
    [ca, sa] = [Math.cos(angle), Math.sin(angle)];
  const family = Math.floor(rng.uniform(0, 3));
  if (family === 0) {
    // Bilinear value noise on a lattice of cells `size` m wide.
    const size = rng.uniform(0.15, 1),
      a = rng.uniform(0, 0.5),
      N = 32;
    const lattice = globalThis.Array.from({ length: N * N }, () => 1 + a * rng.uniform(-1, 1));
    const colour = tint(0.2);
    const at = (i: number, j: number) => lattice[(((i % N) + N) % N) * N + (((j % N) + N) % N)]!;
    return (x, z) => {
      const u = (ca * x + sa * z) / size + 100,
        v = (-sa * x + ca * z) / size + 100;
      const i = Math.floor(u),
        j = Math.floor(v),
        fu = u - i,
        fv = v - j;
      const k =
        (1 - fu) * ((1 - fv) * at(i, j) + fv * at(i, j + 1)) + fu * ((1 - fv) * at(i + 1, j) + fv * at(i + 1, j + 1));
      return [k * colour[0], k * colour[1], k * colour[2]];
    };
  }
  if (family === 1) {
    const size = rng.uniform(0.1, 0.6),
      colours = [tint(0.5), tint(0.5)];
    return (x, z) => colours[(Math.floor((ca * x + sa * z) / size) + Math.floor((-sa * x + ca * z) / size)) & 1]!;
  }
  const frequency = rng.uniform(3, 15),
    wobble = rng.uniform(0, 3),
    a = rng.uniform(0.1, 0.5),
    colour = tint(0.3);
  return (x, z) => {
    const u = ca * x + sa * z,
      v = -sa * x + ca * z;
    const k = 1 + a * Math.sin(frequency * u + wobble * Math.sin(2.3 * v));
    return [k * colour[0], k * colour[1], k * colour[2]];
  };
}

/**
 * The background behind an object, as layers linear in ψ's colours and levels
 * (render.traceGround): [R, R, 7] = sky fraction, mean ground texture, mean ground texture where
 * the object (vertices [V·3], or none) does not shadow it from the light.
 */
export function backgroundLayers(
  env: RispEnv,
  R: number,
  o: { vertices: ArrayLike<number> | null; light: Vec3; texture: GroundTexture },
): Array {
  const g = render.traceGround(o.vertices, env.faces, {
    camera: hostCamera(env.camera, R, R),
    width: R,
    height: R,
    light: o.light,
    groundY: env.groundY,
    groundColor: o.texture,
    samples: 3,
  });
  const layer = (x: Float32Array, channels: number) => np.array(x, { dtype: "float32" }).reshape([R, R, channels]);
  return np.concatenate([layer(g.sky, 1), layer(g.ground, 3), layer(g.groundLit, 3)], -1);
}

/**
 * The tasks' own background: a plain, unshadowed ground (its layers do not depend on the object, so they are made
 * once).
 */
export const plainBackground = (env: RispEnv, R: number): Array =>
  backgroundLayers(env, R, { vertices: null, light: [0, 1, 0], texture: () => [1, 1, 1] });

/**
 * How the object is rasterized: SoftRas' depth temperature and silhouette softness (sysid.softFrame's defaults if
 * absent), and whether it is faceted.
 */
export interface SoftLook {
  readonly gamma?: number;
  readonly sigma?: number;
  /**
   * Every face flat-shaded in the mean colour of its corners (as the ray tracer shades): the
   * vertices are unshared per face, so each corner's normal is its face's.
   */
  readonly faceted?: boolean;
}

/**
 * The training image [R, R, 3] of vertices [V, 3] under ψ [14]: the object rasterized by
 * SoftRas with Phong shading, composited over a background (`backgroundLayers` [R, R, 7]) lit by
 * the same light, with ψ's sky and ground colours — differentiable in every ψ but the shadow's
 * shape (the layers are traced on the host).
 */
export function softImage(
  env: RispEnv,
  R: number,
  vertices: Array,
  psi: Array,
  background: Array,
  look: SoftLook = {},
): Array {
  const at = (i: number, n = 1) => (n === 1 ? np.index(psi, i) : np.take(psi, np.arange(i, i + n), 0));
  const ambient = at(0),
    intensity = at(3),
    light = lightDirection(at(1), at(2));
  const lights: render.Lights = { ambient, directional: [{ direction: light, color: intensity, specular: intensity }] };
  const corners = np.array(env.faces, { dtype: "int32" }),
    pattern = np.reshape(np.array(env.pattern, { dtype: "float32" }), [-1, 3]);
  const colours = look.faceted
    ? np.repeat(np.mean(np.reshape(np.take(pattern, corners, 0), [-1, 3, 3]), 1), 3, 0)
    : pattern;
  const object = {
    faces: look.faceted
      ? np.reshape(np.arange(0, env.faces.length, 1, { dtype: "int32" }), [-1, 3])
      : np.reshape(corners, [-1, 3]),
    colors: np.mul(colours, at(4, 3)),
    material: { specular: at(7), shininess: SHININESS },
  };
  const posed = look.faceted ? np.take(vertices, corners, 0) : vertices;
  const frame = softFrame([{ vertices: posed, mesh: object }], {
    resolution: R,
    camera: renderCamera(env.camera, R, R),
    lights,
    shading: "phong",
    ...(look.gamma ? { gamma: look.gamma } : {}),
    ...(look.sigma ? { sigma: look.sigma } : {}),
  });
  const [rgb, alpha] = np.split(frame, [3], -1) as [Array, Array];
  const [sky, ground, groundLit] = np.split(background, [1, 4], -1) as [Array, Array, Array];
  const sun = np.mul(intensity, np.maximum(np.index(light, 1), 0));
  const behind = np.add(
    np.mul(sky, at(8, 3)),
    np.mul(at(11, 3), np.add(np.mul(ambient, ground), np.mul(sun, groundLit))),
  );
  return np.clip(np.add(rgb, np.mul(np.sub(1, alpha), behind)), 0, 1);
}
