/**
 * The fused rasterizer primitives (src/render/fused): a whole soft rasterizer per primitive, so
 * random-shape cases do not apply. Their values, vjp and jvp are property-tested against the
 * array-program rasterizers they replace, on random triangle soups.
 */
import type { CoveredElsewhereSpec } from "./spec-types.js";

const against = (what: string): CoveredElsewhereSpec => ({
  kind: "covered-elsewhere",
  where:
    `${what}: property-tests/fused-raster.prop.test.ts ` +
    `checks values, vjp and jvp against the array-program rasterizer ` +
    `(float64 and float32, vmap, jit)`,
});
const tangent = (of: string): CoveredElsewhereSpec => ({
  kind: "covered-elsewhere",
  where:
    `the linear tangent/adjoint of ${of}, exercised by jvp and vjp of ${of} ` +
    `in property-tests/fused-raster.prop.test.ts; ` +
    "its own derivatives (second order, through the reference program) " +
    "there against the array program's, " +
    "and in tests/render-second-order.test.ts against central differences",
});

export const renderSpecs = {
  softras_geometry: against("SoftRas silhouette, depth and fragment layers"),
  softras_geometry_jvp: tangent("softras_geometry"),
  softras_geometry_vjp: tangent("softras_geometry"),
  softras_colour: against("SoftRas with per-corner colours"),
  softras_colour_jvp: tangent("softras_colour"),
  softras_colour_vjp: tangent("softras_colour"),
  dibr_geometry: against("DIB-R z-buffer winner and soft silhouette"),
  dibr_geometry_jvp: tangent("dibr_geometry"),
  dibr_geometry_vjp: tangent("dibr_geometry"),
} satisfies Record<string, CoveredElsewhereSpec>;
