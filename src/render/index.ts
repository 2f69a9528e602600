/**
 * gradsim.render: differentiable soft rasterizers (SoftRas, DIB-R) with shading and textures,
 * written with the array API so grad, jvp, vmap and jit apply. Conventions: src/render/CONVENTIONS.md.
 */
export {
  type Camera,
  type LookAtConvention,
  type PerspectiveOptions,
  type Projected,
  perspectiveCamera,
  lookAtRotation,
  eyeFromAngles,
  dibrEyeFromAngles,
  worldToCamera,
  projectPoints,
  intrinsics,
  extrinsics,
  cameraFromMatrices,
  normalize,
  toArray,
} from "./camera.js";
export {
  type Mesh,
  type MeshData,
  faceNormals,
  vertexNormals,
  meshFromData,
  icosphereData,
  uvSphereData,
  planeData,
  boxData,
} from "./mesh.js";
export { meshDataFromTriMesh, meshFromTriMesh, triMeshFromData } from "./convert.js";
export {
  type LookAtViewOptions,
  type OrthographicOptions,
  type ViewTransform,
  lookAtViewTransform,
  orthographicCamera,
  cameraFromViewTransform,
} from "./ortho.js";
export { chamferDistance, samplePointsFromMesh } from "./points.js";
export {
  type Lights,
  type Material,
  type DirectionalLight,
  type PointLight,
  type LightTerms,
  defaultLights,
  pytorch3dLights,
  defaultMaterial,
  lightTerms,
  shade,
} from "./shading.js";
export { type TextureOptions, sampleBilinear } from "./texture.js";
export type { ScreenFaces, TilingOptions } from "./screen.js";
export {
  type SoftRasOptions,
  type SoftRasResult,
  type FaceCulling,
  type Fragment,
  softRasterize,
  toRGBA,
  pruneRadius,
  pruneThreshold,
  sigmoidAlphaBlend,
  softRasMargin,
} from "./softras.js";
export { type DibrOptions, type DibrResult, dibrRasterize } from "./dibr.js";
export { type TileGrid, type Bins, type BinOptions, makeTileGrid, binFaces, pixelX, pixelY } from "./cull.js";
export {
  type RenderOptions,
  type RenderResult,
  type SceneOptions,
  type Shading,
  render,
  renderWithInfo,
  groundPlane,
  estimateCapacity,
} from "./scene.js";
export {
  type GroundLayers,
  type PinholeFrame,
  type TracedObject,
  type TraceOptions,
  type TracedVideo,
  pinholeRay,
  traceGround,
  traceVideo,
  woodGrain,
} from "./raytrace.js";
export { logSigmoid } from "./raster-common.js";
