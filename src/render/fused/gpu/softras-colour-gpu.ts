/**
 * softras_colour on WebGPU (the kernels of softras-colour-cpu.ts in WGSL, float32): forward and
 * tangent one thread per pixel over its tile's faces in face order (online softmax, as on the
 * CPU); the adjoint one thread per face over its padded box, plus one thread per channel for the
 * background — every output written by one thread, so no atomics and the same sums every run.
 */
import { gpu } from "../../../core/backends/webgpu/context.js";
import type { GpuRule } from "../../../core/primitive.js";
import type { SoftRasColourGeometryParams } from "../softras-prim.js";
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

const scalars = (p: SoftRasColourGeometryParams, faces: number): KernelScalars => ({
  width: p.width,
  height: p.height,
  faces,
  sigma: p.sigma,
  prune: p.prune,
  gamma: p.gamma,
  near: p.near,
  far: p.far,
  eps: p.eps,
  margin: p.margin,
});

/** Face colour c_d = Σ_k w̃_k A_kd for face f into `c` (WGSL statement). */
const faceColour = (D: number) => `
  for (var d = 0u; d < ${D}u; d++) {
    c[d] = pr.wc.x * A[${3 * D}u * f + d] + pr.wc.y * A[${3 * D}u * f + ${D}u + d]
      + pr.wc.z * A[${3 * D}u * f + ${2 * D}u + d];
  }`;

function forwardSource(p: SoftRasColourGeometryParams): string {
  const D = p.channels;
  return `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> masks: array<u32>;
@group(0) @binding(2) var<storage, read> A: array<f32>;
@group(0) @binding(3) var<storage, read> bg: array<f32>;
@group(0) @binding(4) var<storage, read_write> rgb: array<f32>;
@group(0) @binding(5) var<storage, read_write> S: array<f32>;
@group(0) @binding(6) var<storage, read_write> Mo: array<f32>;
@group(0) @binding(7) var<storage, read_write> Zo: array<f32>;
@group(0) @binding(8) var<uniform> P: Params;
${pairSource(p.distFunc)}
${PIXEL_MAIN}
  var s = 0.0f; var M = P.eps / P.gamma; var Z = 1.0f;
  var num: array<f32, ${D}>; var c: array<f32, ${D}>;
  for (var d = 0u; d < ${D}u; d++) { num[d] = bg[d]; }
  ${FOR_TILE_FACES("row", "col")}
      if (!inBox(f, px, py)) { continue; }
      var pr = pairAt(f, px, py);
      if (!pr.keep) { continue; }
      activations(&pr);
      let ld = pr.logD;
      s += ld - pr.x;
      if ((faceFlags(f) & 4u) == 0u) { continue; }
      let z = colourGeometry(f, &pr);
      if (!(z >= P.near && z <= P.far)) { continue; }
      let u = ld + depthTerm(z);
      if (u < M - 46.0f) { continue; }
      ${faceColour(D)}
      if (u > M) {
        let scale = exp(M - u);
        Z = Z * scale + 1.0f;
        for (var d = 0u; d < ${D}u; d++) { num[d] = num[d] * scale + c[d]; }
        M = u;
      } else {
        let e = exp(u - M);
        Z += e;
        for (var d = 0u; d < ${D}u; d++) { num[d] += e * c[d]; }
      }
    }
  }
  S[i] = s; Mo[i] = M; Zo[i] = Z;
  for (var d = 0u; d < ${D}u; d++) { rgb[${D}u * i + d] = num[d] / Z; }
}
`;
}

function jvpSource(p: SoftRasColourGeometryParams): string {
  const D = p.channels;
  return `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> masks: array<u32>;
@group(0) @binding(2) var<storage, read> A: array<f32>;
@group(0) @binding(3) var<storage, read> rgbIn: array<f32>;
// M then Z, H·W each.
@group(0) @binding(4) var<storage, read> MZ: array<f32>;
// Tangents packed: xy [F·6], z [F·3], colours [F·3·D], background [D].
@group(0) @binding(5) var<storage, read> tan: array<f32>;
@group(0) @binding(6) var<storage, read_write> drgb: array<f32>;
@group(0) @binding(7) var<storage, read_write> dS: array<f32>;
@group(0) @binding(8) var<uniform> P: Params;
${pairSource(p.distFunc)}
${PIXEL_MAIN}
  let M = MZ[i]; let Z = MZ[P.W * P.H + i];
  let oz = 6u * P.F; let oA = 9u * P.F; let obg = (9u + ${3 * D}u) * P.F;
  let spanInv = 1.0f / ((P.far - P.near) * P.gamma);
  var ds = 0.0f;
  var acc: array<f32, ${D}>; var c: array<f32, ${D}>;
  let eb = exp(P.eps / P.gamma - M) / Z;
  for (var d = 0u; d < ${D}u; d++) { acc[d] = eb * tan[obg + d]; }
  ${FOR_TILE_FACES("row", "col")}
      if (!inBox(f, px, py)) { continue; }
      var pr = pairAt(f, px, py);
      if (!pr.keep) { continue; }
      let colourable = (faceFlags(f) & 4u) != 0u;
      var z = 0.0f;
      if (colourable) { z = colourGeometry(f, &pr); }
      activations(&pr);
      var e = 0.0f;
      if (colourable && z >= P.near && z <= P.far) { e = pr.sx * exp(depthTerm(z) - M) / Z; }
      let o = 6u * f;
      let dv = array<f32, 6>(tan[o], tan[o + 1u], tan[o + 2u], tan[o + 3u], tan[o + 4u], tan[o + 5u]);
      let dd = distanceTangent(f, px, py, &pr, dv);
      let dx = select(dd, -dd, ${p.distFunc === "euclidean" ? "!pr.inside" : "false"}) / P.sigma;
      ds -= pr.sx * dx;
      if (!(e > 1e-20f)) { continue; }
      let dw = baryTangent(f, px, py, pr.w, dv);
      var dwc: vec3<f32>;
      let dDepth = layerTangent(
        f, &pr, dw, vec3<f32>(tan[oz + 3u * f], tan[oz + 3u * f + 1u], tan[oz + 3u * f + 2u]), &dwc
      );
      let du = pr.snx * dx - dDepth * spanInv;
      ${faceColour(D)}
      let oa = ${3 * D}u * f;
      for (var d = 0u; d < ${D}u; d++) {
        var dc = pr.wc.x * tan[oA + oa + d] + pr.wc.y * tan[oA + oa + ${D}u + d]
          + pr.wc.z * tan[oA + oa + ${2 * D}u + d];
        ${p.baryGradient ? `dc += dwc.x * A[oa + d] + dwc.y * A[oa + ${D}u + d] + dwc.z * A[oa + ${2 * D}u + d];` : ""}
        acc[d] += e * (dc + du * (c[d] - rgbIn[${D}u * i + d]));
      }
    }
  }
  dS[i] = ds;
  for (var d = 0u; d < ${D}u; d++) { drgb[${D}u * i + d] = acc[d]; }
}
`;
}

function vjpFaceSource(p: SoftRasColourGeometryParams): string {
  const D = p.channels;
  return `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> T: array<f32>;
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> rgbIn: array<f32>;
// M then Z, H·W each.
@group(0) @binding(3) var<storage, read> MZ: array<f32>;
// Cotangents packed: rgb [H·W·D] then S [H·W].
@group(0) @binding(4) var<storage, read> cts: array<f32>;
@group(0) @binding(5) var<storage, read_write> gxy: array<f32>;
@group(0) @binding(6) var<storage, read_write> gzo: array<f32>;
@group(0) @binding(7) var<storage, read_write> gAo: array<f32>;
@group(0) @binding(8) var<uniform> P: Params;
${pairSource(p.distFunc)}
${MAIN}
  if (i >= P.F) { return; }
  let f = i;
  var g = array<f32, 6>(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f);
  var gz = vec3<f32>(0.0f);
  var gA: array<f32, ${3 * D}>;
  for (var k = 0u; k < ${3 * D}u; k++) { gA[k] = 0.0f; }
  var c: array<f32, ${D}>;
  let oa = ${3 * D}u * f;
  let spanInv = 1.0f / ((P.far - P.near) * P.gamma);
  let HW = P.W * P.H;
  if ((faceFlags(f) & 3u) == 3u) {
    ${PIXEL_BOX}
    for (var r = r0; r <= r1; r++) {
      for (var cl = c0; cl <= c1; cl++) {
        let pix = u32(r) * P.W + u32(cl);
        let px = px_of(u32(cl)); let py = py_of(u32(r));
        var pr = pairAt(f, px, py);
        if (!pr.keep) { continue; }
        activations(&pr);
        var gx = -cts[${D}u * HW + pix] * pr.sx;
        let colourable = (faceFlags(f) & 4u) != 0u;
        var z = 0.0f;
        if (colourable) { z = colourGeometry(f, &pr); }
        var e = 0.0f;
        if (colourable && z >= P.near && z <= P.far) { e = pr.sx * exp(depthTerm(z) - MZ[pix]) / MZ[HW + pix]; }
        if (e > 1e-20f) {
          ${faceColour(D)}
          var gu = 0.0f; var gw = vec3<f32>(0.0f);
          for (var d = 0u; d < ${D}u; d++) {
            let cd = cts[${D}u * pix + d]; let gc = e * cd;
            gu += cd * e * (c[d] - rgbIn[${D}u * pix + d]);
            gA[d] += gc * pr.wc.x; gA[${D}u + d] += gc * pr.wc.y; gA[${2 * D}u + d] += gc * pr.wc.z;
            gw += gc * vec3<f32>(A[oa + d], A[oa + ${D}u + d], A[oa + ${2 * D}u + d]);
          }
          ${p.baryGradient ? "" : "gw = vec3<f32>(0.0f);"}
          gx += gu * pr.snx;
          var gzp: vec3<f32>;
          let gwb = layerAdjoint(f, &pr, gw, -gu * spanInv, &gzp);
          gz += gzp;
          addBaryGradient(f, px, py, pr.w, gwb, &g);
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
  for (var k = 0u; k < ${3 * D}u; k++) { gAo[oa + k] = gA[k]; }
}
`;
}

/** The background's cotangent: one thread per channel, Σ over pixels of e_b·cot(rgb). */
function vjpBackgroundSource(D: number): string {
  return `${PARAMS_STRUCT}
@group(0) @binding(0) var<storage, read> MZ: array<f32>;
@group(0) @binding(1) var<storage, read> cts: array<f32>;
@group(0) @binding(2) var<storage, read_write> gbg: array<f32>;
@group(0) @binding(3) var<uniform> P: Params;
${MAIN}
  if (i >= ${D}u) { return; }
  let HW = P.W * P.H;
  var acc = 0.0f;
  for (var pix = 0u; pix < HW; pix++) { acc += exp(P.eps / P.gamma - MZ[pix]) / MZ[HW + pix] * cts[${D}u * pix + i]; }
  gbg[i] = acc;
}
`;
}

type Rule = GpuRule<SoftRasColourGeometryParams>;

/** Operands: xy, z, front, attrs, bg, joins → rgb, S, M, Z. */
export const forwardRule: Rule = (p, inAvals) => {
  const { s, uniform } = kernelSetup("softras_colour", inAvals, (faces) => scalars(p, faces)),
    ctx = gpu();
  const src = forwardSource(p),
    HW = p.width * p.height;
  return ([xy, z, front, A, bg, joins]) => {
    const [T, masks] = faceTableAndBins(p, xy!, z!, front!, joins!, uniform, s, true);
    const rgb = ctx.pool.allocate(HW * p.channels),
      S = ctx.pool.allocate(HW),
      M = ctx.pool.allocate(HW),
      Z = ctx.pool.allocate(HW);
    dispatch(src, [T!, masks!, A!, bg!, rgb, S, M, Z, uniform], HW);
    T!.release();
    masks!.release();
    return [rgb, S, M, Z];
  };
};

/** Operands: xy, z, front, attrs, bg, joins, (aux) rgb, M, Z, (tangents) xy, z, attrs, bg → rgb, S tangents. */
export const jvpRule: Rule = (p, inAvals) => {
  const { F, s, uniform } = kernelSetup("softras_colour", inAvals, (faces) => scalars(p, faces)),
    ctx = gpu();
  const src = jvpSource(p),
    HW = p.width * p.height,
    D = p.channels;
  const mz = packer([HW, HW]),
    tangents = packer([6 * F, 3 * F, 3 * D * F, D]);
  return ([xy, z, front, A, , joins, rgb, M, Z, txy, tz, tA, tbg]) => {
    const [T, masks] = faceTableAndBins(p, xy!, z!, front!, joins!, uniform, s, true);
    const MZ = mz.pack([M!, Z!]),
      tan = tangents.pack([txy!, tz!, tA!, tbg!]);
    const drgb = ctx.pool.allocate(HW * D),
      dS = ctx.pool.allocate(HW);
    dispatch(src, [T!, masks!, A!, rgb!, MZ, tan, drgb, dS, uniform], HW);
    T!.release();
    masks!.release();
    MZ.release();
    tan.release();
    return [drgb, dS];
  };
};

/** Operands: xy, z, front, attrs, bg, joins, (aux) rgb, M, Z, (cotangents) rgb, S → xy, z, attrs, bg cotangents. */
export const vjpRule: Rule = (p, inAvals) => {
  const { F, s, uniform } = kernelSetup("softras_colour", inAvals, (faces) => scalars(p, faces)),
    ctx = gpu(),
    D = p.channels;
  const faceSrc = vjpFaceSource(p),
    bgSrc = vjpBackgroundSource(D),
    HW = p.width * p.height;
  const mz = packer([HW, HW]),
    cotangents = packer([HW * D, HW]);
  return ([xy, z, front, A, , joins, rgb, M, Z, cRgb, cS]) => {
    const [T] = faceTableAndBins(p, xy!, z!, front!, joins!, uniform, s, false);
    const MZ = mz.pack([M!, Z!]),
      cts = cotangents.pack([cRgb!, cS!]);
    const gxy = ctx.pool.allocate(6 * F),
      gz = ctx.pool.allocate(3 * F),
      gA = ctx.pool.allocate(3 * D * F),
      gbg = ctx.pool.allocate(D);
    dispatch(faceSrc, [T!, A!, rgb!, MZ, cts, gxy, gz, gA, uniform], F);
    dispatch(bgSrc, [MZ, cts, gbg, uniform], D);
    T!.release();
    MZ.release();
    cts.release();
    return [gxy, gz, gA, gbg];
  };
};
