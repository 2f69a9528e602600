/**
 * softras_geometry on WebGPU (softras-layers-cpu.ts in WGSL, float32): per pixel the log
 * transmittance over every kept face and the K colourable layers of largest score (insertion in
 * face order, ties to the earlier face), their face, clipped barycentrics, depth and log D; the
 * tangent per pixel; the adjoint per face over its box. The overflow count is a per-pixel flag
 * summed by one thread (deterministic).
 */
import { gpu } from "../../../core/backends/webgpu/context.js";
import type { GpuRule } from "../../../core/primitive.js";
import type { SoftRasGeometryParams } from "../softras-prim.js";
import {
  dispatch,
  faceTableAndBins,
  FOR_TILE_FACES,
  kernelSetup,
  MAIN,
  PIXEL_MAIN,
  packer,
  PARAMS_STRUCT,
  pairSource,
  PIXEL_BOX,
  type KernelScalars,
} from "./common.js";

const scalars = (p: SoftRasGeometryParams, faces: number): KernelScalars => ({
  width: p.width,
  height: p.height,
  faces,
  sigma: p.sigma,
  prune: p.prune,
  gamma: p.gamma,
  near: p.near,
  far: p.far,
  eps: 0,
  margin: p.margin,
});

function forwardSource(p: SoftRasGeometryParams): string {
  const K = p.layers;
  return `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> masks: array<u32>;
@group(0) @binding(2) var<storage, read_write> S: array<f32>;
@group(0) @binding(3) var<storage, read_write> face: array<i32>;
@group(0) @binding(4) var<storage, read_write> baryOut: array<f32>;
@group(0) @binding(5) var<storage, read_write> depth: array<f32>;
@group(0) @binding(6) var<storage, read_write> logD: array<f32>;
@group(0) @binding(7) var<storage, read_write> over: array<u32>;
@group(0) @binding(8) var<uniform> P: Params;
${pairSource(p.distFunc)}
${PIXEL_MAIN}
  let span = 1.0f / (P.far - P.near);
  var score: array<f32, ${K}>; var lf: array<i32, ${K}>; var ld: array<f32, ${K}>; var lz: array<f32, ${K}>;
  var lw: array<vec3<f32>, ${K}>;
  var s = 0.0f; var filled = 0u; var dropped = -3.0e38f;
  ${FOR_TILE_FACES("row", "col")}
      if (!inBox(f, px, py)) { continue; }
      var pr = pairAt(f, px, py);
      if (!pr.keep) { continue; }
      activations(&pr);
      s += pr.logD - pr.x;
      if ((faceFlags(f) & 4u) == 0u) { continue; }
      let z = colourGeometry(f, &pr);
      if (!(z >= P.near && z <= P.far)) { continue; }
      let sc = pr.logD + (P.far - z) * span / P.gamma;
      var at = filled;
      while (at > 0u && score[at - 1u] < sc) { at -= 1u; }
      if (at >= ${K}u) { dropped = max(dropped, sc); continue; }
      if (filled == ${K}u) { dropped = max(dropped, score[${K - 1}u]); }
      var l = min(filled, ${K - 1}u);
      while (l > at) {
        score[l] = score[l - 1u]; lf[l] = lf[l - 1u]; ld[l] = ld[l - 1u]; lz[l] = lz[l - 1u]; lw[l] = lw[l - 1u];
        l -= 1u;
      }
      score[at] = sc; lf[at] = i32(f); ld[at] = pr.logD; lz[at] = z; lw[at] = pr.wc;
      filled = min(filled + 1u, ${K}u);
    }
  }
  S[i] = s;
  for (var l = 0u; l < ${K}u; l++) {
    let a = ${K}u * i + l;
    let live = l < filled;
    face[a] = select(-1, lf[l], live); depth[a] = select(1.0f, lz[l], live); logD[a] = select(0.0f, ld[l], live);
    let w = select(vec3<f32>(0.0f), lw[l], live);
    baryOut[3u * a] = w.x; baryOut[3u * a + 1u] = w.y; baryOut[3u * a + 2u] = w.z;
  }
  over[i] = select(0u, 1u, filled > 0u && dropped > score[0] - 40.0f);
}
`;
}

const COUNT_SOURCE = `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> over: array<u32>;
@group(0) @binding(1) var<storage, read_write> count: array<i32>;
@group(0) @binding(2) var<uniform> P: Params;
${MAIN}
  if (i >= 1u) { return; }
  var n = 0u;
  for (var k = 0u; k < P.W * P.H; k++) { n += over[k]; }
  count[0] = i32(n);
}
`;

/** The layer of pixel `pix` holding face f, or −1 (WGSL). */
const layerOf = (K: number) => `
fn layerOf(pix: u32, f: u32) -> i32 {
  for (var l = 0u; l < ${K}u; l++) { if (face[${K}u * pix + l] == i32(f)) { return i32(l); } }
  return -1;
}`;

function jvpSource(p: SoftRasGeometryParams): string {
  const K = p.layers;
  return `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> masks: array<u32>;
@group(0) @binding(2) var<storage, read> face: array<i32>;
// Tangents packed: xy [F·6] then z [F·3].
@group(0) @binding(3) var<storage, read> tan: array<f32>;
@group(0) @binding(4) var<storage, read_write> dS: array<f32>;
@group(0) @binding(5) var<storage, read_write> dBary: array<f32>;
@group(0) @binding(6) var<storage, read_write> dDepth: array<f32>;
@group(0) @binding(7) var<storage, read_write> dLogD: array<f32>;
@group(0) @binding(8) var<uniform> P: Params;
${pairSource(p.distFunc)}
${layerOf(K)}
${PIXEL_MAIN}
  for (var l = 0u; l < ${K}u; l++) {
    let a = ${K}u * i + l;
    dDepth[a] = 0.0f; dLogD[a] = 0.0f; dBary[3u * a] = 0.0f; dBary[3u * a + 1u] = 0.0f; dBary[3u * a + 2u] = 0.0f;
  }
  var ds = 0.0f;
  ${FOR_TILE_FACES("row", "col")}
      if (!inBox(f, px, py)) { continue; }
      var pr = pairAt(f, px, py);
      if (!pr.keep) { continue; }
      activations(&pr);
      let o = 6u * f;
      let dv = array<f32, 6>(tan[o], tan[o + 1u], tan[o + 2u], tan[o + 3u], tan[o + 4u], tan[o + 5u]);
      let dd = distanceTangent(f, px, py, &pr, dv);
      let dx = select(dd, -dd, ${p.distFunc === "euclidean" ? "!pr.inside" : "false"}) / P.sigma;
      ds -= pr.sx * dx;
      let l = layerOf(i, f);
      if (l < 0) { continue; }
      let a = ${K}u * i + u32(l);
      dLogD[a] = pr.snx * dx;
      let dw = baryTangent(f, px, py, pr.w, dv);
      _ = colourGeometry(f, &pr);
      var dwc: vec3<f32>;
      let oz = 6u * P.F + 3u * f;
      dDepth[a] = layerTangent(f, &pr, dw, vec3<f32>(tan[oz], tan[oz + 1u], tan[oz + 2u]), &dwc);
      dBary[3u * a] = dwc.x; dBary[3u * a + 1u] = dwc.y; dBary[3u * a + 2u] = dwc.z;
    }
  }
  dS[i] = ds;
}
`;
}

function vjpSource(p: SoftRasGeometryParams): string {
  const K = p.layers;
  return `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> face: array<i32>;
@group(0) @binding(2) var<storage, read> cS: array<f32>;
@group(0) @binding(3) var<storage, read> cBary: array<f32>;
@group(0) @binding(4) var<storage, read> cDepth: array<f32>;
@group(0) @binding(5) var<storage, read> cLogD: array<f32>;
@group(0) @binding(6) var<storage, read_write> gxy: array<f32>;
@group(0) @binding(7) var<storage, read_write> gzo: array<f32>;
@group(0) @binding(8) var<uniform> P: Params;
${pairSource(p.distFunc)}
${layerOf(K)}
${MAIN}
  if (i >= P.F) { return; }
  let f = i;
  var g = array<f32, 6>(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f);
  var gz = vec3<f32>(0.0f);
  if ((faceFlags(f) & 3u) == 3u) {
    ${PIXEL_BOX}
    for (var r = r0; r <= r1; r++) {
      for (var cl = c0; cl <= c1; cl++) {
        let pix = u32(r) * P.W + u32(cl);
        let px = px_of(u32(cl)); let py = py_of(u32(r));
        var pr = pairAt(f, px, py);
        if (!pr.keep) { continue; }
        activations(&pr);
        var gx = -cS[pix] * pr.sx;
        let l = layerOf(pix, f);
        if (l >= 0) {
          let a = ${K}u * pix + u32(l);
          gx += cLogD[a] * pr.snx;
          _ = colourGeometry(f, &pr);
          var gzp: vec3<f32>;
          let gw = layerAdjoint(
            f, &pr, vec3<f32>(cBary[3u * a], cBary[3u * a + 1u], cBary[3u * a + 2u]), cDepth[a], &gzp
          );
          gz += gzp;
          addBaryGradient(f, px, py, pr.w, gw, &g);
        }
        if (gx == 0.0f) { continue; }
        addDistanceGradient(
          f, px, py, &pr, select(gx, -gx, ${p.distFunc === "euclidean" ? "!pr.inside" : "false"}) / P.sigma, &g
        );
      }
    }
  }
  for (var m = 0u; m < 6u; m++) { gxy[6u * f + m] = g[m]; }
  gzo[3u * f] = gz.x; gzo[3u * f + 1u] = gz.y; gzo[3u * f + 2u] = gz.z;
}
`;
}

type Rule = GpuRule<SoftRasGeometryParams>;

/** Operands: xy, z, front, joins → S, face, bary, depth, logD, overflow. */
export const forwardRule: Rule = (p, inAvals) => {
  const { s, uniform } = kernelSetup("softras_geometry", inAvals, (faces) => scalars(p, faces)),
    ctx = gpu(),
    K = p.layers,
    HW = p.width * p.height;
  const src = forwardSource(p);
  return ([xy, z, front, joins]) => {
    const [T, masks] = faceTableAndBins(p, xy!, z!, front!, joins!, uniform, s, true);
    const S = ctx.pool.allocate(HW),
      face = ctx.pool.allocate(HW * K),
      bary = ctx.pool.allocate(HW * K * 3),
      depth = ctx.pool.allocate(HW * K),
      logD = ctx.pool.allocate(HW * K);
    const over = ctx.pool.allocate(HW),
      count = ctx.pool.allocate(1);
    dispatch(src, [T!, masks!, S, face, bary, depth, logD, over, uniform], HW);
    dispatch(COUNT_SOURCE, [over, count, uniform], 1);
    T!.release();
    masks!.release();
    over.release();
    return [S, face, bary, depth, logD, count];
  };
};

/** Operands: xy, z, front, joins, (aux) face, (tangents) xy, z → S, bary, depth, logD tangents. */
export const jvpRule: Rule = (p, inAvals) => {
  const { F, s, uniform } = kernelSetup("softras_geometry", inAvals, (faces) => scalars(p, faces)),
    ctx = gpu(),
    K = p.layers,
    HW = p.width * p.height;
  const src = jvpSource(p),
    tangents = packer([6 * F, 3 * F]);
  return ([xy, z, front, joins, face, txy, tz]) => {
    const [T, masks] = faceTableAndBins(p, xy!, z!, front!, joins!, uniform, s, true);
    const tan = tangents.pack([txy!, tz!]);
    const dS = ctx.pool.allocate(HW),
      dBary = ctx.pool.allocate(HW * K * 3),
      dDepth = ctx.pool.allocate(HW * K),
      dLogD = ctx.pool.allocate(HW * K);
    dispatch(src, [T!, masks!, face!, tan, dS, dBary, dDepth, dLogD, uniform], HW);
    T!.release();
    masks!.release();
    tan.release();
    return [dS, dBary, dDepth, dLogD];
  };
};

/** Operands: xy, z, front, joins, (aux) face, (cotangents) S, bary, depth, logD → xy, z cotangents. */
export const vjpRule: Rule = (p, inAvals) => {
  const { F, s, uniform } = kernelSetup("softras_geometry", inAvals, (faces) => scalars(p, faces)),
    ctx = gpu();
  const src = vjpSource(p);
  return ([xy, z, front, joins, face, cS, cBary, cDepth, cLogD]) => {
    const [T] = faceTableAndBins(p, xy!, z!, front!, joins!, uniform, s, false);
    const gxy = ctx.pool.allocate(6 * F),
      gz = ctx.pool.allocate(3 * F);
    dispatch(src, [T!, face!, cS!, cBary!, cDepth!, cLogD!, gxy, gz, uniform], F);
    T!.release();
    return [gxy, gz];
  };
};
