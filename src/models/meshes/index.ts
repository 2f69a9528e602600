/** Meshes: procedural tet and cloth meshes, rigid primitives, OBJ/.tet formats, the Stanford bunny, validation. */
export * from "./types.js";
export { tetBox, tetBeam, tetSphere, pushOriented } from "./tet-grid.js";
export { extrude, gearProfile, tetGear, type GearOptions } from "./extrude.js";
export { clothGrid, planarMeshFromCells, walker, type ClothGridOptions } from "./cloth-grid.js";
export { box, icosphere, cylinder, cone, capsule, torus, revolve } from "./primitives.js";
export { parseObj, loadObj, formatObj, parseTet, loadTet, formatTet, type ParseIssue } from "./formats.js";
export { bunny, type BunnyOptions } from "./bunny.js";
export { uniqueEdges, bendingHinges, tetSurface } from "./topology.js";
export {
  checkTetMesh,
  checkTriMesh,
  validateTetMesh,
  validateTriMesh,
  MeshValidationError,
  formatIssue,
  type MeshIssue,
  type MeshIssueKind,
  type TetCheckOptions,
  type TriCheckOptions,
} from "./validate.js";
