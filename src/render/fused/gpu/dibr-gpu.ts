/**
 * dibr_geometry on WebGPU (dibr-cpu.ts in WGSL, float32): per pixel the hard pass (nearest
 * covering face by affine depth, ties to the first) and, where no face covers the pixel, the soft
 * silhouette over the first `knum` faces whose padded box holds the pixel; the tangent per pixel;
 * the adjoint per face over its box, after a per-pixel pass that finds the last face of each
 * pixel's soft silhouette. The uniform's `sigma` field carries sigmaInv.
 */
import { gpu } from "../../../core/backends/webgpu/context.js";
import type { GpuRule } from "../../../core/primitive.js";
import type { DibrKernelParams } from "../dibr-cpu.js";
import {
  AT,
  dispatch,
  faceTableAndBins,
  FOR_TILE_FACES,
  GEOMETRY_WGSL,
  kernelSetup,
  MAIN,
  PIXEL_MAIN,
  PARAMS_STRUCT,
  PIXEL_BOX,
  STRIDE,
  type KernelScalars,
} from "./common.js";

const scalars = (p: DibrKernelParams, faces: number): KernelScalars => ({
  width: p.width,
  height: p.height,
  faces,
  knum: p.knum,
  sigma: p.sigmaInv,
  prune: 0,
  gamma: 1,
  near: 0,
  far: 1,
  eps: 0,
  margin: p.boxLen,
});
const culling = (p: DibrKernelParams) => ({ culling: p.culling, cullAlpha: false });

/** The soft-silhouette distance of a pair (dibr-cpu.ts softDistance) and log(1 − e^{−s}) and its slope. */
const SOFT = `
struct Soft { ok: bool, d: Dist }

/** Terms with d²·sigmaInv > 50 (above −2e-22) are left out, the far ones by the distance bound alone. */
fn softDistance(f: u32, px: f32, py: f32) -> Soft {
  var s: Soft;
  s.ok = false;
  let lb = distanceLowerBound(f, bary(f, px, py));
  if (lb * lb * P.sigma > 50.0f) { return s; }
  s.d = boundaryDistance(f, px, py);
  s.ok = s.d.d2 * P.sigma <= 50.0f;
  return s;
}

/** 1 − e^{−s} for s ≥ 0, accurate near 0. */
fn oneMinusExpNeg(s: f32) -> f32 { return select(1.0f - exp(-s), s - 0.5f * s * s, s < 1e-4f); }

fn logOneMinus(d2: f32) -> f32 { return log(oneMinusExpNeg(max(d2 * P.sigma, 1e-12f))); }

/** ∂ log(1 − e^{−s})/∂(d²) = sigmaInv / expm1(s), 0 where s is clamped. */
fn logOneMinusSlope(d2: f32) -> f32 {
  let s = d2 * P.sigma;
  if (!(s > 1e-12f)) { return 0.0f; }
  let em1 = select(exp(s) - 1.0f, s + 0.5f * s * s, s < 1e-4f);
  return P.sigma / em1;
}
`;

/** A kernel's head: its bindings, the shared WGSL and the entry point (a thread per pixel unless given). */
const HEAD = (bindings: string, entry = PIXEL_MAIN) => `${PARAMS_STRUCT}
${bindings}
${GEOMETRY_WGSL}
${SOFT}
${entry}`;

const FORWARD =
  HEAD(`@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> masks: array<u32>;
@group(0) @binding(2) var<storage, read_write> logT: array<f32>;
@group(0) @binding(3) var<storage, read_write> face: array<i32>;
@group(0) @binding(4) var<storage, read_write> baryOut: array<f32>;
@group(0) @binding(5) var<uniform> P: Params;`) +
  `
  var n = 0u; var sum = 0.0f; var zBest = 3.0e38f; var winner = -1; var best = vec3<f32>(0.0f);
  {
  ${FOR_TILE_FACES("row", "col")}
      if (!inBox(f, px, py) || (faceFlags(f) & 4u) == 0u) { continue; }
      let w = bary(f, px, py);
      if (!(w.x >= 0.0f && w.y >= 0.0f && w.z >= 0.0f)) { continue; }
      let oz = ${STRIDE}u * f + ${AT.z}u;
      let z = w.x * T[oz] + w.y * T[oz + 1u] + w.z * T[oz + 2u];
      if (z < zBest) { zBest = z; winner = i32(f); best = w; }
    }
  }
  }
  // Covered pixels have alpha 1 whatever logT is: the soft silhouette is summed outside only (dibr-cpu.ts).
  if (winner < 0) {
  ${FOR_TILE_FACES("row", "col")}
      if (!inBox(f, px, py) || n >= P.knum) { continue; }
      n += 1u;
      let s = softDistance(f, px, py);
      if (s.ok) { sum += logOneMinus(s.d.d2); }
    }
  }
  }
  logT[i] = sum; face[i] = winner;
  baryOut[3u * i] = best.x; baryOut[3u * i + 1u] = best.y; baryOut[3u * i + 2u] = best.z;
}
`;

const JVP =
  HEAD(`@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> masks: array<u32>;
@group(0) @binding(2) var<storage, read> face: array<i32>;
@group(0) @binding(3) var<storage, read> txy: array<f32>;
@group(0) @binding(4) var<storage, read_write> dLogT: array<f32>;
@group(0) @binding(5) var<storage, read_write> dBary: array<f32>;
@group(0) @binding(6) var<uniform> P: Params;`) +
  `
  var n = 0u; var sum = 0.0f;
  // The soft silhouette's tangent at uncovered pixels only (logT is 0 at covered ones).
  if (face[i] < 0) {
  ${FOR_TILE_FACES("row", "col")}
      if (!inBox(f, px, py) || n >= P.knum) { continue; }
      n += 1u;
      let s = softDistance(f, px, py);
      if (!s.ok) { continue; }
      let slope = logOneMinusSlope(s.d.d2);
      if (slope == 0.0f) { continue; }
      let o = 6u * f;
      sum += slope
        * distTangent(s.d, array<f32, 6>(txy[o], txy[o + 1u], txy[o + 2u], txy[o + 3u], txy[o + 4u], txy[o + 5u]));
    }
  }
  }
  dLogT[i] = sum;
  let fw = face[i];
  var dw = vec3<f32>(0.0f);
  if (fw >= 0) {
    let f = u32(fw); let o = 6u * f;
    dw = baryTangent(
      f, px, py, bary(f, px, py), array<f32, 6>(txy[o], txy[o + 1u], txy[o + 2u], txy[o + 3u], txy[o + 4u], txy[o + 5u])
    );
  }
  dBary[3u * i] = dw.x; dBary[3u * i + 1u] = dw.y; dBary[3u * i + 2u] = dw.z;
}
`;

/** Per pixel, the last face of its soft silhouette (−1: none). */
const CUTOFF =
  HEAD(`@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> masks: array<u32>;
@group(0) @binding(2) var<storage, read_write> cutoff: array<i32>;
@group(0) @binding(3) var<uniform> P: Params;`) +
  `
  var n = 0u; var last = -1;
  ${FOR_TILE_FACES("row", "col")}
      if (n >= P.knum) { break; }
      if (inBox(f, px, py)) { n += 1u; last = i32(f); }
    }
  }
  cutoff[i] = last;
}
`;

const VJP =
  HEAD(
    `@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> face: array<i32>;
@group(0) @binding(2) var<storage, read> cutoff: array<i32>;
@group(0) @binding(3) var<storage, read> cLogT: array<f32>;
@group(0) @binding(4) var<storage, read> cBary: array<f32>;
@group(0) @binding(5) var<storage, read_write> gxy: array<f32>;
@group(0) @binding(6) var<uniform> P: Params;`,
    MAIN,
  ) +
  `
  if (i >= P.F) { return; }
  let f = i;
  var g = array<f32, 6>(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f);
  if ((faceFlags(f) & 1u) != 0u) {
    ${PIXEL_BOX}
    for (var r = r0; r <= r1; r++) {
      for (var cl = c0; cl <= c1; cl++) {
        let pix = u32(r) * P.W + u32(cl);
        let px = px_of(u32(cl)); let py = py_of(u32(r));
        let ct = cLogT[pix];
        if (ct != 0.0f && i32(f) <= cutoff[pix]) {
          let s = softDistance(f, px, py);
          if (s.ok) {
            let gd = ct * logOneMinusSlope(s.d.d2);
            if (gd != 0.0f) { addDistGradient(s.d, gd, &g); }
          }
        }
        if (face[pix] != i32(f)) { continue; }
        addBaryGradient(
          f, px, py, bary(f, px, py), vec3<f32>(cBary[3u * pix], cBary[3u * pix + 1u], cBary[3u * pix + 2u]), &g
        );
      }
    }
  }
  for (var m = 0u; m < 6u; m++) { gxy[6u * f + m] = g[m]; }
}
`;

type Rule = GpuRule<DibrKernelParams>;

/** Operands: xy, z, front → logT, face, bary. */
export const forwardRule: Rule = (p, inAvals) => {
  const { s, uniform } = kernelSetup("dibr_geometry", inAvals, (faces) => scalars(p, faces)),
    ctx = gpu(),
    HW = p.width * p.height;
  return ([xy, z, front]) => {
    const [T, masks] = faceTableAndBins(culling(p), xy!, z!, front!, null, uniform, s, true);
    const logT = ctx.pool.allocate(HW),
      face = ctx.pool.allocate(HW),
      bary = ctx.pool.allocate(3 * HW);
    dispatch(FORWARD, [T!, masks!, logT, face, bary, uniform], HW);
    T!.release();
    masks!.release();
    return [logT, face, bary];
  };
};

/** Operands: xy, z, front, (aux) face, (tangent) xy → logT, bary tangents. */
export const jvpRule: Rule = (p, inAvals) => {
  const { s, uniform } = kernelSetup("dibr_geometry", inAvals, (faces) => scalars(p, faces)),
    ctx = gpu(),
    HW = p.width * p.height;
  return ([xy, z, front, face, txy]) => {
    const [T, masks] = faceTableAndBins(culling(p), xy!, z!, front!, null, uniform, s, true);
    const dLogT = ctx.pool.allocate(HW),
      dBary = ctx.pool.allocate(3 * HW);
    dispatch(JVP, [T!, masks!, face!, txy!, dLogT, dBary, uniform], HW);
    T!.release();
    masks!.release();
    return [dLogT, dBary];
  };
};

/** Operands: xy, z, front, (aux) face, (cotangents) logT, bary → xy cotangent. */
export const vjpRule: Rule = (p, inAvals) => {
  const { F, s, uniform } = kernelSetup("dibr_geometry", inAvals, (faces) => scalars(p, faces)),
    ctx = gpu(),
    HW = p.width * p.height;
  return ([xy, z, front, face, cLogT, cBary]) => {
    const [T, masks] = faceTableAndBins(culling(p), xy!, z!, front!, null, uniform, s, true);
    const cutoff = ctx.pool.allocate(HW),
      gxy = ctx.pool.allocate(6 * F);
    dispatch(CUTOFF, [T!, masks!, cutoff, uniform], HW);
    dispatch(VJP, [T!, face!, cutoff, cLogT!, cBary!, gxy, uniform], F);
    T!.release();
    masks!.release();
    cutoff.release();
    return [gxy];
  };
};
