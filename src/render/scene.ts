/**
 * render(meshes, camera, lights, materials) → RGBA [H, W, 4] (issue 7 items 4–5).
 *
 * Several meshes (e.g. an object and a ground plane) are concatenated into one face list and
 * rasterized together, so occlusion between them is resolved by the rasterizer. Per face corner
 * we build an attribute vector; the rasterizer interpolates it (per pixel×face for SoftRas, per
 * pixel for DIB-R) and a fragment function turns it into colour:
 *   flat / gouraud: lighting evaluated per face / per vertex, interpolated, × albedo (or texel)
 *   phong:          normals, positions and material interpolated, lighting per fragment.
 */
import type { Array, ArrayLike } from "../core/array.js";
import { np } from "../core/np/index.js";
import { projectPoints, toArray, type Camera } from "./camera.js";
import { dibrRasterize, type DibrOptions } from "./dibr.js";
import { faceNormals, vertexNormals, meshFromData, planeData, type Mesh } from "./mesh.js";
import { concatTopology, type FaceTopology } from "./mesh-edges.js";
import { setupRaster, type TilingOptions } from "./screen.js";
import { defaultLights, lightTerms, shade, type Lights, type Material } from "./shading.js";
import { softRasInclude, softRasMargin, softRasterize, type Fragment, type SoftRasOptions } from "./softras.js";
import { sampleBilinear, type TextureOptions } from "./texture.js";
import type { DType } from "../core/dtype.js";

export type Shading = "flat" | "gouraud" | "phong";

export interface RenderOptions extends TilingOptions {
  /** Image size in pixels. Defaults 128 × width. Give the camera aspect = width/height for non-square images. */
  readonly width?: number;
  readonly height?: number;
  /** Default "softras". */
  readonly rasterizer?: "softras" | "dibr";
  /** Default "gouraud". */
  readonly shading?: Shading;
  /** Background colour [3]. Default black. */
  readonly background?: ArrayLike;
  /** SoftRas parameters (σ, γ, near/far default to the camera's, culling, …). */
  readonly softras?: Omit<SoftRasOptions, "background" | "tile" | "capacity" | "onOverflow" | "activeTiles">;
  /** DIB-R parameters (sigmaInv, boxLen, knum, …). */
  readonly dibr?: Omit<DibrOptions, "background" | "tile" | "capacity" | "onOverflow" | "activeTiles">;
  readonly texture?: TextureOptions;
}

export interface RenderResult {
  /** [H, W, 4] RGBA. */
  readonly image: Array;
  /** int32 []: (tile, face) pairs dropped by a too-small capacity (0 when exact). */
  readonly overflow: Array;
  /** int32 [H, W] visible face (DIB-R only; index into the concatenated faces, −1 = none). */
  readonly faceIndex: Array | null;
}

/** render's arguments in one object: the lights and materials beside the image options. */
export interface SceneOptions extends RenderOptions {
  /** Default `defaultLights()`. */
  readonly lights?: Lights;
  readonly materials?: Material | readonly Material[];
}

const SCENE_KEYS = new Set([
  "lights",
  "materials",
  "width",
  "height",
  "rasterizer",
  "shading",
  "background",
  "softras",
  "dibr",
  "texture",
  "tile",
  "capacity",
  "onOverflow",
  "activeTiles",
]);
const LIGHT_KEYS = ["ambient", "directional", "point"];

/** The positional form's (lights, materials, options) from either form of the arguments. */
function sceneArgs(
  what: string,
  third: Lights | SceneOptions | undefined,
  materials: Material | readonly Material[] | undefined,
  options: RenderOptions | undefined,
): [Lights | undefined, Material | readonly Material[] | undefined, RenderOptions] {
  const keys = third && typeof third === "object" ? Object.keys(third) : [];
  if (!keys.some((k) => SCENE_KEYS.has(k))) return [third as Lights | undefined, materials, options ?? {}];
  const lightKeys = keys.filter((k) => LIGHT_KEYS.includes(k));
  if (lightKeys.length)
    throw new Error(
      `${what}: the options object mixes image options with light fields ` +
        `(${lightKeys.join(", ")}); put the lights under \`lights: { … }\`.`,
    );
  if (materials !== undefined || options !== undefined)
    throw new Error(
      `${what}: give either one options object (meshes, camera, { lights, materials, width, ` +
        `… }) or the positional form (meshes, camera, lights, materials, options), not both.`,
    );
  const { lights, materials: m, ...rest } = third as SceneOptions;
  return [lights, m, rest];
}

/**
 * Render meshes to RGBA [H, W, 4] (values of RGB not premultiplied; alpha is the soft silhouette):
 * `render(meshes, camera, { lights, materials, width, shading, … })`, or positionally
 * `render(meshes, camera, lights, materials, options)`.
 */
export function render(meshes: Mesh | readonly Mesh[], camera: Camera, options?: SceneOptions): Array;
export function render(
  meshes: Mesh | readonly Mesh[],
  camera: Camera,
  lights?: Lights,
  materials?: Material | readonly Material[],
  options?: RenderOptions,
): Array;
export function render(
  meshes: Mesh | readonly Mesh[],
  camera: Camera,
  third?: Lights | SceneOptions,
  materials?: Material | readonly Material[],
  options?: RenderOptions,
): Array {
  const [l, m, o] = sceneArgs("render", third, materials, options);
  return renderWithInfo(meshes, camera, l, m, o).image;
}

/** render, with the overflow count and (DIB-R) the visible face per pixel. Takes either form of render's arguments. */
export function renderWithInfo(meshes: Mesh | readonly Mesh[], camera: Camera, options?: SceneOptions): RenderResult;
export function renderWithInfo(
  meshes: Mesh | readonly Mesh[],
  camera: Camera,
  lights?: Lights,
  materials?: Material | readonly Material[],
  options?: RenderOptions,
): RenderResult;
export function renderWithInfo(
  meshes: Mesh | readonly Mesh[],
  camera: Camera,
  third?: Lights | SceneOptions,
  materials0?: Material | readonly Material[],
  options0?: RenderOptions,
): RenderResult {
  const [lights0, materials, options] = sceneArgs("renderWithInfo", third, materials0, options0);
  const lights = lights0 ?? defaultLights();
  const list = (globalThis.Array.isArray(meshes) ? meshes : [meshes]) as readonly Mesh[];
  if (!list.length) throw new Error("render: no meshes given.");
  const width = options.width ?? 128,
    height = options.height ?? width;
  const shading = options.shading ?? "gouraud";
  const scene = assemble(list, camera, lights, materials, shading, options.texture ?? {});
  const background = options.background ?? [0, 0, 0];
  const tiling: TilingOptions = {
    tile: options.tile,
    capacity: options.capacity,
    onOverflow: options.onOverflow,
    activeTiles: options.activeTiles,
  };
  if ((options.rasterizer ?? "softras") === "softras") {
    const r = softRasterize(
      scene.screen,
      scene.attrs,
      width,
      height,
      { near: camera.near, far: camera.far, ...options.softras, ...tiling, background },
      scene.fragment,
    );
    return { image: np.concatenate([r.rgb!, np.expandDims(r.alpha, -1)], -1), overflow: r.overflow, faceIndex: null };
  }
  const r = dibrRasterize(
    scene.screen,
    scene.attrs,
    width,
    height,
    { ...options.dibr, ...tiling, background },
    scene.fragment ?? ((x) => x),
  );
  return {
    image: np.concatenate([r.features!, np.expandDims(r.alpha, -1)], -1),
    overflow: r.overflow,
    faceIndex: r.faceIndex,
  };
}

/**
 * A ground plane mesh (normal +y) of side `size` at height `y`, subdivided n×n (finer grids help affine texture
 * interpolation and depth).
 */
export function groundPlane(
  opts: {
    size?: number;
    y?: number;
    subdivisions?: number;
    colors?: ArrayLike;
    texture?: Array;
    material?: Material;
    dtype?: DType;
  } = {},
): Mesh {
  const { size, y, subdivisions, dtype, ...rest } = opts;
  const d = planeData(size ?? 10, subdivisions ?? 4, y ?? 0);
  const m = meshFromData(d, { dtype, ...rest });
  return opts.texture ? m : { ...m, uvs: undefined };
}

/**
 * The capacity (faces per tile) an eager render of this scene would use: pass it as
 * `options.capacity` (with headroom if the geometry will move) to let jit cull as well.
 */
export function estimateCapacity(meshes: Mesh | readonly Mesh[], camera: Camera, options: RenderOptions = {}): number {
  const list = (globalThis.Array.isArray(meshes) ? meshes : [meshes]) as readonly Mesh[];
  const dtype: DType = list.some((m) => m.vertices.dtype === "float64") ? "float64" : "float32";
  const screen = projectScene(list, camera, dtype);
  const width = options.width ?? 128,
    height = options.height ?? width;
  const tiling = { tile: options.tile, onOverflow: "ignore" as const };
  const setup =
    (options.rasterizer ?? "softras") === "softras"
      ? setupRaster(
          screen,
          width,
          height,
          softRasMargin(options.softras ?? {}),
          softRasInclude(options.softras ?? {}),
          tiling,
        )
      : setupRaster(screen, width, height, options.dibr?.boxLen ?? 0.02, (g) => np.onesLike(g.valid), tiling);
  return setup.bins.capacity;
}

// ---------------------------------------------------------------- scene assembly

/** Concatenate the meshes' topology (vertex offsets), project every vertex once, gather per face. */
function projectScene(
  list: readonly Mesh[],
  camera: Camera,
  dtype: DType,
): { xy: Array; z: Array; front: Array; topology: FaceTopology } {
  let offset = 0;
  const allFaces = np.concatenate(
    list.map((m) => {
      const r = np.add(m.faces, offset);
      offset += m.vertices.shape[0]!;
      return r;
    }),
    0,
  );
  const allVerts = np.concatenate(
    list.map((m) => toArray(m.vertices, dtype)),
    0,
  );
  const proj = projectPoints(camera, allVerts);
  const xy = np.take(proj.xy, allFaces, 0),
    z = np.take(proj.depth, allFaces, 0);
  // Front-facing: the face normal points towards the eye (valid for either look-at handedness).
  const pos = np.stopGradient(np.take(allVerts, allFaces, 0));
  const [p0, p1, p2] = np.split(pos, 3, 1).map((s) => np.squeeze(s, 1)) as [Array, Array, Array];
  // The view direction: from the eye to the face, or the camera's forward axis for a parallel projection.
  const view =
    camera.projection === "orthographic"
      ? np.take(np.stopGradient(camera.rotation), 2, 0)
      : np.sub(p0, np.stopGradient(camera.eye));
  const front = np.less(np.sum(np.mul(np.cross(np.sub(p1, p0), np.sub(p2, p0)), view), -1), 0);
  return {
    xy,
    z,
    front,
    topology: concatTopology(
      list.map((m) => m.faces),
      allFaces,
      offset,
    ),
  };
}

interface Assembled {
  readonly screen: { xy: Array; z: Array; front: Array; topology: FaceTopology };
  readonly attrs: Array;
  /** Absent: the interpolated attributes are the colours. */
  readonly fragment?: Fragment;
}

/** Named channel groups of the per-corner attribute vector. */
class Layout {
  private readonly parts: { name: string; value: Array }[] = [];
  add(name: string, value: Array): void {
    this.parts.push({ name, value });
  }
  pack(): Array {
    return np.concatenate(
      this.parts.map((p) => p.value),
      -1,
    );
  }
  /** Split an interpolated [..., D] array back into named groups. */
  unpack(x: Array): Record<string, Array> {
    const sizes = this.parts.map((p) => p.value.shape[p.value.ndim - 1]!);
    const cuts: number[] = [];
    sizes.reduce((acc, s) => {
      cuts.push(acc + s);
      return acc + s;
    }, 0);
    const pieces = np.split(x, cuts.slice(0, -1), -1);
    return Object.fromEntries(this.parts.map((p, i) => [p.name, pieces[i]!]));
  }
}

function assemble(
  list: readonly Mesh[],
  camera: Camera,
  lights: Lights,
  materials: Material | readonly Material[] | undefined,
  shading: Shading,
  texOpts: TextureOptions,
): Assembled {
  const dtype: DType = list.some((m) => m.vertices.dtype === "float64") ? "float64" : "float32";
  const f = (x: ArrayLike) => toArray(x, dtype);
  const textures: Array[] = [];
  const materialOf = (m: Mesh, i: number): Material =>
    m.material ??
    (globalThis.Array.isArray(materials)
      ? (materials as readonly Material[])[i]
      : (materials as Material | undefined)) ??
    {};
  const anyTexture = list.some((m) => m.texture);
  const corners = list.map((m, i) => {
    const V = f(m.vertices),
      faces = m.faces;
    if (V.ndim !== 2 || V.shape[1] !== 3)
      throw new Error(`render: mesh ${i} vertices must be [V, 3], got [${V.shape}].`);
    if (faces.dtype !== "int32" || faces.ndim !== 2 || faces.shape[1] !== 3)
      throw new Error(`render: mesh ${i} faces must be int32 [F, 3], got ${faces.aval}.`);
    const F = faces.shape[0]!;
    const toCorners = (perVertex: Array) => np.take(perVertex, faces, 0); // [F,3,k]
    const perFace = (x: Array) =>
      np.broadcastTo(np.reshape(x, [F, 1, x.shape[x.ndim - 1]!]), [F, 3, x.shape[x.ndim - 1]!]);
    const position = toCorners(V);
    const normal = shading === "flat" ? perFace(faceNormals(V, faces)) : toCorners(vertexNormals(V, faces));
    const litAt = shading === "flat" ? perFace(np.mean(position, 1)) : position; // where lighting is evaluated
    let albedo: Array;
    if (m.faceColors) albedo = perFace(f(m.faceColors));
    else {
      const c = f(m.colors ?? [0.7, 0.7, 0.7]);
      albedo = c.ndim === 2 ? toCorners(c) : np.broadcastTo(c, [F, 3, 3]);
    }
    let uv = np.zeros([F, 3, 2], { dtype }),
      tex = np.full([F, 3, 1], -1, { dtype });
    if (m.texture) {
      if (!m.uvs) throw new Error(`render: mesh ${i} has a texture but no uvs.`);
      const u = f(m.uvs);
      uv = u.ndim === 3 ? u : toCorners(u);
      tex = np.full([F, 3, 1], textures.length, { dtype });
      textures.push(f(m.texture));
    }
    return { faces, F, position, normal, litAt, albedo, uv, tex, material: materialOf(m, i) };
  });

  const { xy, z, front, topology } = projectScene(list, camera, dtype);

  const cat = (get: (c: (typeof corners)[number]) => Array) => np.concatenate(corners.map(get), 0);
  const layout = new Layout();
  const pickAlbedo = (g: Record<string, Array>): Array => {
    let base = g.albedo!;
    textures.forEach((t, k) => {
      const s = sampleBilinear(t, g.uv!, texOpts);
      base = np.where(np.less(np.abs(np.sub(g.tex!, k)), 0.5), s, base);
    });
    return base;
  };
  const mat3 = (c: (typeof corners)[number], key: "ambient" | "diffuse" | "specular", def: number) =>
    np.broadcastTo(f(c.material[key] ?? def), [c.F, 3, 3]);

  if (shading === "phong") {
    layout.add(
      "normal",
      cat((c) => c.normal),
    );
    layout.add(
      "position",
      cat((c) => c.litAt),
    );
    layout.add(
      "albedo",
      cat((c) => c.albedo),
    );
    layout.add(
      "ka",
      cat((c) => mat3(c, "ambient", 1)),
    );
    layout.add(
      "kd",
      cat((c) => mat3(c, "diffuse", 1)),
    );
    layout.add(
      "ks",
      cat((c) => mat3(c, "specular", 0)),
    );
    layout.add(
      "shininess",
      cat((c) => np.broadcastTo(f(c.material.shininess ?? 64), [c.F, 3, 1])),
    );
    if (anyTexture) {
      layout.add(
        "uv",
        cat((c) => c.uv),
      );
      layout.add(
        "tex",
        cat((c) => c.tex),
      );
    }
    const anySpec = corners.some((c) => c.material.specular !== undefined && c.material.specular !== 0);
    const fragment: Fragment = (x) => {
      const g = layout.unpack(x);
      const material: Material = {
        ambient: g.ka!,
        diffuse: g.kd!,
        specular: anySpec ? g.ks! : 0,
        shininess: g.shininess!,
      };
      return shade(g.normal!, g.position!, anyTexture ? pickAlbedo(g) : g.albedo!, camera.eye, lights, material);
    };
    return { screen: { xy, z, front, topology }, attrs: layout.pack(), fragment };
  }

  // flat / gouraud: light each corner now (per mesh, with its material), interpolate the result.
  const terms = corners.map((c) =>
    lightTerms(c.normal, c.litAt, camera.eye, lights, {
      ambient: c.material.ambient === undefined ? undefined : f(c.material.ambient),
      diffuse: c.material.diffuse === undefined ? undefined : f(c.material.diffuse),
      specular:
        c.material.specular === undefined || c.material.specular === 0 ? c.material.specular : f(c.material.specular),
      shininess: c.material.shininess === undefined ? undefined : f(c.material.shininess),
    }),
  );
  const bc = (x: Array, F: number) => np.broadcastTo(x, [F, 3, 3]);
  const diffuse = np.concatenate(
    terms.map((t, i) => bc(t.diffuse, corners[i]!.F)),
    0,
  );
  const specular = np.concatenate(
    terms.map((t, i) => bc(t.specular, corners[i]!.F)),
    0,
  );
  if (!anyTexture) {
    return {
      screen: { xy, z, front, topology },
      attrs: np.add(
        np.mul(
          diffuse,
          cat((c) => c.albedo),
        ),
        specular,
      ),
    };
  }
  layout.add("diffuse", diffuse);
  layout.add("specular", specular);
  layout.add(
    "albedo",
    cat((c) => c.albedo),
  );
  layout.add(
    "uv",
    cat((c) => c.uv),
  );
  layout.add(
    "tex",
    cat((c) => c.tex),
  );
  const fragment: Fragment = (x) => {
    const g = layout.unpack(x);
    return np.add(np.mul(g.diffuse!, pickAlbedo(g)), g.specular!);
  };
  return { screen: { xy, z, front, topology }, attrs: layout.pack(), fragment };
}
