// Copied from ../shared/bench/peers/lib (the shared workload definitions), so checksums match the peers.
// Deterministic host-side inputs shared by all peers (float32 typed arrays).
import { meshForTets, deformedPositions, batchInputs, MU, LAM } from './mesh.mjs';

/** mulberry32 PRNG -> uniform floats in [-1, 1). */
export function uniform(n, seed, scale = 1) {
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    out[i] = (2 * u - 1) * scale;
  }
  return out;
}

/** W1: x_i = -3 + 6 i / (N-1), float32. */
export function w1Input(N = 1_000_000) {
  const x = new Float32Array(N);
  for (let i = 0; i < N; i++) x[i] = -3 + (6 * i) / (N - 1);
  return x;
}

/** W2: A, B (n x n) uniform [-1,1). */
export function w2Inputs(n = 512) {
  return { A: uniform(n * n, 1), B: uniform(n * n, 2), n };
}

/** W3: MLP 64 -> 256 -> 256 -> 8 (tanh hidden), batch 1024. */
export const W3_DIMS = { batch: 1024, din: 64, h: 256, dout: 8 };
export function w3Inputs(batch = W3_DIMS.batch) {
  const { din, h, dout } = W3_DIMS;
  return {
    X: uniform(batch * din, 3), Y: uniform(batch * dout, 4),
    params: {
      W1: uniform(din * h, 5, 1 / Math.sqrt(din)), b1: uniform(h, 6, 0.1),
      W2: uniform(h * h, 7, 1 / Math.sqrt(h)), b2: uniform(h, 8, 0.1),
      W3: uniform(h * dout, 9, 1 / Math.sqrt(h)), b3: uniform(dout, 10, 0.1),
    },
    shapes: { X: [batch, din], Y: [batch, dout], W1: [din, h], b1: [h], W2: [h, h], b2: [h], W3: [h, dout], b3: [dout] },
    batch,
  };
}
export const W3_PARAM_NAMES = ['W1', 'b1', 'W2', 'b2', 'W3', 'b3'];

/** W4: mesh arrays as float32/int32 plus material constants. */
export function w4Inputs(T = 10000) {
  const m = meshForTets(T);
  return {
    T: m.T, N: m.N,
    x: Float32Array.from(deformedPositions(m)),
    tets: m.tets, DmInv: Float32Array.from(m.DmInv), vol: Float32Array.from(m.vol),
    mu: MU, lam: LAM, mesh: m,
  };
}

/** W5: batch of B deformed states of the T-tet mesh, with per-item mu. */
export function w5Inputs(B = 64, T = 1000) {
  const base = w4Inputs(T);
  const { xb, mu } = batchInputs(base.mesh, B);
  return { ...base, B, xb: Float32Array.from(xb), muB: Float32Array.from(mu) };
}
